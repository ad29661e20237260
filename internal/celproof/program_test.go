package celproof

import (
	"reflect"
	"strings"
	"testing"
)

// docsSchema is one type as Gateway API uses it in two places (HTTPRouteFilter under a rule and
// under each backend): the same schema, documented differently at each place, at every depth.
const docsSchema = `
type: object
description: %s
properties:
  type: {type: string, enum: [A, B], description: %s}
  path:
    type: object
    title: %s
    properties:
      value: {type: string, maxLength: 64, description: %s}
  items:
    type: array
    maxItems: 4
    items: {type: string, description: %s, example: %s}
  labels:
    type: object
    additionalProperties: {type: string, description: %s}
`

// TestCompiledOnceAcrossDocumentation checks that the same rules in schema contexts that differ
// only in their documentation compile once (the judge asks for both), and that a context that
// differs in anything the compiler reads (a bound, an enum) still compiles on its own.
func TestCompiledOnceAcrossDocumentation(t *testing.T) {
	rules := rulesOf([]string{"self.type == 'A' || has(self.path)", "self.path.value.startsWith('/')", "size(self.items) < 3", "!('x' in self.labels)"})
	doc := func(words string) string {
		return strings.ReplaceAll(docsSchema, "%s", words)
	}
	ForgetCompiled()
	defer ForgetCompiled()
	here := compiledFor(structuralOf(t, doc("under a rule")), rules, false)
	there := compiledFor(structuralOf(t, doc("under a backend")), rules, false)
	if here != there {
		t.Errorf("the same rules in the same type documented differently compiled twice")
	}
	for _, tc := range []struct{ name, from, to string }{
		{"a bound", "maxLength: 64", "maxLength: 65"},
		{"an enum", "enum: [A, B]", "enum: [A, C]"},
		{"a list bound", "maxItems: 4", "maxItems: 5"},
	} {
		other := compiledFor(structuralOf(t, strings.Replace(doc("under a rule"), tc.from, tc.to, 1)), rules, false)
		if other == here {
			t.Errorf("%s changed, yet the program of the first context was reused", tc.name)
		}
	}
	// The shared program decides as the server's validator of either documented schema does.
	for _, obj := range []map[string]any{
		{"type": "A", "path": map[string]any{"value": "/x"}, "items": []any{"a"}, "labels": map[string]any{}},
		{"type": "B", "path": map[string]any{"value": "x"}, "items": []any{"a", "b", "c"}, "labels": map[string]any{"x": "y"}},
	} {
		failed, ok := here.eval(obj, nil)
		if !ok {
			t.Fatalf("%v: not evaluated", obj)
		}
		var want []bool
		for _, r := range rules {
			want = append(want, validated(structuralOf(t, doc("under a backend")), r.Rule, obj) != "[]")
		}
		if !reflect.DeepEqual(failed, want) {
			t.Errorf("%v: failed %v, the validator says %v", obj, failed, want)
		}
	}
}
