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

// TestSolveMemoWorksEverythingOut holds solve's memo to working every answer out again: on
// every rule of the rule cases and of the hardest real pair (gateway-api httproutes v0.8.0,
// when ../shared is there), for both verdicts, under bounds that cut the work early, midway
// and not at all, the ways and the steps taken are the same with the memo and without it.
func TestSolveMemoWorksEverythingOut(t *testing.T) {
	files, err := filepath.Glob("../../testdata/rules/*/*/new.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hard := "../../../shared/perf/kubernetes-sigs__gateway-api+httproutes.gateway.networking.k8s.io+v0.7.0__v0.8.0/new.yaml"
	if _, err := os.Stat(hard); err == nil {
		files = append(files, hard)
	}
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv()
	seen := map[string]bool{}
	rules, repeated := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := crd.Parse(f, data)
		for _, c := range cs {
			for _, v := range c.Object.Spec.Versions {
				if v.Schema == nil {
					continue
				}
				eachRule(v.Schema.OpenAPIV3Schema, func(rule string) {
					if seen[rule] {
						return
					}
					seen[rule] = true
					parsed, iss := env.Parse(rule)
					if iss.Err() != nil {
						return
					}
					rules++
					for _, w := range []bool{false, true} {
						for _, limit := range []int{7, 60, 400, maxSynthSteps} {
							with, without := &synth{limit: limit}, &synth{limit: limit, forget: true}
							a := with.solve(toTerm(parsed.NativeRep().Expr()), w, nil)
							b := without.solve(toTerm(parsed.NativeRep().Expr()), w, nil)
							if !reflect.DeepEqual(a, b) || with.steps != without.steps {
								t.Errorf("%s: rule %q, verdict %v, bound %d: with the memo %d ways in %d steps, without %d in %d",
									f, rule, w, limit, len(a), with.steps, len(b), without.steps)
							}
							if with.steps > len(with.solved) {
								repeated++
							}
						}
					}
				})
			}
		}
	}
	if rules < 100 || repeated == 0 {
		t.Fatalf("%d rules, %d asked a question twice: the test reads too little to hold the memo", rules, repeated)
	}
}

// eachRule calls f with the text of every rule of a schema.
func eachRule(s *apiextv1.JSONSchemaProps, f func(string)) {
	if s == nil {
		return
	}
	for _, r := range s.XValidations {
		f(r.Rule)
	}
	for _, p := range s.Properties {
		eachRule(&p, f)
	}
	if s.Items != nil {
		eachRule(s.Items.Schema, f)
	}
	if s.AdditionalProperties != nil {
		eachRule(s.AdditionalProperties.Schema, f)
	}
	for _, bs := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range bs {
			eachRule(&bs[i], f)
		}
	}
}
