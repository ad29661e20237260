package crd

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F, globs ...string) {
	for _, g := range globs {
		files, _ := filepath.Glob(g)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && len(data) < 64<<10 {
				f.Add(data)
			}
		}
	}
}

// FuzzParse: any bytes decode to CRDs and problems without a panic, every problem has a real
// line, and every definition (not a patch) has a name and an object and can locate its own keys.
func FuzzParse(f *testing.F) {
	addSeeds(f, "../../testdata/crd/*", "../../testdata/rules/*/*/new.yaml", "../../testdata/examples/*/*.yaml")
	// Duplicate keys, at the top, in a flow mapping and next to merge keys.
	f.Add([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nkind: CustomResourceDefinition\nmetadata: {name: a.b, name: a.b}\n"))
	f.Add([]byte("x: &x {a: 1}\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  <<: *x\n  <<: *x\n  a: 2\n  a: 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		crds, problems := Parse("f.yaml", data)
		lines := bytes.Count(data, []byte("\n")) + 1
		if l := lineCount(data); l > lines {
			lines = l // a lone CR ends a line in YAML
		}
		for _, p := range problems {
			if p.Line < 1 || p.Line > lines+1 {
				t.Fatalf("problem at line %d of a %d-line input: %s", p.Line, lines, p.Message)
			}
		}
		for _, c := range crds {
			if c.Patch {
				// A patch (a kustomize patch, an assertion, a stub) is never compared: no object.
				if c.Object != nil {
					t.Fatal("a patch with an object")
				}
				continue
			}
			if c.Name == "" || c.Object == nil {
				t.Fatal("a CRD without name or object")
			}
			for _, v := range c.Object.Spec.Versions {
				if l := c.LineOf(c.SchemaPath(v.Name).Join("properties", "spec")); l < 1 || l > lines {
					t.Fatalf("line %d outside the input", l)
				}
			}
		}
		ParseObjects("f.yaml", data)
	})
}
