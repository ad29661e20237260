package celproof

import (
	"slices"
	"strings"
)

// Generators also rewrite a rule's logic without changing what it accepts: Gateway API v1.0
// replaced `(A1 && A2) || (has(p1.s) && p1.s != '' && has(p2.s) && p2.s != '')` (with A =
// `!has(p.s) || p.s == ''`) by `A1 == A2`. Such a rewrite is decided by truth tables: the
// sub-expressions that are not logical operators (presence tests, comparisons, calls) are atoms,
// each given every value it could take — true, false, or an error — independently of the others,
// which covers every evaluation there is (and more). CEL's operators are evaluated as the API
// server does: && is false when either side is, whatever the other (even an error), || true when
// either is, and the rest are strict in their errors. A presence test on self or on an item of a
// list of objects never errs, and an atom comparing a value with itself is true or an error.

// truth is a three-valued CEL boolean.
type truth uint8

const (
	tFalse truth = iota
	tTrue
	tErr
)

// maxAtoms bounds a truth table (3^8 rows).
const maxAtoms = 8

// formula is a term read as logical operators over atoms.
type formula struct {
	atoms []*term
	// domains of the atoms: the values each may take.
	domains [][]truth
}

// logical reports whether t is a logical operator CEL evaluates as formula does.
func logical(t *term) bool {
	switch {
	case t.kind == "lit" && (equal(t, trueTerm) || equal(t, falseTerm)):
		return true
	case t.kind != "call":
		return false
	case t.name == "!_" && len(t.args) == 1, isCall(t, "_&&_"), isCall(t, "_||_"), isCall(t, "_?_:_"):
		return true
	case isCall(t, "_==_") || isCall(t, "_!=_"):
		return booleanValued(t.args[0]) && booleanValued(t.args[1])
	}
	return false
}

// booleanValued reports whether t evaluates to a boolean (or an error) by its form alone.
func booleanValued(t *term) bool {
	if t.kind == "has" || logical(t) {
		return true
	}
	if t.kind != "call" {
		return false
	}
	switch t.name {
	case "_<_", "_<=_", "_>_", "_>=_", "@in", "_==_", "_!=_":
		return true
	}
	return false
}

// negated is `a == b` for `a != b` (which CEL evaluates as its negation, errors included) on
// values that are not booleans: one atom, negated.
func negated(t *term) *term {
	if isCall(t, "_!=_") && !logical(t) {
		return &term{kind: "call", name: "_==_", args: t.args}
	}
	return nil
}

// atomsOf adds the atoms of t to f; false when there are too many.
func (f *formula) atomsOf(t *term) bool {
	if e := negated(t); e != nil {
		t = e
	}
	if logical(t) {
		for _, a := range t.args {
			if !f.atomsOf(a) {
				return false
			}
		}
		return true
	}
	if f.index(t) >= 0 {
		return true
	}
	if len(f.atoms) == maxAtoms || t.kind == "opaque" {
		return false
	}
	f.atoms = append(f.atoms, t)
	f.domains = append(f.domains, domainOf(t))
	return true
}

// sameScalar reports whether x is a value every object has, of one scalar type (see term.typed),
// and lit a literal of that type: comparing them never errs.
func sameScalar(x, lit *term) bool {
	prefix := map[string]string{"string": "string:", "integer": "int:", "boolean": "bool:"}[x.typed]
	return prefix != "" && lit.kind == "lit" && strings.HasPrefix(lit.name, prefix)
}

// domainOf is what an atom may evaluate to.
func domainOf(t *term) []truth {
	switch {
	case t.kind == "has" && t.args[0].kind == "ident" && t.args[0].obj:
		return []truth{tFalse, tTrue}
	case isCall(t, "_==_") && equal(t.args[0], t.args[1]), isCall(t, "_<=_") && equal(t.args[0], t.args[1]), isCall(t, "_>=_") && equal(t.args[0], t.args[1]):
		return []truth{tTrue, tErr}
	case isCall(t, "_!=_") && equal(t.args[0], t.args[1]):
		return []truth{tFalse, tErr}
	case isCall(t, "_==_") && (sameScalar(t.args[0], t.args[1]) || sameScalar(t.args[1], t.args[0])):
		return []truth{tFalse, tTrue}
	case isCall(t, "@in") && t.args[1].kind == "list" && len(t.args[1].args) > 0 &&
		!slices.ContainsFunc(t.args[1].args, func(l *term) bool { return !sameScalar(t.args[0], l) }):
		return []truth{tFalse, tTrue}
	}
	return []truth{tFalse, tTrue, tErr}
}

func (f *formula) index(t *term) int {
	for i, a := range f.atoms {
		if equal(a, t) {
			return i
		}
	}
	return -1
}

// eval evaluates t with the atoms' values.
func (f *formula) eval(t *term, vals []truth) truth {
	if e := negated(t); e != nil {
		if x := f.eval(e, vals); x != tErr {
			return 1 - x
		}
		return tErr
	}
	if !logical(t) {
		return vals[f.index(t)]
	}
	if t.kind == "lit" {
		if equal(t, trueTerm) {
			return tTrue
		}
		return tFalse
	}
	a := t.args
	switch t.name {
	case "!_":
		switch x := f.eval(a[0], vals); x {
		case tErr:
			return tErr
		default:
			return 1 - x
		}
	case "_&&_", "_||_":
		x, y := f.eval(a[0], vals), f.eval(a[1], vals)
		decides := tFalse
		if t.name == "_||_" {
			decides = tTrue
		}
		switch {
		case x == decides || y == decides:
			return decides
		case x == tErr || y == tErr:
			return tErr
		}
		return 1 - decides
	case "_?_:_":
		switch f.eval(a[0], vals) {
		case tTrue:
			return f.eval(a[1], vals)
		case tFalse:
			return f.eval(a[2], vals)
		}
		return tErr
	}
	// == and != of two booleans.
	x, y := f.eval(a[0], vals), f.eval(a[1], vals)
	if x == tErr || y == tErr {
		return tErr
	}
	if (x == y) == (t.name == "_==_") {
		return tTrue
	}
	return tFalse
}

// every calls ok on every row of the table of the atoms of ts, until it returns false; false
// when the table is too large.
func (p *prover) every(ok func(f *formula, vals []truth) bool, ts ...*term) bool {
	f := &formula{}
	for _, t := range ts {
		if !f.atomsOf(t) {
			return false
		}
	}
	vals := make([]truth, len(f.atoms))
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == len(vals) {
			// Rows count against the proof's steps, a hundred to one.
			if p.rows++; p.rows%100 == 0 {
				p.steps++
			}
			return p.steps <= maxSteps && ok(f, vals)
		}
		for _, v := range f.domains[i] {
			vals[i] = v
			if !rec(i + 1) {
				return false
			}
		}
		return true
	}
	return rec(0)
}

// tableImplies reports, by truth table, whether n is true on every evaluation where o is. Only
// worth it where one of them is a logical operator.
func (p *prover) tableImplies(o, n *term) bool {
	if !logical(o) && !logical(n) {
		return false
	}
	return p.every(func(f *formula, v []truth) bool { return f.eval(o, v) != tTrue || f.eval(n, v) == tTrue }, o, n)
}

// narrower reports, by truth table, whether q is defined wherever p is and true only where p is
// (the predicates of two exists_one()).
func (p *prover) narrower(a, b *term) bool {
	return p.every(func(f *formula, v []truth) bool {
		x, y := f.eval(a, v), f.eval(b, v)
		return (x == tErr || y != tErr) && (y != tTrue || x == tTrue)
	}, a, b)
}

// onItself reports, by truth table, whether q is true wherever p is defined (the predicates of
// two exists_one() with their variable replaced by the outer one's item).
func (p *prover) onItself(a, b *term) bool {
	return p.every(func(f *formula, v []truth) bool { return f.eval(a, v) == tErr || f.eval(b, v) == tTrue }, a, b)
}

// replaceIdent is t with every identifier named from (not shadowed: canonical names are unique
// per depth) replaced by to.
func replaceIdent(t *term, from string, to *term) *term {
	if t.kind == "ident" && t.name == from {
		return to
	}
	if len(t.args) == 0 {
		return t
	}
	out := *t
	out.args = make([]*term, len(t.args))
	for i, a := range t.args {
		out.args[i] = replaceIdent(a, from, to)
	}
	return &out
}

// existsOneNarrowed recognises `L.all(x, L.exists_one(y, P))` → `… Q` where Q is defined
// wherever P is and true only where P is, and Q(x, x) holds wherever P(x, x) is defined (o and n
// are the exists_one()): where o is true every P is defined and exactly one true, so no more Q
// are true, and x itself, an item of L, makes Q true — exactly one.
func (p *prover) existsOneNarrowed(o, n *term) bool {
	po, okO := existsOnePredicate(o)
	pn, okN := existsOnePredicate(n)
	if !okO || !okN || o.vars != n.vars || !equal(o.args[0], n.args[0]) || rootName(o.args[0]) != "self" {
		return false
	}
	x := itemVariable(pn, o.args[0], o.vars[0])
	if x == nil || !p.narrower(po, pn) {
		return false
	}
	return p.onItself(replaceIdent(po, o.vars[0], x), replaceIdent(pn, o.vars[0], x))
}

// existsOnePredicate is the predicate of an exists_one().
func existsOnePredicate(t *term) (*term, bool) {
	if t.kind != "comp" || t.vars[1] != "" {
		return nil, false
	}
	acc := &term{kind: "ident", name: t.vars[2]}
	init, step, result := t.args[1], t.args[3], t.args[4]
	if !equal(init, &term{kind: "lit", name: "int:0"}) || !isCall(result, "_==_") || !equal(result.args[0], acc) ||
		!equal(result.args[1], &term{kind: "lit", name: "int:1"}) || !isCall(step, "_?_:_") || !equal(step.args[2], acc) ||
		!isCall(step.args[1], "_+_") || !equal(step.args[1].args[0], acc) || !equal(step.args[1].args[1], &term{kind: "lit", name: "int:1"}) {
		return nil, false
	}
	return step.args[0], true
}

// itemVariable is an identifier of t, other than skip, bound to an item of the list `of`
// reads (see term.itemOf), or nil.
func itemVariable(t, of *term, skip string) *term {
	if t.kind == "ident" && t.name != skip && t.itemOf != nil && equal(t.itemOf, of) {
		return t
	}
	for _, a := range t.args {
		if x := itemVariable(a, of, skip); x != nil {
			return x
		}
	}
	return nil
}
