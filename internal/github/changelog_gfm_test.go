package github

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
)

// hostilePaths hold backtick runs, mentions, references, HTML and emoji shortcodes.
var hostilePaths = []string{".spec[\"a`b``c\"]", ".spec[\"@octocat\"]", ".spec[\"#12 fixes\"]", ".spec[\"<img src=x>\"]", ".spec[\":+1:\"]", ".spec[\"`\"]"}

// TestChangelogRendersHostileValues renders release notes whose paths, CEL rule messages and
// sample objects are hostile through a GFM renderer: every path is one code span reading exactly
// as written, a CEL rule reads by its message (or its messageExpression's text), a sample entry
// names object, file, field and reason, and nothing links, mentions or becomes HTML.
func TestChangelogRendersHostileValues(t *testing.T) {
	var fs []finding.Finding
	for i, p := range hostilePaths {
		fs = append(fs, finding.Finding{Rule: "field-removed", Severity: finding.Error, CRD: "w.example.com", Version: "v1", Path: p,
			Message: p + " was removed: clients break", Location: finding.Location{File: "crd.yaml", Line: 10 + i, Side: finding.Base}})
	}
	fs = append(fs,
		finding.Finding{Rule: "validation-rule-added", Severity: finding.Error, CRD: "w.example.com", Version: "v1", Path: ".spec.x",
			Message: `.spec.x has a new validation rule "self.size() < 3 && self != '@octocat'": e.g. …`, Subject: "self.size() < 3 && self != '@octocat'",
			RuleMessage: "must be <b>short</b> @team :+1: `x` #12", Location: finding.Location{File: "crd.yaml", Line: 40, Side: finding.Head}},
		finding.Finding{Rule: "validation-rule-added", Severity: finding.Error, CRD: "w.example.com", Version: "v1", Path: ".spec.y",
			Message: `.spec.y has a new validation rule "self == oldSelf": e.g. …`, Subject: "self == oldSelf",
			RuleMessageExpression: "'y is ``immutable``, was ' + oldSelf", Location: finding.Location{File: "crd.yaml", Line: 50, Side: finding.Head}},
		finding.Finding{Rule: "sample-invalid", Severity: finding.Error, CRD: "w.example.com", Version: "v1", Path: ".spec.size",
			Message: `Widget "@octocat": spec.size: Invalid value: 9: spec.size in body should be less than or equal to 3; stored objects like this one keep updating only while .spec.size is unchanged (validation ratcheting): objects like this one, which users copy from your samples, are refused; fix the schema change or the sample`,
			Object:  "Widget/@octocat", Location: finding.Location{File: "config/samples/<w>.yaml", Line: 7, Side: finding.Head}},
	)
	finding.Sort(fs)
	var md bytes.Buffer
	if err := report.Changelog(&md, report.Report{Findings: fs, CRDs: 1}); err != nil {
		t.Fatal(err)
	}
	doc := gfm(t, md.String())
	inert(t, "changelog", doc, "-")
	got := texts(doc, "li")
	want := []string{
		"sample Widget/@octocat in config/samples/<w>.yaml:7, field .spec.size: Invalid value: 9: spec.size in body should be less than or equal to 3 (sample-invalid)",
		`.spec["a` + "`b``c" + `"] was removed (field-removed)`,
		`.spec["@octocat"] was removed (field-removed)`,
		`.spec["#12 fixes"] was removed (field-removed)`,
		`.spec["<img src=x>"] was removed (field-removed)`,
		`.spec[":+1:"] was removed (field-removed)`,
		".spec[\"`\"] was removed (field-removed)",
		".spec.x has a new validation rule “must be <b>short</b> @team :+1: `x` #12” (validation-rule-added)",
		".spec.y has a new validation rule with the message 'y is ``immutable``, was ' + oldSelf (validation-rule-added)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changelog items read\n%s\nwant\n%s\nfrom:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), md.String())
	}
	// Every path is one code span, whole.
	codes := texts(doc, "code")
	for _, p := range hostilePaths {
		n := 0
		for _, c := range codes {
			if c == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("path %q is %d code spans, want 1; code spans: %q", p, n, codes)
		}
	}
}

// texts are the texts of every element named tag, in document order.
func texts(n *html.Node, tag string) []string {
	var out []string
	if n.Type == html.ElementNode && n.Data == tag {
		out = append(out, text(n))
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, texts(c, tag)...)
	}
	return out
}
