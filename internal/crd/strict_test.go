package crd

import (
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// specV1 is a spec with one served and stored version v1, whose keys continue at its indent.
const specV1 = `spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
`

func TestUnknownKeys(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string // "field line nearest"
	}{{
		name: "v1 everywhere",
		doc: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  lables: {a: b}
` + specV1 + `    deprecatedWarning: old
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-field: true
            properties:
              tags:
                type: array
                items:
                  type: string
                  maxLenght: 3
              labels:
                type: object
                additionalProperties:
                  type: string
                  x-kubernetes-new-thing: 1
              any:
                default: {whatever: 1}
                x-kubernetes-validations:
                - rule: self.size() > 0
                  mesage: too short
`,
		want: []string{
			"metadata.lables 5 labels",
			"spec.versions[0].deprecatedWarning 14 deprecationWarning",
			"spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-preserve-unknown-field 21 x-kubernetes-preserve-unknown-fields",
			"spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.tags.items.maxLenght 27 maxLength",
			"spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.labels.additionalProperties.x-kubernetes-new-thing 32 ",
			"spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.any.x-kubernetes-validations[0].mesage 37 message",
		},
	}, {
		name: "v1beta1 top-level validation",
		doc: `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  version: v1
  names: {kind: Widget, plural: widgets}
  validation:
    openAPIV3Schema:
      type: object
      propertes: {}
`,
		want: []string{"spec.validation.openAPIV3Schema.propertes 12 properties"},
	}, {
		name: "known keys only, times and raw values skipped",
		doc: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  creationTimestamp: null
` + specV1 + `    schema:
      openAPIV3Schema:
        type: object
        example: {anything: [1, 2]}
status:
  storedVersions: [v1]
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			crds, problems := Parse("x.yaml", []byte(tc.doc))
			if len(problems) != 0 || len(crds) != 1 {
				t.Fatalf("crds %d problems %v", len(crds), problems)
			}
			var got []string
			for _, u := range crds[0].Unknown {
				got = append(got, fmt.Sprintf("%s %d %s", u.Field, u.Line, u.Nearest))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestUnknownKeySame(t *testing.T) {
	parse := func(value string) UnknownKey {
		t.Helper()
		crds, _ := Parse("x.yaml", []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b\nspec:\n  group: b\n  names: {kind: A, plural: a}\n  versions:\n  - name: v2\n    served: true\n  - name: v1\n    fancy: "+value+"\n"))
		if len(crds) != 1 || len(crds[0].Unknown) != 1 {
			t.Fatalf("want one unknown key, got %+v", crds)
		}
		return crds[0].Unknown[0]
	}
	a, b, c := parse("1"), parse("1"), parse("2")
	if !a.Same(b) || a.Same(c) {
		t.Errorf("Same: equal values %v, different values %v", a.Same(b), a.Same(c))
	}
}

// TestUnknownKeyPaths: each unknown key's field as the API server names it and its id, which
// names list items by name where they have one and map keys in brackets, so that a key the
// base had at the same place is recognised after the versions are reordered.
func TestUnknownKeyPaths(t *testing.T) {
	doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  lables: {a: b}
` + specV1 + `    schema:
      openAPIV3Schema:
        type: object
        properties:
          a.b:
            type: string
            maxLenght: 3
          c:
            type: string
            x-kubernetes-validations:
            - rule: self.size() > 0
              mesage: too short
  - name: v2
    served: false
    storage: false
    fancy: 1
`
	crds, problems := Parse("x.yaml", []byte(doc))
	if len(crds) != 1 || len(problems) != 0 {
		t.Fatalf("crds %v, problems %v", crds, problems)
	}
	var got []string
	for _, u := range crds[0].Unknown {
		got = append(got, fmt.Sprintf("%s | %s | %d", u.Field, u.id, u.Line))
	}
	want := []string{
		"metadata.lables | metadata.lables | 5",
		"spec.versions[0].schema.openAPIV3Schema.properties.a.b.maxLenght | spec.versions[name=v1].schema.openAPIV3Schema.properties[a.b].maxLenght | 20",
		"spec.versions[0].schema.openAPIV3Schema.properties.c.x-kubernetes-validations[0].mesage | spec.versions[name=v1].schema.openAPIV3Schema.properties[c].x-kubernetes-validations[0].mesage | 25",
		"spec.versions[1].fancy | spec.versions[name=v2].fancy | 29",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestUnknownKeysWriteNoPathsForKnownKeys: walking a document whose keys are all known
// allocates no path per node (the paths are written only for an unknown key): the walk of a
// schema of 200 properties allocates no more than that of one.
func TestUnknownKeysWriteNoPathsForKnownKeys(t *testing.T) {
	walk := func(props int) float64 {
		var b strings.Builder
		b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n" + specV1 + "    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n")
		for i := range props {
			fmt.Fprintf(&b, "          p%d:\n            type: array\n            items:\n              type: string\n", i)
		}
		crds, problems := Parse("x.yaml", []byte(b.String()))
		if len(crds) != 1 || len(problems) != 0 || len(crds[0].Unknown) != 0 {
			t.Fatalf("crds %v, problems %v", crds, problems)
		}
		return testing.AllocsPerRun(20, func() { unknownKeys(crds[0].root, GroupVersionV1) })
	}
	if one, many := walk(1), walk(200); many > one {
		t.Errorf("%v allocations for 200 properties, %v for one", many, one)
	}
}

func TestNearest(t *testing.T) {
	names := []string{"description", "type", "x-kubernetes-preserve-unknown-fields"}
	for word, want := range map[string]string{
		"x-kubernetes-preserve-unknown-field": "x-kubernetes-preserve-unknown-fields",
		"Type":                                "type",
		"descripton":                          "description",
		"completely-else":                     "",
	} {
		if got := Nearest(word, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
}

// TestUnknownKeysEveryPath: the keys come out the same whichever YAML parser read the document
// (the fast one or yaml.v3) and whichever decoder read the schema (the YAML one or, when it
// gives up, JSON).
func TestUnknownKeysEveryPath(t *testing.T) {
	doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
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
            x-kubernetes-preserve-unknown-field: true
            properties:
              name:
                type: string
                maxLenght: 3
`
	// Block style only, which the fast parser reads; dependencies is a known keyword the YAML
	// schema decoder leaves to JSON.
	slow := strings.Replace(doc, "                maxLenght: 3\n", "                maxLenght: 3\n                dependencies:\n                  other:\n                    type: string\n", 1)
	render := func(t *testing.T, docs []*yaml.Node) string {
		t.Helper()
		if len(docs) != 1 {
			t.Fatalf("%d documents", len(docs))
		}
		c, p := decodeDocument("x.yaml", docs[0], true)
		if p != nil || c == nil {
			t.Fatalf("problem %v", p)
		}
		return fmt.Sprintf("%+v", c.Unknown)
	}
	var want string
	for _, text := range []string{doc, slow} {
		fast, ok := parseFast([]byte(text))
		if !ok {
			t.Fatal("the fast parser gave up")
		}
		v3, err := parseV3([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range []string{render(t, fast), render(t, v3)} {
			if want == "" {
				want = got
			}
			if got != want {
				t.Errorf("got %s\nwant %s", got, want)
			}
		}
	}
	if !strings.Contains(want, "maxLenght") || !strings.Contains(want, "x-kubernetes-preserve-unknown-field") {
		t.Errorf("keys missing: %s", want)
	}
}
