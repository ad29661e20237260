package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// TestRenamedIsOneFinding: a removed property with a likely new name (issue 46 item 2) is one
// finding in every machine format, which links the new property's line on head beside the
// removed line: JSON carries renamedTo, SARIF and rdjson a related location.
func TestRenamedIsOneFinding(t *testing.T) {
	rep := Report{CRDs: 1, Findings: []finding.Finding{{
		Rule: "field-removed", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1", Path: ".spec.resource",
		Message:   ".spec.resource was removed, and .spec.resources was added beside it with the same type and shape (renamed?)",
		Before:    finding.Value("object"),
		Location:  finding.Location{File: "config/crd/widgets.yaml", Line: 32, Side: finding.Base},
		Head:      &finding.HeadLine{File: "config/crd/widgets.yaml", Line: 31, Removed: true},
		RenamedTo: &finding.Renamed{Path: ".spec.resources", Location: finding.Location{File: "config/crd/widgets.yaml", Line: 32, Side: finding.Head}},
	}}}
	var js, sa, rd bytes.Buffer
	for _, w := range []struct {
		write func(*bytes.Buffer, Report) error
		out   *bytes.Buffer
	}{
		{func(b *bytes.Buffer, r Report) error { return JSON(b, r) }, &js},
		{func(b *bytes.Buffer, r Report) error { return SARIF(b, r) }, &sa},
		{func(b *bytes.Buffer, r Report) error { return RDJSON(b, r) }, &rd},
	} {
		if err := w.write(w.out, rep); err != nil {
			t.Fatal(err)
		}
	}
	var doc struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var renamed struct {
		RenamedTo json.RawMessage `json:"renamedTo"`
	}
	if len(doc.Findings) != 1 || json.Unmarshal(doc.Findings[0], &renamed) != nil ||
		string(compact(t, renamed.RenamedTo)) != `{"path":".spec.resources","location":{"file":"config/crd/widgets.yaml","line":32,"side":"head"}}` {
		t.Errorf("JSON findings: %s", js.Bytes())
	}

	var log struct {
		Runs []struct {
			Results []struct {
				RelatedLocations json.RawMessage `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sa.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	wantSARIF := `[{"physicalLocation":{"artifactLocation":{"uri":"config/crd/widgets.yaml","uriBaseId":"%SRCROOT%"},"region":{"startLine":32}},"message":{"text":"added beside it: .spec.resources"}}]`
	if len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 || string(compact(t, log.Runs[0].Results[0].RelatedLocations)) != wantSARIF {
		t.Errorf("SARIF results: %s", sa.Bytes())
	}

	var rdoc rdResult
	if err := json.Unmarshal(rd.Bytes(), &rdoc); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(rdoc.Diagnostics)
	want := `[{"message":".spec.resource was removed, and .spec.resources was added beside it with the same type and shape (renamed?) (removed; was line 32)","location":{"path":"config/crd/widgets.yaml","range":{"start":{"line":31}}},"severity":"ERROR","code":{"value":"field-removed","url":"https://github.com/crdguard/crdguard/blob/main/docs/rules.md#field-removed"},"related_locations":[{"message":"added beside it: .spec.resources","location":{"path":"config/crd/widgets.yaml","range":{"start":{"line":32}}}}]}]`
	if string(got) != want {
		t.Errorf("rdjson diagnostics\n got %s\nwant %s", got, want)
	}
}

func compact(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
