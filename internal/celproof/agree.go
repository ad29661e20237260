package celproof

// Generators also guard reads of optional fields: `a.v == b.v` becomes
// `has(a.v) && a.v == b.v` (Gateway API v1.4 did this inside its uniqueness rules). Reading an
// absent field is an error, and the API server refuses an object whose rule errs, so the guard
// changes the rule only where the old one failed: it accepts more. agree captures this: n agrees
// with o when n evaluates to o's value wherever o evaluates without error (where o fails, n may
// give anything). A rule that agrees with the old one is true wherever the old one is.

// agree reports whether n has o's value on every evaluation where o has one.
func (p *prover) agree(o, n *term) bool {
	p.steps++
	if p.steps > maxSteps {
		return false
	}
	switch {
	case equal(o, n):
		return true
	case isCall(o, "_&&_") || isCall(n, "_&&_"):
		return p.agreeConjunction(flatten(o, "_&&_"), flatten(n, "_&&_"))
	case isCall(o, "_||_") && isCall(n, "_||_"):
		// A defined disjunction is true through a defined true disjunct, or false with all
		// disjuncts false and defined: the agreeing disjuncts give the same.
		xs, ys := flatten(o, "_||_"), flatten(n, "_||_")
		return len(xs) == len(ys) && p.agreeAll(xs, ys)
	case isCall(o, "_?_:_") && isCall(n, "_?_:_"):
		// A defined o has a defined condition and a defined branch taken.
		return p.agreeAll(o.args, n.args)
	case o.kind == "comp" && n.kind == "comp":
		return p.agreeMacro(o, n)
	case o.kind == "select" && n.kind == "select" && o.name == n.name:
		return p.agree(o.args[0], n.args[0]) // selecting from an error is an error
	case o.kind == "call" && n.kind == "call" && o.name == n.name && o.member == n.member && strict[o.name] && len(o.args) == len(n.args):
		return p.agreeAll(o.args, n.args) // a defined result has defined arguments
	}
	return false
}

func (p *prover) agreeAll(xs, ys []*term) bool {
	for i := range xs {
		if !p.agree(xs[i], ys[i]) {
			return false
		}
	}
	return true
}

// agreeConjunction: n's conjuncts are o's, in order and agreeing, with presence tests has(v)
// added where one of o's conjuncts errs whenever v is absent. A defined o is true with every
// conjunct true and defined (so v is present and the tests hold), or false through a defined
// false conjunct, which n has too; CEL's && is false when any conjunct is, errors or not.
func (p *prover) agreeConjunction(xs, ys []*term) bool {
	i := 0
	for _, y := range ys {
		if i < len(xs) && p.agree(xs[i], y) {
			i++
			continue
		}
		if y.kind != "has" {
			return false
		}
		v := &term{kind: "select", name: y.name, args: y.args}
		guarded := false
		for _, x := range xs {
			guarded = guarded || readsStrictly(x, v)
		}
		if !guarded {
			return false
		}
	}
	return i == len(xs)
}

// agreeMacro compares two comprehensions of the same macro over agreeing ranges whose per-item
// predicates agree: all() and exists() decide by a defined false (true) predicate, or else are
// defined only when every predicate is; exists_one() and filter() are defined only when every
// predicate is.
func (p *prover) agreeMacro(o, n *term) bool {
	if o.vars != n.vars || !p.agree(o.args[0], n.args[0]) || !equal(o.args[1], n.args[1]) || !equal(o.args[2], n.args[2]) || !equal(o.args[4], n.args[4]) {
		return false
	}
	so, sn := o.args[3], n.args[3]
	acc := &term{kind: "ident", name: o.vars[2]}
	for _, op := range []string{"_&&_", "_||_"} { // all(), exists()
		if isCall(so, op) && isCall(sn, op) && equal(so.args[0], acc) && equal(sn.args[0], acc) {
			return p.agree(so.args[1], sn.args[1])
		}
	}
	// exists_one(), filter(): P ? <counted> : acc
	if isCall(so, "_?_:_") && isCall(sn, "_?_:_") && equal(so.args[2], acc) && equal(so.args[1], sn.args[1]) && equal(so.args[2], sn.args[2]) &&
		isCall(so.args[1], "_+_") && equal(so.args[1].args[0], acc) {
		return p.agree(so.args[0], sn.args[0])
	}
	return false
}

// flatten lists the operands of a chain of one logical operator, in order.
func flatten(t *term, op string) []*term {
	if !isCall(t, op) {
		return []*term{t}
	}
	return append(flatten(t.args[0], op), flatten(t.args[1], op)...)
}

// readsStrictly reports whether x errs whenever the field v selects is absent: it selects v (or
// below it), or passes such a selection to a function that errs on an erring argument.
func readsStrictly(x, v *term) bool {
	switch x.kind {
	case "select":
		return equal(x, v) || readsStrictly(x.args[0], v)
	case "call":
		if !strict[x.name] {
			return false
		}
		for _, a := range x.args {
			if readsStrictly(a, v) {
				return true
			}
		}
	}
	return false
}

// strict are functions whose result is an error when an argument is: comparisons, arithmetic,
// and the string and list functions rules use on values. Not the logical operators, the
// conditional, or anything optional-aware.
var strict = map[string]bool{
	"_==_": true, "_!=_": true, "_<_": true, "_<=_": true, "_>_": true, "_>=_": true,
	"_+_": true, "_-_": true, "_*_": true, "_/_": true, "_%_": true, "-_": true, "!_": true,
	"_[_]": true, "@in": true, "size": true, "matches": true, "startsWith": true, "endsWith": true,
	"contains": true, "int": true, "uint": true, "double": true, "string": true,
	"lowerAscii": true, "upperAscii": true, "trim": true,
}
