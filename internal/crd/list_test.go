package crd

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseLists: kubectl applies the items of a list (any object with an items key), so the CRDs
// in a List or a CustomResourceDefinitionList are read at their own lines, in YAML and JSON, on
// both parsers; bare items of a CustomResourceDefinitionList take its kind and apiVersion. A list
// of other objects, or of objects that only look alike, holds no CRD.
func TestParseLists(t *testing.T) {
	// A v1 CRD as a list item, indented by two spaces under "- ".
	item := func(name, indent string) string {
		s := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\nspec:\n  group: example.com\n  names:\n    kind: W\n    plural: w\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
		return "- " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+indent) + "\n"
	}
	bare := func(name string) string { // an item without kind and apiVersion
		return "- metadata:\n    name: " + name + "\n  spec:\n    group: example.com\n    names: {kind: W, plural: w}\n    scope: Namespaced\n    versions: [{name: v1, served: true, storage: true}]\n"
	}
	const json = `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "a.example.com"},
   "spec": {"group": "example.com", "names": {"kind": "A", "plural": "a"}, "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true}]}}]}`
	for _, tc := range []struct {
		name, doc string
		want      []string // name@line apiVersion, then problems as line: message
	}{
		{"kind List", "apiVersion: v1\nkind: List\nitems:\n" + item("a.example.com", "  ") + item("b.example.com", "  "),
			[]string{"a.example.com@4 apiextensions.k8s.io/v1", "b.example.com@18 apiextensions.k8s.io/v1"}},
		{"CustomResourceDefinitionList with bare items", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinitionList\nitems:\n" + bare("a.example.com") + bare("b.example.com"),
			[]string{"a.example.com@4 apiextensions.k8s.io/v1", "b.example.com@11 apiextensions.k8s.io/v1"}},
		{"v1beta1 bare items", "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinitionList\nitems:\n" + strings.Replace(bare("a.example.com"), "versions: [{name: v1, served: true, storage: true}]", "version: v1", 1),
			[]string{"a.example.com@4 apiextensions.k8s.io/v1beta1"}},
		{"JSON", json, []string{"a.example.com@2 apiextensions.k8s.io/v1"}},
		{"beside other objects", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n" + item("a.example.com", "  ") + "---\napiVersion: v1\nkind: ConfigMap\n",
			[]string{"a.example.com@7 apiextensions.k8s.io/v1"}},
		{"nested", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  " + strings.ReplaceAll(strings.TrimSuffix(item("a.example.com", "  "), "\n"), "\n", "\n  ") + "\n",
			[]string{"a.example.com@7 apiextensions.k8s.io/v1"}},
		{"broken item", "apiVersion: v1\nkind: List\nitems:\n" + strings.Replace(item("a.example.com", "  "), "served: true", "served: maybe", 1),
			[]string{`16: not a valid apiextensions.k8s.io/v1 CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool`}},
		{"duplicate key in an item", "apiVersion: v1\nkind: List\nitems:\n" + strings.Replace(item("a.example.com", "  "), "    storage: true\n", "    storage: true\n      served: false\n", 1),
			[]string{`18: duplicate key "served" in one mapping, first at line 16 (kubectl apply: key "served" already set in map)`}},
		// Twins that stay quiet.
		{"list of other objects", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n- kind: Widget\n", nil},
		{"a stub item is a patch, as a stub document is", "apiVersion: v1\nkind: List\nitems:\n- kind: CustomResourceDefinition\n  metadata: {name: a.example.com}\n",
			[]string{"patch a.example.com@4 "}},
		{"bare items of another list kind", "apiVersion: v1\nkind: ConfigMapList\nitems:\n" + bare("a.example.com"), nil},
		{"items that are not objects", "apiVersion: v1\nkind: List\nitems: [a, 1]\n", nil},
		{"empty list", "apiVersion: v1\nkind: CustomResourceDefinitionList\nitems: []\n---\napiVersion: v1\nkind: List\nitems:\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crds, problems := Parse("l.yaml", []byte(tc.doc))
			var got []string
			for _, c := range crds {
				patch := ""
				if c.Patch {
					patch = "patch "
				}
				got = append(got, fmt.Sprintf("%s%s@%d %s", patch, c.Name, c.Line, c.APIVersion))
			}
			for _, p := range problems {
				got = append(got, fmt.Sprintf("%d: %s", p.Line, p.Message))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestParseObjectsOfLists: the items of a list are samples of their own, as kubectl applies
// them; the list itself is not an object.
func TestParseObjectsOfLists(t *testing.T) {
	doc := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: example.com/v1\n  kind: Widget\n  metadata: {name: a}\n- apiVersion: example.com/v1\n  kind: Widget\n  metadata: {name: b}\n"
	var got []string
	for _, o := range ParseObjects("s.yaml", []byte(doc)) {
		got = append(got, fmt.Sprintf("%s %s/%s@%d", o.APIVersion, o.Kind, o.Name, o.Line))
	}
	if want := "example.com/v1 Widget/a@4 example.com/v1 Widget/b@7"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}
