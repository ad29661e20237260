package celproof

import (
	"fmt"
	"strings"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/parser"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// A change left undecided says where the judgement stopped, so that the next gap is visible:
// the smallest sub-expression in which the new rule differs from the old one (for an added rule,
// the part behind its guards), and the data it reads that no enumeration covers.

// why explains an undecided change (see above); "" when the rules do not parse. seen: values the
// new rule refuses and the old rules accept were found, but the validator of the whole old
// version confirmed none (another constraint of the schema refuses each).
func (j *Judge) why(c Change, oldNode *structuralschema.Structural, seen bool) string {
	an, ok := j.parse(c.After.Rule)
	if !ok {
		return ""
	}
	n := toTerm(an.Expr())
	var claim string
	if c.Before != nil {
		ao, ok := j.parse(c.Before.Rule)
		if !ok {
			return ""
		}
		o := toTerm(ao.Expr())
		o, n = differing(o, n)
		claim = fmt.Sprintf("could not show that %s holds wherever %s did", quote(n, an, c.After.Rule), quote(o, ao, c.Before.Rule))
	} else {
		n = unguarded(n)
		claim = fmt.Sprintf("could not show that every object the old schema accepts satisfies %s", quote(n, an, c.After.Rule))
	}
	if seen {
		return claim + ": values of this node that the new rule refuses and the old rules accept were found, but the old version refuses each of them elsewhere, and no proof applies"
	}
	reads := unboundedReads(n, map[string]*structuralschema.Structural{"self": oldNode, "oldSelf": oldNode}, nil)
	switch len(reads) {
	case 0:
		return claim + ": no proof applies, and the values it reads combine in more ways than can be tried"
	case 1:
		return claim + ": no proof applies, and " + reads[0] + " takes more values than can be tried"
	}
	return claim + ": no proof applies, and " + strings.Join(reads[:len(reads)-1], ", ") + " and " + reads[len(reads)-1] + " take more values than can be tried"
}

// differing is the smallest pair of conditions in which n differs from o: while the two have the
// same operator and differ in one operand only, that operand, as long as it is a condition (a
// comparison, not the constant it compares with).
func differing(o, n *term) (*term, *term) {
	bo, bn := o, n
	for o.kind == n.kind && o.name == n.name && o.member == n.member && o.vars == n.vars && len(o.args) == len(n.args) && o.kind != "opaque" {
		k := -1
		for i := range o.args {
			if !equal(o.args[i], n.args[i]) {
				if k >= 0 {
					return bo, bn
				}
				k = i
			}
		}
		if k < 0 {
			return bo, bn
		}
		o, n = o.args[k], n.args[k]
		if booleanValued(n) && booleanValued(o) {
			bo, bn = o, n
		}
	}
	return bo, bn
}

// unguarded is the part of an added rule behind its guards: P in `!has(x) || P`, `has(x) ? P :
// true`, `c ? P : true`.
func unguarded(t *term) *term {
	for {
		switch {
		case isCall(t, "_||_") && t.args[0].kind == "call" && t.args[0].name == "!_" || isCall(t, "_&&_") && t.args[0].kind == "has":
			t = t.args[1]
		case isCall(t, "_?_:_") && equal(t.args[2], trueTerm):
			t = t.args[1]
		case isCall(t, "_?_:_") && equal(t.args[1], trueTerm):
			t = t.args[2]
		default:
			return t
		}
	}
}

// quote is the text of a sub-expression as the rule writes it: the source its tokens span, or
// (when that is not balanced, for a sub-expression within parentheses) the parser's rendering.
func quote(t *term, a *celast.AST, src string) string {
	lo, hi := len(src), -1
	var span func(t *term)
	span = func(t *term) {
		if t.e != nil {
			if r, ok := a.SourceInfo().GetOffsetRange(t.e.ID()); ok {
				lo, hi = min(lo, int(r.Start)), max(hi, int(r.Stop))
			}
		}
		for _, x := range t.args {
			span(x)
		}
	}
	span(t)
	runes := []rune(src)
	if lo <= hi && hi <= len(runes) {
		// A call's position is its parenthesis: the function's name comes before it. A
		// closing parenthesis has no position of its own: take those that balance the text.
		for lo > 0 && (isIdentRune(runes[lo-1]) || runes[lo-1] == '.' && lo > 1 && isIdentRune(runes[lo-2])) && lo < len(runes) && runes[lo] == '(' {
			for lo > 0 && (isIdentRune(runes[lo-1])) {
				lo--
			}
		}
		for hi < len(runes) && !balanced(string(runes[lo:hi])) && (runes[hi] == ')' || runes[hi] == ']' || runes[hi] == ' ') {
			hi++
		}
		if s := strings.TrimSpace(string(runes[lo:hi])); balanced(s) {
			return fmt.Sprintf("%q", s)
		}
	}
	if t.e != nil {
		if s, err := parser.Unparse(t.e, a.SourceInfo()); err == nil && !strings.Contains(s, "@") {
			return fmt.Sprintf("%q", s)
		}
	}
	return "a part of the rule"
}

func isIdentRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// balanced reports whether the brackets of a text close in order (outside string literals).
func balanced(s string) bool {
	var stack []rune
	var quote rune
	for _, c := range s {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
		case c == ')' || c == ']' || c == '}':
			if len(stack) == 0 || map[rune]rune{')': '(', ']': '[', '}': '{'}[c] != stack[len(stack)-1] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0 && quote == 0
}

// maxReads bounds the values an explanation names.
const maxReads = 3

// unboundedReads names the values t reads whose domain under the old schema is not finite: a
// string, a number, a list or a map (vars: the schemas of the loop variables in scope).
func unboundedReads(t *term, vars map[string]*structuralschema.Structural, out []string) []string {
	if len(out) >= maxReads {
		return out
	}
	switch t.kind {
	case "select", "ident":
		s := schemaOf(t, vars)
		if s == nil {
			return out
		}
		name := t.String()
		if what := unboundedKind(s); what != "" && !strings.Contains(name, "…") && !containsPrefix(out, name) {
			out = append(out, name+" ("+what+")")
		}
		return out
	case "has":
		return out
	case "comp":
		out = unboundedReads(t.args[0], vars, out)
		inner := make(map[string]*structuralschema.Structural, len(vars)+1)
		for k, v := range vars {
			inner[k] = v
		}
		delete(inner, t.vars[0])
		if r := schemaOf(t.args[0], vars); r != nil && r.Items != nil && t.vars[1] == "" {
			inner[t.vars[0]] = r.Items
		}
		for _, a := range t.args[2:] {
			out = unboundedReads(a, inner, out)
		}
		return out
	}
	for _, a := range t.args {
		out = unboundedReads(a, vars, out)
	}
	return out
}

// containsPrefix reports whether a name was listed already.
func containsPrefix(l []string, name string) bool {
	for _, x := range l {
		if strings.HasPrefix(x, name+" (") {
			return true
		}
	}
	return false
}

// schemaOf is the old schema of a chain of selections from self or a loop variable.
func schemaOf(t *term, vars map[string]*structuralschema.Structural) *structuralschema.Structural {
	switch t.kind {
	case "ident":
		return vars[t.name]
	case "select":
		b := schemaOf(t.args[0], vars)
		if b == nil {
			return nil
		}
		if p, ok := b.Properties[t.name]; ok {
			return &p
		}
		if b.AdditionalProperties != nil {
			return b.AdditionalProperties.Structural
		}
	}
	return nil
}

// unboundedKind says what kind of value without a finite domain s holds, or "".
func unboundedKind(s *structuralschema.Structural) string {
	if s.ValueValidation != nil && len(s.ValueValidation.Enum) > 0 {
		return ""
	}
	switch {
	case s.XIntOrString:
		return "an integer or string"
	case s.Type == "string":
		return "a string"
	case s.Type == "integer":
		if lo, hi, ok := intRange(s); ok && hi-lo <= 32 {
			return ""
		}
		return "an integer"
	case s.Type == "number":
		return "a number"
	case s.Type == "array":
		return "a list"
	case s.Type == "object" && s.AdditionalProperties != nil:
		return "a map"
	}
	return ""
}

// refusedRule explains a new rule the API server refuses when the CRD is applied (it does not
// parse or compile against the new node, or its estimated cost exceeds the budget): the rule
// then judges nothing, and crdguard reports the refusal itself as invalid-crd. "" when the rule
// compiles, or its node is not found.
func (j *Judge) refusedRule(c Change) string {
	n := walk(j.newRoot, c.Steps)
	if j.err != nil || n == nil {
		return ""
	}
	s := n.DeepCopy()
	s.XValidations = apiextv1.ValidationRules{c.After}
	isRoot := len(c.Steps) == 0 || n.XEmbeddedResource
	rs := compileRuleSet(s, isRoot)
	detail := ""
	switch {
	case rs.err != nil:
		detail = rs.err.Error()
	case len(rs.results) == 1 && rs.results[0].Error != nil:
		detail = rs.results[0].Error.Detail
	default:
		return ""
	}
	detail, _, _ = strings.Cut(detail, "\n")
	return fmt.Sprintf("the API server refuses this rule when the CRD is applied (%s), so it judges nothing; see the invalid-crd finding", strings.TrimSpace(detail))
}
