// Package k8stypes knows the built-in Kubernetes types that CRDs embed (a PodTemplateSpec, a
// Volume, a Toleration) as data read from k8s.io/api (DESIGN §7): each type's fields with
// their JSON names and schema kinds, and what k8s.io/api's markers declare for them (+default,
// +listType, +listMapKey). Rules and the change grouping consult it to recognise a schema
// subtree as a built-in type by its structure, never by its path.
package k8stypes

import (
	"bytes"
	_ "embed" // the generated data
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
)

//go:generate go run ./gen -o types.json

// Type is one Go struct type of k8s.io/api (or k8s.io/apimachinery) as controller-gen writes
// its schema.
type Type struct {
	// Key is the type's package below k8s.io/api (or meta/v1) and its name: core/v1.PodSpec.
	Key string `json:"key"`
	// Name is how messages name it: the Go name, qualified with the package when two packages
	// have a type of that name.
	Name string `json:"name"`
	// Fields are the properties, inline embedded structs flattened, in declaration order.
	Fields []Field `json:"fields"`
	// Inline marks a type only ever embedded inline (EphemeralContainerCommon, VolumeSource's
	// twin PersistentVolumeSource is not): it has no schema node of its own.
	Inline bool `json:"inline,omitempty"`
	// Root marks a kind or a list of a kind (it has apiVersion and kind): a whole object, which
	// a CRD's own root or a resource it wraps resembles more than it embeds.
	Root bool `json:"root,omitempty"`
	// MapType is "atomic" for a type k8s.io/api marks +structType=atomic, which controller-gen
	// writes as x-kubernetes-map-type: atomic on every node of the type.
	MapType string `json:"mapType,omitempty"`
	// Doc is the type's doc comment as NormalDoc reads it, kept for the types too small to be
	// recognised by their structure (fewer than MinStandalone fields): controller-gen copies it
	// into the description of the items of a list of the type, where it tells the type apart
	// from a project's own type of the same shape.
	Doc string `json:"doc,omitempty"`
}

// Field is one property of a type.
type Field struct {
	JSON  string `json:"json"`
	Shape Shape  `json:"shape"`
	// In names the type that declares the field when it comes from an inline embedded one
	// (ConfigMapKeySelector's name is LocalObjectReference's): the field is named after it.
	In string `json:"in,omitempty"`
	// Default is the +default= value k8s.io/api declares, as JSON (ref(Const) resolved).
	Default json.RawMessage `json:"default,omitempty"`
	// ListType and ListMapKeys are the field's +listType and +listMapKey markers.
	ListType    string   `json:"listType,omitempty"`
	ListMapKeys []string `json:"listMapKeys,omitempty"`
	// MapType is "atomic" for a map field k8s.io/api marks +mapType=atomic (PodSpec.nodeSelector),
	// which controller-gen writes as x-kubernetes-map-type: atomic on the field.
	MapType string `json:"mapType,omitempty"`
	// Immutable is the field's +k8s:immutable marker, from which controller-gen v0.21.0 on
	// writes x-kubernetes-validations: `self == oldSelf` on the field and, for an optional
	// one, `!has(oldSelf.f) || has(self.f)` on its parent.
	Immutable bool `json:"immutable,omitempty"`
	// Doc is the field's doc comment as NormalDoc reads it, kept for the fields of types too
	// small to be recognised by their structure (fewer than MinStandalone fields):
	// controller-gen copies it into the property's description, where it still names the type
	// when a project's field comment replaced the type's own (see Set.documented).
	Doc string `json:"doc,omitempty"`
	// Removed is the first k8s.io/api version without the field (PodResourceClaim.source:
	// v0.31.0): a CRD generated from an older one still has it, and is still the type.
	Removed string `json:"removed,omitempty"`
}

// Shape is the schema a Go type expression gives: a kind, the struct type of an object, the
// items of an array or the values of a map.
type Shape struct {
	// Kind is string, integer, number, boolean, object (a struct: Ref), map (Elem), array
	// (Elem), int-or-string, or any (a type whose schema is free-form, such as RawExtension).
	Kind string `json:"kind"`
	Ref  string `json:"ref,omitempty"`
	Elem *Shape `json:"elem,omitempty"`
}

// The shape kinds.
const (
	KindString      = "string"
	KindInteger     = "integer"
	KindNumber      = "number"
	KindBoolean     = "boolean"
	KindObject      = "object"
	KindMap         = "map"
	KindArray       = "array"
	KindIntOrString = "int-or-string"
	KindAny         = "any"
)

// Set is every known type, indexed for recognition. Decode indexes each type by the names of
// its fields and its fingerprint and decodes the type itself when it is first asked for: a run
// asks for a few of the hundreds, and decoding them all took longer than comparing a small CRD.
type Set struct {
	// Source says where the data was read: k8s.io/api v0.37.2.
	Source string `json:"source"`
	// Types are what Encode writes; a decoded Set leaves them to Type.
	Types []*Type `json:"types"`
	// lines holds each type's line of the data file by key, decoded by Type; fields counts
	// each type's fields. The keys, lines and the index's names are the data's own text.
	lines  map[string]string
	fields map[string]int
	// byField lists the keys of the types with a property of each name that a schema node can
	// be on its own (not inline, not a whole object), for recognising a node by its property
	// names.
	byField map[string][]string
	// byDoc lists the keys of such types with each fingerprint (Type.Doc).
	byDoc map[string][]string

	mu    sync.Mutex
	byKey map[string]*Type // decoded so far; nil for a line that does not decode
	field map[*Type]map[string]*Field
}

// data is a string, read-only like the program's text: the index takes its keys, lines and
// field names from it without copying them.
//
//go:embed types.json
var data string

// Builtin returns the types read from the k8s.io/api crdguard links, indexed once.
var Builtin = sync.OnceValue(func() *Set {
	s, err := Decode(data)
	if err != nil {
		panic(fmt.Sprintf("k8stypes: the generated types.json does not decode: %v", err)) // a build defect, caught by the tests
	}
	return s
})

// typesOpen is the end of the first line Encode writes.
const typesOpen = `"types": [`

// Decode reads a Set written by Encode: the first line names the source, each further line
// is one type (see index). The set refers to b's text, which must not change.
func Decode(b string) (*Set, error) {
	first, rest, _ := strings.Cut(b, "\n")
	var top struct {
		Source string `json:"source"`
	}
	if !strings.HasSuffix(first, typesOpen) || json.Unmarshal([]byte(first+"]}"), &top) != nil {
		return nil, errors.New("decoding built-in types: the first line is not one Encode writes")
	}
	n := strings.Count(rest, "\n")
	s := &Set{Source: top.Source, lines: make(map[string]string, n), fields: make(map[string]int, n), byField: map[string][]string{}, byDoc: map[string][]string{},
		byKey: map[string]*Type{}, field: map[*Type]map[string]*Field{}}
	var e entry // its fields are reused from line to line
	for no := 2; rest != ""; no++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, ",")
		if line == "" || line == "]}" {
			continue
		}
		var err error
		if e, err = index(line, e.fields[:0]); err != nil {
			return nil, fmt.Errorf("decoding built-in types, line %d: %w", no, err)
		}
		if _, ok := s.lines[e.key]; ok {
			return nil, fmt.Errorf("decoding built-in types, line %d: %s again", no, e.key)
		}
		s.lines[e.key], s.fields[e.key] = line, len(e.fields)
		if e.standalone {
			for _, f := range e.fields {
				s.byField[f] = append(s.byField[f], e.key)
			}
			if e.doc != "" {
				s.byDoc[e.doc] = append(s.byDoc[e.doc], e.key)
			}
		}
	}
	return s, nil
}

// entry is what the index needs of a type: its key, its fields' JSON names, whether a schema
// node can be the type on its own (neither inline nor root), and its fingerprint.
type entry struct {
	key        string
	fields     []string
	standalone bool
	doc        string
}

// index reads a type's entry from its line, appending the fields' names to fields: scanned
// when the line is as Encode writes it (the key, name and fields first, each field's json name
// first), decoded whole otherwise.
func index(line string, fields []string) (entry, error) {
	if e, ok := scan(line, fields); ok {
		return e, nil
	}
	var t Type
	if err := json.Unmarshal([]byte(line), &t); err != nil {
		return entry{}, err
	}
	e := entry{key: t.Key, fields: fields, standalone: !t.Inline && !t.Root, doc: t.Doc}
	for _, f := range t.Fields {
		e.fields = append(e.fields, f.JSON)
	}
	return e, nil
}

// scan is index for a line in Encode's form; ok is false for any other.
func scan(line string, fields []string) (e entry, ok bool) {
	e.fields = fields
	rest, ok := strings.CutPrefix(line, `{"key":`)
	if !ok {
		return e, false
	}
	if e.key, rest, ok = plainString(rest); !ok {
		return e, false
	}
	if rest, ok = strings.CutPrefix(rest, `,"name":`); !ok {
		return e, false
	}
	if _, rest, ok = plainString(rest); !ok {
		return e, false
	}
	if rest, ok = strings.CutPrefix(rest, `,"fields":`); !ok {
		return e, false
	}
	if after, null := strings.CutPrefix(rest, "null"); null {
		rest = after
	} else if rest, ok = strings.CutPrefix(rest, "["); !ok {
		return e, false
	} else {
		for !strings.HasPrefix(rest, "]") {
			field, ok := strings.CutPrefix(rest, `{"json":`)
			if !ok {
				return e, false
			}
			name, _, ok := plainString(field)
			end := valueEnd(rest)
			if !ok || end < 0 {
				return e, false
			}
			e.fields = append(e.fields, name)
			rest, _ = strings.CutPrefix(rest[end:], ",")
		}
		rest = rest[1:]
	}
	e.standalone = true
	for len(rest) > 0 && rest[0] == ',' {
		name, after, ok := plainString(rest[1:])
		if !ok || len(after) == 0 || after[0] != ':' {
			return e, false
		}
		v := after[1:]
		end := valueEnd(v)
		if end < 0 {
			return e, false
		}
		switch name {
		case "inline", "root":
			if v[:end] != "true" {
				return e, false
			}
			e.standalone = false
		case "doc":
			if json.Unmarshal([]byte(v[:end]), &e.doc) != nil {
				return e, false
			}
		case "mapType":
		default:
			return e, false
		}
		rest = v[end:]
	}
	return e, rest == "}"
}

// plainString reads a JSON string without escapes at the start of b: its text, not a copy.
func plainString(b string) (s string, rest string, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", "", false
	}
	end := strings.IndexByte(b[1:], '"')
	if end < 0 || strings.IndexByte(b[1:1+end], '\\') >= 0 {
		return "", "", false
	}
	return b[1 : 1+end], b[2+end:], true
}

// valueEnd is the index just past the JSON value at the start of b (an object, an array, a
// string or a literal), or -1.
func valueEnd(b string) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return -1
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				return i
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return i + 1
		}
		if depth < 0 {
			return i
		}
	}
	return -1
}

// Encode writes the set as the committed data file: JSON with one type a line, so that a
// k8s.io/api upgrade shows in review as the types it changed.
func (s *Set) Encode() ([]byte, error) {
	var b bytes.Buffer
	src, _ := json.Marshal(s.Source)
	fmt.Fprintf(&b, "{\"source\": %s, %s\n", src, typesOpen)
	for i, t := range s.Types {
		line, err := json.Marshal(t)
		if err != nil {
			return nil, fmt.Errorf("encoding built-in type %s: %w", t.Key, err)
		}
		b.Write(line)
		if i < len(s.Types)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}\n")
	return b.Bytes(), nil
}

// Type returns the type with this key, or nil, decoding it when first asked for.
func (s *Set) Type(key string) *Type {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.byKey[key]; ok {
		return t
	}
	line, ok := s.lines[key]
	if !ok {
		return nil
	}
	t := &Type{}
	if json.Unmarshal([]byte(line), t) != nil || t.Key != key {
		t = nil // a build defect the tests catch; recognition goes without the type
	}
	s.byKey[key] = t
	if t != nil {
		fs := make(map[string]*Field, len(t.Fields))
		for i := range t.Fields {
			fs[t.Fields[i].JSON] = &t.Fields[i]
		}
		s.field[t] = fs
	}
	return t
}

// Field returns a type's property of this JSON name, or nil.
func (s *Set) Field(t *Type, name string) *Field {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.field[t][name]
}

// NormalDoc reads a description as controller-gen writes a doc comment, so that the
// generators of several years compare equal: lines starting with TODO are left out (newer
// controller-gen drops them), nothing after a --- line counts (it stops there), and runs of
// white space are one space (older versions joined lines with spaces, newer keep the breaks).
func NormalDoc(s string) string {
	var words []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "---") {
			break
		}
		if strings.HasPrefix(line, "TODO") {
			continue
		}
		words = append(words, strings.Fields(line)...)
	}
	return strings.Join(words, " ")
}
