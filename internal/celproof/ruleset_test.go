package celproof

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	celast "github.com/google/cel-go/common/ast"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/crdguard/crdguard/internal/validation"
)

// TestRuleSetAgreesWithValidator runs the rules of every rule-carrying node of the CEL rule
// cases (both sides) and of testdata/ruleset.yaml on the candidates the judge would try there,
// as creates and as updates, through ruleSet — all rules, and each alone — and through the API
// server's validator on the same schema, and wants the same rules failing, the same answers
// out of budget and the same compile failures. A node with rules in allOf branches is the
// validator's own (compiledFor), and must be routed there.
func TestRuleSetAgreesWithValidator(t *testing.T) {
	files, err := filepath.Glob("../../testdata/rules/validation-rule-*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "testdata/ruleset.yaml")
	nodes, compared, fixture, routed := 0, 0, 0, 0
	for _, f := range files {
		if base := filepath.Base(f); base != "old.yaml" && base != "new.yaml" && base != "ruleset.yaml" {
			continue
		}
		c := loadCRD(t, f)
		for _, v := range c.Object.Spec.Versions {
			ver, err := validation.NewVersion(c, v.Name)
			if err != nil {
				continue // no structural schema: nothing the judge compiles
			}
			eachRuleNode(ver.Structural, true, "", func(path string, node *structuralschema.Structural, isRoot bool) {
				name := fmt.Sprintf("%s %s %s", f, v.Name, path)
				nodes++
				n := agreeOn(t, name, node, isRoot)
				compared += n
				if filepath.Base(f) == "ruleset.yaml" {
					fixture++
					if n == 0 {
						routed++
					}
				}
			})
		}
	}
	// The fixture has five rule-carrying nodes, one (v2's .shape) with a rule in an allOf branch,
	// which is the validator's (as is every node above such a branch: ClearRules leaves its
	// rules, and the validator runs them). The rule cases have more than eighty.
	if nodes < 80 || compared < 10000 || fixture != 5 || routed != 1 {
		t.Errorf("compared %d evaluations on %d nodes, %d of the fixture's (%d left to the validator): the cases were not found", compared, nodes, fixture, routed)
	}
}

// agreeOn compares the two evaluations of one node's rules and returns how many it compared.
func agreeOn(t *testing.T, name string, node *structuralschema.Structural, isRoot bool) int {
	t.Helper()
	s := node.DeepCopy()
	setRules(s, node.XValidations)
	byValidator := validatorFor(s, isRoot)
	if hasAllOfRules(s) {
		if p := compiledFor(node.DeepCopy(), node.XValidations, isRoot); p.v == nil || p.rs != nil {
			t.Errorf("%s: rules in allOf branches, but not run by the validator", name)
		}
		return 0
	}
	rs := compileRuleSet(s, isRoot)
	j := &Judge{memo: &memo{parsed: map[string]*celast.AST{}}}
	g := &gen{limit: 64}
	if isRoot {
		g.resourceRoot = node // candidates with apiVersion, kind and metadata, as the judge makes them
	}
	read, ok := j.readBy(node.XValidations, &g.consts)
	if !ok {
		read = &refNode{}
	}
	cands := append(g.values(read, node, false), nil)
	alone := make([]*nodeProgram, len(node.XValidations))
	for r := range alone {
		s1 := node.DeepCopy()
		setRules(s1, node.XValidations[r:r+1])
		alone[r] = validatorFor(s1, isRoot)
	}
	n := 0
	for i, obj := range cands {
		for _, old := range []any{nil, cands[(i+1)%len(cands)], obj} {
			want, wantOK, wantUncompiled := byValidator.evalHere(copyValue(obj), copyValue(old))
			got, gotOK, gotUncompiled := rs.eval(-1, copyValue(obj), copyValue(old))
			n++
			if !reflect.DeepEqual(got, want) || gotOK != wantOK || gotUncompiled != wantUncompiled {
				t.Errorf("%s: on %s (old %s): ruleSet says failed %v ok %v uncompiled %v, the validator %v %v %v",
					name, show(obj), show(old), got, gotOK, gotUncompiled, want, wantOK, wantUncompiled)
				continue
			}
			for r := range node.XValidations {
				one, oneOK, oneUncompiled := rs.eval(r, copyValue(obj), copyValue(old))
				wantOne, wantOneOK, wantOneUncompiled := alone[r].evalHere(copyValue(obj), copyValue(old))
				n++
				if !slices.Equal(one, wantOne) || oneOK != wantOneOK || oneUncompiled != wantOneUncompiled {
					t.Errorf("%s: rule %d alone on %s (old %s): ruleSet says %v %v %v, the validator %v %v %v",
						name, r, show(obj), show(old), one, oneOK, oneUncompiled, wantOne, wantOneOK, wantOneUncompiled)
				}
			}
		}
	}
	return n
}

// eachRuleNode calls f for every node below s (s included) that carries rules, with its path and
// whether it is a resource root.
func eachRuleNode(s *structuralschema.Structural, isRoot bool, path string, f func(string, *structuralschema.Structural, bool)) {
	if s == nil {
		return
	}
	if len(s.XValidations) > 0 {
		f(path, s, isRoot || s.XEmbeddedResource)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		eachRuleNode(&p, false, path+"."+name, f)
	}
	eachRuleNode(s.Items, false, path+"[*]", f)
	if s.AdditionalProperties != nil {
		eachRuleNode(s.AdditionalProperties.Structural, false, path+".*", f)
	}
}

// show is a candidate as JSON.
func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
