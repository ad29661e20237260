package crd

import (
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Schemas are most of a CRD's bytes, and decoding them through JSON is slow: the API types'
// custom UnmarshalJSON methods re-parse every nested items and additionalProperties subtree. So
// openAPIV3Schema is read straight from the YAML nodes here. The JSON path stays the reference:
// anything this decoder does not handle exactly as encoding/json would (a type mismatch, a
// non-integral length, dependencies, …) returns ok=false and the document is decoded through JSON
// instead. A test checks both paths agree on every CRD of the corpus.

// decodeSchema converts a schema mapping; ok is false where the JSON path must decide.
func decodeSchema(n *yaml.Node, depth int) (s apiextv1.JSONSchemaProps, ok bool) {
	// Aliases can make a small document expand without bound: only the JSON path, which
	// counts expanded nodes, may decode them.
	if n.Kind != yaml.MappingNode || depth > MaxDepth || hasAlias(n) {
		return s, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return s, false
		}
		if isNull(v) {
			if !nullField(&s, k.Value) {
				return s, false
			}
			continue
		}
		if !setField(&s, k.Value, v, depth) {
			return s, false
		}
	}
	return s, true
}

// nullField applies a JSON null: pointer, slice and map fields become nil, string and bool
// fields keep their zero value, which is what encoding/json does.
func nullField(s *apiextv1.JSONSchemaProps, key string) bool {
	switch key {
	case "$ref":
		s.Ref = nil
	case "default":
		s.Default = nil
	case "example":
		s.Example = nil
	case "maximum":
		s.Maximum = nil
	case "minimum":
		s.Minimum = nil
	case "multipleOf":
		s.MultipleOf = nil
	case "maxLength":
		s.MaxLength = nil
	case "minLength":
		s.MinLength = nil
	case "maxItems":
		s.MaxItems = nil
	case "minItems":
		s.MinItems = nil
	case "maxProperties":
		s.MaxProperties = nil
	case "minProperties":
		s.MinProperties = nil
	case "enum":
		s.Enum = nil
	case "required":
		s.Required = nil
	case "items":
		s.Items = nil
	case "allOf":
		s.AllOf = nil
	case "oneOf":
		s.OneOf = nil
	case "anyOf":
		s.AnyOf = nil
	case "not":
		s.Not = nil
	case "properties":
		s.Properties = nil
	case "additionalProperties":
		s.AdditionalProperties = nil
	case "externalDocs":
		s.ExternalDocs = nil
	case "x-kubernetes-preserve-unknown-fields":
		s.XPreserveUnknownFields = nil
	case "x-kubernetes-list-map-keys":
		s.XListMapKeys = nil
	case "x-kubernetes-list-type":
		s.XListType = nil
	case "x-kubernetes-map-type":
		s.XMapType = nil
	case "x-kubernetes-validations":
		s.XValidations = nil
	case "id", "$schema", "description", "type", "format", "title", "pattern",
		"exclusiveMaximum", "exclusiveMinimum", "uniqueItems", "nullable",
		"x-kubernetes-embedded-resource", "x-kubernetes-int-or-string":
	case "patternProperties", "dependencies", "additionalItems", "definitions":
		return false // rare: let encoding/json decide
	}
	return true
}

func setField(s *apiextv1.JSONSchemaProps, key string, v *yaml.Node, depth int) bool {
	ok := true
	str := func(dst *string) { *dst, ok = strValue(v) }
	strPtr := func(dst **string) {
		var x string
		if x, ok = strValue(v); ok {
			*dst = &x
		}
	}
	boolean := func(dst *bool) { *dst, ok = boolValue(v) }
	float := func(dst **float64) {
		var f float64
		if f, ok = floatValue(v); ok {
			*dst = &f
		}
	}
	integer := func(dst **int64) {
		var i int64
		if i, ok = intValue(v); ok {
			*dst = &i
		}
	}
	raw := func(dst **apiextv1.JSON) {
		b, err := toJSON(v)
		ok = err == nil
		*dst = &apiextv1.JSON{Raw: b}
	}
	schemas := func(dst *[]apiextv1.JSONSchemaProps) {
		*dst, ok = schemaList(v, depth)
	}
	switch key {
	case "id":
		str(&s.ID)
	case "$schema":
		var x string
		x, ok = strValue(v)
		s.Schema = apiextv1.JSONSchemaURL(x)
	case "$ref":
		strPtr(&s.Ref)
	case "description":
		str(&s.Description)
	case "type":
		str(&s.Type)
	case "format":
		str(&s.Format)
	case "title":
		str(&s.Title)
	case "pattern":
		str(&s.Pattern)
	case "default":
		raw(&s.Default)
	case "example":
		raw(&s.Example)
	case "maximum":
		float(&s.Maximum)
	case "minimum":
		float(&s.Minimum)
	case "multipleOf":
		float(&s.MultipleOf)
	case "exclusiveMaximum":
		boolean(&s.ExclusiveMaximum)
	case "exclusiveMinimum":
		boolean(&s.ExclusiveMinimum)
	case "uniqueItems":
		boolean(&s.UniqueItems)
	case "nullable":
		boolean(&s.Nullable)
	case "x-kubernetes-embedded-resource":
		boolean(&s.XEmbeddedResource)
	case "x-kubernetes-int-or-string":
		boolean(&s.XIntOrString)
	case "maxLength":
		integer(&s.MaxLength)
	case "minLength":
		integer(&s.MinLength)
	case "maxItems":
		integer(&s.MaxItems)
	case "minItems":
		integer(&s.MinItems)
	case "maxProperties":
		integer(&s.MaxProperties)
	case "minProperties":
		integer(&s.MinProperties)
	case "enum":
		if v.Kind != yaml.SequenceNode {
			return false
		}
		s.Enum = make([]apiextv1.JSON, len(v.Content))
		for i, it := range v.Content {
			if isNull(resolveAlias(it)) {
				continue // encoding/json leaves Raw empty for a null item
			}
			b, err := toJSON(it)
			if err != nil {
				return false
			}
			s.Enum[i].Raw = b
		}
	case "required":
		s.Required, ok = stringList(v)
	case "x-kubernetes-list-map-keys":
		s.XListMapKeys, ok = stringList(v)
	case "x-kubernetes-list-type":
		strPtr(&s.XListType)
	case "x-kubernetes-map-type":
		strPtr(&s.XMapType)
	case "x-kubernetes-preserve-unknown-fields":
		var b bool
		if b, ok = boolValue(v); ok {
			s.XPreserveUnknownFields = &b
		}
	case "items":
		switch v.Kind {
		case yaml.MappingNode:
			var sub apiextv1.JSONSchemaProps
			sub, ok = decodeSchema(v, depth+1)
			s.Items = &apiextv1.JSONSchemaPropsOrArray{Schema: &sub}
		case yaml.SequenceNode:
			s.Items = &apiextv1.JSONSchemaPropsOrArray{}
			s.Items.JSONSchemas, ok = schemaList(v, depth)
		default:
			return false
		}
	case "allOf":
		schemas(&s.AllOf)
	case "oneOf":
		schemas(&s.OneOf)
	case "anyOf":
		schemas(&s.AnyOf)
	case "not":
		var sub apiextv1.JSONSchemaProps
		sub, ok = decodeSchema(v, depth+1)
		s.Not = &sub
	case "properties":
		if v.Kind != yaml.MappingNode {
			return false
		}
		s.Properties = make(map[string]apiextv1.JSONSchemaProps, len(v.Content)/2)
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := resolveAlias(v.Content[i])
			if k.Kind != yaml.ScalarNode || isNull(resolveAlias(v.Content[i+1])) {
				return false
			}
			sub, subOK := decodeSchema(v.Content[i+1], depth+1)
			if !subOK {
				return false
			}
			s.Properties[k.Value] = sub
		}
	case "additionalProperties":
		switch v.Kind {
		case yaml.MappingNode:
			var sub apiextv1.JSONSchemaProps
			sub, ok = decodeSchema(v, depth+1)
			s.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &sub}
		default:
			var b bool
			b, ok = boolValue(v)
			s.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: b}
		}
	case "externalDocs":
		if v.Kind != yaml.MappingNode {
			return false
		}
		d := &apiextv1.ExternalDocumentation{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := resolveAlias(v.Content[i]), resolveAlias(v.Content[i+1])
			if isNull(val) {
				continue
			}
			switch k.Value {
			case "description":
				d.Description, ok = strValue(val)
			case "url":
				d.URL, ok = strValue(val)
			}
			if !ok {
				return false
			}
		}
		s.ExternalDocs = d
	case "x-kubernetes-validations":
		s.XValidations, ok = validationRules(v)
	case "patternProperties", "dependencies", "additionalItems", "definitions":
		return false // not allowed in structural schemas; let encoding/json decide
	}
	return ok
}

func schemaList(v *yaml.Node, depth int) ([]apiextv1.JSONSchemaProps, bool) {
	if v.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]apiextv1.JSONSchemaProps, len(v.Content))
	for i, it := range v.Content {
		if isNull(resolveAlias(it)) {
			continue
		}
		var ok bool
		if out[i], ok = decodeSchema(it, depth+1); !ok {
			return nil, false
		}
	}
	return out, true
}

func validationRules(v *yaml.Node) (apiextv1.ValidationRules, bool) {
	if v.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make(apiextv1.ValidationRules, len(v.Content))
	for i, it := range v.Content {
		it = resolveAlias(it)
		if isNull(it) {
			continue
		}
		if it.Kind != yaml.MappingNode {
			return nil, false
		}
		r := &out[i]
		for j := 0; j+1 < len(it.Content); j += 2 {
			k, val := resolveAlias(it.Content[j]), resolveAlias(it.Content[j+1])
			if isNull(val) {
				switch k.Value {
				case "reason":
					r.Reason = nil
				case "optionalOldSelf":
					r.OptionalOldSelf = nil
				}
				continue
			}
			ok := true
			switch k.Value {
			case "rule":
				r.Rule, ok = strValue(val)
			case "message":
				r.Message, ok = strValue(val)
			case "messageExpression":
				r.MessageExpression, ok = strValue(val)
			case "fieldPath":
				r.FieldPath, ok = strValue(val)
			case "reason":
				var x string
				if x, ok = strValue(val); ok {
					reason := apiextv1.FieldValueErrorReason(x)
					r.Reason = &reason
				}
			case "optionalOldSelf":
				var b bool
				if b, ok = boolValue(val); ok {
					r.OptionalOldSelf = &b
				}
			}
			if !ok {
				return nil, false
			}
		}
	}
	return out, true
}

func stringList(v *yaml.Node) ([]string, bool) {
	if v.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]string, len(v.Content))
	for i, it := range v.Content {
		it = resolveAlias(it)
		if isNull(it) {
			continue
		}
		var ok bool
		if out[i], ok = strValue(it); !ok {
			return nil, false
		}
	}
	return out, true
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// strValue accepts what encodes to a JSON string: !!str, and the tags toJSON writes as strings.
func strValue(n *yaml.Node) (string, bool) {
	if _, isBool := yaml11Bool(n); n.Kind != yaml.ScalarNode || isBool {
		return "", false
	}
	switch n.ShortTag() {
	case "!!null", "!!bool", "!!int", "!!float":
		return "", false
	}
	return n.Value, true
}

func boolValue(n *yaml.Node) (bool, bool) {
	if b, ok := yaml11Bool(n); ok {
		return b, true
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	switch strings.ToLower(n.Value) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func floatValue(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode {
		return 0, false
	}
	switch n.ShortTag() {
	case "!!int":
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		return float64(i), err == nil
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

func intValue(n *yaml.Node) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, false // a float, even 1.0, goes through JSON to be judged exactly
	}
	i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	return i, err == nil
}

// hasAlias reports whether a mapping's keys or values are aliases; nested mappings are checked
// when they are decoded.
func hasAlias(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			return true
		}
		if c.Kind == yaml.SequenceNode {
			for _, it := range c.Content {
				if it.Kind == yaml.AliasNode {
					return true
				}
			}
		}
	}
	return false
}
