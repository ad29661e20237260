package report

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/schematest"
)

// sarif1004 lists what breaks the SARIF Multitool's rule SARIF1004 (ExpressUriBaseIdsCorrectly,
// SARIF 2.1.0 §3.4.4): an artifactLocation with a uriBaseId must have a relative reference as its
// uri (no scheme, no leading /) and a uriBaseId that originalUriBaseIds defines; one without
// must be an absolute URI; an originalUriBaseIds entry with a uri must be absolute and end in /.
func sarif1004(t *testing.T, log []byte) []string {
	t.Helper()
	var doc struct {
		Runs []struct {
			OriginalURIBaseIDs map[string]struct {
				URI string `json:"uri"`
			} `json:"originalUriBaseIds"`
			Results []struct {
				Locations        []sarifLocation `json:"locations"`
				RelatedLocations []sarifLocation `json:"relatedLocations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(log, &doc); err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, run := range doc.Runs {
		for id, base := range run.OriginalURIBaseIDs {
			if u, err := url.Parse(base.URI); base.URI != "" && (err != nil || !u.IsAbs() || !strings.HasSuffix(base.URI, "/")) {
				bad = append(bad, "originalUriBaseIds "+id+": "+base.URI)
			}
		}
		for _, r := range run.Results {
			for _, l := range append(append([]sarifLocation{}, r.Locations...), r.RelatedLocations...) {
				a := l.PhysicalLocation.ArtifactLocation
				if a.URI == "" {
					continue
				}
				u, err := url.Parse(a.URI)
				switch {
				case err != nil:
					bad = append(bad, a.URI+": "+err.Error())
				case a.URIBaseID != "" && (u.IsAbs() || strings.HasPrefix(a.URI, "/")):
					bad = append(bad, a.URI+" has uriBaseId "+a.URIBaseID+" but is not a relative reference")
				case a.URIBaseID != "":
					if _, ok := run.OriginalURIBaseIDs[a.URIBaseID]; !ok {
						bad = append(bad, a.URI+": uriBaseId "+a.URIBaseID+" is not defined")
					}
				case !u.IsAbs():
					bad = append(bad, a.URI+" has no uriBaseId and is not absolute")
				}
			}
		}
	}
	return bad
}

type sarifLocation struct {
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI       string `json:"uri"`
			URIBaseID string `json:"uriBaseId"`
		} `json:"artifactLocation"`
	} `json:"physicalLocation"`
}

// SARIF from absolute and relative paths: a file under the root is relative to %SRCROOT%, one
// outside it (absolute, or relative and leaving it) an absolute file:// URI without uriBaseId;
// the log validates against the SARIF 2.1.0 schema and breaks no condition of SARIF1004.
func TestSARIFPaths(t *testing.T) {
	schema := schematest.Compile(t, "../../testdata/sarif/sarif-schema-2.1.0.json")
	for _, tc := range []struct {
		name, root, file string
		uri, base        string
	}{
		{"absolute, under the root", "/work/repo", "/work/repo/config/crd/widgets.yaml", "config/crd/widgets.yaml", "%SRCROOT%"},
		{"absolute, with a space, under the root", "/work/repo", "/work/repo/my crds/w.yaml", "my%20crds/w.yaml", "%SRCROOT%"},
		{"absolute, outside the root", "/work/repo", "/tmp/old/widgets.yaml", "file:///tmp/old/widgets.yaml", ""},
		{"absolute, beside the root", "/work/repo", "/work/repo2/widgets.yaml", "file:///work/repo2/widgets.yaml", ""},
		{"relative", "/work/repo", "config/crd/widgets.yaml", "config/crd/widgets.yaml", "%SRCROOT%"},
		{"relative, leaving the root", "/work/repo", "../other/widgets.yaml", "file:///work/other/widgets.yaml", ""},
		{"relative, no root", "", "config/crd/widgets.yaml", "config/crd/widgets.yaml", "%SRCROOT%"},
		{"absolute, no root", "", "/tmp/new/widgets.yaml", "file:///tmp/new/widgets.yaml", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := finding.Finding{Rule: "field-removed", Severity: finding.Error, CRD: "widgets.example.com", Version: "v1", Path: ".spec.name",
				Message: "field .spec.name was removed", Location: finding.Location{File: tc.file, Line: 7, Side: finding.Head}}
			var buf bytes.Buffer
			if err := SARIF(&buf, Report{Findings: []finding.Finding{f}, CRDs: 1, Root: tc.root}); err != nil {
				t.Fatal(err)
			}
			if err := schematest.Validate(schema, buf.Bytes()); err != nil {
				t.Fatalf("SARIF does not validate: %v", err)
			}
			if bad := sarif1004(t, buf.Bytes()); len(bad) != 0 {
				t.Fatalf("SARIF1004: %q", bad)
			}
			var log sarifLog
			if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			a := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation
			if a.URI != tc.uri || a.URIBaseID != tc.base {
				t.Fatalf("uri %q, uriBaseId %q; want %q, %q", a.URI, a.URIBaseID, tc.uri, tc.base)
			}
		})
	}
}
