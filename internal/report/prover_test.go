package report

import (
	"bytes"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// Release notes and the summary's one-line list leave out what the prover says of a change it
// left undecided ("no proof applies, and …"): the change is named as any other; the full
// message, in the other formats, keeps it. Quoted rules that hold the same words are kept.
func TestNoProverWordingInReleaseNotes(t *testing.T) {
	f := finding.Finding{Rule: "validation-rule-changed", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1", Path: ".spec",
		Message:  `validation rule of .spec changed from "self.a > 1" to "self.a > 2 || self.b == ' (undecided: x)'" (undecided: self.b: no proof applies, and .spec.b takes more values than can be tried): every object that breaks it is rejected`,
		Location: finding.Location{File: "crd.yaml", Line: 9, Side: finding.Head}}
	var b bytes.Buffer
	if err := Changelog(&b, Report{Findings: []finding.Finding{f}, CRDs: 1}); err != nil {
		t.Fatal(err)
	}
	want := "# CRD changes\n\n## widgets.example.com\n\n### v1\n\n#### Breaking changes\n\n" +
		"- validation rule of `.spec` changed from `self.a > 1` to `self.a > 2 || self.b == ' (undecided: x)'` (`validation-rule-changed`)\n"
	if got := b.String(); got != want {
		t.Errorf("changelog\n%s\nwant\n%s", got, want)
	}
	if got, want := whatOf(&f), `validation rule of .spec changed from "self.a > 1" to "self.a > 2 \|\| self.b == ' (undecided: x)'"`; got != want {
		t.Errorf("summary line\n%s\nwant\n%s", got, want)
	}
}
