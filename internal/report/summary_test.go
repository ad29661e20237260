package report

import (
	"fmt"
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

// TestTextContinuesTheSummary: a check run's text continues where its summary stopped: the
// places of a change whose row the summary holds come under the CRD's heading, marked
// continued and without a table; the summary says so and counts nothing as not shown.
func TestTextContinuesTheSummary(t *testing.T) {
	var fs []finding.Finding
	for i := 0; i < 30; i++ {
		fs = append(fs, finding.Finding{Rule: "max-decreased", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1",
			Path: fmt.Sprintf(".spec.c%02d[*].image", i), Message: "maxLength lowered from 256 to 128", Change: "c1",
			Before: finding.Value(256), After: finding.Value(128), Location: finding.Location{File: "crd.yaml", Line: 10 + i, Side: finding.Head}})
	}
	summary, text := MarkdownSplit(Report{Findings: fs, CRDs: 1}, 2200, 4000, "", "elsewhere")
	wantSummary := "### crdguard: 1 breaking change at 30 places, 0 warnings (1 CRD compared)\n\n" +
		"| CRD | Breaking changes | Warnings | Safe changes |\n|---|---|---|---|\n| widgets.example.com | 1 at 30 places | 0 | 0 |\n\n" +
		"**1 breaking change:**\n\n- widgets.example.com `max-decreased` v1 .spec.c00\\[\\*\\].image (30 places): maxLength lowered from 256 to 128\n\n" +
		"#### widgets.example.com: 1 breaking change at 30 places\n\n" + mdTableHead +
		"| ❌ error | `max-decreased` | v1 | .spec.c00\\[\\*\\].image | 256 → 128 | crd.yaml:10 | 30 | maxLength lowered from 256 to 128 |\n\n" +
		"Continued below the summary (GitHub's limit of 2200 characters): the places or full values of 1 change.\n\n" +
		"**Verdict: fail** — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n"
	wantText := "### crdguard: continued from the summary\n\n#### widgets.example.com: 1 breaking change at 30 places (continued)\n\n" +
		"<details><summary><code>max-decreased</code> .spec.c00\\[\\*\\].image: 30 places; .spec.…\\[\\*\\].image (30 paths)</summary>\n\n"
	for i := 0; i < 30; i++ {
		wantText += fmt.Sprintf("- v1 .spec.c%02d\\[\\*\\].image crd.yaml:%d\n", i, 10+i)
	}
	wantText += "\n</details>\n"
	if summary != wantSummary {
		t.Errorf("summary:\n%s\nwant:\n%s", summary, wantSummary)
	}
	if text != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", text, wantText)
	}
	// Without a text, the places are cut from the summary and counted as not shown.
	if alone := MarkdownWithin(Report{Findings: fs, CRDs: 1}, 2200, "", "elsewhere"); !strings.HasSuffix(alone, "| 30 | maxLength lowered from 256 to 128 |\n\n"+
		"Not shown here (GitHub's limit of 2200 characters): the places or full values of 1 change. Read them in full: elsewhere.\n\n**Verdict: fail**"+
		" — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n") {
		t.Errorf("summary alone:\n%s", alone)
	}
}

// TestChangedRuleNamedOnce: a changed CEL rule that both sides know by one message (or
// messageExpression: the rules leave it unset otherwise) is named once by it, never the old
// rule by its expression beside the new one by its message (issue 46); without a message, the
// line is the finding's message cut.
func TestChangedRuleNamedOnce(t *testing.T) {
	old := "self.all(l, l.protocol in ['HTTPS', 'TLS'] ? has(l.tls) : true) && self.all(l, l.port > 0)"
	neu := "self.all(l, l.protocol == 'TLS' ? l.tls.mode == 'Terminate' : true)"
	for _, tc := range []struct{ name, message, expression, want string }{
		{name: "messageExpression", expression: "'listener ' + self.name + ' needs tls mode Terminate for protocol TLS'",
			want: "- widgets.example.com `validation-rule-changed` v1 .spec.listeners: validation rule with the message " +
				"`'listener ' + self.name + ' needs tls mode Terminate for protocol TLS'` of .spec.listeners changed"},
		{name: "message", message: "tls mode must be Terminate for protocol TLS",
			want: "- widgets.example.com `validation-rule-changed` v1 .spec.listeners: validation rule “tls mode must be Terminate for protocol TLS” of .spec.listeners changed"},
		{name: "no message", want: "- widgets.example.com `validation-rule-changed` v1 .spec.listeners: validation rule of .spec.listeners changed from " +
			"\"self.all(l, l.protocol in \\['HTTPS', 'TLS'\\] ? has(l.tls) : true) &amp;&amp; self.all(l, l.port > 0)\" to \"self.all(l, l.…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := finding.Finding{Rule: "validation-rule-changed", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1", Path: ".spec.listeners",
				Message: fmt.Sprintf("validation rule of .spec.listeners changed from %q to %q: it refuses objects the old rule accepted, such as {}", old, neu),
				Subject: neu, RuleMessage: tc.message, RuleMessageExpression: tc.expression, Before: finding.Value(old), After: finding.Value(neu),
				Location: finding.Location{File: "crd.yaml", Line: 9, Side: finding.Head}}
			got := breakingLines(t, MarkdownWithin(Report{Findings: []finding.Finding{f}, CRDs: 1}, MaxMarkdown, "", ""))
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("breaking lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}
