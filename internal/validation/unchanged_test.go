package validation

import (
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
)

// doclessCopy is what sameDocless replaced: a copy of a schema without the keywords that only
// document it. The test holds sameDocless to it.
func doclessCopy(s *apiextensions.JSONSchemaProps) *apiextensions.JSONSchemaProps {
	c := s.DeepCopy()
	walkSchema(c, func(x *apiextensions.JSONSchemaProps) {
		x.Description, x.Title, x.Example, x.ExternalDocs = "", "", nil, nil
	})
	return c
}

// schemaNodes lists every node of s that walkSchema reaches, in a fixed order.
func schemaNodes(s *apiextensions.JSONSchemaProps) []*apiextensions.JSONSchemaProps {
	if s == nil {
		return nil
	}
	out := []*apiextensions.JSONSchemaProps{s}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		out = append(out, schemaNodes(&p)...)
	}
	out = append(out, schemaNodes(itemsOf(s))...)
	out = append(out, schemaNodes(valuesOf(s))...)
	for _, bs := range [][]apiextensions.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range bs {
			out = append(out, schemaNodes(&bs[i])...)
		}
	}
	return append(out, schemaNodes(s.Not)...)
}

// TestSameDoclessOnRealSchemas compares every node of the new side of every pair of the shared
// corpus with its counterpart on the old side, and with the next node of its own side: the
// answer must be the copies'.
func TestSameDoclessOnRealSchemas(t *testing.T) {
	var olds []string
	for _, root := range []string{"../../../shared/corpus", "../../../shared/perf"} {
		for _, pattern := range []string{"*/*/*/old.yaml", "*/old.yaml"} {
			f, _ := filepath.Glob(filepath.Join(root, pattern))
			olds = append(olds, f...)
		}
	}
	if len(olds) == 0 {
		t.Skip("corpus not available")
	}
	compared, equal := 0, 0
	copies := map[*apiextensions.JSONSchemaProps]*apiextensions.JSONSchemaProps{}
	copyOf := func(s *apiextensions.JSONSchemaProps) *apiextensions.JSONSchemaProps {
		if c, ok := copies[s]; ok {
			return c
		}
		copies[s] = doclessCopy(s)
		return copies[s]
	}
	check := func(file string, a, b *apiextensions.JSONSchemaProps) {
		t.Helper()
		want := reflect.DeepEqual(copyOf(a), copyOf(b))
		if got := sameDocless(a, b); got != want {
			t.Fatalf("%s: sameDocless = %v, the copies say %v", file, got, want)
		}
		compared++
		if want {
			equal++
		}
	}
	for _, o := range olds {
		clear(copies)
		oc, err := internal(parse(t, o))
		if err != nil {
			t.Fatal(err)
		}
		nc, err := internal(parse(t, filepath.Join(filepath.Dir(o), "new.yaml")))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range nc.Spec.Versions {
			ov, err1 := apiextensions.GetSchemaForVersion(oc, v.Name)
			nv, err2 := apiextensions.GetSchemaForVersion(nc, v.Name)
			if err1 != nil || err2 != nil || ov == nil || nv == nil {
				continue
			}
			on, nn := schemaNodes(ov.OpenAPIV3Schema), schemaNodes(nv.OpenAPIV3Schema)
			for i := range min(len(on), len(nn)) {
				check(o, on[i], nn[i])
				if i+1 < len(nn) {
					check(o, nn[i], nn[i+1])
				}
			}
		}
	}
	// Both answers must occur often, or the comparison proves little.
	t.Logf("%d comparisons, %d equal", compared, equal)
	if equal < 1000 || compared-equal < 1000 {
		t.Errorf("%d comparisons, %d equal: too few of one answer", compared, equal)
	}
}

// TestSameDocless holds the edges: documentation anywhere walkSchema reaches is ignored,
// everywhere else (patternProperties, definitions, dependencies, additionalItems) it counts, and
// nil is not empty.
func TestSameDocless(t *testing.T) {
	doc := func(d string) apiextensions.JSONSchemaProps {
		return apiextensions.JSONSchemaProps{Type: "string", Description: d}
	}
	ex := apiextensions.JSON("x")
	for _, tc := range []struct {
		name string
		o, n apiextensions.JSONSchemaProps
		want bool
	}{
		{"descriptions", doc("a"), doc("b"), true},
		{"title, example, external docs", apiextensions.JSONSchemaProps{Title: "a"}, apiextensions.JSONSchemaProps{Example: &ex, ExternalDocs: &apiextensions.ExternalDocumentation{URL: "u"}}, true},
		{"type", doc("a"), apiextensions.JSONSchemaProps{Type: "integer", Description: "a"}, false},
		{"property description", apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{"p": doc("a")}}, apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{"p": doc("b")}}, true},
		{"property renamed", apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{"p": doc("a")}}, apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{"q": doc("a")}}, false},
		{"nil and empty properties", apiextensions.JSONSchemaProps{}, apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{}}, false},
		{"items description", apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &apiextensions.JSONSchemaProps{Description: "a"}}}, apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &apiextensions.JSONSchemaProps{}}}, true},
		{"items schema and none", apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &apiextensions.JSONSchemaProps{}}}, apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{}}, false},
		{"items list description", apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{JSONSchemas: []apiextensions.JSONSchemaProps{doc("a")}}}, apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{JSONSchemas: []apiextensions.JSONSchemaProps{doc("b")}}}, true},
		{"nil and empty items list", apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{}}, apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{JSONSchemas: []apiextensions.JSONSchemaProps{}}}, false},
		{"values description", apiextensions.JSONSchemaProps{AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensions.JSONSchemaProps{Description: "a"}}}, apiextensions.JSONSchemaProps{AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensions.JSONSchemaProps{}}}, true},
		{"values allowed", apiextensions.JSONSchemaProps{AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{Allows: true}}, apiextensions.JSONSchemaProps{AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{}}, false},
		{"allOf description", apiextensions.JSONSchemaProps{AllOf: []apiextensions.JSONSchemaProps{doc("a")}}, apiextensions.JSONSchemaProps{AllOf: []apiextensions.JSONSchemaProps{doc("b")}}, true},
		{"anyOf length", apiextensions.JSONSchemaProps{AnyOf: []apiextensions.JSONSchemaProps{doc("a")}}, apiextensions.JSONSchemaProps{AnyOf: []apiextensions.JSONSchemaProps{doc("a"), doc("a")}}, false},
		{"nil and empty oneOf", apiextensions.JSONSchemaProps{}, apiextensions.JSONSchemaProps{OneOf: []apiextensions.JSONSchemaProps{}}, false},
		{"not description", apiextensions.JSONSchemaProps{Not: &apiextensions.JSONSchemaProps{Description: "a"}}, apiextensions.JSONSchemaProps{Not: &apiextensions.JSONSchemaProps{}}, true},
		{"not and none", apiextensions.JSONSchemaProps{Not: &apiextensions.JSONSchemaProps{}}, apiextensions.JSONSchemaProps{}, false},
		{"patternProperties description", apiextensions.JSONSchemaProps{PatternProperties: map[string]apiextensions.JSONSchemaProps{"p": doc("a")}}, apiextensions.JSONSchemaProps{PatternProperties: map[string]apiextensions.JSONSchemaProps{"p": doc("b")}}, false},
		{"definitions description", apiextensions.JSONSchemaProps{Definitions: apiextensions.JSONSchemaDefinitions{"p": doc("a")}}, apiextensions.JSONSchemaProps{Definitions: apiextensions.JSONSchemaDefinitions{"p": doc("b")}}, false},
		{"additionalItems description", apiextensions.JSONSchemaProps{AdditionalItems: &apiextensions.JSONSchemaPropsOrBool{Schema: &apiextensions.JSONSchemaProps{Description: "a"}}}, apiextensions.JSONSchemaProps{AdditionalItems: &apiextensions.JSONSchemaPropsOrBool{Schema: &apiextensions.JSONSchemaProps{}}}, false},
		{"rule", apiextensions.JSONSchemaProps{XValidations: apiextensions.ValidationRules{{Rule: "a"}}}, apiextensions.JSONSchemaProps{XValidations: apiextensions.ValidationRules{{Rule: "b"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if want := reflect.DeepEqual(doclessCopy(&tc.o), doclessCopy(&tc.n)); want != tc.want {
				t.Fatalf("the copies say %v, the case %v", want, tc.want)
			}
			if got := sameDocless(&tc.o, &tc.n); got != tc.want {
				t.Errorf("sameDocless = %v, want %v", got, tc.want)
			}
			if got := sameDocless(&tc.n, &tc.o); got != tc.want {
				t.Errorf("sameDocless, sides swapped = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHasSchemaRules: a rule anywhere walkSchema reaches is found, and looking allocates
// nothing (it copied every property to the heap, for CRDs without a rule too).
func TestHasSchemaRules(t *testing.T) {
	rule := apiextensions.JSONSchemaProps{XValidations: apiextensions.ValidationRules{{Rule: "self > 0"}}}
	plain := apiextensions.JSONSchemaProps{Type: "string"}
	for name, tc := range map[string]struct {
		s    *apiextensions.JSONSchemaProps
		want bool
	}{
		"nil":                {nil, false},
		"none":               {&apiextensions.JSONSchemaProps{Type: "object", Properties: map[string]apiextensions.JSONSchemaProps{"a": plain, "b": {Type: "array", Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &plain}}}}, false},
		"root":               {&rule, true},
		"property":           {&apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{"a": plain, "b": rule}}, true},
		"items":              {&apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &rule}}, true},
		"items list":         {&apiextensions.JSONSchemaProps{Items: &apiextensions.JSONSchemaPropsOrArray{JSONSchemas: []apiextensions.JSONSchemaProps{plain, rule}}}, true},
		"additional":         {&apiextensions.JSONSchemaProps{AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{Allows: true, Schema: &rule}}, true},
		"allOf":              {&apiextensions.JSONSchemaProps{AllOf: []apiextensions.JSONSchemaProps{plain, rule}}, true},
		"anyOf":              {&apiextensions.JSONSchemaProps{AnyOf: []apiextensions.JSONSchemaProps{rule}}, true},
		"oneOf":              {&apiextensions.JSONSchemaProps{OneOf: []apiextensions.JSONSchemaProps{rule}}, true},
		"not":                {&apiextensions.JSONSchemaProps{Not: &rule}, true},
		"deep below a value": {&apiextensions.JSONSchemaProps{AdditionalProperties: &apiextensions.JSONSchemaPropsOrBool{Schema: &apiextensions.JSONSchemaProps{Properties: map[string]apiextensions.JSONSchemaProps{"x": {Items: &apiextensions.JSONSchemaPropsOrArray{Schema: &rule}}}}}}, true},
	} {
		if got := hasSchemaRules(tc.s); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
		if n := testing.AllocsPerRun(10, func() { hasSchemaRules(tc.s) }); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}
