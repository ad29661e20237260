package crd

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestFastDecodeMatchesJSON: the direct YAML decoder of schemas gives exactly what the JSON
// path gives, on every CRD of the corpus and of testdata.
func TestFastDecodeMatchesJSON(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/*/*/*/*.yaml")
	more, _ := filepath.Glob("../../testdata/rules/*/*/*.yaml")
	files = append(files, more...)
	fast := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if scalarAt(root, "kind") != Kind {
			continue
		}
		got, err := fastDecode(scalarAt(root, "apiVersion"), root)
		if err != nil {
			continue // the JSON path decides these
		}
		fast++
		raw, err := toJSON(root)
		if err != nil {
			t.Fatal(err)
		}
		want, err := decodeObject(scalarAt(root, "apiVersion"), raw)
		if err != nil {
			t.Fatalf("%s: the fast path accepted what JSON refuses: %v", f, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast decode differs from the JSON path", f)
		}
	}
	if fast < 150 { // testdata alone has about 180; the corpus adds about 250
		t.Errorf("only %d documents took the fast path", fast)
	}
	t.Logf("%d documents decoded both ways, identical", fast)
}

func TestFastDecodeFallsBack(t *testing.T) {
	for _, doc := range []string{
		"maxLength: 1.5", "maxLength: 1.0", "type: 3", "required: [1]", "dependencies: {a: [b]}", "type: yes", "enum: x",
	} {
		data := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: w.example.com}\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        " + doc + "\n"
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(data), &n); err != nil {
			t.Fatal(err)
		}
		if _, err := fastDecode(GroupVersionV1, n.Content[0]); err == nil {
			t.Errorf("%q took the fast path", doc)
		}
	}
}

// TestYAML11Booleans: kubectl (sigs.k8s.io/yaml) reads plain yes/no/on/off as booleans, so the
// API server gets booleans; quoted ones stay strings.
func TestYAML11Booleans(t *testing.T) {
	data := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: yes\n    storage: on\n    schema:\n      openAPIV3Schema:\n        type: object\n        nullable: yes\n        properties:\n          mode: {type: string, enum: ['on', off]}\n"
	crds, problems := Parse("w.yaml", []byte(data))
	if len(problems) != 0 || len(crds) != 1 {
		t.Fatalf("problems %v", problems)
	}
	v := crds[0].Object.Spec.Versions[0]
	s := v.Schema.OpenAPIV3Schema
	if !v.Served || !v.Storage || !s.Nullable {
		t.Fatalf("served %v storage %v nullable %v", v.Served, v.Storage, s.Nullable)
	}
	enum := s.Properties["mode"].Enum
	if string(enum[0].Raw) != `"on"` || string(enum[1].Raw) != "false" {
		t.Fatalf("enum %s %s", enum[0].Raw, enum[1].Raw)
	}
}
