package report

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

var update = flag.Bool("update", false, "rewrite golden files")

// hostile is a report whose CRD text tries to break out of every format.
func hostile() Report {
	return Report{
		CRDs: 2,
		Findings: []finding.Finding{
			{Rule: "field-removed", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1", Path: `.spec["a|b"]`,
				Message: "removed <script>alert(1)</script> @octocat [click](https://evil.example) `code`\nnext line",
				Before:  finding.Value("string"), Location: finding.Location{File: "config/crd/widgets.yaml", Line: 57, Side: finding.Base},
				Source: &finding.Location{File: "api/v1/widget_types.go", Line: 20, Side: finding.Base}},
			{Rule: "enum-value-removed", Severity: finding.Warning, CRD: "widgets.example.com", Version: "v1", Path: ".spec.color",
				Message: "value \x1b[31mred\x1b[0m removed", Before: finding.Value("red"), Location: finding.Location{File: "config/crd/widgets.yaml", Line: 70, Side: finding.Base},
				Source: &finding.Location{File: "api/v1/widget_types.go", Line: 12, Side: finding.Head}},
			{Rule: "field-added", Severity: finding.Info, CRD: "gadgets.example.com", Version: "v2", Path: ".spec.x",
				Message: "added", After: finding.Value("string"), Location: finding.Location{File: "config/crd/gadgets.yaml", Line: 9, Side: finding.Head}},
		},
		Ignored: 1,
		Notices: []string{"chart/crd.yaml:1: skipped, looks like a Helm or Go template"},
		Compared: &Compared{Base: strings.Repeat("b", 40), Head: strings.Repeat("c", 40), MergeBase: strings.Repeat("a", 40),
			BaseRef: "release/<b>@octocat", HeadRef: "HEAD"},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "../../testdata/report/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n%s", name, got)
	}
}

func TestFormatsGolden(t *testing.T) {
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := Write(&buf, format, hostile()); err != nil {
			t.Fatal(err)
		}
		ext := map[string]string{"text": "txt", "json": "json", "markdown": "md", "github": "github.txt", "sarif": "sarif.json", "rdjson": "rdjson.json", "changelog": "changelog.md"}[format]
		golden(t, "hostile."+ext, buf.Bytes())
	}
}

func TestMarkdownIsInert(t *testing.T) {
	// The hostile removal at a second place, with a long value: the details block that lists
	// the places and the full values is escaped too.
	r := hostile()
	again := r.Findings[0]
	again.Version, again.Location.Line = "v2", 99
	r.Findings = append(r.Findings, again)
	for i := range r.Findings {
		r.Findings[i].Before = finding.Value(strings.Repeat("<img src=x onerror=alert(1)> @octocat ", 5))
		r.Findings[i].Change = r.Findings[i].Rule
	}
	var buf bytes.Buffer
	if err := Markdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "<details><summary><code>field-removed</code>") {
		t.Fatalf("no details block:\n%s", out)
	}
	for _, bad := range []string{"<img"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown contains %q", bad)
		}
	}
	for _, bad := range []string{"<script>", "@octocat", "](https://", "https://", "\x1b", "a|b"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown contains %q", bad)
		}
	}
	// Every row has as many cells as its table's header.
	cells := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case !strings.HasPrefix(line, "| "):
			cells = 0
		case cells == 0:
			cells = strings.Count(line, " | ") + 2
		case strings.Count(line, " | ")+2 != cells:
			t.Errorf("table row has %d cells, its header %d: %s", strings.Count(line, " | ")+2, cells, line)
		}
	}
}

func TestTextIsPlain(t *testing.T) {
	var buf bytes.Buffer
	if err := Text(&buf, hostile()); err != nil {
		t.Fatal(err)
	}
	var wf bytes.Buffer
	if err := Workflow(&wf, hostile()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String()+wf.String(), "\x1b") {
		t.Error("terminal escape sequence reached the text or workflow-command output")
	}
	// A newline in CRD text must not start a new workflow command.
	for _, line := range strings.Split(strings.TrimSpace(wf.String()), "\n") {
		if !strings.HasPrefix(line, "::error ") && !strings.HasPrefix(line, "::warning ") && !strings.HasPrefix(line, "crdguard: ") {
			t.Errorf("unexpected workflow output line %q", line)
		}
	}
	if strings.Contains(buf.String(), "field-added") {
		t.Error("text output shows info findings")
	}
}

// TestEscapers: Escape (text that becomes Markdown) escapes only what could link, mention,
// make HTML or break a table or code span; Defuse (plain text) escapes nothing and only keeps
// mentions, autolinks, tags and links from forming.
func TestEscapers(t *testing.T) {
	for name, tc := range map[string]struct {
		fn    func(string) string
		cases map[string]string
	}{
		"Escape": {Escape, map[string]string{
			"plain: a.b (c) #x":    "plain: a.b (c) #x",
			"@admin":               "@\u200badmin",
			"<b>x</b> & y > z":     "&lt;b>x&lt;/b> &amp; y > z",
			"> quote":              "&gt; quote",
			"a|b":                  `a\|b`,
			"[x](javascript:y)":    `\[x\](javascript:y)`,
			"see https://x.io":     "see https\u200b://x.io",
			"www.example.com":      "www\u200b.example.com",
			"fixes #12":            "fixes #\u200b12",
			"line\nbreak":          "line break",
			"*bold* _it_ `code`":   "\\*bold\\* \\_it\\_ \\`code\\`",
			"~~s~~ $x$ \\":         "\\~\\~s\\~\\~ \\$x\\$ \\\\",
			"# heading":            "\\# heading",
			"#12 first":            "\\#\u200b12 first",
			"- item":               "\\- item",
			"12. item":             "12\\. item",
			".spec.labels.*":       ".spec.labels.\\*",
			"x >= 3 && y != \"a\"": "x >= 3 &amp;&amp; y != \"a\"",
			"lgtm :+1: :tada:":     "lgtm :\u200b+1: :\u200btada:",
			"a: b:c :Xy: ::":       "a: b:c :Xy: ::",
		}},
		"Defuse": {Defuse, map[string]string{
			"plain: a.b (c) *x* _y_ `z` | 1. #x": "plain: a.b (c) *x* _y_ `z` | 1. #x",
			"@admin a@b.io":                      "@\u200badmin a@\u200bb.io",
			"<b>x</b> < 3 <= 4":                  "<\u200bb>x<\u200b/b> < 3 <= 4",
			"[x](https://evil.example)":          "[x]\u200b(https\u200b://evil.example)",
			"WWW.x.io #7 line\nbreak\x1b":        "WWW\u200b.x.io #\u200b7 line break ",
			"ok :+1:":                            "ok :\u200b+1:",
		}},
	} {
		for in, want := range tc.cases {
			if got := tc.fn(in); got != want {
				t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
			}
		}
	}
}

// A finding compared once for identical copies names the other copies in text and comments.
func TestAlsoIn(t *testing.T) {
	f := finding.Finding{Location: finding.Location{File: "config/crd/w.yaml", Line: 32, Side: finding.Base}}
	if got := AlsoIn(f); got != "" {
		t.Errorf("one copy: %q", got)
	}
	f.Locations = []finding.Location{f.Location, {File: "deploy/bundle.yaml", Line: 37, Side: finding.Base}, {File: "deploy/ha.yaml", Line: 40, Side: finding.Base}}
	if got, want := AlsoIn(f), "deploy/bundle.yaml:37, deploy/ha.yaml:40"; got != want {
		t.Errorf("AlsoIn = %q, want %q", got, want)
	}
}
