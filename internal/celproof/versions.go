package celproof

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/validation"
)

// Introduced checks a rule at the node steps lead to from root (a version's structural schema)
// as the API server of an older Kubernetes minor (1.N) compiles a new rule: when that version
// cannot compile it, it returns the function or macro the error names and the first minor, up to
// the one crdguard links, that can.
//
// A 1.N API server compiles new expressions with the CEL environment of its minimum
// compatibility version, 1.(N-1), so that a rollback can still read what it accepted
// (environment.DefaultCompatibilityVersion; hard-coded as N-1 in 1.29 and 1.30, the emulation
// machinery's MinCompatibilityVersion since): isIP, which the environment of 1.30 introduced, is
// refused by a 1.30 API server and accepted by 1.31. Checked by creating CRDs with each library
// on apiextensions-apiserver v0.29 to v0.37.
func Introduced(root *structuralschema.Structural, steps []Step, r apiextv1.ValidationRule, minor uint) (fn, since string, tooNew bool) {
	defer func() {
		if recover() != nil { // as in Judge: the API server's own validation still runs
			fn, since, tooNew = "", "", false
		}
	}()
	node := walk(root, steps)
	if node == nil {
		return "", "", false
	}
	isRoot := len(steps) == 0 || node.XEmbeddedResource
	s := node.DeepCopy()
	validation.ClearRules(s)
	r.MessageExpression = "" // judged as the rule's own expression only
	s.XValidations = apiextv1.ValidationRules{r}
	decl := model.SchemaDeclType(s, isRoot)
	compileAt := func(m uint) string { // as the API server of Kubernetes 1.m
		res, err := cel.Compile(s, decl, celconfig.PerCallLimit, environment.MustBaseEnvSet(version.MajorMinor(1, max(m, 1)-1)), cel.NewExpressionsEnvLoader())
		switch {
		case err != nil:
			return err.Error()
		case len(res) == 1 && res[0].Error != nil:
			return res[0].Error.Detail
		}
		return ""
	}
	msg := compileAt(minor)
	if msg == "" {
		return "", "", false
	}
	latest := environment.DefaultCompatibilityVersion().Minor() + 1
	for m := minor + 1; m <= latest; m++ {
		if compileAt(m) == "" {
			if sub := undeclaredRE.FindStringSubmatch(msg); sub != nil {
				fn = sub[1]
			}
			return fn, fmt.Sprintf("1.%d", m), true
		}
	}
	return "", "", false // no version compiles it: the API server's own validation says why
}

// Unsupported is a rule that an older Kubernetes cannot compile.
type Unsupported struct {
	// Steps lead from the version's schema root to the rule's node.
	Steps []Step
	Rule  apiextv1.ValidationRule
	// Function is what the older CEL environment lacks (a function, macro or field), when its
	// error names it; Since is the first minor (1.N) that compiles the rule.
	Function, Since string
}

// TooNew lists the rules of a version of new — those that old (nil for a new CRD) does not have
// with the same text at the same node — that the CEL environment of Kubernetes 1.minor cannot
// compile. A version without a structural schema is left to the API server's validation.
func TooNew(old, new *crd.CRD, version string, minor uint) []Unsupported {
	nv, err := validation.NewVersion(new, version)
	if err != nil {
		return nil
	}
	var oldRoot *structuralschema.Structural
	if old != nil {
		if ov, err := validation.NewVersion(old, version); err == nil {
			oldRoot = ov.Structural
		}
	}
	var out []Unsupported
	var visit func(s *structuralschema.Structural, steps []Step)
	visit = func(s *structuralschema.Structural, steps []Step) {
		if s == nil {
			return
		}
		var before apiextv1.ValidationRules
		if o := walk(oldRoot, steps); oldRoot != nil && o != nil {
			before = o.XValidations
		}
		for _, r := range s.XValidations {
			if index(before, r.Rule) >= 0 {
				continue // accepted by the clusters that have the old CRD
			}
			if fn, since, tooNew := Introduced(nv.Structural, steps, r, minor); tooNew {
				out = append(out, Unsupported{Steps: slices.Clone(steps), Rule: r, Function: fn, Since: since})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[name]
			visit(&p, append(steps, Step{Property, name}))
		}
		visit(s.Items, append(steps, Step{Kind: Items}))
		if s.AdditionalProperties != nil {
			visit(s.AdditionalProperties.Structural, append(steps, Step{Kind: MapValues}))
		}
	}
	visit(nv.Structural, nil)
	return out
}

// undeclaredRE finds what an older CEL environment does not know in its compile error.
var undeclaredRE = regexp.MustCompile(`(?:undeclared reference to|found no matching overload for|unsupported macro|undefined field) '([^']+)'`)
