package celproof

import (
	"reflect"
	"slices"
	"unsafe"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"strconv"
	"strings"
)

// Sampling the old schema's values finds a witness only when one lies among the first few
// hundred combinations, and deep rules (an item of a list of filters of a list of backends, with
// a path type set) are beyond them. The synthesizer below reads the new rule backwards instead:
// for the verdict false it lists what each sub-expression would have to be (a field present or
// absent, equal to a literal or not, a size, a string that is or is not an IP, a list of one
// item that triggers the rule and one that does not), builds the smallest value of the old node
// that has it, and hands each to the judge's evaluation and the API server's validator. Nothing
// it builds is trusted: a value counts only as a witness confirmed like any other, so the
// synthesis can guess freely and is never part of a proof.

// spath is a place in the node's value: a field or list index chain from self or oldSelf.
type spath struct {
	old   bool // from oldSelf
	steps []sstep
}

type sstep struct {
	name  string
	index int
	item  bool // a list index, not a field
}

func (p spath) with(s sstep) spath {
	return spath{old: p.old, steps: append(slices.Clip(p.steps), s)}
}

// want is one requirement on the value at a place.
type want struct {
	kind wantKind
	at   spath
	val  any   // wEq
	vals []any // wNeq
	n    int   // wSize
	to   spath // wDiffer
	// where: for wMatch, further patterns the string must match (a condition it is tested
	// under, see strlang.go).
	where []string
}

type wantKind int

const (
	wPresent wantKind = iota
	wAbsent
	wEq
	wNeq
	wSize
	wDiffer
	// wMatch: a string the old pattern allows that the regular expression val matches (n 1) or
	// does not (n 0), found by regexlang where the place is known.
	wMatch
)

// sol is one way of giving a sub-expression the wanted verdict: every requirement at once.
type sol []want

// maxAlts bounds the ways kept per sub-expression (and so the candidates built).
const maxAlts = 24

type synth struct {
	steps int
	// prefer are strings to try first where a value must differ from the new rule's: the old
	// rules' literals that the new rule lacks (a kind its list dropped), then the others.
	prefer []string
	// solved remembers what solve returned (see solve); forget turns that off, for the test
	// that holds the memo to working everything out again.
	solved map[solveKey]solved
	forget bool
	// limit is maxSynthSteps, or a test's smaller bound.
	limit int
}

// solveKey is one question to solve: a term, a verdict and the places of the loop variables,
// by identity (an environment is never changed once made, and a loop makes each of its own
// once). The key's pointers keep what they point to alive, so no other term or environment
// takes their address while the answer is remembered.
type solveKey struct {
	t   *term
	w   bool
	env unsafe.Pointer
}

// solved is a remembered answer and the steps it took.
type solved struct {
	ways  []sol
	steps int
}

// maxSynthSteps bounds the work on one rule.
const maxSynthSteps = 5000

// ways is a list of ways, each built when taken: union keeps only the first few of each list,
// and every way of a cross is a new slice (on gateway-api httproutes v0.8 the ways union threw
// away were about 1 MB of the 75 MB a run allocates).
type ways struct {
	n  int
	at func(i int) sol
}

// listed is a list already built.
func listed(l []sol) ways { return ways{n: len(l), at: func(i int) sol { return l[i] }} }

// crossed is every way of meeting one of as and one of bs, bounded: as[0] with each of bs, then
// as[1] with each, and so on.
func crossed(as, bs []sol) ways {
	if len(bs) == 0 {
		return ways{}
	}
	return ways{n: min(maxAlts, len(as)*len(bs)), at: func(i int) sol {
		return append(slices.Clip(as[i/len(bs)]), bs[i%len(bs)]...)
	}}
}

// cross is crossed, built.
func cross(as, bs []sol) []sol {
	w := crossed(as, bs)
	var out []sol
	for i := range w.n {
		out = append(out, w.at(i))
	}
	return out
}

// union keeps the first ways of each list, interleaved, so that every kind of way is tried.
func union(lists ...ways) []sol {
	var out []sol
	for i := 0; len(out) < maxAlts; i++ {
		any := false
		for _, l := range lists {
			if i < l.n {
				any = true
				out = append(out, l.at(i))
				if len(out) == maxAlts {
					return out
				}
			}
		}
		if !any {
			break
		}
	}
	return out
}

// placeOf is the place a chain of selections and literal indexes names, from self, oldSelf or a
// loop variable bound to a place.
func placeOf(t *term, env map[string]spath) (spath, bool) {
	switch t.kind {
	case "ident":
		switch {
		case t.shown == "" && t.name == "self":
			return spath{}, true
		case t.shown == "" && t.name == "oldSelf":
			return spath{old: true}, true
		}
		p, ok := env[t.name]
		return p, ok
	case "select":
		p, ok := placeOf(t.args[0], env)
		return p.with(sstep{name: t.name}), ok
	case "call":
		if t.name == "_[_]" && len(t.args) == 2 {
			p, ok := placeOf(t.args[0], env)
			if !ok {
				return p, false
			}
			switch v, _ := litValue(t.args[1]); x := v.(type) {
			case int64:
				return p.with(sstep{index: int(x), item: true}), x >= 0 && x < 16
			case string:
				return p.with(sstep{name: x}), true
			}
		}
	}
	return spath{}, false
}

// litValue is the value of a literal term.
func litValue(t *term) (any, bool) {
	if t.kind != "lit" {
		return nil, false
	}
	typ, v, _ := strings.Cut(t.name, ":")
	switch typ {
	case "string":
		s, err := strconv.Unquote(v)
		return s, err == nil
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	case "uint":
		n, err := strconv.ParseUint(v, 10, 63)
		return int64(n), err == nil
	case "double":
		f, err := strconv.ParseFloat(v, 64)
		return f, err == nil
	case "bool":
		return v == "true", true
	}
	return nil, false
}

// samples are strings for which a function of one string is true and false.
var samples = map[string][2][]string{
	"isIP":       {{"1.2.3.4", "::1"}, {"a", "example.com"}},
	"isCIDR":     {{"10.0.0.0/8", "::/0"}, {"a", "1.2.3.4"}},
	"isURL":      {{"https://a", "http://example.com/a"}, {"a b", "a"}},
	"isQuantity": {{"1", "100m", "1Gi"}, {"a", "1x"}},
}

// solve lists ways of making t evaluate to w. A disjunction asks the same questions of its
// operands several times, and nested ones (a rule of many guarded cases) multiply them: each
// answer is remembered with the steps it took, and given again, counting those steps, when it
// ends below maxSynthSteps from where it is asked — exactly what working it out again would
// give. Where the bound would cut it, it is worked out again, and cut as before.
func (s *synth) solve(t *term, w bool, env map[string]spath) []sol {
	if s.forget {
		return s.work(t, w, env)
	}
	k := solveKey{t: t, w: w, env: reflect.ValueOf(env).UnsafePointer()}
	if m, ok := s.solved[k]; ok && s.steps+m.steps <= s.bound() {
		s.steps += m.steps
		return m.ways
	}
	start := s.steps
	ways := s.work(t, w, env)
	if s.steps <= s.bound() {
		if s.solved == nil {
			s.solved = map[solveKey]solved{}
		}
		s.solved[k] = solved{ways: ways, steps: s.steps - start}
	}
	return ways
}

// bound is the steps solve may take.
func (s *synth) bound() int {
	if s.limit > 0 {
		return s.limit
	}
	return maxSynthSteps
}

// work is solve without the memo.
func (s *synth) work(t *term, w bool, env map[string]spath) []sol {
	s.steps++
	if s.steps > s.bound() {
		return nil
	}
	switch t.kind {
	case "lit":
		if v, ok := litValue(t); ok && v == w {
			return []sol{{}}
		}
		return nil
	case "has":
		p, ok := placeOf(&term{kind: "select", name: t.name, args: t.args}, env)
		if !ok {
			return nil
		}
		if w {
			return []sol{{{kind: wPresent, at: p}}}
		}
		return []sol{{{kind: wAbsent, at: p}}}
	case "select", "ident":
		// A boolean field.
		if p, ok := placeOf(t, env); ok {
			return []sol{{{kind: wEq, at: p, val: w}}}
		}
		return nil
	case "comp":
		return s.loop(t, w, env)
	case "call":
	default:
		return nil
	}
	if !w {
		if ways := s.stringTest(t, env); ways != nil {
			return ways
		}
	}
	a := t.args
	switch {
	case t.name == "!_" && len(a) == 1:
		return s.solve(a[0], !w, env)
	case isCall(t, "_&&_") || isCall(t, "_||_"):
		and := t.name == "_&&_"
		if and == w { // both must take w
			return cross(s.solve(a[0], w, env), s.solve(a[1], w, env))
		}
		// Either one takes w; the other is tried the other way first, as a guard would be.
		return union(crossed(s.solve(a[0], !w, env), s.solve(a[1], w, env)), crossed(s.solve(a[0], w, env), s.solve(a[1], !w, env)), listed(s.solve(a[0], w, env)), listed(s.solve(a[1], w, env)))
	case isCall(t, "_?_:_"):
		return union(crossed(s.solve(a[0], true, env), s.solve(a[1], w, env)), crossed(s.solve(a[0], false, env), s.solve(a[2], w, env)))
	case isCall(t, "_==_") || isCall(t, "_!=_"):
		eq := w == (t.name == "_==_")
		for i := range 2 {
			if v, ok := litValue(a[i]); ok {
				return s.compare(a[1-i], v, eq, env)
			}
		}
		x, ok1 := placeOf(a[0], env)
		y, ok2 := placeOf(a[1], env)
		if !ok1 || !ok2 {
			return nil
		}
		if eq {
			return []sol{{{kind: wPresent, at: x}, {kind: wPresent, at: y}}}
		}
		return []sol{{{kind: wPresent, at: y}, {kind: wDiffer, at: x, to: y}}, {{kind: wPresent, at: x}, {kind: wAbsent, at: y}}}
	case isCall(t, "@in"):
		if a[1].kind == "list" {
			var vals []any
			for _, e := range a[1].args {
				v, ok := litValue(e)
				if !ok {
					return nil
				}
				vals = append(vals, v)
			}
			if !w {
				return s.compare(a[0], vals, false, env)
			}
			var out []sol
			for _, v := range vals {
				out = append(out, s.compare(a[0], v, true, env)...)
			}
			return out
		}
		v, ok := litValue(a[0])
		l, ok2 := placeOf(a[1], env)
		if !ok || !ok2 {
			return nil
		}
		if w {
			return []sol{{{kind: wEq, at: l.with(sstep{item: true}), val: v}}}
		}
		return []sol{{{kind: wSize, at: l, n: 0}}, {{kind: wNeq, at: l.with(sstep{item: true}), vals: []any{v}}}}
	}
	if x, op, c, ok := bound(t); ok {
		return s.bounded(x, op, c, w, env)
	}
	if len(a) >= 1 {
		return s.stringFunc(t, w, env)
	}
	return nil
}

// compare makes x equal to v (or, not eq, different from v, or from every value of a list).
func (s *synth) compare(x *term, v any, eq bool, env map[string]spath) []sol {
	if isCall(x, "size") || x.kind == "call" && x.name == "size" && len(x.args) == 1 {
		n, ok := v.(int64)
		if !ok {
			return nil
		}
		return s.sized(x.args[0], func(k int64) bool { return (k == n) == eq }, n, env)
	}
	p, ok := placeOf(x, env)
	if !ok {
		return nil
	}
	if eq {
		return []sol{{{kind: wEq, at: p, val: v}}}
	}
	vals, _ := v.([]any)
	if vals == nil {
		vals = []any{v}
	}
	var out []sol
	for _, c := range s.prefer {
		if len(out) < 4 && !containsValue(vals, c) {
			out = append(out, sol{{kind: wEq, at: p, val: c}})
		}
	}
	return append(out, sol{{kind: wNeq, at: p, vals: vals}}, sol{{kind: wAbsent, at: p}})
}

// bounded makes x op c take the verdict w.
func (s *synth) bounded(x *term, op string, c *term, w bool, env map[string]spath) []sol {
	v, ok := litValue(c)
	if !ok {
		return nil
	}
	var n int64
	switch y := v.(type) {
	case int64:
		n = y
	case float64:
		n = int64(y)
	default:
		return nil
	}
	holds := func(k int64) bool {
		switch op {
		case "_<_":
			return k < n
		case "_<=_":
			return k <= n
		case "_>_":
			return k > n
		}
		return k >= n
	}
	if x.kind == "call" && x.name == "size" && len(x.args) == 1 {
		return s.sized(x.args[0], func(k int64) bool { return holds(k) == w }, n, env)
	}
	p, ok := placeOf(x, env)
	if !ok {
		return nil
	}
	var out []sol
	for _, k := range []int64{n - 1, n, n + 1, 0} {
		if holds(k) == w {
			out = append(out, sol{{kind: wEq, at: p, val: k}})
		}
	}
	return out
}

// sized gives x a size ok accepts, among the sizes around n.
func (s *synth) sized(x *term, ok func(int64) bool, n int64, env map[string]spath) []sol {
	p, found := placeOf(x, env)
	if !found {
		return nil
	}
	var out []sol
	for _, k := range []int64{0, n - 1, n, n + 1, 1, 2} {
		if k >= 0 && k <= 64 && ok(k) && !slices.ContainsFunc(out, func(s sol) bool { return s[0].n == int(k) }) {
			out = append(out, sol{{kind: wSize, at: p, n: int(k)}})
		}
	}
	return out
}

// stringFunc gives a function of one string (isIP, matches, startsWith, …) the verdict w.
func (s *synth) stringFunc(t *term, w bool, env map[string]spath) []sol {
	p, ok := placeOf(t.args[0], env)
	if !ok {
		return nil
	}
	var vals []string
	pick := 0
	if !w {
		pick = 1
	}
	var arg string
	if len(t.args) == 2 {
		v, ok := litValue(t.args[1])
		if arg, _ = v.(string); !ok || arg == "" && t.name != "matches" {
			return nil
		}
	}
	switch t.name {
	case "isIP", "isCIDR", "isURL", "isQuantity":
		if len(t.args) != 1 {
			return nil
		}
		vals = samples[t.name][pick]
	case "startsWith":
		vals = [][]string{{arg, arg + "a"}, {"", "a" + arg}}[pick]
	case "endsWith":
		vals = [][]string{{arg, "a" + arg}, {"", arg + "a"}}[pick]
	case "contains":
		vals = [][]string{{arg, "a" + arg + "a"}, {"", "a"}}[pick]
	case "matches":
		vals = []string{"", "a", "1", "a.b", "-"}
	default:
		return nil
	}
	var out []sol
	if t.name == "matches" {
		// First a string of the old pattern that the expression matches or not (see leaf).
		m := 0
		if w {
			m = 1
		}
		out = append(out, sol{{kind: wMatch, at: p, val: arg, n: m}})
	}
	for _, v := range vals {
		out = append(out, sol{{kind: wEq, at: p, val: v}})
	}
	return out
}

// stringTest makes a test of one string false (`h.contains('*') ? (h.startsWith('*.') &&
// h.substring(2).matches(re)) : true`, see strlang.go): a string of the old pattern that meets
// the condition and misses one of the patterns the test demands, found by regexlang; nil when t
// is no such test (a plain conjunction is left to solve unless it reads past a prefix).
func (s *synth) stringTest(t *term, env map[string]spath) []sol {
	var cond, then *term
	switch {
	case isCall(t, "_?_:_") && equal(t.args[2], trueTerm):
		cond, then = t.args[0], t.args[1]
	case isCall(t, "_&&_"):
		then = t
	default:
		return nil
	}
	x := subject(then)
	if x == nil {
		return nil
	}
	if _, ok := prefixedLang(then, x); cond == nil && !ok {
		return nil
	}
	var where []string
	if cond != nil {
		var ok bool
		if where, ok = conditionLangs(cond, x); !ok {
			return nil
		}
	}
	musts, ok := consequentLangs(then, x)
	p, ok2 := placeOf(x, env)
	if !ok || !ok2 {
		return nil
	}
	var out []sol
	for _, m := range musts {
		out = append(out, sol{{kind: wMatch, at: p, val: m, where: where}})
	}
	return out
}

// loop solves all(), exists() and exists_one() over a list: no item, one item that takes the
// predicate's verdict, and two items, one that triggers it and one that does not.
func (s *synth) loop(t *term, w bool, env map[string]spath) []sol {
	l, ok := placeOf(t.args[0], env)
	if !ok || t.vars[1] != "" {
		return nil
	}
	acc := &term{kind: "ident", name: t.vars[2]}
	init, step, result := t.args[1], t.args[3], t.args[4]
	var pred *term
	kind := ""
	switch {
	case equal(result, acc) && isCall(step, "_&&_") && equal(step.args[0], acc) && equal(init, trueTerm):
		kind, pred = "all", step.args[1]
	case equal(result, acc) && isCall(step, "_||_") && equal(step.args[0], acc) && equal(init, falseTerm):
		kind, pred = "exists", step.args[1]
	case isCall(result, "_==_") && isCall(step, "_?_:_") && equal(step.args[2], acc):
		kind, pred = "one", step.args[0]
	default:
		return nil
	}
	var envs [2]map[string]spath // one environment per item, so that solve's memo knows it again
	at := func(i int) map[string]spath {
		if envs[i] != nil {
			return envs[i]
		}
		inner := make(map[string]spath, len(env)+1)
		for k, v := range env {
			inner[k] = v
		}
		inner[t.vars[0]] = l.with(sstep{index: i, item: true})
		envs[i] = inner
		return inner
	}
	empty := listed([]sol{{{kind: wSize, at: l, n: 0}}})
	one := func(v bool) ways {
		return crossed([]sol{{{kind: wSize, at: l, n: 1}}}, s.solve(pred, v, at(0)))
	}
	two := func(v0, v1 bool) ways {
		return crossed([]sol{{{kind: wSize, at: l, n: 2}}}, cross(s.solve(pred, v0, at(0)), s.solve(pred, v1, at(1))))
	}
	switch {
	case kind == "all" && w, kind == "exists" && !w:
		return union(empty, one(w), two(w, w))
	case kind == "all" || kind == "exists":
		return union(one(w), two(w, !w), two(!w, w))
	case w: // exactly one
		return union(one(true), two(true, false), two(false, true))
	}
	return union(empty, one(false), two(true, true))
}

// synthesized looks for a witness among the values built from the new rule (see solve): the
// first that the judge's evaluation finds tightened and the API server's validator confirms.
// prefer are the rules' string literals: a value that must differ from the new rule's is first
// sought among the old rules' (a kind the new list dropped).
func (j *Judge) synthesized(c Change, e *evaluator, read *refNode, transition bool, prefer []string) (obj, stored map[string]any) {
	a, ok := j.parse(c.After.Rule)
	if !ok {
		return nil, nil
	}
	var had, has constants
	j.readBy(e.oldNode.XValidations, &had)
	j.readBy([]apiextv1.ValidationRule{c.After}, &has)
	s := &synth{}
	for _, l := range [][]string{had.strings, prefer} {
		for _, c := range l {
			if !slices.Contains(has.strings, c) && !slices.Contains(s.prefer, c) {
				s.prefer = append(s.prefer, c)
			}
		}
	}
	confirmed := 0
	for _, way := range s.solve(toTerm(a.Expr()), false, nil) {
		v, old, ok := j.keepOld(s, e, way, stringsOf(s.prefer))
		if !ok {
			continue
		}
		tries := [][2]any{{v, old}}
		if old == nil && transition {
			tries = [][2]any{{v, nil}, {v, minimal(e.oldNode)}}
		}
		for _, t := range tries {
			if e.verdict(t[0], t[1], false) != tightened {
				continue
			}
			if confirmed++; confirmed > MaxConfirm {
				return nil, nil
			}
			if ex, st := j.confirm(c.Steps, c.After, t[0], t[1], read); ex != nil {
				return ex, st
			}
		}
	}
	return nil, nil
}
