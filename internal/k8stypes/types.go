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
	// Immutable is the field's +k8s:immutable marker, from which controller-gen v0.21.0 on
	// writes x-kubernetes-validations: `self == oldSelf` on the field and, for an optional
	// one, `!has(oldSelf.f) || has(self.f)` on its parent.
	Immutable bool `json:"immutable,omitempty"`
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

// Set is every known type, indexed for recognition.
type Set struct {
	// Source says where the data was read: k8s.io/api v0.37.2.
	Source string  `json:"source"`
	Types  []*Type `json:"types"`
	byKey  map[string]*Type
	// byField lists the types with a property of each name that a schema node can be on its
	// own (not inline, not a whole object), for recognising a node by its property names.
	byField map[string][]*Type
	// byDoc lists the types with each fingerprint (Type.Doc).
	byDoc map[string][]*Type
	field map[*Type]map[string]*Field
}

//go:embed types.json
var data []byte

// Builtin returns the types read from the k8s.io/api crdguard links, decoded once.
var Builtin = sync.OnceValue(func() *Set {
	s, err := Decode(data)
	if err != nil {
		panic(fmt.Sprintf("k8stypes: the generated types.json does not decode: %v", err)) // a build defect, caught by the tests
	}
	return s
})

// Decode reads a Set written by Encode.
func Decode(b []byte) (*Set, error) {
	s := &Set{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("decoding built-in types: %w", err)
	}
	s.index()
	return s, nil
}

// Encode writes the set as the committed data file: JSON with one type a line, so that a
// k8s.io/api upgrade shows in review as the types it changed.
func (s *Set) Encode() ([]byte, error) {
	var b bytes.Buffer
	src, _ := json.Marshal(s.Source)
	fmt.Fprintf(&b, "{\"source\": %s, \"types\": [\n", src)
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

func (s *Set) index() {
	s.byKey = make(map[string]*Type, len(s.Types))
	s.byField = map[string][]*Type{}
	s.field = make(map[*Type]map[string]*Field, len(s.Types))
	s.byDoc = map[string][]*Type{}
	for _, t := range s.Types {
		s.byKey[t.Key] = t
		if t.Doc != "" && !t.Inline && !t.Root {
			s.byDoc[t.Doc] = append(s.byDoc[t.Doc], t)
		}
		fs := make(map[string]*Field, len(t.Fields))
		for i := range t.Fields {
			fs[t.Fields[i].JSON] = &t.Fields[i]
			if !t.Inline && !t.Root {
				s.byField[t.Fields[i].JSON] = append(s.byField[t.Fields[i].JSON], t)
			}
		}
		s.field[t] = fs
	}
}

// Type returns the type with this key, or nil.
func (s *Set) Type(key string) *Type { return s.byKey[key] }

// Field returns a type's property of this JSON name, or nil.
func (s *Set) Field(t *Type, name string) *Field { return s.field[t][name] }

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
