package celproof

import (
	"reflect"
	"slices"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// TestKeyed checks that candidate lists become lists the old schema can hold.
func TestKeyed(t *testing.T) {
	str := func(pattern string) structuralschema.Structural {
		s := structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}
		if pattern != "" {
			s.ValueValidation = &structuralschema.ValueValidation{Pattern: pattern}
		}
		return s
	}
	listOf := func(listType string, keys []string, item structuralschema.Structural) *structuralschema.Structural {
		return &structuralschema.Structural{Generic: structuralschema.Generic{Type: "array"}, Items: &item,
			Extensions: structuralschema.Extensions{XListType: &listType, XListMapKeys: keys}}
	}
	obj := func(name string) structuralschema.Structural {
		return structuralschema.Structural{Generic: structuralschema.Generic{Type: "object"},
			Properties: map[string]structuralschema.Structural{"name": str(name), "port": {Generic: structuralschema.Generic{Type: "integer"}}}}
	}
	item := map[string]any{"name": "a", "port": int64(1)}
	for _, tc := range []struct {
		name string
		s    *structuralschema.Structural
		in   []any
		ok   bool
		want []any
	}{
		{"map keys made distinct", listOf("map", []string{"name"}, obj("")), []any{item, item}, true,
			[]any{item, map[string]any{"name": "aa", "port": int64(1)}}},
		{"map keys that meet the pattern", listOf("map", []string{"name"}, obj("^[a-z]$|^a1$")), []any{item, item}, true,
			[]any{item, map[string]any{"name": "a1", "port": int64(1)}}},
		{"no other key the pattern allows", listOf("map", []string{"name"}, obj("^a$")), []any{item, item}, false, nil},
		{"set with a repeated item", listOf("set", nil, str("")), []any{"x", "x"}, false, nil},
		{"set of different items", listOf("set", nil, str("")), []any{"x", "y"}, true, []any{"x", "y"}},
		{"atomic list", listOf("atomic", nil, str("")), []any{"x", "x"}, true, []any{"x", "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := slices.Clone(tc.in)
			if ok := keyed(tc.s, l); ok != tc.ok || ok && !reflect.DeepEqual(l, tc.want) {
				t.Errorf("keyed(%v) = %v, %v; want %v, %v", tc.in, l, ok, tc.want, tc.ok)
			}
			if !reflect.DeepEqual(item, map[string]any{"name": "a", "port": int64(1)}) {
				t.Errorf("keyed changed a shared item: %v", item)
			}
		})
	}
}
