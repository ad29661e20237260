package k8stypes

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Place is what a schema node is in terms of the built-in types: the value of a field of a
// type (Owner and Field, with Suffix for the items or values below the field), and the shape
// of its value. The zero Place is a node that is no built-in type's.
type Place struct {
	Owner  *Type
	Field  *Field
	Suffix string // "" for the field itself, "[*]" for its items, ".*" for its values
	Shape  *Shape
	// Extended marks a node recognised as a built-in type that a project's type extends with
	// fields of its own (knative's RevisionSpec is a PodSpec and four more fields), and the
	// fields, items and values below it: they are named after the type, but the recognition
	// rests on the siblings' structure, so nothing is credited to k8s.io/api on its strength
	// alone (Upstream is false).
	Extended bool
	// Alike marks a node that is one of several types with the same fields (Shape names the
	// first by key): its own fields are not named after it.
	Alike bool
}

// Known reports whether the node was recognised.
func (p Place) Known() bool { return p.Shape != nil }

// Name is how the node is named in messages and change names: Container.env, Container.env[*],
// after the type that declares the field (LocalObjectReference.name in a SecretKeySelector);
// "" for a node that is no field of a built-in type.
func (p Place) Name() string {
	if p.Owner == nil || p.Field == nil {
		return ""
	}
	owner := p.Owner.Name
	if p.Field.In != "" {
		owner = p.Field.In
	}
	return owner + "." + p.Field.JSON + p.Suffix
}

// Upstream says whether def (a JSON value) is the default k8s.io/api declares for the field
// this node is.
func (p Place) Upstream(def []byte) bool {
	if p.Extended || p.Field == nil || p.Suffix != "" || p.Field.Default == nil {
		return false
	}
	a, b := canonical(p.Field.Default), canonical(def)
	return a != nil && b != nil && bytes.Equal(a, b)
}

func canonical(raw []byte) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// MinStandalone is how many properties a schema node needs to be recognised by its structure
// alone (not as a field of a recognised parent): fewer (a lone name, a key and a name) say too
// little about where a project's type came from, and such a node is recognised only by the
// fingerprint its description and map type give (Type.Doc).
const MinStandalone = 3

// minNodes is how many schema nodes a subtree with fewer than half of its type's fields must
// have, all fitting, to be recognised: a project's own pod spec that keeps seven of PodSpec's
// fields (affinity, tolerations, securityContext: hundreds of nodes) is still PodSpec's. It is
// also what a type extended with a project's fields must have.
const minNodes = 20

// Standalone recognises a schema node as a built-in struct type without its parent: by its
// structure (every property a field of the type with a schema of that field's kind, all the
// way down, and at least half of the type's fields or minNodes nodes; a schema generated from
// an older k8s.io/api lacks the fields added since), as a type extended with a project's own
// fields, or, for a node with fewer than MinStandalone properties, by its fingerprint. When
// several types fit equally well, the node is none of them.
func (s *Set) Standalone(schema *apiextv1.JSONSchemaProps) Place {
	if schema == nil || schema.Type != "object" || len(schema.Properties) == 0 {
		return Place{}
	}
	if len(schema.Properties) < MinStandalone {
		if p := s.fingerprint(schema); p.Known() {
			return p
		}
		if p := s.small(schema); p.Known() {
			return p
		}
		return s.documented(schema)
	}
	if p := s.exact(schema); p.Known() {
		return p
	}
	return s.extended(schema)
}

func (s *Set) exact(schema *apiextv1.JSONSchemaProps) Place {
	var rarest []string
	first := true
	for name := range schema.Properties {
		ts, ok := s.byField[name]
		if !ok {
			return Place{}
		}
		if first || len(ts) < len(rarest) {
			rarest, first = ts, false
		}
	}
	var best []*Type
	for _, key := range rarest {
		if !s.named(key, schema) {
			continue // it cannot fit, and need not be decoded to say so
		}
		t, nodes := s.Type(key), 0
		if t == nil || !s.fitsType(t, *schema, false, 0, &nodes) || 2*len(schema.Properties) < len(t.Fields) && nodes < minNodes {
			continue
		}
		switch {
		case len(best) == 0 || len(t.Fields) < len(best[0].Fields):
			best = []*Type{t}
		case len(t.Fields) == len(best[0].Fields):
			best = append(best, t)
		}
	}
	return chosen(best)
}

// named reports whether every property of a node is a field of the type with this key, as the
// index says (without decoding the type): a type without one of them cannot fit. Most types a
// rare property name brings up lack another, and each decoded type stays decoded for the run.
func (s *Set) named(key string, schema *apiextv1.JSONSchemaProps) bool {
	for name := range schema.Properties {
		if !slices.Contains(s.byField[name], key) {
			return false
		}
	}
	return true
}

// chosen is the place of a node that the types best fit equally well: the one type, or, for
// several types that are one another's copy field for field (SecretKeySelector and
// ConfigMapKeySelector: key, optional and LocalObjectReference's name), one of them, which one
// the structure does not say — its fields are named only after a type all of them embed
// (LocalObjectReference.name), and have what all of them declare. None when no type fits, or
// several fit as well but differ (a default or a list type of one's own).
func chosen(best []*Type) Place {
	switch {
	case len(best) == 1:
		return Place{Shape: &Shape{Kind: KindObject, Ref: best[0].Key}}
	case len(best) > 1 && alike(best):
		slices.SortFunc(best, func(a, b *Type) int { return strings.Compare(a.Key, b.Key) })
		return Place{Shape: &Shape{Kind: KindObject, Ref: best[0].Key}, Alike: true}
	}
	return Place{}
}

// alike reports whether types have the same fields: names, shapes, markers and the type that
// declares each, and the same map type.
func alike(ts []*Type) bool {
	sig := func(t *Type) string {
		fs := slices.Clone(t.Fields)
		slices.SortFunc(fs, func(a, b Field) int { return strings.Compare(a.JSON, b.JSON) })
		b, _ := json.Marshal(fs)
		return t.MapType + string(b)
	}
	for _, t := range ts[1:] {
		if sig(t) != sig(ts[0]) {
			return false
		}
	}
	return true
}

// fingerprint recognises a node too small to tell by structure (the items of a
// []LocalObjectReference: one string, name) by what controller-gen copies from k8s.io/api
// besides the structure: the type's doc comment as the node's description and its
// +structType as x-kubernetes-map-type, both exactly, and every property fitting. A project's
// own reference type has its own comment (fluxcd's LocalObjectReference "contains enough
// information to locate the referenced Kubernetes resource object") and is not the type; a
// CRD generated without descriptions (crd:maxDescLen=0) has no fingerprint.
func (s *Set) fingerprint(schema *apiextv1.JSONSchemaProps) Place {
	ts := s.byDoc[NormalDoc(schema.Description)]
	if len(ts) != 1 || ownRules(schema, nil) {
		return Place{}
	}
	t := s.Type(ts[0])
	if t == nil {
		return Place{}
	}
	mapType := ""
	if schema.XMapType != nil {
		mapType = *schema.XMapType
	}
	nodes := 0
	if mapType != t.MapType || !s.fitsType(t, *schema, false, 0, &nodes) {
		return Place{}
	}
	return Place{Shape: &Shape{Kind: KindObject, Ref: t.Key}}
}

// minSmallNodes is how many fitting schema nodes a node with fewer than MinStandalone
// properties needs to be recognised by structure alone: LabelSelector (matchLabels and a list
// of LabelSelectorRequirement) has eight, a lone name one.
const minSmallNodes = 6

// small recognises a node with fewer than MinStandalone properties by its structure alone,
// descriptions ignored (generators strip them, projects replace the type's doc with their
// field's): every field of exactly one type, fitting all the way down with at least
// minSmallNodes nodes. A project's field comment in place of LabelSelector's doc no longer hides
// the type; a lone name (LocalObjectReference) still says too little.
func (s *Set) small(schema *apiextv1.JSONSchemaProps) Place {
	p := s.exact(schema)
	if !p.Known() || p.Alike {
		return Place{}
	}
	t, nodes := s.Type(p.Shape.Ref), 0
	if t == nil || len(t.Fields) != len(schema.Properties) || !s.fitsType(t, *schema, false, 0, &nodes) || nodes < minSmallNodes {
		return Place{}
	}
	return p
}

// documented recognises a node too small to tell by structure whose type doc a project's own
// field comment replaced, or a generator stripped, by the doc comments k8s.io/api gives the
// type's fields, which controller-gen copies into the properties' descriptions (a
// LocalObjectReference's name still says "Name of the referent. …"): every field of the type
// present, each property described exactly as that field, the structure fitting, and one type
// (or types alike) doing so. A property without its field's doc leaves the node unknown.
func (s *Set) documented(schema *apiextv1.JSONSchemaProps) Place {
	var any string
	for name := range schema.Properties {
		any = name
		break
	}
	var best []*Type
	for _, key := range s.byField[any] {
		if s.fields[key] != len(schema.Properties) || !s.named(key, schema) {
			continue
		}
		t, nodes := s.Type(key), 0
		if t == nil {
			continue
		}
		described := true
		for name, prop := range schema.Properties {
			if f := s.Field(t, name); f == nil || f.Doc == "" || NormalDoc(prop.Description) != f.Doc {
				described = false
				break
			}
		}
		if described && s.fitsType(t, *schema, false, 0, &nodes) {
			best = append(best, t)
		}
	}
	return chosen(best)
}

// Declared is the place of a node the project's Go sources declare with the built-in type key
// (crd.GoTypes): that type when the node has its structure, every property one of its fields
// fitting all the way down, and no rule of its own; none otherwise (sources that do not
// match the schema are no evidence). A lone name is LocalObjectReference's on this strength
// alone, which its structure cannot say.
func (s *Set) Declared(key string, schema *apiextv1.JSONSchemaProps) Place {
	t, nodes := s.Type(key), 0
	if t == nil || schema == nil || len(schema.Properties) == 0 || !s.fitsType(t, *schema, false, 0, &nodes) {
		return Place{}
	}
	return Place{Shape: &Shape{Kind: KindObject, Ref: t.Key}}
}

// extended recognises a node as a built-in type that a project's type embeds inline and
// extends with fields of its own (knative's RevisionSpec: PodSpec and containerConcurrency,
// timeoutSeconds, ...). The type is the one that names the most of the node's properties,
// alone (the fewest fields breaking a tie): when that type does not fit, no other is tried (keda's volumes, a Volume with one
// field from another k8s.io/api, are not a PersistentVolumeSpec for its twenty volume sources
// of the same names). Its fields the node has must fit exactly, be at least MinStandalone with
// at least minNodes nodes below them, and be at least twice as many as the node's own fields.
// A project's type that merely names some fields like a built-in type's and gives them
// built-in types (crossplane's ControllerConfigSpec: nine of Container's fields and ten of
// PodSpec's) is no type. The node itself must carry no rule of its own.
func (s *Set) extended(schema *apiextv1.JSONSchemaProps) Place {
	if schema.AdditionalProperties != nil || ownRules(schema, nil) {
		return Place{}
	}
	names := map[string]int{}
	for name := range schema.Properties {
		for _, key := range s.byField[name] {
			names[key]++
		}
	}
	best := ""
	most, tie := 0, false
	for key, n := range names {
		// The most names, then the fewest fields (Container before EphemeralContainer, which
		// has Container's and one more), as exact recognition prefers.
		switch {
		case n > most || n == most && s.fields[key] < s.fields[best]:
			best, most, tie = key, n, false
		case n == most && s.fields[key] == s.fields[best]:
			tie = true
		}
	}
	t := s.Type(best)
	if t == nil || tie || !s.extension(t, schema) {
		return Place{}
	}
	return Place{Shape: &Shape{Kind: KindObject, Ref: best}, Extended: true}
}

// extension says whether a node is t extended with fields of its own.
func (s *Set) extension(t *Type, schema *apiextv1.JSONSchemaProps) bool {
	k, nodes := 0, 0
	for name, prop := range schema.Properties {
		f := s.Field(t, name)
		if f == nil {
			continue
		}
		if !s.fits(&f.Shape, prop, false, 1, &nodes) {
			return false
		}
		k++
	}
	own := len(schema.Properties) - k
	return own > 0 && k >= MinStandalone && nodes >= minNodes && 2*own <= k
}

// Property is the place of a parent's property. A recognised parent's subtree was checked
// whole, so its properties are what its type says. A property the type does not have (a field
// an older k8s.io/api had, seen on the side that still has it) is named after the type but not
// known.
func (s *Set) Property(parent Place, name string) Place {
	if parent.Shape == nil || parent.Shape.Kind != KindObject {
		return Place{}
	}
	t := s.Type(parent.Shape.Ref)
	f := s.Field(t, name)
	switch {
	case f == nil && (parent.Extended || parent.Alike):
		return Place{} // the project's own field, or no type's name to give it
	case f == nil:
		return Place{Owner: t, Field: &Field{JSON: name}}
	case parent.Alike && f.In == "":
		// Known, with what every one of the types declares, but named after none of them.
		return Place{Field: f, Shape: &f.Shape, Extended: parent.Extended}
	}
	return Place{Owner: t, Field: f, Shape: &f.Shape, Extended: parent.Extended}
}

// Items is the place of a recognised array's items.
func (s *Set) Items(parent Place) Place { return s.elem(parent, KindArray, "[*]") }

// Values is the place of a recognised map's values.
func (s *Set) Values(parent Place) Place { return s.elem(parent, KindMap, ".*") }

func (s *Set) elem(parent Place, kind, step string) Place {
	if parent.Shape == nil || parent.Shape.Kind != kind || parent.Shape.Elem == nil {
		return Place{}
	}
	return Place{Owner: parent.Owner, Field: parent.Field, Suffix: parent.Suffix + step, Shape: parent.Shape.Elem, Extended: parent.Extended}
}

// maxDepth bounds the structural check; built-in types nest far less deep.
const maxDepth = 40

// fitsType reports whether a schema node is the struct type t: an object whose every property
// is one of t's fields and fits that field's shape. The validation rules controller-gen writes
// itself from k8s.io/api's +k8s:immutable markers (v0.21.0 on) are not the node's own: on an
// immutable field's node (immutable), and on t's node for its optional immutable fields. The
// nodes are taken by value, as the schema's maps hold them: a pointer to each would have the
// compiler move every node checked to the heap.
func (s *Set) fitsType(t *Type, schema apiextv1.JSONSchemaProps, immutable bool, depth int, nodes *int) bool {
	if t == nil || schema.Type != "object" || schema.AdditionalProperties != nil || depth > maxDepth {
		return false
	}
	if ownRules(&schema, func(r apiextv1.ValidationRule) bool {
		f := s.Field(t, immutableOnceSet(r))
		return immutable && immutableRule(r) || f != nil && f.Immutable
	}) {
		return false
	}
	for name, prop := range schema.Properties {
		f := s.Field(t, name)
		if f == nil || !s.fits(&f.Shape, prop, f.Immutable, depth+1, nodes) {
			return false
		}
	}
	return true
}

// immutableRule reports the rule controller-gen writes on an immutable field.
func immutableRule(r apiextv1.ValidationRule) bool {
	return r.Rule == "self == oldSelf" && r.Message == "field is immutable"
}

// immutableOnceSet is the field an optional immutable field's parent rule names, exactly as
// controller-gen writes it, or "".
func immutableOnceSet(r apiextv1.ValidationRule) string {
	f, _ := strings.CutPrefix(r.Rule, "!has(oldSelf.")
	f, _, _ = strings.Cut(f, ")")
	if f == "" || r.Rule != "!has(oldSelf."+f+") || has(self."+f+")" || r.Message != "field "+f+" is immutable once set" {
		return ""
	}
	return f
}

// fits reports whether a schema node is what a shape gives, counting the nodes it checked; on
// an immutable field's node, the rule controller-gen writes for it is not the node's own.
func (s *Set) fits(sh *Shape, schema apiextv1.JSONSchemaProps, immutable bool, depth int, nodes *int) bool {
	*nodes++
	if ownRules(&schema, func(r apiextv1.ValidationRule) bool { return immutable && immutableRule(r) }) {
		return false
	}
	switch sh.Kind {
	case KindAny:
		return true
	case KindIntOrString:
		return schema.XIntOrString
	case KindString, KindInteger, KindNumber, KindBoolean:
		return schema.Type == sh.Kind && !schema.XIntOrString
	case KindObject:
		return s.fitsType(s.Type(sh.Ref), schema, immutable, depth, nodes)
	case KindArray:
		if schema.Type != "array" || sh.Elem == nil {
			return false
		}
		return schema.Items == nil || schema.Items.Schema == nil || s.fits(sh.Elem, *schema.Items.Schema, false, depth+1, nodes)
	case KindMap:
		if schema.Type != "object" || len(schema.Properties) > 0 || sh.Elem == nil {
			return false
		}
		ap := schema.AdditionalProperties
		return ap == nil || ap.Schema == nil || s.fits(sh.Elem, *ap.Schema, false, depth+1, nodes)
	}
	return false
}

// ownRules reports an enum or a CEL rule: controller-gen writes neither for k8s.io/api's
// types (their +enum markers are not its own; of the +k8s: validation markers, v0.21.0 honours
// +k8s:immutable, whose rules fitsType leaves out, and +k8s:enum, on one status type of the
// linked packages only, VolumeHealthStatusType, not known here), so a node with either is a
// project's own type. generated tells the rules controller-gen wrote itself (nil: none).
func ownRules(schema *apiextv1.JSONSchemaProps, generated func(apiextv1.ValidationRule) bool) bool {
	return len(schema.Enum) > 0 || slices.ContainsFunc(schema.XValidations, func(r apiextv1.ValidationRule) bool { return generated == nil || !generated(r) })
}
