package report

import (
	"bytes"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// SARIF keeps what the other formats say about the run: what was compared (run properties) and
// every notice (notifications of the invocation); artifact URIs are percent-encoded.
func TestSARIFContext(t *testing.T) {
	r := hostile()
	r.Findings[0].Location.File = "config/crd/my widgets#1.yaml"
	r.Findings[1].Location.File = "c:d/crd.yaml"
	_, log := writeSARIF(t, r)
	run := log.Runs[0]
	if c := run.Properties.Compared; c["base"] != r.Compared.Base || c["head"] != r.Compared.Head || c["mergeBase"] != r.Compared.MergeBase || len(c) != 3 {
		t.Errorf("compared %v", c)
	}
	if n := run.Invocations[0].Notifications; len(n) != 1 || n[0].Level != "note" || n[0].Message.Text != r.Notices[0] {
		t.Errorf("notifications %+v", n)
	}
	var uris []string
	for _, res := range run.Results {
		uris = append(uris, res.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	if len(uris) != 2 || uris[0] != "config/crd/my%20widgets%231.yaml" || uris[1] != "./c:d/crd.yaml" {
		t.Errorf("artifact URIs %q", uris)
	}
}

// The text report opens with what was compared; without a merge base apart from base it says
// base is the merge base.
func TestComparedLine(t *testing.T) {
	c := &Compared{Base: "1111111111111111", Head: "2222222222222222", MergeBase: "1111111111111111", BaseRef: "main"}
	if got, want := c.Line(), "compared 222222222222 with main 111111111111 (the merge base)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if err := Text(&buf, Report{Compared: c, Findings: []finding.Finding{}}); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := bytes.Cut(buf.Bytes(), []byte("\n")); string(first) != c.Line() {
		t.Errorf("text starts with %q", first)
	}
}
