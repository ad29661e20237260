package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crdguard/crdguard/internal/change"
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

// Errors come before warnings: CRDs with errors first, and within each CRD, under a one-line
// tally. Info is counted, and listed last with ShowInfo.
func TestTextErrorsFirst(t *testing.T) {
	r := Report{CRDs: 2, Findings: []finding.Finding{
		{Rule: "enum-value-removed", Severity: finding.Warning, CRD: "a.example.com", Version: "v1", Path: ".spec.x", Message: "w", Location: finding.Location{File: "a.yaml", Line: 3, Side: finding.Base}},
		{Rule: "field-removed", Severity: finding.Error, CRD: "b.example.com", Version: "v2", Path: ".spec.y", Message: "e", Location: finding.Location{File: "b.yaml", Line: 9, Side: finding.Base}},
		{Rule: "field-added", Severity: finding.Info, CRD: "b.example.com", Version: "v2", Path: ".spec.z", Message: "i", Location: finding.Location{File: "b.yaml", Line: 12, Side: finding.Head}},
		{Rule: "nullable-added", Severity: finding.Warning, CRD: "b.example.com", Version: "v2", Path: ".spec.w", Message: "n", Location: finding.Location{File: "b.yaml", Line: 2, Side: finding.Head}},
	}}
	const (
		b = "b.example.com: 1 breaking change, 1 warning\n" +
			"  error   v2 field-removed .spec.y  b.yaml:9 (base)\n          e\n" +
			"  warning v2 nullable-added .spec.w  b.yaml:2\n          n\n"
		a = "a.example.com: 1 warning\n" +
			"  warning v1 enum-value-removed .spec.x  a.yaml:3 (base)\n          w\n"
		verdict = "verdict: fail — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n"
	)
	for _, c := range []struct {
		showInfo bool
		want     string
	}{
		{false, b + a + "2 CRDs compared: 1 breaking change, 2 warnings, 1 safe change (not shown: --show-info)\n" + verdict},
		{true, "b.example.com: 1 breaking change, 1 warning, 1 safe change\n" +
			"  error   v2 field-removed .spec.y  b.yaml:9 (base)\n          e\n" +
			"  warning v2 nullable-added .spec.w  b.yaml:2\n          n\n" +
			"  info    v2 field-added .spec.z  b.yaml:12\n          i\n" +
			a + "2 CRDs compared: 1 breaking change, 2 warnings, 1 safe change\n" + verdict},
	} {
		r.ShowInfo = c.showInfo
		var buf bytes.Buffer
		if err := Text(&buf, r); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("show info %v:\n%s\nwant:\n%s", c.showInfo, buf.String(), c.want)
		}
	}
}

// 2,000 breaking changes with long messages: the Markdown fits one GitHub comment; the
// changes' lines lose their messages before any is left out, those that still do not fit are
// counted, and every row and notice left out is counted.
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
	var listed []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "- a.example.com ") {
			listed = append(listed, l)
		}
	}
	for i, l := range listed {
		if want := fmt.Sprintf("- a.example.com `field-removed` v1 .spec.f%04d", i); l != want {
			t.Fatalf("line %d: %q, want %q", i, l, want)
		}
	}
	more := fmt.Sprintf("\n%d more breaking changes could not be listed within GitHub's limit of 65536 characters.\n"+
		"Not shown here (GitHub's limit of 65536 characters): the details of 2000 breaking changes. Read them in full: %s.\n", 2000-len(listed), CLIElsewhere)
	// The lines of breaking changes come before the notices, which get no room here.
	tail := more + "\n> 3000 more notices not shown.\n\n**Verdict: fail** — fix the changes above, or acknowledge them with " +
		"an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n"
	if len(listed) < 1000 || !strings.HasSuffix(out, tail) {
		t.Fatalf("%d lines, not ending in %q:\n%s", len(listed), tail, out[len(out)-2000:])
	}
}

// Release notes show quoted text and paths as code spans, which GitHub never turns into links,
// mentions or HTML, and escape the rest; a backtick inside gets a longer fence.
func TestProse(t *testing.T) {
	for in, want := range map[string]string{
		`.spec.x has a new validation rule "self.a == \"@team\" && x < 3"`: "`.spec.x` has a new validation rule `self.a == \"@team\" && x < 3`",
		"value \"a`b\" removed, see [here](https://evil.example) @octocat": "value ``a`b`` removed, see \\[here\\](https\u200b://evil.example) @\u200boctocat",
		".spec.a, .spec.b[*] and .…[*].c (2 paths)":                        "`.spec.a`, `.spec.b[*]` and `.…[*].c` (2 paths)",
		"unclosed \"quote <b>":          "unclosed \"quote &lt;b>",
		"\"`edge`\"":                    "`` `edge` ``",
		`.spec.name now defaults to ""`: "`.spec.name` now defaults to `\"\"`",
	} {
		if got := prose(in); got != want {
			t.Errorf("prose(%q) = %q, want %q", in, got, want)
		}
	}
}

// A long quoted rule in a message is cut like the values (and closed), a short one stays.
func TestCutQuoted(t *testing.T) {
	long := `"self.all(x, x.name.size() < 10 && x.value.matches('^[a-z]+$') && x.other == 'something long')"`
	ab := newAbbreviator([]finding.Finding{{After: []byte(long)}}, 40)
	got := ab.cutQuoted(`.spec has a new rule ` + long + `: e.g. {a: "b"} is rejected`)
	want := `.spec has a new rule "self.all(x, x.name.size() < 10 && x.va…": e.g. {a: "b"} is rejected`
	if got != want {
		t.Errorf("cutQuoted = %q, want %q", got, want)
	}
}

// A change an embedded type brings to two CRDs is shown once, apart; each CRD's tally counts
// its part, and a CRD with no change of its own is still listed.
func TestTextSharedChangeOnce(t *testing.T) {
	env := func(crd, file string) finding.Finding {
		return finding.Finding{Rule: "list-type-changed", Severity: finding.Error, CRD: crd, Version: "v1", Path: ".spec.template.spec.containers[*].env",
			Message: "list type changed", Before: finding.Value("atomic"), After: finding.Value("map"), Builtin: "Container.env",
			Location: finding.Location{File: file, Line: 7, Side: finding.Head}}
	}
	fs := []finding.Finding{env("a.example.com", "a.yaml"), env("b.example.com", "b.yaml"),
		{Rule: "field-removed", Severity: finding.Error, CRD: "b.example.com", Version: "v1", Path: ".spec.y", Message: "e", Location: finding.Location{File: "b.yaml", Line: 9, Side: finding.Base}}}
	change.Assign(fs)
	finding.Sort(fs)
	var buf bytes.Buffer
	if err := Text(&buf, Report{CRDs: 2, Findings: fs}); err != nil {
		t.Fatal(err)
	}
	want := "a.example.com: 1 breaking change\n" +
		"  and 1 change shared with other CRDs, below\n" +
		"b.example.com: 2 breaking changes\n" +
		"  error   v1 field-removed .spec.y  b.yaml:9 (base)\n          e\n" +
		"  and 1 change shared with other CRDs, below\n" +
		"in several CRDs: 1 breaking change at 2 places\n" +
		"  error   v1 list-type-changed .spec.template.spec.containers[*].env  a.yaml:7\n" +
		"          list type changed\n          \"atomic\" → \"map\"\n" +
		"          at 2 places; 2 CRDs: a.example.com, b.example.com; 2 copies: a.yaml, b.yaml\n" +
		"2 CRDs compared: 2 breaking changes at 3 places, 0 warnings\n" +
		"verdict: fail — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n"
	if buf.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", buf.String(), want)
	}
}
