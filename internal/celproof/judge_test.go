package celproof

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/crdguard/crdguard/internal/crd"
)

func loadCRD(t *testing.T, path string) *crd.CRD {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cs, probs := crd.Parse(filepath.Base(path), data)
	if len(cs) != 1 {
		t.Fatalf("%s: %d CRDs (%v)", path, len(cs), probs)
	}
	return cs[0]
}

// TestJudgeCases judges the first rule of .spec (or .spec.metricsConfig) in the rule cases, old
// against new, and checks the verdict, the number of objects and the witness.
func TestJudgeCases(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		steps   []Step
		verdict Verdict
		objects int
		short   string
	}{
		{"validation-rule-rewritten/exactly-one-of", spec, Equivalent, 4, ""},
		{"validation-rule-loosened/exactly-one-to-not-both", spec, Looser, 4, ""},
		{"validation-rule-loosened/added-guard", spec, Looser, 6, ""},
		{"validation-rule-loosened/transition-rule", spec, Looser, 12, ""},
		{"validation-rule-implied/new-fields-only", spec, Implied, 1, ""},
		{"validation-rule-implied/required", spec, Implied, 1, ""},
		{"validation-rule-implied/enum", []Step{{Property, "spec"}, {Property, "metricsConfig"}}, Implied, 1, ""},
		{"validation-rule-changed/basic", spec, Witness, 6, "{spec: {size: 6}}"},
		{"validation-rule-changed/tightening-with-example", spec, Witness, 6, `{spec: {hostnames: ["*"]}}`},
		{"validation-rule-changed/undecided", spec, Undecided, 5, ""},
		{"validation-rule-added/basic", spec, Witness, 6, "{spec: {size: 11}}"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("../../testdata/rules", tc.dir)
			o, n := loadCRD(t, filepath.Join(dir, "old.yaml")), loadCRD(t, filepath.Join(dir, "new.yaml"))
			oldRules, newRules := rulesAt(o, tc.steps), rulesAt(n, tc.steps)
			var before *apiextv1.ValidationRule
			if len(oldRules) > 0 {
				before = &oldRules[0]
			}
			got := NewJudge(o, n, "v1").Judge(Change{Steps: tc.steps, Before: before, After: newRules[0]})
			if got.Verdict != tc.verdict || got.Objects != tc.objects {
				t.Errorf("verdict %v after %d objects, want %v after %d", got.Verdict, got.Objects, tc.verdict, tc.objects)
			}
			if s := shortOf(got); s != tc.short {
				t.Errorf("example %q, want %q", s, tc.short)
			}
		})
	}
}

var spec = []Step{{Property, "spec"}}

func shortOf(r Result) string {
	if r.Example == nil {
		return ""
	}
	return Short(r.Example)
}

func rulesAt(c *crd.CRD, steps []Step) apiextv1.ValidationRules {
	s := c.Object.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, st := range steps {
		p := s.Properties[st.Name]
		s = &p
	}
	return s.XValidations
}

// TestCollect checks what the rules are found to read of self.
func TestCollect(t *testing.T) {
	for _, tc := range []struct {
		rule string
		want string
	}{
		{"has(self.a) && self.b == 'x'", "{a:{} b:{value}}"},
		{"self.__namespace__ == 'x' && has(self.a__dash__b)", "{a-b:{} namespace:{value}}"}, // escaped as the API server escapes them
		{"self.items.all(i, has(i.name) && i.port > 0)", "{items:{elem:{name:{} port:{value}}}}"},
		{"self.size() > 2", "{value}"},
		{"self.a.b.c == oldSelf.a.b.c", "{a:{b:{c:{value}}}}"},
		{"[1, 2].all(x, x > 0) && self.?opt.orValue('') == ''", "{opt:{value}}"},
		{"self.m.exists(k, k == 'a')", "{m:{elem:{value}}}"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			a, iss := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv().Parse(tc.rule)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			root := &refNode{}
			var c constants
			collect(a.NativeRep(), root, &c)
			if got := describe(root); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func describe(r *refNode) string {
	s := "{"
	sep := ""
	if r.value {
		s += "value"
		sep = " "
	}
	if r.elem != nil {
		s += sep + "elem:" + describe(r.elem)
		sep = " "
	}
	for _, n := range r.sortedFields() {
		s += sep + n + ":" + describe(r.fields[n])
		sep = " "
	}
	return s + "}"
}

func TestShort(t *testing.T) {
	got := Short(map[string]any{"apiVersion": "x/v1", "kind": "K", "metadata": map[string]any{"name": "example"},
		"spec": map[string]any{"name": "a", "matchLabels": map[string]any{}, "on": "yes", "n": int64(3), "l": []any{"", nil, true}}})
	// "n" and "on" are booleans to YAML 1.1 readers: quoted.
	want := `{spec: {l: ["", null, true], matchLabels: {}, "n": 3, name: a, "on": "yes"}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !reflect.DeepEqual(fieldPath([]Step{{Property, "spec"}, {Property, "a"}, {Items, ""}, {MapValues, ""}}), "spec.a[0][a]") {
		t.Error("fieldPath")
	}
}

// TestJudgeSharedByVersions judges one change for a version and for another version sharing the
// judge (As): the same result once, the witness written for each version, and neither witness
// shared with the judge's memo or the other result.
func TestJudgeSharedByVersions(t *testing.T) {
	dir := "../../testdata/rules/validation-rule-added/basic"
	o, n := loadCRD(t, filepath.Join(dir, "old.yaml")), loadCRD(t, filepath.Join(dir, "new.yaml"))
	c := Change{Steps: spec, After: rulesAt(n, spec)[0]}
	j := NewJudge(o, n, "v1")
	first := j.Judge(c)
	first.Example["spec"] = "changed by the caller"
	second := j.As("v2").Judge(c)
	again := j.Judge(c)
	for _, tc := range []struct {
		name       string
		r          Result
		apiVersion string
	}{{"other version", second, "v2"}, {"same version again", again, "v1"}} {
		if tc.r.Verdict != Witness || tc.r.Objects != 6 || shortOf(tc.r) != "{spec: {size: 11}}" || tc.r.Example["apiVersion"] != o.Object.Spec.Group+"/"+tc.apiVersion {
			t.Errorf("%s: %v after %d objects, example %v", tc.name, tc.r.Verdict, tc.r.Objects, tc.r.Example)
		}
	}
	if len(j.results) != 1 {
		t.Errorf("%d judgements made, want 1", len(j.results))
	}
}
