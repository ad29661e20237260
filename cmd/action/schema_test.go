package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestReportSchema validates real --format json output against docs/report.schema.json.
func TestReportSchema(t *testing.T) {
	f, err := os.Open("../../docs/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	rules := "../../testdata/rules/"
	for _, args := range [][]string{
		{example + "old.yaml", example + "new.yaml"},
		{rules + "invalid-crd/malformed-yaml/old.yaml", rules + "invalid-crd/malformed-yaml/new.yaml"},
		{rules + "description-changed/basic/old.yaml", rules + "description-changed/basic/old.yaml"},
		{rules + "sample-invalid/maximum-lowered/old.yaml", rules + "sample-invalid/maximum-lowered"},
	} {
		_, out, stderr := runCLI(t, append([]string{"diff", "--format", "json"}, args...)...)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("%v: output does not match docs/report.schema.json: %v", args, err)
		}
	}
}
