package celproof

import (
	"slices"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/ast"

	"github.com/crdguard/crdguard/internal/regexlang"
)

// Rules whose only change is a constant moved in the accepting direction, or a list that gained
// members, accept more: `self <= 6553` → `self <= 65535`, `size(self.x) < 8` → `size(self.x) <
// 16`, `x in ['Gateway', 'HTTPRoute']` → `x in ['Gateway', 'ListenerSet', 'HTTPRoute']`,
// `x == 'Gateway'` → `x in ['Gateway', 'ListenerSet']`, `x.matches('^(rbd|nfs)$')` →
// `x.matches('^(rbd|nfs|nvmeof)$')`. implies reaches these comparisons only where a true
// comparison makes the rule true (under &&, ||, a conditional's branches, all() and exists()),
// and each step below holds on its own: wherever the old comparison is true, so is the new one.
// Nothing is enumerated.

// monotone reports whether n is true wherever o is, for two comparisons that differ only in a
// constant, a list literal or a literal regular expression.
func (p *prover) monotone(o, n *term) bool {
	if l := asIn(o); l != nil {
		o = l
	}
	if l := asIn(n); l != nil {
		n = l
	}
	if o.kind != "call" || n.kind != "call" {
		return false
	}
	if xo, opo, co, ok := bound(o); ok {
		xn, opn, cn, ok := bound(n)
		return ok && equal(sizeForm(xo), sizeForm(xn)) && looserBound(opo, co, opn, cn)
	}
	if isCall(n, "@in") && n.args[1].kind == "list" {
		return listGrew(o, n.args[0], n.args[1])
	}
	if isCall(o, "@in") && o.args[1].kind == "list" && (listCovered(o.args[0], o.args[1].args, n) || notInList(o.args[0], o.args[1].args, n)) {
		return true
	}
	return p.regexWidened(o, n)
}

// asIn reads `[…].exists(k, k == x)` as `x in […]`: for a list literal and an x that does not
// read k, both are true where x equals a member, false where it equals none, and err where x
// does; nil for any other term.
func asIn(t *term) *term {
	if t.kind != "comp" || t.vars[1] != "" || t.args[0].kind != "list" {
		return nil
	}
	acc := &term{kind: "ident", name: t.vars[2]}
	step := t.args[3]
	if !equal(t.args[1], falseTerm) || !equal(t.args[4], acc) || !isCall(step, "_||_") || !equal(step.args[0], acc) || !isCall(step.args[1], "_==_") {
		return nil
	}
	for _, m := range t.args[0].args {
		if m.kind != "lit" {
			return nil
		}
	}
	k := &term{kind: "ident", name: t.vars[0]}
	eq := step.args[1]
	for i := range 2 {
		if equal(eq.args[i], k) && !readsVar(eq.args[1-i], t.vars[0]) {
			return &term{kind: "call", name: "@in", args: []*term{eq.args[1-i], t.args[0]}, e: t.e}
		}
	}
	return nil
}

// readsVar reports whether t reads the variable of that canonical name.
func readsVar(t *term, name string) bool {
	if t.kind == "ident" && t.name == name {
		return true
	}
	for _, a := range t.args {
		if readsVar(a, name) {
			return true
		}
	}
	return false
}

// listCovered reports whether n, a disjunction, has for every member of a list x is in a
// disjunct `x == member`: where `x in list` is true, x equals a member, so that disjunct is
// true, and a true disjunct makes a disjunction true whatever the others give.
func listCovered(x *term, members []*term, n *term) bool {
	disjuncts := operands(n, "_||_")
	if len(disjuncts) < 2 {
		return false
	}
	for _, m := range members {
		if !slices.ContainsFunc(disjuncts, func(d *term) bool {
			return isCall(d, "_==_") && (equal(d.args[0], x) && equal(d.args[1], m) || equal(d.args[1], x) && equal(d.args[0], m))
		}) {
			return false
		}
	}
	return true
}

// notInList reports whether n is `x != c` or `!(x == c)` for a string or int literal c that no
// member of the list x is in equals, the members literals of c's type: where `x in list` is true,
// x is one of them, so not c.
func notInList(x *term, members []*term, n *term) bool {
	var eq *term
	switch {
	case isCall(n, "_!=_"):
		eq = n
	case n.kind == "call" && n.name == "!_" && len(n.args) == 1 && isCall(n.args[0], "_==_"):
		eq = n.args[0]
	default:
		return false
	}
	for i := range 2 {
		if c := eq.args[1-i]; equal(eq.args[i], x) && c.kind == "lit" {
			typ, _, _ := strings.Cut(c.name, ":")
			if typ != "string" && typ != "int" {
				return false
			}
			return !slices.ContainsFunc(members, func(m *term) bool { return !strings.HasPrefix(m.name, typ+":") || m.kind != "lit" || equal(m, c) })
		}
	}
	return false
}

// bound reads a comparison of a term with a numeric literal as x op c, the literal on the right
// (`5 < x` is `x > 5`).
func bound(t *term) (x *term, op string, c *term, ok bool) {
	flip := map[string]string{"_<_": "_>_", "_<=_": "_>=_", "_>_": "_<_", "_>=_": "_<=_"}
	if _, cmp := flip[t.name]; !cmp || len(t.args) != 2 {
		return nil, "", nil, false
	}
	if numeric(t.args[1]) {
		return t.args[0], t.name, t.args[1], true
	}
	if numeric(t.args[0]) {
		return t.args[1], flip[t.name], t.args[0], true
	}
	return nil, "", nil, false
}

// sizeForm writes x.size() as size(x): the same function, so a bound may move from one form to
// the other.
func sizeForm(t *term) *term {
	if t.kind == "call" && t.name == "size" && t.member && len(t.args) == 1 {
		return &term{kind: "call", name: "size", args: t.args}
	}
	return t
}

func numeric(t *term) bool {
	return t.kind == "lit" && (strings.HasPrefix(t.name, "int:") || strings.HasPrefix(t.name, "uint:") || strings.HasPrefix(t.name, "double:"))
}

// looserBound reports whether x opn cn holds wherever x opo co does: both bound x from the same
// side, and the new constant lies beyond the old one (or equals it, no longer strictly). The
// literals must be of one type, so that they compare exactly.
func looserBound(opo string, co *term, opn string, cn *term) bool {
	to, vo, _ := strings.Cut(co.name, ":")
	tn, vn, _ := strings.Cut(cn.name, ":")
	if to != tn {
		return false
	}
	var cmp int // the sign of cn - co
	var ok bool
	switch to {
	case "int":
		cmp, ok = signOf(vo, vn, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	case "uint":
		cmp, ok = signOf(vo, vn, func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
	default:
		cmp, ok = signOf(vo, vn, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	}
	if !ok {
		return false
	}
	upper := map[string]bool{"_<_": true, "_<=_": true}
	strict := map[string]bool{"_<_": true, "_>_": true}
	if upper[opo] != upper[opn] {
		return false
	}
	if !upper[opo] {
		cmp = -cmp // a lower bound loosens downwards
	}
	return cmp > 0 || cmp == 0 && (strict[opo] || !strict[opn])
}

// signOf parses two literals' values and gives the sign of b - a.
func signOf[T int64 | uint64 | float64](a, b string, parse func(string) (T, error)) (int, bool) {
	x, err1 := parse(a)
	y, err2 := parse(b)
	switch {
	case err1 != nil || err2 != nil:
		return 0, false
	case y > x:
		return 1, true
	case y < x:
		return -1, true
	}
	return 0, true
}

// listGrew reports whether `x in list` is true wherever o is, when o is `x in` a list whose
// every member the new list has, or `x == c` with c in the new list. The new list's other
// members are literals, which never err (an erring member would make the whole `in` err).
func listGrew(o, x, list *term) bool {
	var had []*term
	switch {
	case isCall(o, "@in") && o.args[1].kind == "list" && equal(o.args[0], x):
		had = o.args[1].args
	case isCall(o, "_==_") && equal(o.args[0], x) && o.args[1].kind == "lit":
		had = o.args[1:]
	case isCall(o, "_==_") && equal(o.args[1], x) && o.args[0].kind == "lit":
		had = o.args[:1]
	default:
		return false
	}
	contains := func(l []*term, t *term) bool {
		for _, e := range l {
			if equal(e, t) {
				return true
			}
		}
		return false
	}
	for _, t := range had {
		if !contains(list.args, t) {
			return false
		}
	}
	for _, t := range list.args {
		if t.kind != "lit" && !contains(had, t) {
			return false
		}
	}
	return true
}

// regexWidened reports whether o and n match the same string against literal regular
// expressions, n's accepting every string o's does (regexlang decides it as Go's regexp, which
// CEL's matches() runs, matches).
func (p *prover) regexWidened(o, n *term) bool {
	if o.name != "matches" || n.name != "matches" || o.member != n.member || len(o.args) != 2 || len(n.args) != 2 || !equal(o.args[0], n.args[0]) {
		return false
	}
	ro, ok1 := stringLiteral(o.args[1])
	rn, ok2 := stringLiteral(n.args[1])
	if !ok1 || !ok2 {
		return false
	}
	p.steps += 100 // the automata's work is bounded by regexlang; count it against the proof too
	return regexlang.Includes(ro, rn, regexlang.Bounds{Max: -1}).Verdict == regexlang.Included
}

// stringLiteral is the value of a string literal term.
func stringLiteral(t *term) (string, bool) {
	if t.kind != "lit" || !strings.HasPrefix(t.name, "string:") {
		return "", false
	}
	s, err := strconv.Unquote(strings.TrimPrefix(t.name, "string:"))
	return s, err == nil
}

// regexWitnesses adds to consts strings that a literal regular expression of matches() in the
// old rule accepts and one in the new rule refuses: the candidates that show a narrowed regex,
// which no boundary value of the rules' other literals would.
func (j *Judge) regexWitnesses(before, after string, consts *constants) {
	var sides [2][]string
	for i, rule := range []string{before, after} {
		a, ok := j.parse(rule)
		if !ok {
			return
		}
		for _, call := range ast.MatchDescendants(ast.NavigateAST(a), ast.FunctionMatcher("matches")) {
			args := call.AsCall().Args()
			if len(args) == 0 || args[len(args)-1].Kind() != ast.LiteralKind {
				continue
			}
			if s, ok := args[len(args)-1].AsLiteral().Value().(string); ok && len(sides[i]) < maxRegexes {
				sides[i] = append(sides[i], s)
			}
		}
	}
	for _, o := range sides[0] {
		for _, n := range sides[1] {
			if o == n {
				continue
			}
			if res := regexlang.Includes(o, n, regexlang.Bounds{Max: -1}); res.Verdict == regexlang.Witness {
				consts.strings = append(consts.strings, res.Examples[:min(2, len(res.Examples))]...)
			}
		}
	}
}

// maxRegexes bounds the literal regular expressions of one rule compared pairwise.
const maxRegexes = 4
