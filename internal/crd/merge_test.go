package crd

import (
	"bytes"
	"encoding/json"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestExpandMergesAsKubectl checks the expansion against sigs.k8s.io/yaml, the library kubectl
// and the API server read YAML with: the same document must give the same JSON.
func TestExpandMergesAsKubectl(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"one anchor", "base: &b {type: string, maxLength: 3}\nx:\n  <<: *b\n  description: d\n"},
		{"explicit key after the merge wins", "base: &b {type: string, maxLength: 3}\nx:\n  <<: *b\n  maxLength: 5\n"},
		{"merge after an explicit key wins", "base: &b {type: string, maxLength: 3}\nx:\n  maxLength: 5\n  <<: *b\n"},
		{"list of merges: the earlier wins", "a: &a {k: 1, a: 1}\nb: &b {k: 2, b: 2}\nx:\n  <<: [*a, *b]\n  z: 0\n"},
		{"two merge keys in sequence", "a: &a {k: 1}\nb: &b {k: 2}\nx:\n  <<: *a\n  <<: *b\n"},
		{"nested merges", "a: &a {k: 1}\nb: &b\n  <<: *a\n  j: 2\nx:\n  <<: *b\n  i: 3\n"},
		{"merged values are not merged deeper", "a: &a {p: {q: 1, r: 2}}\nx:\n  <<: *a\n  p: {q: 3}\n"},
		{"inline mapping merged", "x:\n  <<: {k: 1, l: 2}\n  l: 3\n"},
		{"merge inside a list", "a: &a {type: integer}\nxs:\n  - <<: *a\n    minimum: 0\n  - <<: *a\n"},
		{"a quoted << is a plain key", "x:\n  \"<<\": 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := sigsyaml.YAMLToJSON([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.NewDecoder(bytes.NewReader([]byte(tc.doc))).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if err := expandMerges(&doc); err != nil {
				t.Fatal(err)
			}
			got, err := toJSON(&doc)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, want) {
				t.Fatalf("expanded to %s, kubectl reads %s", got, want)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// TestMergeKeysKeepLines reads a hand-written CRD that shares property blocks through anchors:
// it decodes to the schema written out in full, and each property is found on the line of the
// block it came from.
func TestMergeKeysKeepLines(t *testing.T) {
	const doc = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
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
                size: &bounded
                  type: integer
                  minimum: 1
                  maximum: 10
                count:
                  <<: *bounded
                  maximum: 5
`
	crds, problems := Parse("w.yaml", []byte(doc))
	if len(problems) != 0 || len(crds) != 1 {
		t.Fatalf("crds %d, problems %v", len(crds), problems)
	}
	count := crds[0].Object.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["count"]
	if count.Type != "integer" || *count.Minimum != 1 || *count.Maximum != 5 {
		t.Fatalf("count decoded as %+v", count)
	}
	for _, tc := range []struct {
		path Path
		line int
	}{
		{Path{"spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "count", "maximum"}, 26},
		{Path{"spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "count", "minimum"}, 22},
		{Path{"spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "maximum"}, 23},
	} {
		if got := crds[0].LineOf(tc.path); got != tc.line {
			t.Errorf("%v on line %d, want %d", tc.path, got, tc.line)
		}
	}
}
