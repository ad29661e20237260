package crd

import (
	"fmt"
	"strings"
	"testing"
)

// TestDuplicateKeys: a key given twice in one mapping anywhere in a CRD document is a problem at
// the second key naming the first, on both parsers; a key written next to a merge key, the same
// key in different mappings, and duplicates outside CRD documents are not.
func TestDuplicateKeys(t *testing.T) {
	head := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n"
	// specV1 in block style only, which parseFast reads.
	specV1 := strings.Replace(specV1, "  names: {kind: Widget, plural: widgets}\n", "  names:\n    kind: Widget\n    plural: widgets\n", 1)
	schema := func(props string) string {
		return head + specV1 + "    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n" + props
	}
	var many strings.Builder // a mapping too large to compare pairwise
	for i := range 20 {
		fmt.Fprintf(&many, "          f%d: {type: string}\n", i)
	}
	many.WriteString("          f3: {type: integer}\n")
	for _, tc := range []struct {
		name, doc string
		fast      bool     // parseFast reads it (the block subset), else yaml.v3 does
		want      []string // "line: message"
	}{
		{"top level", head + "kind: CustomResourceDefinition\n" + specV1, true,
			[]string{`5: duplicate key "kind" in one mapping, first at line 2 (kubectl apply: key "kind" already set in map)`}},
		{"metadata.name", head + "  name: gadgets.example.com\n" + specV1, true,
			[]string{`5: duplicate key "name" in one mapping, first at line 4 (kubectl apply: key "name" already set in map)`}},
		{"in a version", head + specV1 + "    served: false\n", true,
			[]string{`15: duplicate key "served" in one mapping, first at line 13 (kubectl apply: key "served" already set in map)`}},
		{"deep in a schema", schema("          spec:\n            type: object\n            properties:\n              a:\n                type: string\n                maxLength: 3\n                type: integer\n"), true,
			[]string{`25: duplicate key "type" in one mapping, first at line 23 (kubectl apply: key "type" already set in map)`}},
		{"only the first of two", schema("          a: {type: string}\n          b: {type: string}\n          a: {type: integer}\n          b: {type: integer}\n"), false,
			[]string{`21: duplicate key "a" in one mapping, first at line 19 (kubectl apply: key "a" already set in map)`}},
		{"in a large mapping", schema(many.String()), false,
			[]string{`39: duplicate key "f3" in one mapping, first at line 22 (kubectl apply: key "f3" already set in map)`}},
		{"in a flow mapping", schema("          a: {type: string, type: integer}\n"), false,
			[]string{`19: duplicate key "type" in one mapping, first at line 19 (kubectl apply: key "type" already set in map)`}},
		{"in JSON", `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com", "name": "x"}}`, false,
			[]string{`1: duplicate key "name" in one mapping, first at line 1 (kubectl apply: key "name" already set in map)`}},
		{"quoted the other way", head + `  "name": gadgets.example.com` + "\n" + specV1, false,
			[]string{`5: duplicate key "name" in one mapping, first at line 4 (kubectl apply: key "name" already set in map)`}},
		{"the first in the document", head + "  name: gadgets.example.com\n" + specV1 + "    served: false\n", true,
			[]string{`5: duplicate key "name" in one mapping, first at line 4 (kubectl apply: key "name" already set in map)`}},
		{"two merge keys", "a: &a {served: true}\nb: &b {storage: false}\n" + head + specV1 + "  - name: v2\n    <<: *a\n    <<: *b\n", false, nil},
		{"next to a merge key", "base: &b {served: true, storage: false}\n" + head + specV1 + "  - name: v2\n    <<: *b\n    served: false\n", false, nil},
		{"the same key in two mappings", schema("          a: {type: string}\n          b: {type: string}\n"), false, nil},
		{"not a CRD", "apiVersion: v1\nkind: ConfigMap\nkind: Secret\n", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := parseFast([]byte(tc.doc)); ok != tc.fast {
				t.Fatalf("parseFast read it: %v, want %v", ok, tc.fast)
			}
			_, problems := Parse("f.yaml", []byte(tc.doc))
			var got []string
			for _, p := range problems {
				got = append(got, fmt.Sprintf("%d: %s", p.Line, p.Message))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
