// Package celproof judges a change to a CEL validation rule (x-kubernetes-validations) with the
// API server's own CEL environment and validator: it proves that the new rule rejects no object
// the old schema accepted when the data the rules read has a finite domain under the old schema,
// and otherwise searches for a witness — an object the old schema accepts and the new one
// rejects, confirmed by the API server's validator for the whole custom resource.
package celproof

import (
	"context"
	"regexp"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/validation"
)

// Limit is how many candidate objects (or, for transition rules, updates) are tried per rule,
// and MaxConfirm how many of the counterexamples found at the node are checked against the
// validator of the whole resource. Together with the API server's CEL cost limits they bound the
// time spent on one rule.
const (
	Limit      = 4096
	MaxConfirm = 8
)

// Verdict is what the judgement found.
type Verdict int

// The verdicts.
const (
	// Undecided: no proof and no confirmed witness; the change stays an error.
	Undecided Verdict = iota
	// Equivalent: the new rule accepts exactly what the old one did on every object the old
	// schema allows.
	Equivalent
	// Looser: the new rule accepts everything the old one did, and more.
	Looser
	// Implied: an added rule that every object the old schema accepts already satisfies.
	Implied
	// Witness: Example is accepted by the old schema and rejected by the new one.
	Witness
)

// Safe reports whether the verdict proves that nothing valid before is rejected now.
func (v Verdict) Safe() bool { return v == Equivalent || v == Looser || v == Implied }

// StepKind is one kind of step from a schema node to a child.
type StepKind int

// The steps.
const (
	Property StepKind = iota
	Items
	MapValues
)

// Step leads from a schema node to a child: a property, the items of a list, the values of a map.
type Step struct {
	Kind StepKind
	Name string
}

// Change is one rule of a schema node that is new or whose text changed.
type Change struct {
	// Steps lead from the root of the version's schema to the node carrying the rules.
	Steps []Step
	// Before is the rule this one replaces; nil when the rule was added.
	Before *apiextv1.ValidationRule
	// After is the new rule.
	After apiextv1.ValidationRule
}

// Result is the judgement of one change.
type Result struct {
	Verdict Verdict
	// Example is the witness object (apiVersion, kind, metadata included), for Witness.
	Example map[string]any
	// Stored is set when the witness is an update (a transition rule): the object as stored,
	// which the old schema let clients change into Example and the new one does not.
	Stored map[string]any
	// Objects is how many candidate objects (or updates) were evaluated.
	Objects int
	// Transition: the rules read oldSelf, so updates (pairs of objects) were judged too.
	Transition bool
}

// Judge judges the rule changes of one version of a CRD pair; it keeps what it compiled.
type Judge struct {
	old, new   *crd.CRD
	version    string
	oldRoot    *structuralschema.Structural
	newRoot    *structuralschema.Structural
	err        error
	full       [2]*validation.Schema
	fullErr    error
	fullLoaded bool
	programs   map[programKey]*cel.Validator
}

// programKey names a compiled rule: its side and node, and its text.
type programKey struct {
	node string
	rule string
	opt  bool
}

// NewJudge prepares the judgement of one version present in both CRDs.
func NewJudge(old, new *crd.CRD, version string) *Judge {
	j := &Judge{old: old, new: new, version: version, programs: map[programKey]*cel.Validator{}}
	j.oldRoot, j.err = validation.Structural(old, version)
	if j.err == nil {
		j.newRoot, j.err = validation.Structural(new, version)
	}
	return j
}

var oldSelfRE = regexp.MustCompile(`\boldSelf\b`)

// Judge decides whether a changed or added rule rejects an object the old schema accepted.
func (j *Judge) Judge(c Change) (res Result) {
	if j.err != nil {
		return Result{}
	}
	defer func() {
		// The CEL libraries and schema walkers are third-party code fed with untrusted
		// documents: whatever goes wrong in them leaves the change undecided (an error).
		if recover() != nil {
			res = Result{}
		}
	}()
	oldNode, newNode := walk(j.oldRoot, c.Steps), walk(j.newRoot, c.Steps)
	if oldNode == nil || newNode == nil {
		return Result{}
	}
	isRoot := len(c.Steps) == 0 || oldNode.XEmbeddedResource
	// The other old rules of the node hold for every object the old schema accepts.
	var others []apiextv1.ValidationRule
	for _, r := range oldNode.XValidations {
		if c.Before == nil || r.Rule != c.Before.Rule {
			others = append(others, r)
		}
	}
	all := append(append([]apiextv1.ValidationRule{c.After}, others...), ptrRules(c.Before)...)
	root := &refNode{}
	g := &gen{limit: Limit}
	transition := false
	for _, r := range all {
		a, iss := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv().Parse(r.Rule)
		if iss.Err() != nil {
			return Result{}
		}
		collect(a.NativeRep(), root, &g.consts)
		transition = transition || usesOldSelf(r)
	}
	g.resourceRoot = nil
	if isRoot {
		g.resourceRoot = oldNode
	}
	cands := g.values(root, oldNode, false)
	complete := !g.infinite && !g.truncated

	path := fieldPath(c.Steps)
	e := &evaluator{j: j, isRoot: isRoot, oldKey: "old:" + path, newKey: "new:" + path, oldNode: oldNode, newNode: newNode, others: others, before: c.Before, after: c.After}
	res = Result{Transition: transition}
	looser, unsafe, confirmed := false, false, 0
	try := func(obj, old any) bool {
		res.Objects++
		o, n, ok := e.verdicts(obj, old)
		if !ok {
			unsafe = true // a rule did not compile or ran out of budget: no proof
			return false
		}
		looser = looser || !o && n
		if o && !n {
			unsafe = true
			if confirmed < MaxConfirm {
				confirmed++
				if ex, stored := j.confirm(c.Steps, obj, old); ex != nil {
					res.Verdict, res.Example, res.Stored = Witness, ex, stored
					return true
				}
			}
		}
		return false
	}
	for _, v := range cands {
		if try(v, nil) {
			return res
		}
	}
	if transition {
		n := 0
		for _, old := range cands {
			for _, v := range cands {
				if n >= Limit {
					complete = false
					break
				}
				n++
				if try(v, old) {
					return res
				}
			}
		}
	}
	switch {
	case !complete || unsafe:
	case c.Before == nil:
		res.Verdict = Implied
	case looser:
		res.Verdict = Looser
	default:
		res.Verdict = Equivalent
	}
	return res
}

func ptrRules(r *apiextv1.ValidationRule) []apiextv1.ValidationRule {
	if r == nil {
		return nil
	}
	return []apiextv1.ValidationRule{*r}
}

func usesOldSelf(r apiextv1.ValidationRule) bool {
	return oldSelfRE.MatchString(r.Rule) || r.OptionalOldSelf != nil && *r.OptionalOldSelf
}

// walk follows steps from a schema root; nil when the path leaves the schema.
func walk(s *structuralschema.Structural, steps []Step) *structuralschema.Structural {
	for _, st := range steps {
		if s == nil {
			return nil
		}
		switch st.Kind {
		case Property:
			p, ok := s.Properties[st.Name]
			if !ok {
				return nil
			}
			s = &p
		case Items:
			s = s.Items
		case MapValues:
			if s.AdditionalProperties == nil {
				return nil
			}
			s = s.AdditionalProperties.Structural
		}
	}
	return s
}

// evaluator runs the rules of one node on candidate values.
type evaluator struct {
	j                *Judge
	isRoot           bool
	oldKey, newKey   string
	oldNode, newNode *structuralschema.Structural
	others           []apiextv1.ValidationRule
	before           *apiextv1.ValidationRule
	after            apiextv1.ValidationRule
}

// verdicts says whether the old schema's rules accept the candidate (obj, updating old when old
// is not nil) — the rule before the change and all others — and whether the changed rule does
// afterwards. ok is false when a rule could not be evaluated.
func (e *evaluator) verdicts(obj, old any) (oldOK, newOK, ok bool) {
	oldObj, oldPrev := e.read(e.oldNode, obj, false), e.read(e.oldNode, old, false)
	for _, r := range e.others {
		pass, ok := e.j.run(e.oldKey, e.oldNode, r, e.isRoot, oldObj, oldPrev)
		if !ok {
			return false, false, false
		}
		if !pass {
			return false, false, true // not an object the old schema accepts
		}
	}
	oldOK = true
	if e.before != nil {
		if oldOK, ok = e.j.run(e.oldKey, e.oldNode, *e.before, e.isRoot, oldObj, oldPrev); !ok {
			return false, false, false
		}
	}
	newObj, newPrev := e.read(e.newNode, oldObj, true), e.read(e.newNode, oldPrev, true)
	newOK, ok = e.j.run(e.newKey, e.newNode, e.after, e.isRoot, newObj, newPrev)
	return oldOK, newOK, ok
}

// read is the value as the API server hands it to the rules under a schema: pruned (for the new
// schema, which reads objects stored under the old one) and defaulted.
func (e *evaluator) read(s *structuralschema.Structural, v any, prune bool) any {
	if v == nil {
		return nil
	}
	v = deepCopy(v)
	if prune {
		structuralpruning.Prune(v, s, e.isRoot)
	}
	structuraldefaulting.Default(v, s)
	return v
}

// run evaluates one rule of a node with the API server's CEL validator.
func (j *Judge) run(key string, node *structuralschema.Structural, r apiextv1.ValidationRule, isRoot bool, obj, old any) (pass, ok bool) {
	k := programKey{node: key, rule: r.Rule, opt: r.OptionalOldSelf != nil && *r.OptionalOldSelf}
	v, seen := j.programs[k]
	if !seen {
		s := stripped(node, r)
		v = cel.NewValidator(s, isRoot, celconfig.PerCallLimit)
		j.programs[k] = v
	}
	if v == nil {
		return true, true
	}
	errs, remaining := v.Validate(context.Background(), nil, nil, obj, old, celconfig.RuntimeCELCostBudget)
	if remaining < 0 {
		return false, false
	}
	for _, e := range errs {
		if strings.Contains(e.Detail, "compile error") || strings.Contains(e.Detail, "cost budget") || strings.Contains(e.Detail, "cost limit") {
			return false, false
		}
	}
	return len(errs) == 0, true
}

// stripped is the node with one rule and no rules below it, so the validator evaluates just
// that rule in the node's schema context.
func stripped(node *structuralschema.Structural, r apiextv1.ValidationRule) *structuralschema.Structural {
	s := node.DeepCopy()
	clearRules(s)
	r.Message, r.MessageExpression, r.FieldPath, r.Reason = "", "", "", nil
	s.XValidations = apiextv1.ValidationRules{r}
	return s
}

func clearRules(s *structuralschema.Structural) {
	if s == nil {
		return
	}
	s.XValidations = nil
	for k, p := range s.Properties {
		clearRules(&p)
		s.Properties[k] = p
	}
	clearRules(s.Items)
	if s.AdditionalProperties != nil {
		clearRules(s.AdditionalProperties.Structural)
	}
	if vv := s.ValueValidation; vv != nil {
		for i := range vv.AllOf {
			vv.AllOf[i].XValidations = nil
		}
	}
}

// confirm embeds a node value in a whole object and asks the API server's validator: accepted by
// the old version, rejected by the new one at this node. For an update (old not nil) both values
// are embedded alike and the update is judged, with ratcheting as the server applies it. It
// returns the object (and the stored object of an update) when both hold.
func (j *Judge) confirm(steps []Step, v, old any) (obj, stored map[string]any) {
	if !j.fullLoaded {
		j.fullLoaded = true
		j.full[0], j.fullErr = validation.NewSchema(j.old, j.version)
		if j.fullErr == nil {
			j.full[1], j.fullErr = validation.NewSchema(j.new, j.version)
		}
	}
	if j.fullErr != nil {
		return nil, nil
	}
	obj = j.object(steps, v)
	var errs field.ErrorList
	if old == nil {
		if j.full[0].Create(obj).Errors != nil {
			return nil, nil
		}
		errs = j.full[1].Create(obj).Errors
	} else {
		stored = j.object(steps, old)
		if j.full[0].Create(stored).Errors != nil || j.full[0].Update(obj, stored) != nil {
			return nil, nil
		}
		errs = j.full[1].Update(obj, stored)
	}
	at := fieldPath(steps)
	for _, e := range errs {
		if at == "" || e.Field == at || strings.HasPrefix(e.Field, at+".") || strings.HasPrefix(e.Field, at+"[") {
			return obj, stored
		}
	}
	return nil, nil
}

// object is a whole resource of the old schema with v at the node.
func (j *Judge) object(steps []Step, v any) map[string]any {
	obj, _ := place(minimal(j.oldRoot), j.oldRoot, steps, deepCopy(v)).(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	obj["apiVersion"] = j.old.Object.Spec.Group + "/" + j.version
	obj["kind"] = j.old.Object.Spec.Names.Kind
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil || len(steps) > 0 {
		meta = map[string]any{}
	}
	if _, ok := meta["name"]; !ok {
		meta["name"] = "example"
	}
	if j.old.Object.Spec.Scope == apiextv1.NamespaceScoped {
		meta["namespace"] = "default"
	}
	obj["metadata"] = meta
	return obj
}

// place puts v at the end of steps inside x (a value of schema s), creating what is missing with
// minimal values.
func place(x any, s *structuralschema.Structural, steps []Step, v any) any {
	if len(steps) == 0 {
		return v
	}
	st, rest := steps[0], steps[1:]
	switch st.Kind {
	case Property:
		m, _ := x.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		child := walk(s, steps[:1])
		cur, ok := m[st.Name]
		if !ok {
			cur = minimal(child)
		}
		m[st.Name] = place(cur, child, rest, v)
		return m
	case Items:
		l, _ := x.([]any)
		if len(l) == 0 {
			l = []any{minimal(s.Items)}
		}
		l[0] = place(l[0], s.Items, rest, v)
		return l
	default:
		child := walk(s, steps[:1])
		return map[string]any{"a": place(minimal(child), child, rest, v)}
	}
}

// fieldPath is the API server's field path of the node (spec.a[0].b, spec.m[a]).
func fieldPath(steps []Step) string {
	var b strings.Builder
	for _, st := range steps {
		switch st.Kind {
		case Property:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.Name)
		case Items:
			b.WriteString("[0]")
		case MapValues:
			b.WriteString("[a]")
		}
	}
	return b.String()
}

// String names the verdict.
func (v Verdict) String() string {
	return [...]string{"undecided", "equivalent", "looser", "implied", "witness"}[v]
}
