package k8stypes

import (
	"bytes"
	"encoding/json"

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
	if p.Field == nil || p.Suffix != "" || p.Field.Default == nil {
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

// minStandalone is how many properties a schema node needs to be recognised on its own (not
// as a field of a recognised parent): fewer (a lone name, a key and a name) say too little
// about where a project's type came from.
const minStandalone = 3

// minNodes is how many schema nodes a subtree with fewer than half of its type's fields must
// have, all fitting, to be recognised: a project's own pod spec that keeps seven of PodSpec's
// fields (affinity, tolerations, securityContext: hundreds of nodes) is still PodSpec's.
const minNodes = 20

// Standalone recognises a schema node as a built-in struct type by its structure alone: every
// property is a field of the type with a schema of that field's kind, all the way down, and
// the node has at least half of the type's fields or minNodes nodes (a schema generated from
// an older k8s.io/api lacks the fields added since; one with a field the type does not have is
// not the type). When several types fit equally well, the node is none of them.
func (s *Set) Standalone(schema *apiextv1.JSONSchemaProps) Place {
	if schema == nil || schema.Type != "object" || len(schema.Properties) < minStandalone {
		return Place{}
	}
	var rarest []*Type
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
	for _, t := range rarest {
		nodes := 0
		if !s.fitsType(t, schema, 0, &nodes) || 2*len(schema.Properties) < len(t.Fields) && nodes < minNodes {
			continue
		}
		switch {
		case len(best) == 0 || len(t.Fields) < len(best[0].Fields):
			best = []*Type{t}
		case len(t.Fields) == len(best[0].Fields):
			best = append(best, t)
		}
	}
	if len(best) != 1 {
		// None, or several that fit as well (LabelSelectorRequirement and
		// NodeSelectorRequirement have the same fields): the structure does not say which.
		return Place{}
	}
	return Place{Shape: &Shape{Kind: KindObject, Ref: best[0].Key}}
}

// Property is the place of a parent's property. A recognised parent's subtree was checked
// whole, so its properties are what its type says. A property the type does not have (a field
// an older k8s.io/api had, seen on the side that still has it) is named after the type but not
// known.
func (s *Set) Property(parent Place, name string) Place {
	if parent.Shape == nil || parent.Shape.Kind != KindObject {
		return Place{}
	}
	t := s.byKey[parent.Shape.Ref]
	f := s.Field(t, name)
	if f == nil {
		return Place{Owner: t, Field: &Field{JSON: name}}
	}
	return Place{Owner: t, Field: f, Shape: &f.Shape}
}

// Items is the place of a recognised array's items.
func (s *Set) Items(parent Place) Place { return s.elem(parent, KindArray, "[*]") }

// Values is the place of a recognised map's values.
func (s *Set) Values(parent Place) Place { return s.elem(parent, KindMap, ".*") }

func (s *Set) elem(parent Place, kind, step string) Place {
	if parent.Shape == nil || parent.Shape.Kind != kind || parent.Shape.Elem == nil {
		return Place{}
	}
	return Place{Owner: parent.Owner, Field: parent.Field, Suffix: parent.Suffix + step, Shape: parent.Shape.Elem}
}

// maxDepth bounds the structural check; built-in types nest far less deep.
const maxDepth = 40

// fitsType reports whether a schema node is the struct type t: an object whose every property
// is one of t's fields and fits that field's shape.
func (s *Set) fitsType(t *Type, schema *apiextv1.JSONSchemaProps, depth int, nodes *int) bool {
	if t == nil || schema.Type != "object" || schema.AdditionalProperties != nil || depth > maxDepth || ownRules(schema) {
		return false
	}
	for name, prop := range schema.Properties {
		f := s.Field(t, name)
		if f == nil || !s.fits(&f.Shape, &prop, depth+1, nodes) {
			return false
		}
	}
	return true
}

// fits reports whether a schema node is what a shape gives, counting the nodes it checked.
func (s *Set) fits(sh *Shape, schema *apiextv1.JSONSchemaProps, depth int, nodes *int) bool {
	*nodes++
	if ownRules(schema) {
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
		return s.fitsType(s.byKey[sh.Ref], schema, depth, nodes)
	case KindArray:
		if schema.Type != "array" || sh.Elem == nil {
			return false
		}
		return schema.Items == nil || schema.Items.Schema == nil || s.fits(sh.Elem, schema.Items.Schema, depth+1, nodes)
	case KindMap:
		if schema.Type != "object" || len(schema.Properties) > 0 || sh.Elem == nil {
			return false
		}
		ap := schema.AdditionalProperties
		return ap == nil || ap.Schema == nil || s.fits(sh.Elem, ap.Schema, depth+1, nodes)
	}
	return false
}

// ownRules reports an enum or a CEL rule: controller-gen writes neither for k8s.io/api's
// types (their +enum and +k8s: validation markers are not its own), so a node with either is a
// project's own type.
func ownRules(schema *apiextv1.JSONSchemaProps) bool {
	return len(schema.Enum) > 0 || len(schema.XValidations) > 0
}
