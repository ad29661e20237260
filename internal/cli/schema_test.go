package cli

import (
	"testing"

	"github.com/crdguard/crdguard/internal/schematest"
)

// TestReportSchema validates real --format json output against docs/report.schema.json.
func TestReportSchema(t *testing.T) {
	schema := schematest.Compile(t, "../../docs/report.schema.json")
	rules := "../../testdata/rules/"
	for _, args := range [][]string{
		{example + "old.yaml", example + "new.yaml"},
		{rules + "invalid-crd/malformed-yaml/old.yaml", rules + "invalid-crd/malformed-yaml/new.yaml"},
		{rules + "description-changed/basic/old.yaml", rules + "description-changed/basic/old.yaml"},
		{rules + "sample-invalid/maximum-lowered/old.yaml", rules + "sample-invalid/maximum-lowered"},
		{"../../testdata/repos/copies/old", "../../testdata/repos/copies/new"},   // locations
		{"../../testdata/report/shared/old", "../../testdata/report/shared/new"}, // one change, many places
	} {
		_, out, stderr := runCLI(t, append([]string{"diff", "--format", "json"}, args...)...)
		if err := schematest.Validate(schema, []byte(out)); err != nil {
			if stderr != "" {
				t.Logf("stderr: %s", stderr)
			}
			t.Errorf("%v: output does not match docs/report.schema.json: %v", args, err)
		}
	}
}
