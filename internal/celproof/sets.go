package celproof

import (
	"slices"
	"strconv"
	"strings"
)

// uniqueItem recognises the idiom that says an item is unique in its list,
// `L.all(a, L.exists_one(b, a == b))`, where L is a set-type list of strings, integers or
// booleans (t is the exists_one, eq its condition): the API server already refuses a repeated
// item, so exactly one item — a itself — equals a. Numbers are left out: CEL's equality of 1 and
// 1.0 is not the server's comparison of their JSON.
func (p *prover) uniqueItem(t *term, l *side, eq *term, env map[string]*side) bool {
	if l == nil || !l.present || l.old.XListType == nil || *l.old.XListType != "set" || l.old.Items == nil || l.old.Items.Nullable || l.old.Items.XIntOrString {
		return false
	}
	switch l.old.Items.Type {
	case "string", "integer", "boolean":
	default:
		return false
	}
	for i := range 2 {
		a, b := eq.args[i], eq.args[1-i]
		if a.kind != "ident" || b.kind != "ident" || b.name != t.vars[0] || a.name == b.name {
			continue
		}
		// a must be an item of the same list, read the same way from self.
		if outer := env[a.name]; outer != nil && outer.item != nil && equal(outer.item, t.args[0]) && outer.root == rootOf(t.args[0], env) {
			p.note("%s is a set-type list", t.args[0].String())
			return true
		}
	}
	return false
}

// sizeFact decides the size of what a rule counts when the old schema decides it: an empty list
// has size 0, and `L.filter(j, j == i)`, with i an item of the same set-type list L, has size 1
// (i itself; the idiom `size(L.filter(i, size(L.filter(j, j == i)) > 1)) == 0`), as does
// `L.filter(j, j.k == i.k)` over a map-type list keyed by k (see keyMatch). Nil otherwise.
func (p *prover) sizeFact(t *term, env map[string]*side) *term {
	if t.kind != "call" || t.name != "size" || len(t.args) != 1 {
		return nil
	}
	c := t.args[0]
	if c.kind == "list" && len(c.args) == 0 {
		return &term{kind: "lit", name: "int:0"}
	}
	if c.kind != "comp" || c.vars[1] != "" || !equal(c.args[1], &term{kind: "list"}) || !equal(c.args[2], trueTerm) {
		return nil
	}
	acc := &term{kind: "ident", name: c.vars[2]}
	step := c.args[3]
	if !isCall(step, "_?_:_") || !equal(step.args[2], acc) || !equal(c.args[4], acc) ||
		!equal(step.args[1], &term{kind: "call", name: "_+_", args: []*term{acc, {kind: "list", args: []*term{{kind: "ident", name: c.vars[0]}}}}}) {
		return nil
	}
	l := p.lookup(c.args[0], env)
	if !(isCall(step.args[0], "_==_") && p.uniqueItem(c, l, step.args[0], env)) && !p.keyMatch(c, l, step.args[0], env) {
		return nil
	}
	return &term{kind: "lit", name: "int:1"}
}

// compareInts evaluates a comparison of two integer literals.
func compareInts(op string, a, b *term) (result, ok bool) {
	x, err1 := strconv.ParseInt(strings.TrimPrefix(a.name, "int:"), 10, 64)
	y, err2 := strconv.ParseInt(strings.TrimPrefix(b.name, "int:"), 10, 64)
	if !strings.HasPrefix(a.name, "int:") || !strings.HasPrefix(b.name, "int:") || err1 != nil || err2 != nil {
		return false, false
	}
	switch op {
	case "_==_":
		return x == y, true
	case "_!=_":
		return x != y, true
	case "_<_":
		return x < y, true
	case "_<=_":
		return x <= y, true
	case "_>_":
		return x > y, true
	case "_>=_":
		return x >= y, true
	}
	return false, false
}

// keyMatch reports whether eq, the predicate of the comprehension t over the map-type list l,
// holds of exactly one item, the one an outer comprehension over the same list binds: eq is the
// equality of every key of the list between t's variable and that item (and-ed, in any order,
// either way round), and the API server refuses a list with two items of one key. Each key is
// required or defaulted, so every item has it.
func (p *prover) keyMatch(t *term, l *side, eq *term, env map[string]*side) bool {
	if l == nil || !l.present || l.old.XListType == nil || *l.old.XListType != "map" || len(l.old.XListMapKeys) == 0 || l.old.Items == nil {
		return false
	}
	keys := l.old.XListMapKeys
	for _, k := range keys {
		if ks, ok := l.old.Items.Properties[k]; !ok || !requires(l.old.Items, k) && ks.Default.Object == nil {
			return false
		}
	}
	eqs := operands(eq, "_&&_")
	if len(eqs) != len(keys) {
		return false
	}
	outer, matched := "", map[string]bool{}
	for _, e := range eqs {
		if !isCall(e, "_==_") {
			return false
		}
		ok := false
		for i := range 2 {
			a, b := e.args[i], e.args[1-i]
			if a.kind != "select" || b.kind != "select" || a.name != b.name || !slices.Contains(keys, a.name) || matched[a.name] ||
				a.args[0].kind != "ident" || b.args[0].kind != "ident" || b.args[0].name != t.vars[0] || outer != "" && a.args[0].name != outer {
				continue
			}
			// a's variable must be an item of the same list, read the same way from self.
			if o := env[a.args[0].name]; o != nil && o.item != nil && equal(o.item, t.args[0]) && o.root == rootOf(t.args[0], env) {
				outer, matched[a.name], ok = a.args[0].name, true, true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(keys) == 1 {
		p.note("%s is the key of a map-type list", keys[0])
	} else {
		p.note("%s are the keys of a map-type list", strings.Join(keys, " and "))
	}
	return true
}

// operands are the terms a chain of one binary operator (&& or ||) joins, left to right.
func operands(t *term, op string) []*term {
	if !isCall(t, op) {
		return []*term{t}
	}
	return append(operands(t.args[0], op), operands(t.args[1], op)...)
}
