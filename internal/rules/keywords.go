package rules

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// keyword is one field of a JSONSchemaProps; keywordSet is a bit set of them.
type keyword uint

type keywordSet uint64

// Every JSONSchemaProps field, so nothing can differ unseen (a test checks the list against the
// struct, which catches fields a future Kubernetes adds).
const (
	kwID keyword = iota
	kwSchema
	kwRef
	kwDescription
	kwType
	kwFormat
	kwTitle
	kwDefault
	kwMaximum
	kwExclusiveMaximum
	kwMinimum
	kwExclusiveMinimum
	kwMaxLength
	kwMinLength
	kwPattern
	kwMaxItems
	kwMinItems
	kwUniqueItems
	kwMultipleOf
	kwEnum
	kwMaxProperties
	kwMinProperties
	kwRequired
	kwItems
	kwAllOf
	kwOneOf
	kwAnyOf
	kwNot
	kwProperties
	kwAdditionalProperties
	kwPatternProperties
	kwDependencies
	kwAdditionalItems
	kwDefinitions
	kwExternalDocs
	kwExample
	kwNullable
	kwPreserveUnknownFields
	kwEmbeddedResource
	kwIntOrString
	kwListMapKeys
	kwListType
	kwMapType
	kwValidations
	numKeywords
	noKeyword = numKeywords
)

var keywordNames = [numKeywords]string{
	kwID: "id", kwSchema: "$schema", kwRef: "$ref", kwDescription: "description", kwType: "type",
	kwFormat: "format", kwTitle: "title", kwDefault: "default", kwMaximum: "maximum",
	kwExclusiveMaximum: "exclusiveMaximum", kwMinimum: "minimum", kwExclusiveMinimum: "exclusiveMinimum",
	kwMaxLength: "maxLength", kwMinLength: "minLength", kwPattern: "pattern", kwMaxItems: "maxItems",
	kwMinItems: "minItems", kwUniqueItems: "uniqueItems", kwMultipleOf: "multipleOf", kwEnum: "enum",
	kwMaxProperties: "maxProperties", kwMinProperties: "minProperties", kwRequired: "required",
	kwItems: "items", kwAllOf: "allOf", kwOneOf: "oneOf", kwAnyOf: "anyOf", kwNot: "not",
	kwProperties: "properties", kwAdditionalProperties: "additionalProperties",
	kwPatternProperties: "patternProperties", kwDependencies: "dependencies",
	kwAdditionalItems: "additionalItems", kwDefinitions: "definitions", kwExternalDocs: "externalDocs",
	kwExample: "example", kwNullable: "nullable",
	kwPreserveUnknownFields: "x-kubernetes-preserve-unknown-fields",
	kwEmbeddedResource:      "x-kubernetes-embedded-resource", kwIntOrString: "x-kubernetes-int-or-string",
	kwListMapKeys: "x-kubernetes-list-map-keys", kwListType: "x-kubernetes-list-type",
	kwMapType: "x-kubernetes-map-type", kwValidations: "x-kubernetes-validations",
}

func (s keywordSet) names() []string {
	var out []string
	for k := keyword(0); k < numKeywords; k++ {
		if s&(1<<k) != 0 {
			out = append(out, keywordNames[k])
		}
	}
	return out
}

// diffKeywords returns the keywords whose own value differs. For keywords that hold subschemas
// (properties, items, …) only the shape is compared here; the walker descends into them.
func diffKeywords(a, b *apiextv1.JSONSchemaProps) keywordSet {
	var s keywordSet
	set := func(k keyword, differs bool) {
		if differs {
			s |= 1 << k
		}
	}
	set(kwID, a.ID != b.ID)
	set(kwSchema, a.Schema != b.Schema)
	set(kwRef, !eqPtr(a.Ref, b.Ref))
	set(kwDescription, a.Description != b.Description)
	set(kwType, a.Type != b.Type)
	set(kwFormat, a.Format != b.Format)
	set(kwTitle, a.Title != b.Title)
	set(kwDefault, !jsonEqual(a.Default, b.Default))
	set(kwMaximum, !eqPtr(a.Maximum, b.Maximum))
	set(kwExclusiveMaximum, a.ExclusiveMaximum != b.ExclusiveMaximum)
	set(kwMinimum, !eqPtr(a.Minimum, b.Minimum))
	set(kwExclusiveMinimum, a.ExclusiveMinimum != b.ExclusiveMinimum)
	set(kwMaxLength, !eqPtr(a.MaxLength, b.MaxLength))
	set(kwMinLength, !eqPtr(a.MinLength, b.MinLength))
	set(kwPattern, a.Pattern != b.Pattern)
	set(kwMaxItems, !eqPtr(a.MaxItems, b.MaxItems))
	set(kwMinItems, !eqPtr(a.MinItems, b.MinItems))
	set(kwUniqueItems, a.UniqueItems != b.UniqueItems)
	set(kwMultipleOf, !eqPtr(a.MultipleOf, b.MultipleOf))
	set(kwEnum, !slices.EqualFunc(a.Enum, b.Enum, func(x, y apiextv1.JSON) bool { return jsonEqual(&x, &y) }))
	set(kwMaxProperties, !eqPtr(a.MaxProperties, b.MaxProperties))
	set(kwMinProperties, !eqPtr(a.MinProperties, b.MinProperties))
	set(kwRequired, !slices.Equal(a.Required, b.Required))
	set(kwItems, (a.Items == nil) != (b.Items == nil) || a.Items != nil && !reflect.DeepEqual(a.Items.JSONSchemas, b.Items.JSONSchemas) || a.Items != nil && (a.Items.Schema == nil) != (b.Items.Schema == nil))
	set(kwAllOf, len(a.AllOf) != len(b.AllOf))
	set(kwOneOf, len(a.OneOf) != len(b.OneOf))
	set(kwAnyOf, len(a.AnyOf) != len(b.AnyOf))
	set(kwNot, (a.Not == nil) != (b.Not == nil))
	set(kwProperties, (a.Properties == nil) != (b.Properties == nil))
	set(kwAdditionalProperties, !sameOrBoolShape(a.AdditionalProperties, b.AdditionalProperties))
	set(kwPatternProperties, !reflect.DeepEqual(a.PatternProperties, b.PatternProperties))
	set(kwDependencies, !reflect.DeepEqual(a.Dependencies, b.Dependencies))
	set(kwAdditionalItems, !reflect.DeepEqual(a.AdditionalItems, b.AdditionalItems))
	set(kwDefinitions, !reflect.DeepEqual(a.Definitions, b.Definitions))
	set(kwExternalDocs, !reflect.DeepEqual(a.ExternalDocs, b.ExternalDocs))
	set(kwExample, !jsonEqual(a.Example, b.Example))
	set(kwNullable, a.Nullable != b.Nullable)
	set(kwPreserveUnknownFields, isTrue(a.XPreserveUnknownFields) != isTrue(b.XPreserveUnknownFields))
	set(kwEmbeddedResource, a.XEmbeddedResource != b.XEmbeddedResource)
	set(kwIntOrString, a.XIntOrString != b.XIntOrString)
	set(kwListMapKeys, !slices.Equal(a.XListMapKeys, b.XListMapKeys))
	set(kwListType, !eqPtr(a.XListType, b.XListType))
	set(kwMapType, !eqPtr(a.XMapType, b.XMapType))
	set(kwValidations, !reflect.DeepEqual(a.XValidations, b.XValidations) && (len(a.XValidations) > 0 || len(b.XValidations) > 0))
	return s
}

// sameOrBoolShape compares additionalProperties up to its subschema, which the walker compares.
func sameOrBoolShape(a, b *apiextv1.JSONSchemaPropsOrBool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Allows == b.Allows && (a.Schema == nil) == (b.Schema == nil)
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func isTrue(b *bool) bool { return b != nil && *b }

// jsonEqual compares two JSON values by meaning: key order and spacing do not matter.
func jsonEqual(a, b *apiextv1.JSON) bool {
	if a == nil || b == nil {
		return a == b
	}
	if bytes.Equal(a.Raw, b.Raw) {
		return true
	}
	return bytes.Equal(canonicalJSON(a.Raw), canonicalJSON(b.Raw))
}

// canonicalJSON re-encodes a JSON value with sorted keys; invalid JSON is returned as it is.
func canonicalJSON(raw []byte) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	// Values are shown as their authors wrote them: json.Marshal would turn <, > and & into
	// \u003c escapes that then reach every message (the JSON report escapes them itself).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// rawJSON returns a JSON value for a finding's before/after, or nil.
func rawJSON(j *apiextv1.JSON) any {
	if j == nil {
		return nil
	}
	return json.RawMessage(canonicalJSON(j.Raw))
}
