package celproof

import (
	"context"
	"math"
	"reflect"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/features"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// ruleSet is the API server's compilation of the CEL rules of one schema node (cel.Compile, as
// the validator compiles them), kept rule by rule: a judgement asks one rule at a time, and
// compiling each rule alone costs the API server's whole environment set-up per rule — most
// of the compile time on a node of a dozen rules. eval runs a rule as the validator's
// validateExpressions does; TestRuleSetAgreesWithValidator holds the two together.
type ruleSet struct {
	results []cel.CompilationResult
	// optional marks the rules whose oldSelf is optional.
	optional []bool
	// self is the schema of self: the node's, with apiVersion, kind and metadata at a root.
	self common.Schema
	// err is the compiler's set-up error, for every rule.
	err error
}

// compileRuleSet compiles the rules of node s (their messages already replaced).
func compileRuleSet(s *structuralschema.Structural, isRoot bool) *ruleSet {
	rs := &ruleSet{optional: make([]bool, len(s.XValidations))}
	for i, r := range s.XValidations {
		rs.optional[i] = r.OptionalOldSelf != nil && *r.OptionalOldSelf
	}
	rs.results, rs.err = cel.Compile(s, model.SchemaDeclType(s, isRoot), celconfig.PerCallLimit,
		environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.StoredExpressionsEnvLoader())
	self := s
	if isRoot {
		self = model.WithTypeAndObjectMeta(s)
	}
	rs.self = cachedSchemaOf(self)
	return rs
}

// activation binds self and oldSelf as the validator does; oldSelf is optional for the rules
// that ask for it.
type activation struct {
	self, oldSelf ref.Val
	hasOldSelf    bool
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case cel.ScopedVarName:
		return a.self, true
	case cel.OldScopedVarName:
		return a.oldSelf, a.hasOldSelf
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// eval runs the rules picked by only (all when only < 0) on obj (an update of old when old is
// not nil) and says which failed, as the validator decides: a rule that errs fails, a transition
// rule without an old value is skipped unless its oldSelf is optional. ok is false when the
// cost budget ran out; uncompiled says that a rule asked for did not compile.
func (rs *ruleSet) eval(only int, obj, old any) (failed []bool, ok, uncompiled bool) {
	n := len(rs.results)
	if only >= 0 {
		n = 1
	}
	failed = make([]bool, n)
	if old != nil { // a nil map or list held in an interface is no old value either
		if v := reflect.ValueOf(old); (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
			old = nil
		}
	}
	if obj == nil {
		return failed, true, false // the validator checks only values that are set
	}
	if rs.err != nil {
		return nil, false, true
	}
	var self, oldSelf ref.Val
	budget := int64(celconfig.RuntimeCELCostBudget)
	for i, c := range rs.results {
		at := i
		if only >= 0 {
			if i != only {
				continue
			}
			at = 0
		}
		if c.Error != nil {
			return nil, false, true
		}
		if c.Program == nil {
			continue // an empty rule
		}
		if c.UsesOldSelf && old == nil && (!rs.optional[i] || !utilfeature.DefaultFeatureGate.Enabled(features.CRDValidationRatcheting)) {
			continue // transition rules run only on updates
		}
		if self == nil {
			self = common.UnstructuredToVal(obj, rs.self)
			if old != nil {
				oldSelf = common.UnstructuredToVal(old, rs.self)
			}
		}
		act := &activation{self: self, oldSelf: oldSelf, hasOldSelf: old != nil}
		if rs.optional[i] {
			act.hasOldSelf, act.oldSelf = true, types.OptionalNone
			if old != nil {
				act.oldSelf = types.OptionalOf(oldSelf)
			}
		}
		res, details, err := c.Program.ContextEval(context.Background(), act)
		if details == nil || details.ActualCost() == nil {
			return nil, false, false
		}
		if cost := *details.ActualCost(); cost > math.MaxInt64 || int64(cost) > budget {
			return nil, false, false
		} else {
			budget -= int64(cost)
		}
		switch {
		case err != nil && strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded"):
			return nil, false, false
		case err != nil, res != types.True:
			failed[at] = true
		}
	}
	return failed, true, false
}
