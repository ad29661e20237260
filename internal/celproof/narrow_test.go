package celproof

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	celast "github.com/google/cel-go/common/ast"
)

// narrowSchema is a node with a list of items without maxItems (whose required name bounds the
// list's length for the cost estimator), a map, a nested object and an allOf below a property.
const narrowSchema = `
type: object
required: [kind]
properties:
  kind: {type: string, maxLength: 8}
  mode: {type: string, enum: [a, b]}
  size: {type: integer}
  nested:
    type: object
    properties:
      deep: {type: string, maxLength: 16}
      other: {type: integer}
  list:
    type: array
    items:
      type: object
      required: [name]
      properties:
        name: {type: string, maxLength: 253}
        port: {type: integer}
        host: {type: string}
        subs:
          type: array
          items:
            type: object
            properties:
              z: {type: integer}
              w: {type: string}
  labels:
    type: object
    additionalProperties: {type: string, maxLength: 63}
  guarded:
    type: object
    properties:
      x: {type: string}
    allOf:
    - properties:
        x:
          maxLength: 4
          x-kubernetes-validations: [{rule: "self != 'zz'"}]
`

func structuralOf(t *testing.T, src string) *structuralschema.Structural {
	t.Helper()
	var v1 apiextv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(src), &v1); err != nil {
		t.Fatal(err)
	}
	var in apiextensions.JSONSchemaProps
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &in, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kept lists the paths of a schema's nodes, sorted.
func kept(s *structuralschema.Structural, at string, out *[]string) {
	*out = append(*out, at)
	for name, p := range s.Properties {
		kept(&p, at+"."+name, out)
	}
	if s.Items != nil {
		kept(s.Items, at+"[*]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		kept(s.AdditionalProperties.Structural, at+".*", out)
	}
}

func keptPaths(s *structuralschema.Structural) []string {
	var out []string
	kept(s, "", &out)
	slices.Sort(out)
	return out
}

func rulesOf(rules []string) []apiextv1.ValidationRule {
	var out []apiextv1.ValidationRule
	for _, r := range rules {
		out = append(out, apiextv1.ValidationRule{Rule: r})
	}
	return out
}

// narrowFor narrows the schema for rules, as Judge.program does.
func narrowFor(t *testing.T, s *structuralschema.Structural, rules []string) *structuralschema.Structural {
	t.Helper()
	j := &Judge{memo: &memo{parsed: map[string]*celast.AST{}}}
	read, ok := j.readWith(rulesOf(rules), &constants{}, true)
	if !ok {
		t.Fatalf("rules %q do not parse", rules)
	}
	return narrow(s, read)
}

// TestNarrow checks what the validator of some rules keeps of a node.
func TestNarrow(t *testing.T) {
	s := structuralOf(t, narrowSchema)
	whole := keptPaths(s)
	for _, tc := range []struct {
		name  string
		rules []string
		want  []string
	}{
		{"presence only", []string{"has(self.mode)"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".mode"}},
		{"a nested field", []string{"self.nested.deep == 'x'"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".nested", ".nested.deep"}},
		{"items read in a loop keep their required fields", []string{"self.list.all(i, i.port > 0)"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].name", ".list[*].port"}},
		{"a list tested for presence keeps the items' required fields", []string{"!has(self.list) || has(self.size)"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].name", ".size"}},
		{"an indexed list is whole", []string{"self.list[0].port > 0"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].host", ".list[*].name", ".list[*].port", ".list[*].subs", ".list[*].subs[*]", ".list[*].subs[*].w", ".list[*].subs[*].z"}},
		{"a measured list keeps its items' required fields", []string{"size(self.list) < 3 && self.list.size() > 0"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].name"}},
		{"a measured and compared list is whole", []string{"size(self.list) < 3 || self.list == oldSelf.list"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].host", ".list[*].name", ".list[*].port", ".list[*].subs", ".list[*].subs[*]", ".list[*].subs[*].w", ".list[*].subs[*].z"}},
		{"a loop over a loop variable's list is followed", []string{"self.list.exists(i, i.port > 0 && i.subs.all(s, s.z == 1))"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].name", ".list[*].port", ".list[*].subs", ".list[*].subs[*]", ".list[*].subs[*].z"}},
		{"a loop over what another loop built is whole", []string{"self.list.map(i, i.subs).all(l, l.all(s, s.z == 1))"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".list", ".list[*]", ".list[*].name", ".list[*].subs", ".list[*].subs[*]", ".list[*].subs[*].w", ".list[*].subs[*].z"}},
		{"a map whose keys are read is whole", []string{"self.labels.all(k, k != 'x')"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".labels", ".labels.*"}},
		{"a field with allOf is whole", []string{"self.guarded.x != 'y'"},
			[]string{"", ".guarded", ".guarded.x", ".kind"}}, // as in every case: allOf below it
		{"self used whole", []string{"self == oldSelf"}, whole},
		{"two rules read the union", []string{"has(self.mode)", "self.size > 1"},
			[]string{"", ".guarded", ".guarded.x", ".kind", ".mode", ".size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keptPaths(narrowFor(t, s, tc.rules)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
		})
	}
	if got := keptPaths(s); !reflect.DeepEqual(got, whole) {
		t.Errorf("narrow changed its input: %q", got)
	}
}

// TestNarrowJudgesAlike compiles each rule against the whole node and against the narrowed one
// and checks that the API server's compiler gives the same estimated cost (and the same error,
// if any) and that its validator gives the same errors on every object.
func TestNarrowJudgesAlike(t *testing.T) {
	s := structuralOf(t, narrowSchema)
	objects := []map[string]any{
		{},
		{"kind": "k", "mode": "a", "size": int64(2)},
		{"kind": "k", "nested": map[string]any{"deep": "x", "other": int64(1)}},
		{"kind": "k", "list": []any{map[string]any{"name": "n", "port": int64(0)}, map[string]any{"name": "m", "port": int64(3), "host": "h", "subs": []any{map[string]any{"z": int64(1), "w": "v"}}}}},
		{"kind": "k", "labels": map[string]any{"x": "1", "y": "2"}, "guarded": map[string]any{"x": "y"}},
		{"kind": "k", "mode": "b", "guarded": map[string]any{"x": "zz"}},
	}
	for _, rule := range []string{
		"has(self.mode)",
		"self.nested.deep == 'x'",
		"self.list.all(i, i.port > 0)",
		"self.list.all(i, self.list.exists(j, i.name.startsWith(j.name) && i.port >= 0))",
		"!has(self.list) || has(self.size)",
		"self.list[0].port > 0",
		"size(self.list) < 2",
		"self.list.size() < 2 && size(self.labels) > 1",
		"size(self.list) < 2 || self.list == oldSelf.list",
		"self.labels.all(k, k != 'x')",
		"self.list.exists(i, i.port > 0 && i.subs.all(s, s.z == 1))",
		"self.list.map(i, i.subs).all(l, l.all(s, s.z == 1))",
		"self.guarded.x != 'y'",
		"self.kind == 'k' && (!has(self.size) || self.size > 1)",
		"self.nested.undeclared == 1",
	} {
		t.Run(rule, func(t *testing.T) {
			n := narrowFor(t, s, []string{rule})
			if whole, part := compiledCost(t, s, rule), compiledCost(t, n, rule); whole != part {
				t.Errorf("compiled whole: %s; narrowed: %s", whole, part)
			}
			for _, obj := range objects {
				if whole, part := validated(s, rule, obj), validated(n, rule, obj); whole != part {
					t.Errorf("%v: whole says %s, narrowed %s", obj, whole, part)
				}
			}
		})
	}
}

// compiledCost is the estimated cost of a rule compiled at s, or the compiler's error.
func compiledCost(t *testing.T, s *structuralschema.Structural, rule string) string {
	t.Helper()
	c := s.DeepCopy()
	c.XValidations = apiextv1.ValidationRules{{Rule: rule}}
	res, err := cel.Compile(c, model.SchemaDeclType(c, false), celconfig.PerCallLimit, environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
	switch {
	case err != nil:
		return err.Error()
	case res[0].Error != nil:
		return res[0].Error.Detail
	}
	return fmt.Sprintf("cost %d", res[0].MaxCost)
}

// validated is what the API server's validator of one rule at s says of obj.
func validated(s *structuralschema.Structural, rule string, obj map[string]any) string {
	c := s.DeepCopy()
	c.XValidations = apiextv1.ValidationRules{{Rule: rule}}
	errs, _ := cel.NewValidator(c, false, celconfig.PerCallLimit).Validate(context.Background(), nil, nil, obj, nil, celconfig.RuntimeCELCostBudget)
	return fmt.Sprint(errs)
}

// TestProgramFallsBack checks that a program compiled against a schema that lacks a field its
// rule reads (a gap in what the rules were found to read) answers as the whole schema's would.
func TestProgramFallsBack(t *testing.T) {
	s := structuralOf(t, narrowSchema)
	rules := rulesOf([]string{"self.nested.deep == 'x'"})
	gap := s.DeepCopy()
	delete(gap.Properties, "nested")
	p := compiledFor(gap, rules, false)
	if _, ok := p.eval(map[string]any{"nested": map[string]any{"deep": "y"}}, nil); ok {
		t.Fatal("the rule compiled without the field it reads")
	}
	p = &nodeProgram{v: p.v, n: p.n, whole: func() *nodeProgram { return compiledFor(s.DeepCopy(), rules, false) }}
	for _, tc := range []struct {
		deep string
		want []bool
	}{{"y", []bool{true}}, {"x", []bool{false}}} {
		failed, ok := p.eval(map[string]any{"nested": map[string]any{"deep": tc.deep}}, nil)
		if !ok || !reflect.DeepEqual(failed, tc.want) {
			t.Errorf("deep %q: failed %v, ok %v; want %v", tc.deep, failed, ok, tc.want)
		}
	}
}
