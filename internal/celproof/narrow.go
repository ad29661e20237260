package celproof

import (
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// narrow is a deep copy of a node's schema that keeps only what rules reading read can look at,
// so that the validator compiled for those rules decides every object exactly as the whole
// schema's would, at a fraction of the cost: the API server's CEL values look a field up by
// building a map of every property of its object (model.Structural.Properties), which on a node
// of hundreds of properties is most of the time a rule takes.
//
// Of every object node the rules select fields of, it keeps the properties they select (narrowed
// the same way) and every required property whole: a required property without a default counts
// in the object's smallest serialized size, from which the cost estimator bounds the items of a
// list without maxItems — drop it and a rule's estimated cost, and so whether it compiles, could
// change. A value the rules use as a whole (compare, pass to a function, index) or read as a
// map, a node with allOf (the validator runs the rules of allOf branches' properties against the
// node's own properties) and a dropped property with allOf below it are kept whole. Everything
// else of a node (type, nullable, list type, value validations) is kept: the value conversion
// and the cost estimator read it. A field the rules never name is invisible to them (looking up
// a field the schema does not declare finds nothing), so an object is judged alike with or
// without it. A list the rules only measure (size()) keeps its items' required properties: its
// length is all they see.
func narrow(s *structuralschema.Structural, read *refNode) *structuralschema.Structural {
	return narrowed(s, read).DeepCopy()
}

// narrowed builds the narrowed tree, sharing the subtrees it keeps whole with s (narrow copies
// it before anyone can change it).
func narrowed(s *structuralschema.Structural, read *refNode) *structuralschema.Structural {
	if s == nil || read.whole || s.ValueValidation != nil && len(s.ValueValidation.AllOf) > 0 {
		return s
	}
	out := *s
	if s.Properties != nil {
		if read.elem != nil {
			return s // iterated as a map of its properties: every one matters
		}
		var required []string
		if s.ValueValidation != nil {
			required = s.ValueValidation.Required
		}
		out.Properties = make(map[string]structuralschema.Structural, len(read.fields))
		for name, p := range s.Properties {
			switch sub, ok := read.fields[name]; {
			case ok:
				out.Properties[name] = *narrowed(&p, sub)
			case slices.Contains(required, name), hasAllOf(&p):
				out.Properties[name] = p
			}
		}
	}
	if s.Items != nil {
		elem := read.elem
		if elem == nil {
			elem = &refNode{} // not read, but its smallest size bounds the list's length
		}
		out.Items = narrowed(s.Items, elem)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil && read.elem == nil && len(read.fields) == 0 {
		// A map only tested for presence; a map whose keys are selected or iterated stays whole
		// (its values are what a selection reads, and a comprehension's variable is a key).
		narrowedAP := *ap
		narrowedAP.Structural = narrowed(ap.Structural, &refNode{})
		out.AdditionalProperties = &narrowedAP
	}
	return &out
}

// hasAllOf reports whether a node or one below it has allOf branches.
func hasAllOf(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.ValueValidation != nil && len(s.ValueValidation.AllOf) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if hasAllOf(&p) {
			return true
		}
	}
	return hasAllOf(s.Items) || s.AdditionalProperties != nil && hasAllOf(s.AdditionalProperties.Structural)
}
