package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// release60 writes a release of 60 CRDs, old and new: each new one drops 15 of its fields
// (900 breaking changes), and the last by name, zz-59, also changes its scope, which the API
// server refuses outright.
func release60(t *testing.T, dir string) {
	t.Helper()
	for _, side := range []string{"old", "new"} {
		if err := os.MkdirAll(filepath.Join(dir, side), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			name := fmt.Sprintf("c%02d", i)
			if i == 59 {
				name = "zz-59"
			}
			scope := "Namespaced"
			if side == "new" && i == 59 {
				scope = "Cluster"
			}
			var props strings.Builder
			props.WriteString("                keep:\n                  type: string\n")
			if side == "old" {
				for f := range 15 {
					fmt.Fprintf(&props, "                removedFieldWithALongerName%02d:\n                  type: string\n", f)
				}
			}
			doc := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]ss.example.com
spec:
  group: example.com
  names:
    kind: %[2]s
    listKind: %[2]sList
    plural: %[1]ss
    singular: %[1]s
  scope: %[3]s
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
%[4]s`, name, "K"+strings.ReplaceAll(name, "-", ""), scope, props.String())
			if err := os.WriteFile(filepath.Join(dir, side, name+".yaml"), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// In a 60-CRD release whose Markdown report must be cut (900 field removals), the one change
// the API server refuses outright, scope-changed in the last CRD by name, is listed first and
// kept; on the old code it was among the 300-odd lines cut.
func TestCutMarkdownKeepsRefusal(t *testing.T) {
	want, err := filepath.Abs("../../testdata/order/release60.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	release60(t, dir)
	t.Chdir(dir)
	code, out, errOut := runCLI(t, "diff", "--format", "markdown", "old", "new")
	if code != 1 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if len(out) > 65536 || !strings.Contains(out, "could not be listed") {
		t.Fatalf("the report (%d bytes) is not the cut one this test is about", len(out))
	}
	golden(t, want, []byte(out))
}
