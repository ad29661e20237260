package validation

import (
	"reflect"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
)

// CEL compilation is most of what the CRD update validation costs. A rule whose text, schema
// subtree and enclosing bounds are the same as in the CRD the cluster already accepted compiles
// to the same program with the same estimated cost; when that holds for every rule of a version,
// the version's total cost is the same too, and the server accepts it anyway. skipUnchangedCEL
// leaves such versions' rules out of the update validation, on both sides.

// skipRepeatedCEL removes the CEL rules of every version whose schema is the same as an earlier
// version's (Gateway API serves v1 and v1beta1 from the same types): they compile to the same
// programs and errors, which the earlier version already reports.
func skipRepeatedCEL(c *apiextensions.CustomResourceDefinition) {
	if c.Spec.Validation != nil {
		return // one schema for all versions
	}
	for i := range c.Spec.Versions {
		s := c.Spec.Versions[i].Schema
		if s == nil || s.OpenAPIV3Schema == nil || !hasSchemaRules(s.OpenAPIV3Schema) {
			continue
		}
		for j := 0; j < i; j++ {
			if e := c.Spec.Versions[j].Schema; e != nil && reflect.DeepEqual(e.OpenAPIV3Schema, s.OpenAPIV3Schema) {
				clearSchemaRules(s.OpenAPIV3Schema)
				break
			}
		}
	}
}

// skipUnchangedCEL removes the CEL rules of every version of n whose rules are unchanged in that
// sense from o, and from n.
func skipUnchangedCEL(o, n *apiextensions.CustomResourceDefinition) {
	for _, v := range n.Spec.Versions {
		ov, err1 := apiextensions.GetSchemaForVersion(o, v.Name)
		nv, err2 := apiextensions.GetSchemaForVersion(n, v.Name)
		if err1 != nil || err2 != nil || ov == nil || nv == nil || ov.OpenAPIV3Schema == nil || nv.OpenAPIV3Schema == nil {
			continue
		}
		if rulesUnchanged(ov.OpenAPIV3Schema, nv.OpenAPIV3Schema) {
			clearSchemaRules(ov.OpenAPIV3Schema)
			clearSchemaRules(nv.OpenAPIV3Schema)
		}
	}
}

// rulesUnchanged reports whether every node of n that carries rules has, in o at the same place,
// the same subtree (documentation aside) below ancestors with the same bounds.
func rulesUnchanged(o, n *apiextensions.JSONSchemaProps) bool {
	if n == nil || !hasSchemaRules(n) {
		return true
	}
	if o == nil {
		return false
	}
	if len(n.XValidations) > 0 {
		return sameDocless(o, n)
	}
	if !sameBounds(o, n) {
		return false
	}
	for name, np := range n.Properties {
		op, ok := o.Properties[name]
		if !ok {
			op = apiextensions.JSONSchemaProps{}
		}
		if !rulesUnchanged(&op, &np) {
			return false
		}
	}
	return rulesUnchanged(itemsOf(o), itemsOf(n)) && rulesUnchanged(valuesOf(o), valuesOf(n)) &&
		branchesUnchanged(o.AllOf, n.AllOf) && branchesUnchanged(o.AnyOf, n.AnyOf) &&
		branchesUnchanged(o.OneOf, n.OneOf) && rulesUnchanged(o.Not, n.Not)
}

func branchesUnchanged(o, n []apiextensions.JSONSchemaProps) bool {
	for i := range n {
		if i >= len(o) || !rulesUnchanged(&o[i], &n[i]) {
			return false
		}
	}
	return true
}

// sameBounds compares what makes the rules below a node run more or less often: its type and
// size limits.
func sameBounds(o, n *apiextensions.JSONSchemaProps) bool {
	return o.Type == n.Type && reflect.DeepEqual(o.MaxItems, n.MaxItems) && reflect.DeepEqual(o.MaxProperties, n.MaxProperties) &&
		reflect.DeepEqual(o.MaxLength, n.MaxLength) && reflect.DeepEqual(o.XPreserveUnknownFields, n.XPreserveUnknownFields) &&
		o.XEmbeddedResource == n.XEmbeddedResource && o.XIntOrString == n.XIntOrString
}

func itemsOf(s *apiextensions.JSONSchemaProps) *apiextensions.JSONSchemaProps {
	if s == nil || s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

func valuesOf(s *apiextensions.JSONSchemaProps) *apiextensions.JSONSchemaProps {
	if s == nil || s.AdditionalProperties == nil {
		return nil
	}
	return s.AdditionalProperties.Schema
}

// sameDocless reports whether two schemas are deeply equal once the keywords that only document
// them are left out wherever walkSchema reaches (reflect.DeepEqual of two copies with those
// cleared, which is what it replaces: copying a large subtree twice per rule-carrying node was a
// sixth of the update validation on prometheus-operator's prometheusagents). Each node is
// compared as a shallow copy with its documentation and walked children cleared, then the
// children one by one, nil and empty told apart as reflect.DeepEqual tells them apart.
func sameDocless(o, n *apiextensions.JSONSchemaProps) bool {
	if o == nil || n == nil {
		return o == n
	}
	a, b := shallowDocless(o), shallowDocless(n)
	if !reflect.DeepEqual(a, b) {
		return false
	}
	if (o.Properties == nil) != (n.Properties == nil) || len(o.Properties) != len(n.Properties) {
		return false
	}
	for k, op := range o.Properties {
		np, ok := n.Properties[k]
		if !ok || !sameDocless(&op, &np) {
			return false
		}
	}
	if (o.Items == nil) != (n.Items == nil) {
		return false
	}
	if o.Items != nil && (!sameDocless(o.Items.Schema, n.Items.Schema) || !sameDoclessList(o.Items.JSONSchemas, n.Items.JSONSchemas)) {
		return false
	}
	if (o.AdditionalProperties == nil) != (n.AdditionalProperties == nil) {
		return false
	}
	if o.AdditionalProperties != nil && (o.AdditionalProperties.Allows != n.AdditionalProperties.Allows || !sameDocless(o.AdditionalProperties.Schema, n.AdditionalProperties.Schema)) {
		return false
	}
	return sameDoclessList(o.AllOf, n.AllOf) && sameDoclessList(o.AnyOf, n.AnyOf) && sameDoclessList(o.OneOf, n.OneOf) && sameDocless(o.Not, n.Not)
}

// shallowDocless is s without its documentation and without the children walkSchema walks,
// which sameDocless compares itself.
func shallowDocless(s *apiextensions.JSONSchemaProps) apiextensions.JSONSchemaProps {
	c := *s
	c.Description, c.Title, c.Example, c.ExternalDocs = "", "", nil, nil
	c.Properties, c.Items, c.AdditionalProperties, c.AllOf, c.AnyOf, c.OneOf, c.Not = nil, nil, nil, nil, nil, nil, nil
	return c
}

func sameDoclessList(o, n []apiextensions.JSONSchemaProps) bool {
	if (o == nil) != (n == nil) || len(o) != len(n) {
		return false
	}
	for i := range o {
		if !sameDocless(&o[i], &n[i]) {
			return false
		}
	}
	return true
}

// hasSchemaRules reports whether any node of s that walkSchema reaches carries CEL rules. It
// only reads, and takes the nodes by value (a pointer to a map's value would have the compiler
// move each to the heap): walkSchema copied every property to the heap and stored it back, for
// every node of every CRD and at every level of rulesUnchanged (5% of what comparing the shared
// corpus allocated, most of it for CRDs without a rule).
func hasSchemaRules(s *apiextensions.JSONSchemaProps) bool {
	return s != nil && rulesIn(*s)
}

func rulesIn(s apiextensions.JSONSchemaProps) bool {
	if len(s.XValidations) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if rulesIn(p) {
			return true
		}
	}
	if s.Items != nil && (s.Items.Schema != nil && rulesIn(*s.Items.Schema) || anyRulesIn(s.Items.JSONSchemas)) {
		return true
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && rulesIn(*s.AdditionalProperties.Schema) {
		return true
	}
	return anyRulesIn(s.AllOf) || anyRulesIn(s.AnyOf) || anyRulesIn(s.OneOf) || s.Not != nil && rulesIn(*s.Not)
}

func anyRulesIn(bs []apiextensions.JSONSchemaProps) bool {
	for _, b := range bs {
		if rulesIn(b) {
			return true
		}
	}
	return false
}

func clearSchemaRules(s *apiextensions.JSONSchemaProps) {
	walkSchema(s, func(x *apiextensions.JSONSchemaProps) { x.XValidations = nil })
}

// walkSchema calls f on every node of a schema, in place.
func walkSchema(s *apiextensions.JSONSchemaProps, f func(*apiextensions.JSONSchemaProps)) {
	if s == nil {
		return
	}
	f(s)
	for k, p := range s.Properties {
		walkSchema(&p, f)
		s.Properties[k] = p
	}
	walkSchema(itemsOf(s), f)
	if s.Items != nil {
		for i := range s.Items.JSONSchemas {
			walkSchema(&s.Items.JSONSchemas[i], f)
		}
	}
	walkSchema(valuesOf(s), f)
	for _, bs := range [][]apiextensions.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range bs {
			walkSchema(&bs[i], f)
		}
	}
	walkSchema(s.Not, f)
}
