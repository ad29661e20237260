package celproof

import (
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// Guards: `!has(self.tls) || …` lets the rest of the rule read self.tls as present, and a field
// new in this change with a default reads as that default on every object the old schema
// accepted.

// guarded is the field of self whose presence a guard before operand i of t establishes for it
// (`!has(f) || …`, `has(f) && …`, `has(f) ? … : …`, `!has(f) ? … : …`), or "". Where the field
// is absent the guard alone decides t, whatever the operand (even an error), so the operand may
// be rewritten as if the field were present. Only a guard to the left counts: two operands
// guarding each other could both be rewritten wrongly at once.
func guarded(t *term, i int) string {
	if t.kind != "call" || i == 0 {
		return ""
	}
	g, want := t.args[0], true
	if g.kind == "call" && g.name == "!_" && len(g.args) == 1 {
		g, want = g.args[0], false
	}
	switch {
	case g.kind != "has" || rootName(g.args[0]) != "self", strings.Count(g.args[0].String()+"."+g.name, ".") != depth(g.args[0])+1:
		// Only plain chains of selections, whose names hold no dot, key the field unambiguously.
	case t.name == "_||_" && !want, t.name == "_&&_" && want, t.name == "_?_:_" && (i == 1) == want:
		return g.args[0].String() + "." + g.name
	}
	return ""
}

// rootName is the identifier a chain of selections starts from, or "".
func rootName(t *term) string {
	for t.kind == "select" {
		t = t.args[0]
	}
	if t.kind != "ident" {
		return ""
	}
	return t.name
}

// lookup is the side of a chain of selections (see lookup), present also where a guard around
// the term being rewritten established it.
func (p *prover) lookup(t *term, env map[string]*side) *side {
	b := lookup(t, env)
	if b != nil && !b.present && p.assumed[t.String()] && rootName(t) == "self" {
		b.present = true
	}
	return b
}

// assume records (or forgets) that a guard around the term being rewritten established the
// presence of a field of self.
func (p *prover) assume(field string, on bool) {
	if p.assumed == nil {
		p.assumed = map[string]bool{}
	}
	p.assumed[field] = on
}

// newDefault is the literal a field new in this change reads as, its default (a boolean or a
// string), where its object is present; nil otherwise.
func (p *prover) newDefault(t *term, env map[string]*side) *term {
	b := p.lookup(t.args[0], env)
	if b == nil || !b.present || b.old.Type != "object" || b.old.AdditionalProperties != nil || b.old.XPreserveUnknownFields || b.old.XEmbeddedResource {
		return nil
	}
	if _, ok := b.old.Properties[t.name]; ok {
		return nil
	}
	np, ok := b.new.Properties[t.name]
	if !ok || np.Nullable {
		return nil
	}
	var lit *term
	switch d := np.Default.Object.(type) {
	case bool:
		lit = boolTerm(d)
	case string:
		lit = &term{kind: "lit", name: "string:" + strconv.Quote(d)}
	default:
		return nil
	}
	p.note("%s is new with default %s, which every object the old schema accepted reads", t.args[0].String()+"."+t.name, lit.String())
	return lit
}

// depth is how many selections a chain holds.
func depth(t *term) int {
	n := 0
	for ; t.kind == "select"; t = t.args[0] {
		n++
	}
	return n
}

// scalarOf is the scalar type of a value every object the old schema accepts has (see
// term.typed), or "".
func scalarOf(b *side) string {
	if b == nil || !b.present || b.old == nil || b.new == nil || b.old.Type != b.new.Type || b.old.Nullable || b.new.Nullable {
		return ""
	}
	if b.old.Type == "string" && (formatOf(b.old) != "" || formatOf(b.new) != "") {
		return "" // CEL reads some formatted strings as bytes, durations or timestamps
	}
	switch b.old.Type {
	case "string", "integer", "boolean":
		return b.old.Type
	}
	return ""
}

func formatOf(s *structuralschema.Structural) string {
	if s.ValueValidation == nil {
		return ""
	}
	return s.ValueValidation.Format
}
