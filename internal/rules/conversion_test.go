package rules

import (
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestHasPath(t *testing.T) {
	str := apiextv1.JSONSchemaProps{Type: "string"}
	s := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
			"ports":  {Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"name": str}}}},
			"labels": {Type: "object", AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}},
			"a.b":    str,
		}},
	}}
	for path, want := range map[string]bool{
		".":                    true,
		".spec":                true,
		".spec.ports[*].name":  true,
		".spec.ports[*].other": false,
		".spec.labels.*":       true,
		`.spec["a.b"]`:         true,
		`.spec["a.c"]`:         false,
		".spec.missing":        false,
		".spec.labels[*]":      false,
		`.spec["unterminated`:  false,
	} {
		if got := hasPath(s, path); got != want {
			t.Errorf("hasPath(%q) = %v, want %v", path, got, want)
		}
	}
	if hasPath(nil, ".spec") {
		t.Error("a missing schema has no paths")
	}
}
