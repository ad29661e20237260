package crd

import (
	"bytes"
	"encoding/json"

	yaml "go.yaml.in/yaml/v3"
)

// Object is a Kubernetes object other than a CRD (a sample custom resource), decoded as the API
// server sees it, with its YAML positions.
type Object struct {
	File       string
	Line       int
	APIVersion string
	Kind       string
	// Name is metadata.name, or metadata.generateName followed by "…" (for messages).
	Name string
	// Data is the object as JSON values (map[string]any, []any, float64/int64, …).
	Data map[string]any

	root *yaml.Node
}

// Header is the object without its content: where it is and what it is.
func (o *Object) Header() *Object {
	return &Object{File: o.File, Line: o.Line, APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name}
}

// LineOf returns the line of the node at p, or of its deepest existing parent.
func (o *Object) LineOf(p Path) int {
	line, _ := lookup(o.root, o.Line, p)
	return line
}

// ParseObjects returns the documents of a file that have an apiVersion and a kind and are not
// CRDs, the items of lists among them. Documents that do not decode are skipped: they are not
// what crdguard checks.
func ParseObjects(file string, data []byte) []*Object {
	docs, _ := parseDocuments(file, data) // a syntax error: what came before is kept
	return objectsOf(file, flattenLists(docs), hasMergeKeys(data))
}

// ParseWithObjects is Parse and ParseObjects of one file, which it parses once.
func ParseWithObjects(file string, data []byte) ([]*CRD, []Problem, []*Object) {
	c := Read(file, data, true)
	return c.CRDs, c.Problems, c.Objects
}

// objectsOf is ParseObjects on parsed documents, lists flattened; merges says the file may hold
// merge keys.
func objectsOf(file string, docs []*yaml.Node, merges bool) []*Object {
	var out []*Object
	for _, doc := range docs {
		if merges && expandMerges(doc) != nil {
			continue
		}
		root := resolveAlias(doc.Content[0])
		if root.Kind != yaml.MappingNode {
			continue
		}
		apiVersion, kind := scalarAt(root, "apiVersion"), scalarAt(root, "kind")
		if apiVersion == "" || kind == "" || kind == Kind {
			continue
		}
		raw, err := toJSON(root)
		if err != nil {
			continue
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if d.Decode(&m) != nil {
			continue
		}
		normalizeNumbers(m)
		name := ""
		if meta := child(root, "metadata"); meta != nil {
			name = scalarAt(meta, "name")
			if name == "" {
				// kubectl create accepts generateName; the server picks the rest of the name.
				if g := scalarAt(meta, "generateName"); g != "" {
					name = g + "…"
				}
			}
		}
		out = append(out, &Object{File: file, Line: root.Line, APIVersion: apiVersion, Kind: kind, Name: name, Data: m, root: root})
	}
	return out
}

// normalizeNumbers turns json.Number into int64 or float64, as the API server's decoder does.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
