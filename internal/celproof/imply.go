package celproof

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// Where the data a rule reads has no finite domain (free strings, lists of any length),
// enumeration proves nothing. Many real changes are still safe for reasons visible in the rules'
// text: a generator added a guard (`c ? p : true` → `c ? (!has(v) || p) : true`), a disjunct
// (`size(a) > 0` → `size(a) > 0 || size(b) > 0`), or a comparison with an enum value the old
// schema never allowed (karpenter's `x.operator == 'Gte'`). The prover below rewrites both rules
// with what the old schema guarantees, simplifies them with CEL's own truth tables (which are
// commutative over errors: `e || true` is true, `e && false` is false) and then shows, by the
// structure of the expressions alone, that the new rule is true wherever the old rules are.

// term is a parsed CEL expression in a form the prover can rewrite and compare.
type term struct {
	kind string // "lit", "ident", "select", "has", "call", "list", "comp", "opaque"
	// name: the literal (type-tagged), identifier, field or function name.
	name string
	// args: the operand (select, has); the target, if any, then the arguments (call); the
	// elements (list); range, init, condition, step and result (comp).
	args   []*term
	member bool
	// vars of a comprehension: iteration variable, second iteration variable, accumulator.
	vars [3]string
	// shown is what a bound variable is called in the rule (name is its canonical name).
	shown string
	// Set by the prover's rewrite on identifiers: obj, the value is an object that is never
	// null (a presence test on it never errs); itemOf, the variable is bound to an item of the
	// list this term (rooted at self) reads.
	obj    bool
	itemOf *term
	// typed: set by the prover's rewrite on a selection every object the old schema accepts
	// has, not null, of one scalar type in both schemas ("string", "integer", "boolean"), so a
	// comparison of it with a literal of that type never errs.
	typed string
	// e is the parsed expression the term was made from, to quote it (see quote).
	e ast.Expr
}

var (
	trueTerm  = &term{kind: "lit", name: "bool:true"}
	falseTerm = &term{kind: "lit", name: "bool:false"}
)

func boolTerm(b bool) *term {
	if b {
		return trueTerm
	}
	return falseTerm
}

// toTerm converts a parsed expression. What the prover has no use for (maps, messages, lists
// with optional elements) becomes an opaque term, equal to nothing, not even itself. The
// variables a comprehension binds are named by how deep it is (#0, #0b and #0@ for the outermost
// one's iteration variables and accumulator), so that two rules that differ only in what they
// call them (`self.all(foo, …)` and `self.all(r, …)`) become the same term.
func toTerm(e ast.Expr) *term { return toTermIn(e, nil) }

// toTermIn is toTerm with the names the enclosing comprehensions bind.
func toTermIn(e ast.Expr, bound map[string]string) *term {
	t := toTermOf(e, bound)
	t.e = e
	return t
}

// toTermOf is toTermIn without the expression kept.
func toTermOf(e ast.Expr, bound map[string]string) *term {
	switch e.Kind() {
	case ast.LiteralKind:
		v := e.AsLiteral()
		if v.Type() == types.StringType {
			return &term{kind: "lit", name: "string:" + strconv.Quote(v.Value().(string))}
		}
		return &term{kind: "lit", name: fmt.Sprintf("%s:%v", v.Type().TypeName(), v.Value())}
	case ast.IdentKind:
		if name, ok := bound[e.AsIdent()]; ok {
			return &term{kind: "ident", name: name, shown: e.AsIdent()}
		}
		return &term{kind: "ident", name: e.AsIdent()}
	case ast.SelectKind:
		s := e.AsSelect()
		kind := "select"
		if s.IsTestOnly() {
			kind = "has"
		}
		return &term{kind: kind, name: propertyName(s.FieldName()), args: []*term{toTermIn(s.Operand(), bound)}}
	case ast.CallKind:
		c := e.AsCall()
		t := &term{kind: "call", name: c.FunctionName(), member: c.IsMemberFunction()}
		if c.IsMemberFunction() {
			t.args = append(t.args, toTermIn(c.Target(), bound))
		}
		for _, a := range c.Args() {
			t.args = append(t.args, toTermIn(a, bound))
		}
		return t
	case ast.ListKind:
		l := e.AsList()
		if len(l.OptionalIndices()) > 0 {
			break
		}
		t := &term{kind: "list"}
		for _, el := range l.Elements() {
			t.args = append(t.args, toTermIn(el, bound))
		}
		return t
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		d, _ := strconv.Atoi(bound[depthKey]) // 0 outermost
		depth := "#" + strconv.Itoa(d)
		inner := maps.Clone(bound)
		if inner == nil {
			inner = map[string]string{}
		}
		inner[depthKey] = strconv.Itoa(d + 1)
		vars := [3]string{depth, "", depth + "@"}
		inner[c.IterVar()] = vars[0]
		if c.HasIterVar2() {
			vars[1] = depth + "b"
			inner[c.IterVar2()] = vars[1]
		}
		inner[c.AccuVar()] = vars[2]
		return &term{kind: "comp", vars: vars, args: []*term{
			toTermIn(c.IterRange(), bound), toTermIn(c.AccuInit(), bound), toTermIn(c.LoopCondition(), inner), toTermIn(c.LoopStep(), inner), toTermIn(c.Result(), inner)}}
	}
	return &term{kind: "opaque"}
}

// depthKey holds, among the bound names, a mark per enclosing comprehension (no CEL identifier
// contains a space).
const depthKey = " depth"

// equal reports whether two terms are the same expression.
func equal(a, b *term) bool {
	if a.kind != b.kind || a.name != b.name || a.member != b.member || a.vars != b.vars || len(a.args) != len(b.args) || a.kind == "opaque" {
		return false
	}
	for i := range a.args {
		if !equal(a.args[i], b.args[i]) {
			return false
		}
	}
	return true
}

// String renders what the prover's notes name: literals, selections, presence tests and
// comparisons; anything else is "…".
func (t *term) String() string {
	switch t.kind {
	case "lit":
		_, v, _ := strings.Cut(t.name, ":")
		if s, err := strconv.Unquote(v); err == nil {
			return "'" + s + "'"
		}
		return v
	case "ident":
		if t.shown != "" {
			return t.shown
		}
		return t.name
	case "select":
		return t.args[0].String() + "." + t.name
	case "has":
		return "has(" + t.args[0].String() + "." + t.name + ")"
	case "call":
		op := map[string]string{"_==_": " == ", "_!=_": " != "}[t.name]
		if op != "" && len(t.args) == 2 {
			return t.args[0].String() + op + t.args[1].String()
		}
	}
	return "…"
}

// side is what one schema says about a value the rules reach: its old and new schema, and
// whether every object the old schema accepts has it.
type side struct {
	old, new *structuralschema.Structural
	present  bool
	// item: the value is an item of this list (a comprehension's variable over it); root is
	// what the list's path started from then.
	item *term
	root *side
}

// prover rewrites terms with what the old schema guarantees about the values they read.
type prover struct {
	because []string
	seen    map[string]bool
	steps   int
	rows    int // truth-table rows evaluated (see every)
	// assumed: fields of self (as "self.a.b") whose presence a guard around the term being
	// rewritten established.
	assumed map[string]bool
}

func (p *prover) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	if !p.seen[s] {
		p.seen[s] = true
		p.because = append(p.because, s)
	}
}

// lookup finds the schema of a chain of field selections from self or an item variable.
func lookup(t *term, env map[string]*side) *side {
	switch t.kind {
	case "ident":
		return env[t.name]
	case "select":
		b := lookup(t.args[0], env)
		c := b.property(t.name)
		if c != nil {
			// A nullable field may hold null, which CEL reads as no value.
			c.present = b.present && requires(b.old, t.name) && !c.old.Nullable
		}
		return c
	}
	return nil
}

// property is the side of a property both schemas have, not yet known present; nil when either
// lacks it.
func (b *side) property(name string) *side {
	if b == nil || b.old == nil || b.new == nil {
		return nil
	}
	o, ok1 := b.old.Properties[name]
	n, ok2 := b.new.Properties[name]
	if !ok1 || !ok2 {
		return nil
	}
	return &side{old: &o, new: &n}
}

func requires(s *structuralschema.Structural, name string) bool {
	return s.ValueValidation != nil && slices.Contains(s.ValueValidation.Required, name)
}

// rewrite replaces, bottom-up, what the old schema decides: a comparison of a present field with
// a value outside its old enum, and the presence of a field that is required, or that the old
// schema prunes and the new one does not default. Then it simplifies.
func (p *prover) rewrite(t *term, env map[string]*side) *term {
	out := *t
	out.args = make([]*term, len(t.args))
	inner := env
	if t.kind == "comp" {
		inner = make(map[string]*side, len(env)+3)
		for k, v := range env {
			inner[k] = v
		}
		for _, v := range t.vars {
			delete(inner, v) // shadowed
		}
		if r := lookup(t.args[0], env); r != nil && t.vars[1] == "" && r.old.Items != nil && r.new.Items != nil {
			inner[t.vars[0]] = &side{old: r.old.Items, new: r.new.Items, present: true, item: t.args[0], root: rootOf(t.args[0], env)}
		}
	}
	if t.kind == "ident" {
		if s := env[t.name]; s != nil {
			out.obj = s.old != nil && s.new != nil && s.old.Type == "object" && s.new.Type == "object" && !s.old.Nullable && !s.new.Nullable
			if s.item != nil && s.root == env["self"] {
				out.itemOf = s.item
			}
		}
	}
	if t.kind == "select" {
		out.typed = scalarOf(p.lookup(t, env))
	}
	for i, a := range t.args {
		e := env
		if t.kind == "comp" && i >= 2 { // the condition, step and result see the variables
			e = inner
		}
		if g := guarded(t, i); g != "" && e["self"] == env["self"] && !p.assumed[g] {
			p.assume(g, true)
			out.args[i] = p.rewrite(a, e)
			p.assume(g, false)
			continue
		}
		out.args[i] = p.rewrite(a, e)
	}
	return simplify(p.fact(&out, env))
}

// fact decides t from the old schema when it can.
func (p *prover) fact(t *term, env map[string]*side) *term {
	if c := p.sizeFact(t, env); c != nil {
		return c
	}
	switch {
	case t.kind == "comp":
		if p.uniqueKey(t, env) {
			return trueTerm
		}
		// all(x, true) and exists(x, false) over a list every object has: the accumulator
		// never changes, so the result is its start.
		acc := &term{kind: "ident", name: t.vars[2]}
		init := t.args[1].kind == "lit" || t.args[1].kind == "list" && len(t.args[1].args) == 0
		if r := p.lookup(t.args[0], env); r != nil && r.present && init && equal(t.args[3], acc) && equal(t.args[4], acc) {
			return t.args[1]
		}
	case t.kind == "has":
		b := p.lookup(t.args[0], env)
		if b == nil || !b.present || b.old.Type != "object" {
			return t
		}
		f := t.name
		if _, ok := b.old.Properties[f]; ok {
			if np, ok := b.new.Properties[f]; ok && requires(b.old, f) && !np.Nullable && !b.old.Properties[f].Nullable {
				p.note("%s is required", t.args[0].String()+"."+f)
				return trueTerm
			}
			return t
		}
		if b.old.AdditionalProperties != nil || b.old.XPreserveUnknownFields || b.old.XEmbeddedResource {
			return t
		}
		if np, ok := b.new.Properties[f]; ok && np.Default.Object != nil {
			// The API server defaults a field of every object it reads (new in this change:
			// on stored objects too), so the field is there.
			p.note("%s is new with a default, so set on every object the old schema accepted", t.args[0].String()+"."+f)
			return trueTerm
		}
		p.note("%s is new, so absent from every object the old schema accepted", t.args[0].String()+"."+f)
		return falseTerm
	case t.kind == "select":
		if d := p.newDefault(t, env); d != nil {
			return d
		}
	case t.kind == "call" && (t.name == "_==_" || t.name == "_!=_") && len(t.args) == 2:
		for i := range 2 {
			lit, field := t.args[i], t.args[1-i]
			if lit.kind != "lit" || !strings.HasPrefix(lit.name, "string:") {
				continue
			}
			b := lookup(field, env)
			if b == nil || !b.present || b.old.ValueValidation == nil || len(b.old.ValueValidation.Enum) == 0 {
				continue
			}
			v, _ := strconv.Unquote(strings.TrimPrefix(lit.name, "string:"))
			if slices.ContainsFunc(b.old.ValueValidation.Enum, func(e structuralschema.JSON) bool { return e.Object == v }) {
				continue
			}
			p.note("%s is never %s under the old enum", field.String(), lit.String())
			return boolTerm(t.name == "_!=_")
		}
	case t.kind == "call" && len(t.args) == 2 && (t.name == "matches" || t.name == "startsWith" || t.name == "endsWith" || t.name == "contains"):
		if p.stringImplied(nil, t, env) {
			return trueTerm
		}
	case isCall(t, "_&&_"):
		if x := subject(t); x != nil {
			if _, ok := prefixedLang(t, x); ok && p.stringImplied(nil, t, env) {
				return trueTerm
			}
		}
	case isCall(t, "_?_:_") && equal(t.args[2], trueTerm):
		// `h.contains('*') ? (h.startsWith('*.') && h.substring(2).matches(re)) : true`: every
		// string the old pattern of h allows where the condition holds meets the test.
		if p.stringImplied(t.args[0], t.args[1], env) {
			return trueTerm
		}
	case isCall(t, "@in") && t.args[0].kind == "lit" && strings.HasPrefix(t.args[0].name, "string:"):
		// A list every object has, whose items the old schema keeps from ever being the
		// literal: `'*' in self` on origins that must carry a scheme.
		b := lookup(t.args[1], env)
		if b == nil || !b.present || b.old.Type != "array" || b.old.Items == nil {
			break
		}
		v, _ := strconv.Unquote(strings.TrimPrefix(t.args[0].name, "string:"))
		if why := refuses(b.old.Items, v); why != "" {
			p.note("no item of %s is %s under the old %s", t.args[1].String(), t.args[0].String(), why)
			return falseTerm
		}
	}
	return t
}

// refuses says which of a string node's enum, pattern and lengths refuse v, or "".
func refuses(s *structuralschema.Structural, v string) string {
	vv := s.ValueValidation
	if s.Type != "string" || vv == nil {
		return ""
	}
	n := int64(len([]rune(v)))
	switch {
	case len(vv.Enum) > 0 && !slices.ContainsFunc(vv.Enum, func(e structuralschema.JSON) bool { return e.Object == v }):
		return "enum"
	case vv.MinLength != nil && n < *vv.MinLength:
		return "minLength"
	case vv.MaxLength != nil && n > *vv.MaxLength:
		return "maxLength"
	case vv.Pattern != "":
		if re, err := regexp.Compile(vv.Pattern); err == nil && !re.MatchString(v) {
			return "pattern"
		}
	}
	return ""
}

// uniqueKey recognises the idiom that says an item's key is unique in its list,
// `L.all(a, L.exists_one(b, a.k == b.k))`, where L is a map-type list keyed by k (with several
// keys, the equality of each, and-ed; t is the exists_one): the API server already refuses two
// items with one key, so exactly one item — a itself — matches.
func (p *prover) uniqueKey(t *term, env map[string]*side) bool {
	init, step, result, acc := t.args[1], t.args[3], t.args[4], &term{kind: "ident", name: t.vars[2]}
	if t.vars[1] != "" || !equal(init, &term{kind: "lit", name: "int:0"}) || !isCall(result, "_==_") || !equal(result.args[0], acc) ||
		!equal(result.args[1], &term{kind: "lit", name: "int:1"}) || !isCall(step, "_?_:_") || !equal(step.args[2], acc) ||
		!isCall(step.args[1], "_+_") || !equal(step.args[1].args[0], acc) || !equal(step.args[1].args[1], &term{kind: "lit", name: "int:1"}) {
		return false
	}
	l := p.lookup(t.args[0], env)
	if isCall(step.args[0], "_==_") && p.uniqueItem(t, l, step.args[0], env) {
		return true
	}
	return p.keyMatch(t, l, step.args[0], env)
}

// rootOf is the side a chain of selections starts from.
func rootOf(t *term, env map[string]*side) *side {
	for t.kind == "select" {
		t = t.args[0]
	}
	if t.kind != "ident" {
		return nil
	}
	return env[t.name]
}

// simplify folds the logical operators whose outcome a literal decides, as CEL evaluates them.
func simplify(t *term) *term {
	if t.kind != "call" {
		return t
	}
	a := t.args
	switch {
	case (t.name == "_||_" || t.name == "_&&_") && len(a) == 2:
		// true decides a disjunction, false a conjunction; the other literal drops out.
		decides := boolTerm(t.name == "_||_")
		neutral := boolTerm(t.name != "_||_")
		switch {
		case equal(a[0], decides) || equal(a[1], decides):
			return decides
		case equal(a[0], neutral):
			return a[1]
		case equal(a[1], neutral):
			return a[0]
		}
	case t.name == "!_" && len(a) == 1 && a[0].kind == "lit" && (equal(a[0], trueTerm) || equal(a[0], falseTerm)):
		return boolTerm(equal(a[0], falseTerm))
	case len(a) == 2 && a[0].kind == "lit" && a[1].kind == "lit":
		if b, ok := compareInts(t.name, a[0], a[1]); ok {
			return boolTerm(b)
		}
	case t.name == "_?_:_" && len(a) == 3:
		switch {
		case equal(a[0], trueTerm):
			return a[1]
		case equal(a[0], falseTerm):
			return a[2]
		}
	}
	return t
}

// maxSteps bounds the implication search on one pair of rules.
const maxSteps = 20000

// implies reports whether n is true on every evaluation where o is true, by the structure of
// the two expressions.
func (p *prover) implies(o, n *term) bool {
	p.steps++
	if p.steps > maxSteps {
		return false
	}
	if equal(o, n) || equal(n, trueTerm) || equal(o, falseTerm) || p.agree(o, n) || p.monotone(o, n) {
		return true
	}
	if isCall(o, "_?_:_") && isCall(n, "_?_:_") && equal(n.args[2], trueTerm) && isCall(n.args[0], "_&&_") {
		// n's condition is o's and a presence test, which never errs: where o's condition is
		// false so is n's, and n is true; where it is true and o is true, n takes o's branch
		// (true if that implies it) or its else, true.
		c := n.args[0]
		for i := range 2 {
			if g := c.args[1-i]; equal(c.args[i], o.args[0]) && g.kind == "has" && g.args[0].kind == "ident" {
				return p.implies(o.args[1], n.args[1])
			}
		}
	}
	if isCall(n, "_||_") && (p.implies(o, n.args[0]) || p.implies(o, n.args[1])) {
		return true // a true disjunct makes the disjunction true, whatever the other gives
	}
	if isCall(n, "_&&_") && p.implies(o, n.args[0]) && p.implies(o, n.args[1]) {
		return true
	}
	if isCall(o, "_&&_") && (p.implies(o.args[0], n) || p.implies(o.args[1], n)) {
		return true // a true conjunction has both conjuncts true
	}
	if isCall(o, "_||_") && p.implies(o.args[0], n) && p.implies(o.args[1], n) {
		return true // a true disjunction has a true disjunct
	}
	if isCall(o, "_?_:_") && isCall(n, "_?_:_") && equal(o.args[0], n.args[0]) {
		// o is true only if its condition is a boolean; n takes the same branch.
		return p.implies(o.args[1], n.args[1]) && p.implies(o.args[2], n.args[2])
	}
	if o.kind == "comp" && n.kind == "comp" && o.vars == n.vars && equal(o.args[0], n.args[0]) && equal(o.args[1], n.args[1]) &&
		equal(o.args[2], n.args[2]) && equal(o.args[4], n.args[4]) && equal(o.args[4], &term{kind: "ident", name: o.vars[2]}) {
		// all() and exists(): the accumulator is and-ed (or-ed) with each item's predicate, so a
		// predicate true wherever the old one is makes the result true wherever the old one is.
		acc := &term{kind: "ident", name: o.vars[2]}
		for _, op := range []string{"_&&_", "_||_"} {
			if isCall(o.args[3], op) && isCall(n.args[3], op) && equal(o.args[3].args[0], acc) && equal(n.args[3].args[0], acc) {
				return p.implies(o.args[3].args[1], n.args[3].args[1])
			}
		}
	}
	if p.existsOneNarrowed(o, n) || p.filteredSubset(o, n) {
		return true
	}
	return p.tableImplies(o, n)
}

func isCall(t *term, name string) bool {
	arity := 2
	if name == "_?_:_" {
		arity = 3
	}
	return t.kind == "call" && t.name == name && len(t.args) == arity
}

// readsAgree reports whether what the rules read (r) of a value reads the same under the old and
// the new schema, for an object the old schema accepted: nothing the old schema keeps is pruned
// or typed differently by the new one, no default differs, and a field new in the change has no
// default (so it stays absent). Values used whole must agree all the way down. The prover
// compares the rules' text, so the values they read must be the same on both sides.
func readsAgree(r *refNode, o, n *structuralschema.Structural, whole bool) bool {
	switch {
	case r == nil && !whole:
		return true
	case o == nil && n == nil:
		return true
	case o == nil:
		// New: absent from every stored object, unless defaulted; a defaulted one read by name
		// (not within a value read whole) is what the prover reads as its default.
		return n.Default.Object == nil || !whole
	case n == nil:
		return false // pruned by the new schema
	}
	if o.Type != n.Type || o.Nullable != n.Nullable || o.XIntOrString != n.XIntOrString || o.XPreserveUnknownFields != n.XPreserveUnknownFields ||
		o.XEmbeddedResource != n.XEmbeddedResource || !reflect.DeepEqual(o.Default.Object, n.Default.Object) {
		return false
	}
	whole = whole || r != nil && r.value
	if (o.AdditionalProperties == nil) != (n.AdditionalProperties == nil) || o.AdditionalProperties != nil && o.AdditionalProperties.Bool != n.AdditionalProperties.Bool {
		return false
	}
	child := func(name string) *refNode {
		if r == nil {
			return nil
		}
		return r.fields[name]
	}
	var elem *refNode
	if r != nil {
		elem = r.elem
	}
	names := map[string]bool{}
	for name := range o.Properties {
		names[name] = true
	}
	for name := range n.Properties {
		names[name] = true
	}
	for name := range names {
		op, oOK := o.Properties[name]
		np, nOK := n.Properties[name]
		var os, ns *structuralschema.Structural
		if oOK {
			os = &op
		}
		if nOK {
			ns = &np
		}
		if c := child(name); (c != nil || whole) && !readsAgree(c, os, ns, whole) {
			return false
		}
	}
	if o.AdditionalProperties != nil && !readsAgree(elem, o.AdditionalProperties.Structural, n.AdditionalProperties.Structural, whole) {
		return false
	}
	return readsAgree(elem, o.Items, n.Items, whole)
}

// proveByText tries to prove a rule change safe from the rules' text (see above): the new rule
// equal to the old one once both are rewritten (Equivalent), or true wherever the old node's
// rules are (Looser; Implied for an added rule). It gives up on rules with optionalOldSelf (oldSelf
// may then be absent) and where the new schema would read a value the changed rules read
// differently. because lists the schema facts the proof used.
func (j *Judge) proveByText(oldNode, newNode *structuralschema.Structural, c Change) (v Verdict, because []string) {
	if optionalOldSelf(c.After) || c.Before != nil && optionalOldSelf(*c.Before) {
		return Undecided, nil
	}
	// The changed rules must read the same values under both schemas. The node's other old rules
	// need not: they hold on the object as the old schema reads it, and the proof only relates
	// them to the new rule through the values the new rule reads, which read alike (a default
	// new inside a list an old rule sizes is no reason to give up).
	changed := []apiextv1.ValidationRule{c.After}
	if c.Before != nil {
		changed = append(changed, *c.Before)
	}
	if read, ok := j.readBy(changed, &constants{}); !ok || !readsAgree(read, oldNode, newNode, false) {
		return Undecided, nil
	}
	p := &prover{seen: map[string]bool{}}
	// A transition rule runs on updates the old schema allowed: oldSelf is a stored object and
	// self the one written, both accepted by the old schema, so what the old schema guarantees
	// holds for each (a field new in this change is absent from both). The old node's rules
	// below are used only about self.
	env := map[string]*side{"self": {old: oldNode, new: newNode, present: true}, "oldSelf": {old: oldNode, new: newNode, present: true}}
	rewritten := func(rule string) *term {
		a, ok := j.parse(rule)
		if !ok {
			return nil
		}
		return p.rewrite(toTerm(a.Expr()), env)
	}
	n := rewritten(c.After.Rule)
	if n == nil {
		return Undecided, nil
	}
	if c.Before != nil {
		o := rewritten(c.Before.Rule)
		if o == nil {
			return Undecided, nil
		}
		if equal(o, n) || p.implies(o, n) && p.implies(n, o) {
			return Equivalent, p.because
		}
	}
	// Every rule of the old node holds on every object the old schema accepts.
	all := trueTerm
	for _, r := range oldNode.XValidations {
		if usesOldSelf(r) {
			continue
		}
		if t := rewritten(r.Rule); t == nil {
			continue
		} else if all == trueTerm {
			all = t
		} else {
			all = &term{kind: "call", name: "_&&_", args: []*term{all, t}}
		}
	}
	if p.implies(all, n) || p.alwaysTrue(n, env) {
		if c.Before == nil {
			return Implied, p.because
		}
		return Looser, p.because
	}
	// So does every rule of a field below it (reached through properties, not nullable) wherever
	// that field is set: a rule moved up to the parent, as `!has(self.tls) || self.tls.…`.
	var used []string
	for _, b := range belowRules(oldNode, nil, 2) {
		a, ok := j.parse(b.rule.Rule)
		if !ok || usesOldSelf(b.rule) {
			continue
		}
		moved := toTerm(a.Expr())
		if shadows(moved, "self") {
			continue
		}
		t := below(moved, b.path)
		for k := len(b.path); k > 0; k-- {
			var at *term = &term{kind: "ident", name: "self"}
			for _, name := range b.path[:k-1] {
				at = &term{kind: "select", name: name, args: []*term{at}}
			}
			set := &term{kind: "has", name: b.path[k-1], args: []*term{at}}
			t = &term{kind: "call", name: "_||_", args: []*term{{kind: "call", name: "!_", args: []*term{set}}, t}}
		}
		if all == trueTerm {
			all = p.rewrite(t, env)
		} else {
			all = &term{kind: "call", name: "_&&_", args: []*term{all, p.rewrite(t, env)}}
		}
		at := strings.Join(b.path, ".")
		if up := fieldPath(c.Steps); up != "" {
			at = up + "." + at
		}
		used = append(used, fmt.Sprintf("rule %q of .%s", b.rule.Rule, at))
	}
	if len(used) == 0 || !p.implies(all, n) {
		return Undecided, nil
	}
	if len(used) > 3 {
		used = append(used[:3], fmt.Sprintf("%d more", len(used)-3))
	}
	p.note("the rules of the fields below held wherever those fields were set (%s)", strings.Join(used, ", "))
	if c.Before == nil {
		return Implied, p.because
	}
	return Looser, p.because
}

// belowRule is a rule of a field below a node, and the properties that lead to it.
type belowRule struct {
	path []string
	rule apiextv1.ValidationRule
}

// belowRules are the rules of the object fields below s, up to depth properties down, reached
// through properties that are not nullable (a null field runs no rule, yet has() may see it).
func belowRules(s *structuralschema.Structural, path []string, depth int) []belowRule {
	if depth == 0 || s == nil {
		return nil
	}
	var names []string
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []belowRule
	for _, name := range names {
		c := s.Properties[name]
		if c.Nullable {
			continue
		}
		p := append(slices.Clip(path), name)
		for _, r := range c.XValidations {
			out = append(out, belowRule{path: p, rule: r})
		}
		if c.Type == "object" {
			out = append(out, belowRules(&c, p, depth-1)...)
		}
	}
	return out
}

// optionalOldSelf reports whether the rule also runs on creates, with oldSelf an optional value.
func optionalOldSelf(r apiextv1.ValidationRule) bool {
	return r.OptionalOldSelf != nil && *r.OptionalOldSelf
}
