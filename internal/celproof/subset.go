package celproof

// A rule may come to check only some items of a list: `self.all(r, q)` → `self.filter(r,
// p).all(r, q)` (Gateway API's listener rules, checked only for the protocols they concern). The
// filtered list is a sublist of the old one, so where every item met q, every item kept meets
// it — provided the filter's predicate never errs, as an error in it makes the whole rule err.

// filteredSubset reports whether n, an all() over a filter() of a list, is true wherever o, an
// all() over the same list, is: the filter's predicate never errs on the list's items, and on
// an item where it holds, the old predicate implies the new one.
func (p *prover) filteredSubset(o, n *term) bool {
	qo, okO := allPredicate(o)
	qn, okN := allPredicate(n)
	if !okO || !okN || o.vars != n.vars {
		return false
	}
	f := n.args[0]
	pf, ok := filterPredicate(f)
	if !ok || f.vars != o.vars || !equal(f.args[0], o.args[0]) {
		return false
	}
	// The filter's variable and the all()'s are the same canonical name (both comprehensions
	// are at one depth), bound to the same item.
	if !p.every(func(fm *formula, v []truth) bool { return fm.eval(pf, v) != tErr }, pf) {
		return false
	}
	if !p.implies(qo, qn) && !p.implies(qo, &term{kind: "call", name: "_?_:_", args: []*term{pf, qn, trueTerm}}) {
		return false
	}
	p.note("the new rule checks the items a filter keeps, which the old rule checked among all items")
	return true
}

// allPredicate is the predicate of an all(): the accumulator starts true, is and-ed with the
// predicate at each item, and is the result.
func allPredicate(t *term) (*term, bool) {
	if t.kind != "comp" || t.vars[1] != "" {
		return nil, false
	}
	acc := &term{kind: "ident", name: t.vars[2]}
	step := t.args[3]
	if !equal(t.args[1], trueTerm) || !equal(t.args[4], acc) || !isCall(step, "_&&_") || !equal(step.args[0], acc) {
		return nil, false
	}
	return step.args[1], true
}

// filterPredicate is the predicate of a filter(): the accumulator starts as the empty list, gains
// the item where the predicate holds, and is the result.
func filterPredicate(t *term) (*term, bool) {
	if t.kind != "comp" || t.vars[1] != "" {
		return nil, false
	}
	acc := &term{kind: "ident", name: t.vars[2]}
	step := t.args[3]
	if t.args[1].kind != "list" || len(t.args[1].args) != 0 || !equal(t.args[4], acc) || !isCall(step, "_?_:_") || !equal(step.args[2], acc) {
		return nil, false
	}
	add := step.args[1]
	item := &term{kind: "list", args: []*term{{kind: "ident", name: t.vars[0]}}}
	if !isCall(add, "_+_") || !equal(add.args[0], acc) || !equal(add.args[1], item) {
		return nil, false
	}
	return step.args[0], true
}
