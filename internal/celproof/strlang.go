package celproof

import (
	"regexp"
	"regexp/syntax"

	"github.com/crdguard/crdguard/internal/regexlang"
)

// A rule that tests a string with matches(), startsWith(), endsWith(), contains() and
// substring() reads, for each of those tests, a regular language: the strings for which the test
// is true. Where the old schema gives the string a pattern, whether the rule holds for every
// value the pattern allows is then a question of languages, which regexlang decides as the API
// server's regexp matches (unanchored, RE2). Gateway API v1.5.0's TLSRoute hostnames:
// `h.contains('*') ? (h.startsWith('*.') && h.substring(2).matches(RE)) : true` holds for every
// hostname whose old pattern is `^(\*\.)?<RE's labels>$`.

// langOf is a regular expression that matches (anywhere in the string, like matches()) exactly
// the strings x for which t is true, when t is a test of x alone that never errs on a string;
// ok is false for anything else.
func langOf(t, x *term) (string, bool) {
	if t.kind != "call" || len(t.args) != 2 || !equal(t.args[0], x) {
		return "", false
	}
	lit, ok := stringLiteral(t.args[1])
	if !ok {
		return "", false
	}
	switch t.name {
	case "matches":
		if _, err := syntax.Parse(lit, syntax.Perl); err != nil {
			return "", false // matches() errs on a regular expression that does not compile
		}
		return lit, true
	case "startsWith":
		return "^" + regexp.QuoteMeta(lit), true
	case "endsWith":
		return regexp.QuoteMeta(lit) + "$", true
	case "contains":
		return regexp.QuoteMeta(lit), true
	}
	return "", false
}

// prefixedLang reads `x.startsWith(P) && x.substring(k).matches(RE)` with k the length of P in
// code points: the string is P followed by a string RE matches. substring(k) errs on a string
// shorter than k, but only where startsWith(P) is false, which makes the conjunction false
// whatever the other side does (CEL's && is commutative over errors). The result is anchored at
// both ends; RE must anchor itself at both ends or at neither, with no other empty-width
// assertion (`^` inside it would mean the start of the whole string, not of the rest).
func prefixedLang(t, x *term) (string, bool) {
	if !isCall(t, "_&&_") {
		return "", false
	}
	starts, rest := t.args[0], t.args[1]
	if !isCall(starts, "startsWith") {
		starts, rest = rest, starts
	}
	if !isCall(starts, "startsWith") || len(starts.args) != 2 || !equal(starts.args[0], x) {
		return "", false
	}
	prefix, ok := stringLiteral(starts.args[1])
	if !ok || !isCall(rest, "matches") || len(rest.args) != 2 {
		return "", false
	}
	sub := rest.args[0]
	if !isCall(sub, "substring") || len(sub.args) != 2 || !equal(sub.args[0], x) {
		return "", false
	}
	k, ok := litValue(sub.args[1])
	re, ok2 := stringLiteral(rest.args[1])
	if n, isInt := k.(int64); !ok || !ok2 || !isInt || n != int64(len([]rune(prefix))) {
		return "", false
	}
	whole, ok := wholeLang(re)
	if !ok {
		return "", false
	}
	return "^" + regexp.QuoteMeta(prefix) + "(?:" + whole + ")$", true
}

// wholeLang is a regular expression without anchors whose matches of a whole string are the
// strings re matches anywhere (like matches()); ok is false when re does not compile or holds an
// empty-width assertion other than a leading ^ and a trailing $.
func wholeLang(re string) (string, bool) {
	r, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false
	}
	subs := []*syntax.Regexp{r}
	if r.Op == syntax.OpConcat {
		subs = r.Sub
	}
	begin := len(subs) > 0 && subs[0].Op == syntax.OpBeginText
	if begin {
		subs = subs[1:]
	}
	end := len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText
	if end {
		subs = subs[:len(subs)-1]
	}
	mid := &syntax.Regexp{Op: syntax.OpEmptyMatch}
	if len(subs) > 0 {
		mid = &syntax.Regexp{Op: syntax.OpConcat, Sub: subs}
	}
	if assertsPosition(mid) {
		return "", false
	}
	out := "(?:" + mid.String() + ")"
	if !begin {
		out = "(?s:.*)" + out
	}
	if !end {
		out += "(?s:.*)"
	}
	return out, true
}

// assertsPosition reports whether r holds an empty-width assertion (^, $, \A, \z, \b, \B).
func assertsPosition(r *syntax.Regexp) bool {
	switch r.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, s := range r.Sub {
		if assertsPosition(s) {
			return true
		}
	}
	return false
}

// conditionLangs are the patterns for the strings x where c is true, one per conjunct; ok is
// false when a conjunct is not such a test. `!x.contains('c')` of one character is the strings
// without it.
func conditionLangs(c, x *term) ([]string, bool) {
	if isCall(c, "_&&_") {
		a, ok1 := conditionLangs(c.args[0], x)
		b, ok2 := conditionLangs(c.args[1], x)
		return append(a, b...), ok1 && ok2
	}
	if c.kind == "call" && c.name == "!_" && len(c.args) == 1 && isCall(c.args[0], "contains") && len(c.args[0].args) == 2 && equal(c.args[0].args[0], x) {
		if lit, ok := stringLiteral(c.args[0].args[1]); ok && len([]rune(lit)) == 1 {
			return []string{"^[^" + regexp.QuoteMeta(lit) + "]*$"}, true
		}
		return nil, false
	}
	if re, ok := langOf(c, x); ok {
		return []string{re}, true
	}
	return nil, false
}

// consequentLangs are the patterns a string must match for t to be true, one per conjunct (t
// is true exactly where every one matches, and never errs); ok is false for any other t.
func consequentLangs(t, x *term) ([]string, bool) {
	if re, ok := prefixedLang(t, x); ok {
		return []string{re}, true
	}
	if isCall(t, "_&&_") {
		a, ok1 := consequentLangs(t.args[0], x)
		b, ok2 := consequentLangs(t.args[1], x)
		return append(a, b...), ok1 && ok2
	}
	if re, ok := langOf(t, x); ok {
		return []string{re}, true
	}
	return nil, false
}

// subject is the string a test reads: the receiver of its first call (of the substring that
// call reads).
func subject(t *term) *term {
	for t.kind == "call" && (t.name == "_&&_" || t.name == "!_") && len(t.args) > 0 {
		t = t.args[0]
	}
	if t.kind != "call" || len(t.args) == 0 {
		return nil
	}
	if r := t.args[0]; isCall(r, "substring") {
		return r.args[0]
	}
	return t.args[0]
}

// stringImplied decides `c ? then : true` (c nil: then alone) for a string x that every object
// has, with a pattern in the old schema: true when every value the old pattern allows (within
// its lengths) for which c holds makes then true.
func (p *prover) stringImplied(c, then *term, env map[string]*side) bool {
	x := subject(then)
	if x == nil {
		return false
	}
	var where []string
	if c != nil {
		var ok bool
		if where, ok = conditionLangs(c, x); !ok {
			return false
		}
	}
	musts, ok := consequentLangs(then, x)
	b := p.lookup(x, env)
	if !ok || b == nil || !b.present || b.old.Type != "string" || b.old.ValueValidation == nil || b.old.ValueValidation.Pattern == "" {
		return false
	}
	vv := b.old.ValueValidation
	bounds := regexlang.Bounds{Max: -1}
	if vv.MinLength != nil {
		bounds.Min = int(*vv.MinLength)
	}
	if vv.MaxLength != nil {
		bounds.Max = int(*vv.MaxLength)
	}
	for _, must := range musts {
		p.steps += 100 // the automata's work is bounded by regexlang; count it against the proof too
		if regexlang.IncludesWhere(vv.Pattern, where, must, bounds).Verdict != regexlang.Included {
			return false
		}
	}
	if c != nil {
		p.note("every value of %s the old pattern allows where %s holds satisfies %s", x.String(), shownTest(c), shownTest(then))
	} else {
		p.note("every value of %s the old pattern allows satisfies %s", x.String(), shownTest(then))
	}
	return true
}

// shownTest renders a test of a string as the rule wrote it (String shows calls as "…").
func shownTest(t *term) string {
	switch {
	case t.kind == "call" && t.name == "!_" && len(t.args) == 1:
		return "!" + shownTest(t.args[0])
	case isCall(t, "_&&_"):
		return shownTest(t.args[0]) + " && " + shownTest(t.args[1])
	case t.kind == "call" && len(t.args) == 2 && t.member:
		return shownTest(t.args[0]) + "." + t.name + "(" + shownTest(t.args[1]) + ")"
	}
	return t.String()
}
