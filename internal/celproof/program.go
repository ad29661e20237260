package celproof

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/crdguard/crdguard/internal/validation"
)

// nodeProgram is the API server's compilation of the rules of one schema node (and none below
// it), compiled once: a ruleSet, or, where rules sit in the node's allOf branches (which the
// API server's validator runs with the node's), the validator itself, each rule's message
// replaced by a marker so that the errors say which rules failed.
type nodeProgram struct {
	v  *cel.Validator
	rs *ruleSet
	// only is the one rule of rs this program runs (-1: all).
	only int
	n    int
	// whole, when the program was compiled against a narrowed schema (see narrow), compiles the
	// rules against the node's whole schema: asked whenever it cannot give an answer, so that
	// a gap in what the rules were found to read never changes one.
	whole func() *nodeProgram
}

// program returns the compiled rules of a node, keyed by side and path: all of them, or (only
// ≥ 0, the key ending in #only) that one rule alone, run from the node's compilation where
// that is a ruleSet.
func (j *Judge) program(key string, node *structuralschema.Structural, isRoot bool, only int) *nodeProgram {
	j.mu.Lock()
	e, ok := j.programs[key]
	if !ok {
		e = &programEntry{}
		j.programs[key] = e
	}
	j.mu.Unlock()
	e.once.Do(func() {
		if only >= 0 {
			all, _, _ := strings.Cut(key, "#")
			if p := j.program(all, node, isRoot, -1); p.rs != nil {
				e.p = p.one(only)
				return
			}
		}
		e.p = compileProgram(node, isRoot, only, j.readWith)
	})
	return e.p
}

// one is the program running rule i of p's ruleSet alone.
func (p *nodeProgram) one(i int) *nodeProgram {
	out := &nodeProgram{rs: p.rs, only: i, n: 1}
	if p.whole != nil {
		out.whole = sync.OnceValue(func() *nodeProgram {
			if w := p.whole(); w.rs != nil {
				return w.one(i)
			}
			return nil
		})
	}
	return out
}

// compileProgram is program without the memo; read says what rules read.
func compileProgram(node *structuralschema.Structural, isRoot bool, only int, read func([]apiextv1.ValidationRule, *constants, bool) (*refNode, bool)) *nodeProgram {
	var rules []apiextv1.ValidationRule
	for i, r := range node.XValidations {
		if only < 0 || i == only {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return &nodeProgram{only: -1} // a node without rules (the old side of an added one) refuses nothing
	}
	// The program sees only what these rules read; a rule that does not parse will not
	// compile either, and the whole node leaves that to the compiler.
	p := &nodeProgram{whole: sync.OnceValue(func() *nodeProgram { return compiledFor(node.DeepCopy(), rules, isRoot) })}
	if read, ok := read(rules, &constants{}, true); ok {
		narrowed := compiledFor(narrow(node, read), rules, isRoot)
		p.v, p.rs, p.only, p.n = narrowed.v, narrowed.rs, narrowed.only, narrowed.n
	} else {
		p = p.whole()
	}
	return p
}

// compiledFor compiles rules at schema node s (which it changes): the rules below s are dropped.
// The same rules in the same schema context compile to the same programs: once per run,
// whichever pair, version, side or place they come from — the context's documentation left
// out (see undocumented).
func compiledFor(s *structuralschema.Structural, rules []apiextv1.ValidationRule, isRoot bool) *nodeProgram {
	setRules(s, rules)
	undocumented(s)
	build := func() *nodeProgram {
		if hasAllOfRules(s) {
			return validatorFor(s, isRoot)
		}
		return &nodeProgram{rs: compileRuleSet(s, isRoot), only: -1, n: len(s.XValidations)}
	}
	content, err := json.Marshal(s)
	if err != nil {
		return build()
	}
	sum := sha256.Sum256(append(content, fmt.Sprint(isRoot)...))
	p, ok := compiled.Load(sum)
	if !ok {
		p, _ = compiled.LoadOrStore(sum, build())
	}
	return p.(*nodeProgram)
}

// setRules makes rules, their messages replaced by markers, the only rules of s and below it
// (but for those in allOf branches).
func setRules(s *structuralschema.Structural, rules []apiextv1.ValidationRule) {
	validation.ClearRules(s)
	for _, r := range rules {
		r.Message, r.MessageExpression, r.FieldPath, r.Reason = marker(len(s.XValidations)), "", "", nil
		s.XValidations = append(s.XValidations, r)
	}
}

// undocumented clears the documentation of s and of every node below it, in place. The API
// server's CEL compiler, its cost estimator and its values read a schema's types, formats,
// bounds, required fields, enums and defaults, never its description, title, example or
// external docs; so one type used in several places (Gateway API's HTTPRouteFilter under a
// rule and under each backend), documented differently at each, compiles once.
func undocumented(s *structuralschema.Structural) {
	validation.EachNode(s, func(n *structuralschema.Structural) {
		n.Description, n.Title, n.Example, n.ExternalDocs = "", "", structuralschema.JSON{}, nil
	})
}

// validatorFor is the program of s's rules (set by setRules) run by the API server's validator.
func validatorFor(s *structuralschema.Structural, isRoot bool) *nodeProgram {
	return &nodeProgram{v: cel.NewValidator(s, isRoot, celconfig.PerCallLimit), only: -1, n: len(s.XValidations)}
}

// hasAllOfRules reports whether rules sit in allOf branches of s or below them (ClearRules
// leaves those).
func hasAllOfRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if vv := s.ValueValidation; vv != nil && slices.ContainsFunc(vv.AllOf, nestedRules) {
		return true
	}
	for _, p := range s.Properties {
		if hasAllOfRules(&p) {
			return true
		}
	}
	return hasAllOfRules(s.Items) || s.AdditionalProperties != nil && hasAllOfRules(s.AdditionalProperties.Structural)
}

// nestedRules reports whether a value validation or one below it (through properties, items,
// additionalProperties and allOf, as the validator follows them) carries rules.
func nestedRules(v structuralschema.NestedValueValidation) bool {
	if len(v.ValidationExtensions.XValidations) > 0 || slices.ContainsFunc(v.AllOf, nestedRules) {
		return true
	}
	for _, p := range v.Properties {
		if nestedRules(p) {
			return true
		}
	}
	return v.Items != nil && nestedRules(*v.Items) || v.AdditionalProperties != nil && nestedRules(*v.AdditionalProperties)
}

// compiled holds every node program compiled in this process, by content.
var compiled sync.Map

// ForgetCompiled drops the programs compiled so far, so that a benchmark's runs start cold.
func ForgetCompiled() { compiled.Clear() }

func marker(i int) string { return fmt.Sprintf("crdguard-rule-%d.", i) }

var markerRE = regexp.MustCompile(`crdguard-rule-(\d+)\.`)

// eval runs every rule of the node on obj (an update of old when old is not nil) and says which
// failed; ok is false when a rule could not be compiled or ran out of budget.
func (p *nodeProgram) eval(obj, old any) (failed []bool, ok bool) {
	return p.evalOn(func(bool) (any, any) { return obj, old })
}

// evalOn is eval on the values values gives, read for this program (whole false) or for the
// program against the node's whole schema it falls back to when a rule did not compile.
func (p *nodeProgram) evalOn(values func(whole bool) (obj, old any)) (failed []bool, ok bool) {
	obj, old := values(false)
	failed, ok, uncompiled := p.evalHere(obj, old)
	if uncompiled && p.whole != nil {
		if w := p.whole(); w != nil {
			obj, old = values(true)
			failed, ok, _ = w.evalHere(obj, old)
		}
	}
	return failed, ok
}

// evalHere is eval with this program alone; uncompiled says that a rule did not compile.
func (p *nodeProgram) evalHere(obj, old any) (failed []bool, ok, uncompiled bool) {
	if p.rs != nil {
		return p.rs.eval(p.only, obj, old)
	}
	failed = make([]bool, p.n)
	if p.v == nil {
		return failed, true, false
	}
	errs, remaining := p.v.Validate(context.Background(), nil, nil, obj, old, celconfig.RuntimeCELCostBudget)
	if remaining < 0 {
		return nil, false, false
	}
	for _, e := range errs {
		if strings.Contains(e.Detail, "compile") { // "rule compile error", "rule compiler initialization error"
			return nil, false, true
		}
		// Running out of budget returns a negative remainder, above; an error that names no
		// rule of this node is one the validator ran below it (in an allOf branch).
		m := markerRE.FindStringSubmatch(e.Detail)
		if m == nil {
			return nil, false, false
		}
		i, _ := strconv.Atoi(m[1])
		if i < p.n {
			failed[i] = true
		}
	}
	return failed, true, false
}
