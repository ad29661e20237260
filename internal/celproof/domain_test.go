package celproof

import (
	"reflect"
	"regexp"
	"slices"
	"testing"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// TestShortestMatch builds strings for patterns of real CRDs and checks them with Go's regexp,
// which the API server validates patterns with.
func TestShortestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`, "1ms"},                                       // Flux intervals
		{`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`, "a"}, // Gateway API hostnames
		{`^v\d+\.\d+\.\d+$`, "v1.1.1"},
		{`^[A-Z]{2,3}-x$`, "AA-x"},
		{`(?i)^ABC$`, "abc"},
	} {
		got, ok := shortestMatch(tc.pattern)
		if !ok || got != tc.want {
			t.Errorf("shortestMatch(%q) = %q, %v; want %q", tc.pattern, got, ok, tc.want)
			continue
		}
		if !regexp.MustCompile(tc.pattern).MatchString(got) {
			t.Errorf("%q does not match %q", got, tc.pattern)
		}
	}
	for _, bad := range []string{`(`, `^a{300}$`, `[^\x00-\x{10FFFF}]`} {
		if got, ok := shortestMatch(bad); ok {
			t.Errorf("shortestMatch(%q) = %q, want no string", bad, got)
		}
	}
}

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
