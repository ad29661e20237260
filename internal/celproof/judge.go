// Package celproof judges a change to a CEL validation rule (x-kubernetes-validations) with the
// API server's own CEL environment and validator: it proves that the new rule rejects no object
// the old schema accepted when the data the rules read has a finite domain under the old schema,
// and otherwise searches for a witness — an object the old schema accepts and the new one
// rejects, confirmed by the API server's validator for the whole custom resource.
package celproof

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"

	celast "github.com/google/cel-go/common/ast"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/validation"
)

// Limit is how many candidate objects (or, for transition rules, updates) are tried per rule,
// and MaxConfirm how many of the counterexamples found at the node are checked against the
// validator of the whole resource. Together with the API server's CEL cost limits they bound the
// time spent on one rule.
// SearchLimit bounds the search where no proof is possible (a domain is infinite).
const (
	Limit       = 4096
	SearchLimit = 512
	MaxConfirm  = 8
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
	// ByText: the safe verdict was proven from the rules' text, not on every object; Because
	// lists the facts of the old schema the proof used (none for a purely logical one).
	ByText  bool
	Because []string
	// Why says, for an undecided change, which sub-expression could not be decided and why.
	Why string
	// Unheld are, for an added rule proven on every object, the fields it reads (paths below
	// the node, .spec.ref) when each is new in this change and pruned by the old schema: no
	// stored object can hold them, which is why the rule refuses nothing that worked before.
	Unheld []string
}

// Judge judges the rule changes of one version of a CRD pair; it keeps what it compiled.
type Judge struct {
	old, new *crd.CRD
	version  string
	oldRoot  *structuralschema.Structural
	newRoot  *structuralschema.Structural
	versions [2]*validation.Version
	err      error
	*memo
	// named is the version examples are written for; version is the one validated (the same,
	// unless the judge is shared by versions with the same schemas).
	named string
}

// memo is what a judge keeps, shared by the versions that share it (As) and by the goroutines
// judging its changes (Start): every entry is a function of its key alone, so which goroutine
// fills it, and when, changes no verdict.
type memo struct {
	mu       sync.Mutex
	programs map[string]*programEntry
	// results are the judgements made or under way, by change.
	results map[string]*pending
	parsed  map[string]*celast.AST
	// repairs remembers, by node and kept fields, the value a repair found (nil: none).
	repairs map[string]any
	// readAs are the schemas candidates are read through, by path (see readSchemas).
	readAs map[string][2]*structuralschema.Structural
}

// remember returns m[key], computing it the first time without holding mu: an entry is a
// function of its key alone, so goroutines that compute it at once store the same value.
func remember[V any](mu *sync.Mutex, m map[string]V, key string, compute func() V) V {
	mu.Lock()
	v, ok := m[key]
	mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	mu.Lock()
	m[key] = v
	mu.Unlock()
	return v
}

// programEntry is one node program, compiled once by whoever asks first.
type programEntry struct {
	once sync.Once
	p    *nodeProgram
}

// readBy is what the rules read of self and oldSelf, with their literals added to consts; ok is
// false when one of them does not parse.
func (j *Judge) readBy(rules []apiextv1.ValidationRule, consts *constants) (read *refNode, ok bool) {
	return j.readWith(rules, consts, false)
}

// readWith is readBy, following loop variables through nested loops when follow is set (see
// collectWith).
func (j *Judge) readWith(rules []apiextv1.ValidationRule, consts *constants, follow bool) (read *refNode, ok bool) {
	read = &refNode{}
	for _, r := range rules {
		a, ok := j.parse(r.Rule)
		if !ok {
			return nil, false
		}
		collectWith(a, read, consts, follow)
	}
	return read, true
}

// parse parses a rule once per judge, with the API server's stored-expressions environment.
func (j *Judge) parse(rule string) (*celast.AST, bool) {
	a := remember(&j.mu, j.parsed, rule, func() *celast.AST {
		parsed, iss := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).StoredExpressionsEnv().Parse(rule)
		if iss.Err() != nil {
			return nil
		}
		return parsed.NativeRep()
	})
	return a, a != nil
}

// NewJudge prepares the judgement of one version present in both CRDs.
func NewJudge(old, new *crd.CRD, version string) *Judge {
	j := &Judge{old: old, new: new, version: version, memo: &memo{programs: map[string]*programEntry{}, results: map[string]*pending{}, parsed: map[string]*celast.AST{}, repairs: map[string]any{}, readAs: map[string][2]*structuralschema.Structural{}}}
	j.versions[0], j.err = validation.NewVersion(old, version)
	if j.err == nil {
		j.versions[1], j.err = validation.NewVersion(new, version)
	}
	if j.err == nil {
		j.oldRoot, j.newRoot = j.versions[0].Structural, j.versions[1].Structural
	}
	j.named = version
	return j
}

// As is the judge for another version whose schemas, old and new, are this one's: it shares
// everything compiled, and names that version in its examples.
func (j *Judge) As(version string) *Judge {
	c := *j
	c.named = version
	return &c
}

var oldSelfRE = regexp.MustCompile(`\boldSelf\b`)

// Judge decides whether a changed or added rule rejects an object the old schema accepted.
func (j *Judge) Judge(c Change) Result {
	// Versions with the same schemas (see As) ask the same questions: each is judged once,
	// and only the witnesses' apiVersion differs.
	res := j.pending(c).wait()
	if res.Example != nil {
		res.Example = j.asNamed(copyValue(res.Example).(map[string]any))
	}
	if res.Stored != nil {
		res.Stored = j.asNamed(copyValue(res.Stored).(map[string]any))
	}
	return res
}

// judge is Judge without the memo.
func (j *Judge) judge(c Change) (res Result) {
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
	sr, ok := j.prepare(c)
	if !ok {
		return Result{Why: j.refusedRule(c)}
	}
	e, cands, complete, root, transition := sr.e, sr.cands, sr.complete, sr.root, sr.transition
	oldNode, newNode := e.oldNode, e.newNode
	res = Result{Transition: transition}
	looser, unsafe, broken, confirmed := false, false, false, 0
	try := func(obj, old any) bool {
		res.Objects++
		switch e.verdict(obj, old, !looser) {
		case undecidable:
			unsafe, broken = true, true // a rule did not compile or ran out of budget: no proof
		case loosened:
			looser = true
		case tightened:
			unsafe = true
			if confirmed < MaxConfirm {
				confirmed++
				if ex, stored := j.confirm(c.Steps, c.After, obj, old, root); ex != nil {
					res.Verdict, res.Example, res.Stored = Witness, ex, stored
					return true
				}
			}
		}
		return false
	}
	limit := Limit
	if !complete {
		limit = SearchLimit
	}
	// hopeless: no proof is possible any more and no witness will be confirmed.
	hopeless := func() bool { return unsafe && (confirmed >= MaxConfirm || !complete && res.Objects >= limit) }
	// creates tries the candidates as created objects, from the next one untried up to stop;
	// stopped says a hopeless sample ended early.
	next, stopped := 0, false
	creates := func(stop int) (found bool) {
		for ; next < min(stop, len(cands)); next++ {
			if next >= limit {
				complete, next = false, len(cands)
				break
			}
			if try(cands[next], nil) {
				return true
			}
			if hopeless() {
				stopped = true
				return false
			}
		}
		return false
	}
	sample := func() (found bool) {
		if stopped {
			return false
		}
		if creates(len(cands)) {
			return true
		}
		if stopped {
			return false
		}
		if transition {
			n := 0
			for _, old := range cands {
				for _, v := range cands {
					if n >= limit {
						complete = false
						return false
					}
					n++
					if try(v, old) {
						return true
					}
					if hopeless() {
						return false
					}
				}
			}
		}
		return false
	}
	// An added rule over values without end (strings, numbers, lists): the witnesses the sample
	// finds are among its first few dozen objects (35 at most on gateway-api httproutes v0.8,
	// 30 rules), and where they are not, a witness built from what the rule tests (synth.go)
	// needs none of the hundreds after them. So the first earlySample objects are tried, then
	// synthesis, then the rest of the sample (with its proofs).
	synthTried := false
	if c.Before == nil && !complete {
		if creates(earlySample) {
			return res
		}
		synthTried = true
		if ex, stored := j.synthesized(c, e, root, transition, sr.consts.strings); ex != nil {
			res.Verdict, res.Example, res.Stored = Witness, ex, stored
			return res
		}
	}
	if sample() {
		return res
	}
	switch {
	case broken:
	case unsafe || !complete:
		// The sample proves nothing then, but the rules' text may: values the new rule refuses
		// that the whole old version refuses elsewhere (a rule of a field below) are no witness.
		res.Verdict, res.Because = j.proveByText(oldNode, newNode, c)
		res.ByText = res.Verdict.Safe()
	case c.Before == nil:
		res.Verdict, res.Unheld = Implied, sr.unheld
	case looser:
		res.Verdict = Looser
	default:
		res.Verdict = Equivalent
	}
	if !res.Verdict.Safe() {
		// Neither proven nor refuted by the sample: build candidates from what the new rule
		// tests (see synth.go), unless that was done first.
		var ex, stored map[string]any
		if !synthTried {
			ex, stored = j.synthesized(c, e, root, transition, sr.consts.strings)
		}
		if ex != nil {
			res.Verdict, res.Example, res.Stored = Witness, ex, stored
		} else if res.Why = j.refusedRule(c); res.Why == "" {
			res.Why = j.why(c, oldNode, unsafe)
		}
	}
	return res
}

// earlySample is how many sampled objects an added rule over an infinite domain is tried on
// before a witness is synthesized for it (see judge).
const earlySample = 64

// search is what the judgement of one change starts from.
type search struct {
	e *evaluator
	// cands are the candidate values of the node, complete when they are every combination of
	// what the rules read (a finite domain); root is what the rules read.
	cands      []any
	complete   bool
	root       *refNode
	transition bool
	// consts are the literals of the rules, which synthesized values prefer (see synth.go).
	consts constants
	// unheld are the fields the rules read when every one is pruned by the old schema (see
	// Result.Unheld).
	unheld []string
}

// prepare finds the change's node on both sides, the programs that judge it and the candidate
// values; ok is false when the change cannot be judged (a node or rule not found, a rule that
// does not parse).
func (j *Judge) prepare(c Change) (sr search, ok bool) {
	oldNode, newNode := walk(j.oldRoot, c.Steps), walk(j.newRoot, c.Steps)
	if oldNode == nil || newNode == nil {
		return sr, false
	}
	isRoot := len(c.Steps) == 0 || oldNode.XEmbeddedResource
	// The other old rules of the node hold for every object the old schema accepts.
	before, after := -1, index(newNode.XValidations, c.After.Rule)
	if c.Before != nil {
		before = index(oldNode.XValidations, c.Before.Rule)
	}
	if after < 0 || c.Before != nil && before < 0 {
		return sr, false
	}
	all := append([]apiextv1.ValidationRule{c.After}, oldNode.XValidations...)
	g := &gen{limit: Limit}
	if sr.root, ok = j.readBy(all, &g.consts); !ok {
		return sr, false
	}
	if c.Before != nil {
		j.regexWitnesses(c.Before.Rule, c.After.Rule, &g.consts)
	}
	newEnums(sr.root, newNode, &g.consts)
	sr.transition = slices.ContainsFunc(all, usesOldSelf)
	if isRoot {
		g.resourceRoot = oldNode
	}
	sr.cands = g.values(sr.root, oldNode, false)
	sr.complete = !g.infinite && !g.truncated
	sr.consts = g.consts
	if !g.heldRead {
		sr.unheld = slices.Sorted(maps.Keys(g.pruned))
	}

	path := fieldPath(c.Steps)
	e := &evaluator{j: j, isRoot: isRoot, oldNode: oldNode, newNode: newNode, before: before,
		old:   sync.OnceValue(func() *nodeProgram { return j.program("old:"+path, oldNode, isRoot, -1) }),
		after: j.program(fmt.Sprintf("new:%s#%d", path, after), newNode, isRoot, after)}
	e.readOld, e.readNew = j.readSchemas(path, oldNode, newNode)
	if before >= 0 {
		e.beforeRule = sync.OnceValue(func() *nodeProgram {
			return j.program(fmt.Sprintf("old:%s#%d", path, before), oldNode, isRoot, before)
		})
	}
	sr.e = e
	return sr, true
}

// newEnums adds to consts the strings the new schema enumerates at the nodes the rules read,
// a few of each enum. A witness must pass the new version's other checks before its rule can
// refuse it (the server runs no rule on an object its OpenAPI schema refuses): where the same
// change adds an enum, a value that only the rule refuses lies in it (rook's network.provider
// gained an enum and a transition rule in one change: the witness, empty to host, lies in it).
func newEnums(r *refNode, s *structuralschema.Structural, consts *constants) {
	if r == nil || s == nil {
		return
	}
	if vv := s.ValueValidation; vv != nil {
		for _, e := range vv.Enum[:min(len(vv.Enum), maxEnumConstants)] {
			if v, ok := e.Object.(string); ok && !slices.Contains(consts.strings, v) {
				consts.strings = append(consts.strings, v)
			}
		}
	}
	for name, f := range r.fields {
		if p, ok := s.Properties[propertyName(name)]; ok {
			newEnums(f, &p, consts)
		}
	}
	switch {
	case r.elem == nil:
	case s.Items != nil:
		newEnums(r.elem, s.Items, consts)
	case s.AdditionalProperties != nil:
		newEnums(r.elem, s.AdditionalProperties.Structural, consts)
	}
}

// maxEnumConstants bounds the values newEnums takes from one enum: each string constant adds
// three candidates per string the rules read, and an update's pairs grow with their square.
const maxEnumConstants = 4

// index is the position of the rule with this text, or -1.
func index(rs apiextv1.ValidationRules, rule string) int {
	for i, r := range rs {
		if r.Rule == rule {
			return i
		}
	}
	return -1
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

// String names the verdict.
func (v Verdict) String() string {
	return [...]string{"undecided", "equivalent", "looser", "implied", "witness"}[v]
}
