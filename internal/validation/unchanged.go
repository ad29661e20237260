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
		return reflect.DeepEqual(docless(o), docless(n))
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

// docless is a copy of a schema without the keywords that only document it.
func docless(s *apiextensions.JSONSchemaProps) *apiextensions.JSONSchemaProps {
	c := s.DeepCopy()
	walkSchema(c, func(x *apiextensions.JSONSchemaProps) {
		x.Description, x.Title, x.Example, x.ExternalDocs = "", "", nil, nil
	})
	return c
}

func hasSchemaRules(s *apiextensions.JSONSchemaProps) bool {
	found := false
	walkSchema(s, func(x *apiextensions.JSONSchemaProps) { found = found || len(x.XValidations) > 0 })
	return found
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
