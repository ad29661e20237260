package crd

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
)

// Decoding drops keys the API types do not define, so a typo such as
// x-kubernetes-preserve-unknown-field, or a field of a newer Kubernetes, would be invisible to
// every rule: a change to it could pass silently. kubectl apply refuses such a document (strict
// field validation). The keys are found here by walking the YAML nodes along the Go types, the
// same way for both decoding paths (schema.go and JSON), so each comes with its line and the
// nearest key that does exist there.

// UnknownKey is a key of a CRD document that the CustomResourceDefinition API does not define.
type UnknownKey struct {
	// Field is the path of the key as the API server's strict decoding names it:
	// spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-preserve-unknown-field.
	Field string
	// Key is the key as written.
	Key string
	// Line is the line of the key.
	Line int
	// Nearest is the most similar key defined at that place, or "" when none is close.
	Nearest string

	// id names the key independently of list positions (versions by name), and value is its
	// value as JSON, so a key the base already had unchanged can be told apart.
	id    string
	value string
}

// Same reports whether two unknown keys are the same key at the same place with the same value:
// a change that keeps it changes nothing crdguard could see.
func (u UnknownKey) Same(o UnknownKey) bool { return u.id == o.id && u.value == o.value }

// typeFields caches, per struct type, its JSON keys and their types.
var typeFields sync.Map // reflect.Type → *fieldTable

type fieldTable struct {
	types map[string]reflect.Type
	names []string // sorted, for suggestions
}

var (
	jsonType          = reflect.TypeFor[apiextv1.JSON]()
	propsOrArrayType  = reflect.TypeFor[apiextv1.JSONSchemaPropsOrArray]()
	propsOrBoolType   = reflect.TypeFor[apiextv1.JSONSchemaPropsOrBool]()
	propsOrStrArrType = reflect.TypeFor[apiextv1.JSONSchemaPropsOrStringArray]()
	propsType         = reflect.TypeFor[apiextv1.JSONSchemaProps]()
	betaJSONType      = reflect.TypeFor[apiextv1beta1.JSON]()
	betaOrArrayType   = reflect.TypeFor[apiextv1beta1.JSONSchemaPropsOrArray]()
	betaOrBoolType    = reflect.TypeFor[apiextv1beta1.JSONSchemaPropsOrBool]()
	betaOrStrArrType  = reflect.TypeFor[apiextv1beta1.JSONSchemaPropsOrStringArray]()
	betaPropsType     = reflect.TypeFor[apiextv1beta1.JSONSchemaProps]()
	unmarshalerType   = reflect.TypeFor[json.Unmarshaler]()
)

func fieldsOf(t reflect.Type) *fieldTable {
	if ft, ok := typeFields.Load(t); ok {
		return ft.(*fieldTable)
	}
	ft := &fieldTable{types: map[string]reflect.Type{}}
	addFields(ft, t)
	for name := range ft.types {
		ft.names = append(ft.names, name)
	}
	sort.Strings(ft.names)
	typeFields.Store(t, ft)
	return ft
}

func addFields(ft *fieldTable, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "":
			// Embedded without a name (TypeMeta's ",inline"): its keys are the parent's.
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				addFields(ft, et)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		ft.types[name] = f.Type
	}
}

// unknownKeys lists the keys of a CRD document that its API version does not define.
func unknownKeys(root *yaml.Node, apiVersion string) []UnknownKey {
	t := reflect.TypeFor[apiextv1.CustomResourceDefinition]()
	if apiVersion == GroupVersionV1beta1 {
		t = reflect.TypeFor[apiextv1beta1.CustomResourceDefinition]()
	}
	w := &keyWalker{}
	w.walk(root, t, 0)
	return w.out
}

type keyWalker struct {
	out   []UnknownKey
	nodes int
	// steps lead from the root to the node being walked; the paths they spell are written
	// only for an unknown key (writing them for every node was a tenth of what comparing a
	// typical pair allocated).
	steps []keyStep
}

// keyStep is one step of a path: a struct's key, a map's key, or a list's item (its index,
// and the item for its name).
type keyStep struct {
	kind  byte // 'k' a struct's key, 'm' a map's key, 'i' a list's item
	key   string
	index int
	item  *yaml.Node
}

// paths spells the steps as the API server's strict decoding names a field
// (spec.versions[0].schema) and as an id that keeps list items by name and map keys apart from
// nesting (spec.versions[name=v1].schema, ...properties[a.b]).
func (w *keyWalker) paths() (field, id string) {
	var f, i strings.Builder
	for _, s := range w.steps {
		switch s.kind {
		case 'k', 'm':
			if f.Len() > 0 {
				f.WriteByte('.')
			}
			f.WriteString(s.key)
			if s.kind == 'm' {
				i.WriteString("[" + s.key + "]")
				continue
			}
			if i.Len() > 0 {
				i.WriteByte('.')
			}
			i.WriteString(s.key)
		case 'i':
			f.WriteString("[" + strconv.Itoa(s.index) + "]")
			itemID := strconv.Itoa(s.index)
			if name := scalarAt(resolveAlias(s.item), "name"); name != "" {
				itemID = "name=" + name // versions and columns keep their identity when reordered
			}
			i.WriteString("[" + itemID + "]")
		}
	}
	return f.String(), i.String()
}

// walk checks node n against type t, at the end of w.steps.
func (w *keyWalker) walk(n *yaml.Node, t reflect.Type, depth int) {
	w.nodes++
	if n == nil || depth > MaxDepth || w.nodes > MaxExpandedNodes {
		return // decoding already refused the document, or will
	}
	n = resolveAlias(n)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case jsonType, betaJSONType:
		return // any JSON value
	case propsOrArrayType, betaOrArrayType:
		if n.Kind == yaml.SequenceNode {
			w.walk(n, reflect.SliceOf(schemaType(t)), depth)
		} else {
			w.walk(n, schemaType(t), depth)
		}
		return
	case propsOrBoolType, propsOrStrArrType, betaOrBoolType, betaOrStrArrType:
		if n.Kind == yaml.MappingNode {
			w.walk(n, schemaType(t), depth)
		}
		return
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return // decoded its own way (times, quantities, raw fields)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		ft := fieldsOf(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolveAlias(n.Content[i])
			w.steps = append(w.steps, keyStep{kind: 'k', key: k.Value})
			if ct, ok := ft.types[k.Value]; ok {
				w.walk(n.Content[i+1], ct, depth+1)
			} else {
				field, id := w.paths()
				value, _ := toJSON(n.Content[i+1])
				w.out = append(w.out, UnknownKey{Field: field, Key: k.Value, Line: k.Line, Nearest: Nearest(k.Value, ft.names), id: id, value: string(value)})
			}
			w.steps = w.steps[:len(w.steps)-1]
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.steps = append(w.steps, keyStep{kind: 'm', key: resolveAlias(n.Content[i]).Value})
			w.walk(n.Content[i+1], t.Elem(), depth+1)
			w.steps = w.steps[:len(w.steps)-1]
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode || t.Elem().Kind() == reflect.Uint8 {
			return
		}
		for i, it := range n.Content {
			w.steps = append(w.steps, keyStep{kind: 'i', index: i, item: it})
			w.walk(it, t.Elem(), depth+1)
			w.steps = w.steps[:len(w.steps)-1]
		}
	}
}

// schemaType is the schema type of the API version an "or" type belongs to.
func schemaType(t reflect.Type) reflect.Type {
	if t.PkgPath() == betaPropsType.PkgPath() {
		return betaPropsType
	}
	return propsType
}

// Nearest returns the candidate most similar to word (by edit distance, ignoring case), or ""
// when even the nearest differs in more than a fifth of its letters (at least two edits are
// allowed, so a swapped pair of letters is still recognised).
func Nearest(word string, candidates []string) string {
	best, bestDist := "", -1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		d := editDistance(lw, strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(word)/5) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between two strings, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// EditDistance is the Levenshtein distance between two strings, by bytes, ignoring case.
func EditDistance(a, b string) int { return editDistance(strings.ToLower(a), strings.ToLower(b)) }
