package celproof

import (
	"sort"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// ref is what a set of rules reads of one value: whether they test its presence, use it whole,
// select fields of it, or iterate over its items. The rules' outcome depends on nothing else, so
// candidate objects only need to vary what the tree names.
type refNode struct {
	// value: the value is used as a whole (compared, measured, passed to a function).
	value bool
	// whole: used as a whole other than by size(), so that what it holds matters and not only
	// its length (see narrow).
	whole bool
	// fields are selected (self.a) or presence-tested (has(self.a)) children.
	fields map[string]*refNode
	// elem is what is read of each item (list) or value (map) a comprehension visits.
	elem *refNode
}

func (r *refNode) field(name string) *refNode {
	if r.fields == nil {
		r.fields = map[string]*refNode{}
	}
	c, ok := r.fields[name]
	if !ok {
		c = &refNode{}
		r.fields[name] = c
	}
	return c
}

func (r *refNode) element() *refNode {
	if r.elem == nil {
		r.elem = &refNode{}
	}
	return r.elem
}

func (r *refNode) sortedFields() []string {
	names := make([]string, 0, len(r.fields))
	for n := range r.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// propertyName is the schema property a field selection names: the API server escapes
// properties that are CEL keywords or hold characters identifiers cannot (namespace is
// __namespace__, a-b is a__dash__b).
func propertyName(selected string) string {
	if name, ok := apiservercel.Unescape(selected); ok {
		return name
	}
	return selected
}

// constants are the literals of the rules, which make the best boundary values to try.
type constants struct {
	ints    []int64
	strings []string
	doubles []float64
}

// collect adds what one parsed rule reads of self (and oldSelf, which has the same shape) to
// root, and its literals to consts.
func collect(a *ast.AST, root *refNode, consts *constants) { collectWith(a, root, consts, false) }

// collectWith is collect; follow: also through a loop whose range starts at another loop's
// variable (b.filters in self.refs.all(b, b.filters.all(f, …))), which narrow can use and the
// candidate generator does not.
func collectWith(a *ast.AST, root *refNode, consts *constants, follow bool) {
	nav := ast.NavigateAST(a)
	for _, lit := range ast.MatchDescendants(nav, ast.KindMatcher(ast.LiteralKind)) {
		addConstant(consts, lit.AsLiteral())
	}
	for _, id := range ast.MatchDescendants(nav, ast.KindMatcher(ast.IdentKind)) {
		r, ok := resolve(id, root, follow)
		if !ok {
			continue
		}
		use(id, r, follow)
	}
}

func addConstant(c *constants, v ref.Val) {
	switch v.Type() {
	case types.IntType:
		c.ints = append(c.ints, v.Value().(int64))
	case types.UintType:
		c.ints = append(c.ints, int64(v.Value().(uint64)))
	case types.StringType:
		c.strings = append(c.strings, v.Value().(string))
	case types.DoubleType:
		c.doubles = append(c.doubles, v.Value().(float64))
	}
}

// resolve returns the node an identifier stands for: self or oldSelf, or the variable of a
// comprehension over something self-rooted. Other identifiers (accumulators, variables of loops
// over literals) are not data of the object.
func resolve(id ast.NavigableExpr, root *refNode, follow bool) (*refNode, bool) {
	name := id.AsIdent()
	for p, ok := id.Parent(); ok; p, ok = p.Parent() {
		if p.Kind() != ast.ComprehensionKind {
			continue
		}
		c := p.AsComprehension()
		if within(id, c.IterRange().ID()) {
			continue // the range is evaluated outside the loop's scope
		}
		if c.AccuVar() == name {
			return nil, false
		}
		if c.IterVar() != name && c.IterVar2() != name {
			continue
		}
		rangeExpr, ok := childOf(p, c.IterRange().ID())
		if !ok {
			return nil, false
		}
		rangeNode, ok := pathOf(rangeExpr, root, follow)
		if !ok {
			return nil, false
		}
		if c.HasIterVar2() && c.IterVar() == name {
			return &refNode{value: true}, true // an index or a key: not object data to vary
		}
		// A list's items (one variable, or the second of two); for a map, the generator
		// varies keys itself.
		return rangeNode.element(), true
	}
	if name == "self" || name == "oldSelf" {
		return root, true
	}
	return nil, false
}

// within reports whether e is the expression with the given id or below it.
func within(e ast.NavigableExpr, id int64) bool {
	for x, ok := e, true; ok; x, ok = x.Parent() {
		if x.ID() == id {
			return true
		}
	}
	return false
}

// pathOf resolves a select chain (self.a.b) to its node, without recording a use; follow: a
// chain may also start at a loop variable.
func pathOf(e ast.NavigableExpr, root *refNode, follow bool) (*refNode, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		if n := e.AsIdent(); n == "self" || n == "oldSelf" {
			return root, true
		}
		if follow {
			return resolve(e, root, true)
		}
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return nil, false
		}
		operand, ok := childOf(e, s.Operand().ID())
		if !ok {
			return nil, false
		}
		parent, ok := pathOf(operand, root, follow)
		if !ok {
			return nil, false
		}
		return parent.field(propertyName(s.FieldName())), true
	}
	return nil, false
}

// use climbs from an identifier through the fields selected of it and records how the
// selected value is used.
func use(e ast.NavigableExpr, r *refNode, follow bool) {
	for {
		p, ok := e.Parent()
		if !ok {
			r.value, r.whole = true, true
			return
		}
		switch p.Kind() {
		case ast.SelectKind:
			s := p.AsSelect()
			if s.IsTestOnly() {
				r.field(propertyName(s.FieldName())) // has(): presence only
				return
			}
			r, e = r.field(propertyName(s.FieldName())), p
			continue
		case ast.CallKind:
			c := p.AsCall()
			args := c.Args()
			// self.?a and self['a'] select a field; optional selection tolerates absence.
			if (c.FunctionName() == "_?._" || c.FunctionName() == "_[_]") && len(args) == 2 && args[0].ID() == e.ID() && args[1].Kind() == ast.LiteralKind {
				if name, ok := args[1].AsLiteral().Value().(string); ok {
					r, e = r.field(name), p
					continue
				}
			}
			if c.FunctionName() == "size" && (c.IsMemberFunction() && c.Target().ID() == e.ID() || !c.IsMemberFunction() && len(args) == 1 && args[0].ID() == e.ID()) {
				r.value = true // measured: its length matters, not what it holds
				return
			}
		case ast.ComprehensionKind:
			if p.AsComprehension().IterRange().ID() == e.ID() {
				r.element() // the loop variables record what they read…
				if !rooted(e, follow) {
					// …unless the range starts at another loop's variable (b.filters in
					// self.refs.all(b, b.filters.all(f, …))) and resolve does not follow
					// it: what its variables read is not recorded, and narrow keeps it whole.
					r.whole = true
				}
				return
			}
		}
		r.value, r.whole = true, true
		return
	}
}

// rooted reports whether a select chain starts at self or oldSelf (or, following, at any
// identifier: use climbs from one that resolved).
func rooted(e ast.NavigableExpr, follow bool) bool {
	for e.Kind() == ast.SelectKind {
		var ok bool
		if e, ok = childOf(e, e.AsSelect().Operand().ID()); !ok {
			return false
		}
	}
	return e.Kind() == ast.IdentKind && (follow || e.AsIdent() == "self" || e.AsIdent() == "oldSelf")
}

// childOf is the child of e with the given id, navigable up to e's ancestors.
func childOf(e ast.NavigableExpr, id int64) (ast.NavigableExpr, bool) {
	for _, c := range e.Children() {
		if c.ID() == id {
			return c, true
		}
	}
	return nil, false
}
