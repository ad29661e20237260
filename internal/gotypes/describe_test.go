package gotypes

import (
	"encoding/json"
	"testing"
)

// TestDescribeMarkers: the list markers controller-tools honours (+listType and, since
// d47d5fa, its +k8s:listType alias; a key both give is one key; a gated +k8s:alpha(…)= form is
// not the marker), +k8s:immutable (v0.21.0; not in its gated form), +structType=atomic, and the doc comment of a type too small to recognise
// by structure, without markers, TODO lines and what follows ---.
func TestDescribeMarkers(t *testing.T) {
	tree := memTree{
		"go.mod": "module k8s.io/api\n\ngo 1.22\n",
		"core/v1/types.go": `package v1

// Ref names an object
// in the same namespace.
// TODO: say more.
// ---
// New uses are discouraged.
// +structType=atomic
type Ref struct {
	// +default=""
	Name string ` + "`json:\"name,omitempty\"`" + `
}

// Spec is big enough to be told by its structure.
type Spec struct {
	// +k8s:listType=map
	// +k8s:listMapKey=name
	Refs []Ref ` + "`json:\"refs\"`" + `
	// +listType=map
	// +listMapKey=name
	// +k8s:listType=map
	// +k8s:listMapKey=name
	Both []Ref ` + "`json:\"both\"`" + `
	// +k8s:alpha(since: "1.37")=+k8s:listType=set
	// +k8s:alpha(since: "1.37")=+k8s:immutable
	Gated []string ` + "`json:\"gated\"`" + `
	// +k8s:immutable
	Fixed string ` + "`json:\"fixed,omitempty\"`" + `
}
`,
	}
	types, err := Describe(tree, []string{"core/v1"}, func(dir string) string { return dir })
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(types)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"key":"core/v1.Ref","name":"Ref","fields":[{"json":"name","shape":{"kind":"string"},"default":""}],"mapType":"atomic","doc":"Ref names an object in the same namespace."},` +
		`{"key":"core/v1.Spec","name":"Spec","fields":[{"json":"refs","shape":{"kind":"array","elem":{"kind":"object","ref":"core/v1.Ref"}},"listType":"map","listMapKeys":["name"]},` +
		`{"json":"both","shape":{"kind":"array","elem":{"kind":"object","ref":"core/v1.Ref"}},"listType":"map","listMapKeys":["name"]},` +
		`{"json":"gated","shape":{"kind":"array","elem":{"kind":"string"}}},{"json":"fixed","shape":{"kind":"string"},"immutable":true}]}]`
	if string(got) != want {
		t.Errorf("described\n%s\nwant\n%s", got, want)
	}
}
