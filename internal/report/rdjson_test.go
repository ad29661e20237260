package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/schematest"
)

// rdjsonSchema is reviewdog's published JSON schema of DiagnosticResult (see testdata/rdjson).
const rdjsonSchema = "../../testdata/rdjson/DiagnosticResult.json"

// TestRDJSONValidates checks the rdjson output against reviewdog's schema and reads it back as
// reviewdog would: every diagnostic has a path and a line (a base-side finding nothing placed on
// head keeps its own and says so), and messages are plain text.
func TestRDJSONValidates(t *testing.T) {
	schema := schematest.Compile(t, rdjsonSchema)
	rep := hostile()
	rep.Findings[1].Location.Side = "head"
	var buf bytes.Buffer
	if err := RDJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if err := schematest.Validate(schema, buf.Bytes()); err != nil {
		t.Fatalf("rdjson does not validate: %v\n%s", err, buf.Bytes())
	}
	var got rdResult
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := rdResult{
		Source: rdSource{Name: "crdguard", URL: "https://github.com/crdguard/crdguard"},
		Diagnostics: []rdDiagnostic{
			{
				Message:  "removed <\u200bscript>alert(1)<\u200b/script> @\u200boctocat [click]\u200b(https\u200b://evil.example) `code` next line (line 57 of the base version)",
				Location: rdLocation{Path: "config/crd/widgets.yaml", Range: &rdRange{Start: rdPosition{Line: 57}}},
				Severity: "ERROR",
				Code:     rdCode{Value: "field-removed", URL: "https://github.com/crdguard/crdguard/blob/main/docs/rules.md#field-removed"},
			},
			{
				Message:  "value  [31mred [0m removed",
				Location: rdLocation{Path: "config/crd/widgets.yaml", Range: &rdRange{Start: rdPosition{Line: 70}}},
				Severity: "WARNING",
				Code:     rdCode{Value: "enum-value-removed", URL: "https://github.com/crdguard/crdguard/blob/main/docs/rules.md#enum-value-removed"},
			},
		},
		Notices:  rep.Notices,
		Compared: &Compared{Base: rep.Compared.Base, Head: rep.Compared.Head, MergeBase: rep.Compared.MergeBase},
	}
	for _, d := range got.Diagnostics {
		for _, bad := range []string{"<script>", "@octocat", "](https://", "\x1b", "\n"} {
			if strings.Contains(d.Message, bad) {
				t.Errorf("message %q contains %q", d.Message, bad)
			}
		}
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("rdjson\n got %s\nwant %s", gotJSON, wantJSON)
	}
}

// TestRDJSONSchemaRejects shows the schema check can fail: the shapes reviewdog's parser
// refuses (a severity it does not know, a line that is not a number, diagnostics not a list).
func TestRDJSONSchemaRejects(t *testing.T) {
	schema := schematest.Compile(t, rdjsonSchema)
	for _, doc := range []string{
		`{"diagnostics": [{"message": "m", "severity": "error"}]}`,
		`{"diagnostics": [{"message": "m", "location": {"path": "a", "range": {"start": {"line": "57"}}}}]}`,
		`{"diagnostics": {"message": "m"}}`,
		`{"source": {"name": 1}, "diagnostics": []}`,
	} {
		if err := schematest.Validate(schema, []byte(doc)); err == nil {
			t.Errorf("schema accepts %s", doc)
		}
	}
}

// TestRDJSONEmpty is a clean run: an empty list, never null, which reviewdog reads as no
// diagnostics.
func TestRDJSONEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := RDJSON(&buf, Report{CRDs: 1}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"diagnostics": []`) {
		t.Errorf("clean run:\n%s", buf.String())
	}
}
