package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crdguard/crdguard/internal/finding"
)

func TestPlainJSON(t *testing.T) {
	for in, want := range map[string]string{
		`"self.a \u003c 3 \u0026\u0026 self.b \u003e 1"`: `"self.a < 3 && self.b > 1"`,
		`"a\\u003cb"`:       `"a\\u003cb"`, // an escaped backslash, then plain text
		`"tab\there\u00e9"`: `"tab\there\u00e9"`,
		`{"k":"\u0026"}`:    `{"k":"&"}`,
		`"ends in \"`:       `"ends in \"`,
	} {
		if got := plainJSON(in); got != want {
			t.Errorf("plainJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// Two long CEL rules that share their first 120 characters print differently, each about as
// long as the limit; a value alone is cut at the limit.
func TestAbbreviationsStayDistinct(t *testing.T) {
	common := "self.spec.template.spec.containers.all(c, c.resources.limits.cpu <= self.spec.maxCPU && c.resources.limits.memory <= "
	a := common + "self.spec.maxMemory) && size(self.spec.template.spec.containers) < 10"
	b := common + "self.spec.maxMemoryPerPod) && size(self.spec.template.spec.containers) < 10"
	fs := []finding.Finding{
		{Rule: "validation-rule-changed", Before: finding.Value(a), After: finding.Value(b)},
		{Rule: "validation-rule-changed", Before: finding.Value(strings.Repeat("x", 200))},
	}
	ab := newAbbreviator(fs, textValueRunes)
	sa, sb := ab.shorten(plainJSON(string(fs[0].Before))), ab.shorten(plainJSON(string(fs[0].After)))
	if sa == sb {
		t.Fatalf("both print %s", sa)
	}
	for _, s := range []string{sa, sb} {
		if n := utf8.RuneCountInString(s); n > textValueRunes+2 || !strings.HasPrefix(s, `"self.spec.template`) || !strings.Contains(s, "…") {
			t.Errorf("abbreviation %q (%d runes)", s, n)
		}
	}
	if !strings.Contains(sa, "maxMemory)") || !strings.Contains(sb, "maxMemoryPer") {
		t.Errorf("the difference is not shown: %q %q", sa, sb)
	}
	if got := ab.shorten(plainJSON(string(fs[1].Before))); got != `"`+strings.Repeat("x", textValueRunes-2)+"…" {
		t.Errorf("lone value cut to %q", got)
	}
}

// Errors come before warnings within each CRD, under a one-line tally.
func TestTextErrorsFirst(t *testing.T) {
	r := Report{CRDs: 1, Findings: []finding.Finding{
		{Rule: "enum-value-removed", Severity: finding.Warning, CRD: "a.example.com", Version: "v1", Path: ".spec.x", Message: "w", Location: finding.Location{File: "a.yaml", Line: 3, Side: finding.Base}},
		{Rule: "field-removed", Severity: finding.Error, CRD: "a.example.com", Version: "v2", Path: ".spec.y", Message: "e", Location: finding.Location{File: "a.yaml", Line: 9, Side: finding.Base}},
	}}
	var buf bytes.Buffer
	if err := Text(&buf, r); err != nil {
		t.Fatal(err)
	}
	want := "a.example.com: 1 error, 1 warning\n" +
		"  error   v2 field-removed .spec.y  a.yaml:9 (base)\n          e\n" +
		"  warning v1 enum-value-removed .spec.x  a.yaml:3 (base)\n          w\n" +
		"1 CRD compared: 1 error, 1 warning, 0 info\n"
	if buf.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// 2,000 findings with long messages: the Markdown fits one GitHub comment and counts what it
// left out.
func TestMarkdownFitsAComment(t *testing.T) {
	var r Report
	for i := 0; i < 2000; i++ {
		r.Findings = append(r.Findings, finding.Finding{Rule: "field-removed", Severity: finding.Error, CRD: "a.example.com", Version: "v1",
			Path: fmt.Sprintf(".spec.f%04d", i), Message: strings.Repeat("long message ", 10), Location: finding.Location{File: "a.yaml", Line: i + 1}})
	}
	for i := 0; i < 3000; i++ {
		r.Notices = append(r.Notices, fmt.Sprintf("chart/templates/crd%04d.yaml:1: skipped, looks like a Helm or Go template", i))
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if buf.Len() > MaxMarkdown {
		t.Fatalf("%d bytes", buf.Len())
	}
	rows := strings.Count(out, "\n| ❌ error |")
	more := fmt.Sprintf("\n%d more findings not shown here (GitHub's 65536-character limit): the JSON and SARIF reports have them all.\n", 2000-rows)
	if rows < 100 || !strings.Contains(out, more) {
		t.Fatalf("%d rows, no %q line", rows, more)
	}
	shownNotices := strings.Count(out, "> notice: ")
	if !strings.Contains(out, fmt.Sprintf("> %d more notices not shown.", 3000-shownNotices)) {
		t.Fatalf("%d notices shown, no count of the rest", shownNotices)
	}
}
