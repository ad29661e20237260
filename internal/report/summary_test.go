package report

import (
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// breakingLines are the lines of a Markdown report that list its breaking changes.
func breakingLines(t *testing.T, md string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "- ") {
			out = append(out, l)
		}
	}
	return out
}

// TestBreakingLineNamesRuleByMessage: the summary's line of a breaking CEL rule names it by its
// message (or messageExpression, as code), as the changelog does, escaped; by its expression,
// cut, only when it has neither.
func TestBreakingLineNamesRuleByMessage(t *testing.T) {
	long := "self.all(x, " + strings.Repeat("x.size() < 10 && ", 20) + "true)"
	for _, tc := range []struct {
		name, message, expression, want string
	}{
		{name: "message", message: "the selector is immutable",
			want: "- widgets.example.com `validation-rule-added` v1 .spec.selector: has a new validation rule “the selector is immutable”"},
		{name: "hostile message", message: "ask @octocat about <img src=x> :+1: [x](y) | `z`",
			want: "- widgets.example.com `validation-rule-added` v1 .spec.selector: has a new validation rule “ask @\u200boctocat about &lt;img src=x> :\u200b+1: \\[x\\](y) \\| \\`z\\`”"},
		{name: "messageExpression", expression: "'name ``' + self.name + '`` is fixed'",
			want: "- widgets.example.com `validation-rule-added` v1 .spec.selector: has a new validation rule with the message ```'name ``' + self.name + '`` is fixed'```"},
		{name: "no message", want: "- widgets.example.com `validation-rule-added` v1 .spec.selector: has a new validation rule \"self.all(x, " +
			strings.Repeat("x.size() &lt; 10 &amp;&amp; ", 7) + "x…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := finding.Finding{Rule: "validation-rule-added", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1", Path: ".spec.selector",
				Message: ".spec.selector has a new validation rule \"" + long + "\": it refuses objects the old schema accepted, such as {}",
				Subject: long, RuleMessage: tc.message, RuleMessageExpression: tc.expression,
				Location: finding.Location{File: "crd.yaml", Line: 9, Side: finding.Head}}
			got := breakingLines(t, MarkdownWithin(Report{Findings: []finding.Finding{f}, CRDs: 1}, MaxMarkdown, "", ""))
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("breaking lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}
