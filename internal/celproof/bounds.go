package celproof

import (
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Some rules only restate the old schema's bounds: Gateway API v1.2 caps a route at 128 matches
// with a sum over 16 fixed indexes, `(self.size() > 0 ? self[0].matches.size() : 0) + … <= 128`,
// where the old schema allowed at most 16 rules of at most 8 matches. Such a rule is true on
// every object the old schema accepts, but no enumeration shows it (17 × 9^16 combinations).
// alwaysTrue evaluates a rule over intervals instead: sizes within their maxItems, sums and
// comparisons of intervals, and conditions that refine what their branches may assume — a
// branch of `self.size() > 3 ? self[3]… : 0` may index self[3]. A rule is proven only when it is
// true and cannot fail on any value within the bounds.

// abs is what is known of a value: an integer within [lo, hi], or a boolean (known, or either),
// and whether its evaluation may fail.
type abs struct {
	isInt, isBool bool
	lo, hi        int64
	// known: the boolean's value is b.
	known, b bool
	mayFail  bool
}

var unknownAbs = abs{mayFail: true}

// scope is what a branch may assume: the least size of lists (by the canonical text of the list
// expression) and the fields known present.
type scope struct {
	minSize map[string]int64
	present map[string]bool
}

func (s scope) with(minSize map[string]int64, present map[string]bool) scope {
	out := scope{minSize: map[string]int64{}, present: map[string]bool{}}
	for k, v := range s.minSize {
		out.minSize[k] = v
	}
	for k, v := range s.present {
		out.present[k] = v
	}
	for k, v := range minSize {
		out.minSize[k] = max(out.minSize[k], v)
	}
	for k, v := range present {
		out.present[k] = v
	}
	return out
}

// alwaysTrue reports whether the rule is true, without failing, on every value within the old
// schema's bounds.
func (p *prover) alwaysTrue(t *term, env map[string]*side) bool {
	v := p.eval(t, env, scope{})
	if !v.isBool || !v.known || !v.b || v.mayFail {
		return false
	}
	p.note("every value within the old schema's bounds satisfies it")
	return true
}

// eval evaluates t over intervals. What it does not know is unknownAbs.
func (p *prover) eval(t *term, env map[string]*side, sc scope) abs {
	p.steps++
	if p.steps > maxSteps {
		return unknownAbs
	}
	switch {
	case t.kind == "lit" && strings.HasPrefix(t.name, "int:"):
		k, err := strconv.ParseInt(strings.TrimPrefix(t.name, "int:"), 10, 64)
		if err != nil {
			return unknownAbs
		}
		return abs{isInt: true, lo: k, hi: k}
	case equal(t, trueTerm) || equal(t, falseTerm):
		return abs{isBool: true, known: true, b: equal(t, trueTerm)}
	case t.kind == "call" && t.name == "size" && len(t.args) == 1:
		return p.size(t.args[0], env, sc)
	case t.kind == "call" && t.name == "_+_" && len(t.args) == 2:
		a, b := p.eval(t.args[0], env, sc), p.eval(t.args[1], env, sc)
		if !a.isInt || !b.isInt || a.hi > math.MaxInt32 || b.hi > math.MaxInt32 || a.lo < math.MinInt32 || b.lo < math.MinInt32 {
			return unknownAbs
		}
		return abs{isInt: true, lo: a.lo + b.lo, hi: a.hi + b.hi, mayFail: a.mayFail || b.mayFail}
	case t.kind == "call" && len(t.args) == 2 && compare[t.name] != nil:
		a, b := p.eval(t.args[0], env, sc), p.eval(t.args[1], env, sc)
		if !a.isInt || !b.isInt {
			return unknownAbs
		}
		out := abs{isBool: true, mayFail: a.mayFail || b.mayFail}
		out.known, out.b = compare[t.name](a, b)
		return out
	case t.kind == "call" && t.name == "!_" && len(t.args) == 1:
		a := p.eval(t.args[0], env, sc)
		if !a.isBool {
			return unknownAbs
		}
		a.b = !a.b
		return a
	case isCall(t, "_&&_") || isCall(t, "_||_"):
		// A side that is the deciding value without failing decides, whatever the other side
		// (even one not known at all): CEL's && and || are commutative over errors.
		decides := t.name == "_||_"
		a, b := p.eval(t.args[0], env, sc), p.eval(t.args[1], env, sc)
		for _, x := range []abs{a, b} {
			if x.isBool && x.known && x.b == decides && !x.mayFail {
				return abs{isBool: true, known: true, b: decides}
			}
		}
		// A guard: where the left side does not decide, and does not fail, the right side may
		// assume it (`!has(x) || size(x) > 0` reads x present).
		if a.isBool && !a.mayFail {
			if b := p.eval(t.args[1], env, p.assuming(t.args[0], !decides, sc)); b.isBool && b.known && b.b == decides && !b.mayFail {
				return abs{isBool: true, known: true, b: decides}
			}
		}
		if !a.isBool || !b.isBool {
			return unknownAbs
		}
		out := abs{isBool: true, mayFail: a.mayFail || b.mayFail}
		out.known, out.b = a.known && b.known, !decides // both known and neither deciding
		return out
	case isCall(t, "_?_:_"):
		c := p.eval(t.args[0], env, sc)
		if !c.isBool {
			return unknownAbs
		}
		yes, no := p.refine(t.args[0], sc)
		var out abs
		switch {
		case c.known && c.b:
			out = p.eval(t.args[1], env, yes)
		case c.known:
			out = p.eval(t.args[2], env, no)
		default:
			out = join(p.eval(t.args[1], env, yes), p.eval(t.args[2], env, no))
		}
		out.mayFail = out.mayFail || c.mayFail
		return out
	case t.kind == "has":
		// Testing presence fails only where reaching the object does.
		if obj := (&term{kind: "select", name: t.name, args: t.args}); sc.present[canon(obj)] {
			return abs{isBool: true, known: true, b: true, mayFail: !p.reachable(t.args[0], env, sc)}
		}
		return abs{isBool: true, mayFail: !p.reachable(t.args[0], env, sc)}
	}
	return unknownAbs
}

// compare decides a comparison of intervals when their bounds do.
var compare = map[string]func(a, b abs) (known, result bool){
	"_<=_": func(a, b abs) (bool, bool) { return decide(a.hi <= b.lo, a.lo > b.hi) },
	"_<_":  func(a, b abs) (bool, bool) { return decide(a.hi < b.lo, a.lo >= b.hi) },
	"_>=_": func(a, b abs) (bool, bool) { return decide(a.lo >= b.hi, a.hi < b.lo) },
	"_>_":  func(a, b abs) (bool, bool) { return decide(a.lo > b.hi, a.hi <= b.lo) },
}

func decide(always, never bool) (known, result bool) {
	switch {
	case always:
		return true, true
	case never:
		return true, false
	}
	return false, false
}

// join is either of two values.
func join(a, b abs) abs {
	switch {
	case a.isInt && b.isInt:
		return abs{isInt: true, lo: min(a.lo, b.lo), hi: max(a.hi, b.hi), mayFail: a.mayFail || b.mayFail}
	case a.isBool && b.isBool:
		return abs{isBool: true, known: a.known && b.known && a.b == b.b, b: a.b, mayFail: a.mayFail || b.mayFail}
	}
	return unknownAbs
}

// refine is what the branches of a condition may assume: `L.size() > k` (or >=) gives L at least
// k+1 (k) items in the first branch; `has(x.f)` gives x.f present there.
func (p *prover) refine(c *term, sc scope) (yes, no scope) {
	switch {
	case c.kind == "has":
		return sc.with(nil, map[string]bool{canon(&term{kind: "select", name: c.name, args: c.args}): true}), sc
	case c.kind == "call" && (c.name == "_>_" || c.name == "_>=_") && len(c.args) == 2 &&
		c.args[0].kind == "call" && c.args[0].name == "size" && len(c.args[0].args) == 1 && strings.HasPrefix(c.args[1].name, "int:"):
		k, err := strconv.ParseInt(strings.TrimPrefix(c.args[1].name, "int:"), 10, 64)
		if err != nil {
			return sc, sc
		}
		if c.name == "_>_" {
			k++
		}
		return sc.with(map[string]int64{canon(c.args[0].args[0]): k}, nil), sc
	}
	return sc, sc
}

// assuming is what may be assumed where the condition c evaluates to v.
func (p *prover) assuming(c *term, v bool, sc scope) scope {
	if c.kind == "call" && c.name == "!_" && len(c.args) == 1 {
		return p.assuming(c.args[0], !v, sc)
	}
	yes, no := p.refine(c, sc)
	if v {
		return yes
	}
	return no
}

// size bounds the size of a list, map or string the old schema bounds, when it can be reached.
func (p *prover) size(x *term, env map[string]*side, sc scope) abs {
	b := p.lookupIn(x, env, sc)
	if b == nil || b.old.ValueValidation == nil {
		return unknownAbs
	}
	vv := b.old.ValueValidation
	var lo, m *int64
	switch b.old.Type {
	case "array":
		lo, m = vv.MinItems, vv.MaxItems
	case "object":
		lo, m = vv.MinProperties, vv.MaxProperties
	case "string":
		// CEL's size() of a string counts code points, as minLength and maxLength do.
		lo, m = vv.MinLength, vv.MaxLength
	}
	least := sc.minSize[canon(x)]
	if lo != nil {
		least = max(least, *lo)
	}
	hi := int64(math.MaxInt32)
	if m != nil {
		hi = *m
	}
	if m == nil && lo == nil {
		return unknownAbs
	}
	return abs{isInt: true, lo: least, hi: hi, mayFail: !p.reachable(x, env, sc)}
}

// reachable reports whether evaluating a chain of selections and constant indexes cannot fail:
// every field on the way is present (required, defaulted, or known present in this branch) and
// every index is below the least size the branch may assume.
func (p *prover) reachable(x *term, env map[string]*side, sc scope) bool {
	b := p.lookupIn(x, env, sc)
	return b != nil && (b.present || sc.present[canon(x)]) && p.parentsReachable(x, env, sc)
}

func (p *prover) parentsReachable(x *term, env map[string]*side, sc scope) bool {
	switch {
	case x.kind == "ident":
		return env[x.name] != nil
	case x.kind == "select":
		return p.reachable(x.args[0], env, sc)
	case isIndex(x):
		return p.reachable(x.args[0], env, sc)
	}
	return false
}

// lookupIn is lookup through constant indexes too: self[3] is an item of self, present when the
// branch may assume more than 3 items.
func (p *prover) lookupIn(x *term, env map[string]*side, sc scope) *side {
	switch {
	case isIndex(x):
		l := p.lookupIn(x.args[0], env, sc)
		if l == nil || l.old.Items == nil || l.new.Items == nil {
			return nil
		}
		k, _ := strconv.ParseInt(strings.TrimPrefix(x.args[1].name, "int:"), 10, 64)
		return &side{old: l.old.Items, new: l.new.Items, present: sc.minSize[canon(x.args[0])] > k}
	case x.kind == "select":
		b := p.lookupIn(x.args[0], env, sc)
		c := b.property(x.name)
		if c != nil {
			// Whether the parent is there is reachable's question. A default fills the field on
			// every read; both schemas must fill in the same.
			c.present = (requires(b.old, x.name) || c.old.Default.Object != nil && reflect.DeepEqual(c.old.Default.Object, c.new.Default.Object)) && !c.old.Nullable
		}
		return c
	}
	return lookup(x, env)
}

// isIndex: x[k] with a constant k ≥ 0.
func isIndex(x *term) bool {
	return isCall(x, "_[_]") && strings.HasPrefix(x.args[1].name, "int:") && !strings.HasPrefix(x.args[1].name, "int:-")
}

// canon is the full text of a term, a key for what a branch knows of it.
func canon(t *term) string {
	var b strings.Builder
	b.WriteString(t.kind + ":" + t.name + "(")
	for _, a := range t.args {
		b.WriteString(canon(a) + ",")
	}
	b.WriteString(")")
	return b.String()
}
