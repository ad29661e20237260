package celproof

import (
	"fmt"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// A rule moved down the schema with the same meaning (a root rule `!(self.spec.type in ['a'])`
// that became .spec's `!(self.type in ['a'])`) rejects nothing new: wherever the new rule runs,
// the node above it was present, and the old rule ran there on the same values. Moved proves
// that from the rules' text.

// Moved decides whether a rule added at c.Steps restates a rule the old schema had at an
// ancestor reached through properties only: with self of the new rule read as self.<path from
// the ancestor>, both rules are the same expression once the prover has put in what the old
// schema decides. The new rule only runs where its node is present, which only makes it looser.
// Transition rules, and values the new schema reads differently, are left undecided.
func (j *Judge) Moved(c Change) (res Result) {
	if j.err != nil || c.Before != nil || usesOldSelf(c.After) {
		return Result{}
	}
	defer func() {
		// As in Judge: whatever goes wrong on untrusted rules leaves the change undecided.
		if recover() != nil {
			res = Result{}
		}
	}()
	oldNode, newNode := walk(j.oldRoot, c.Steps), walk(j.newRoot, c.Steps)
	a, ok := j.parse(c.After.Rule)
	if oldNode == nil || newNode == nil || !ok {
		return Result{}
	}
	read, ok := j.readBy([]apiextv1.ValidationRule{c.After}, &constants{})
	if !ok || !readsAgree(read, oldNode, newNode, false) {
		return Result{}
	}
	moved := toTerm(a.Expr())
	if shadows(moved, "self") {
		return Result{}
	}
	var path []string
	for k := len(c.Steps); k > 0 && c.Steps[k-1].Kind == Property; k-- {
		path = append([]string{c.Steps[k-1].Name}, path...)
		up := c.Steps[:k-1]
		oldUp, newUp := walk(j.oldRoot, up), walk(j.newRoot, up)
		if oldUp == nil || newUp == nil {
			return Result{}
		}
		p := &prover{seen: map[string]bool{}}
		env := map[string]*side{"self": {old: oldUp, new: newUp, present: true}}
		n := p.rewrite(below(moved, path), env)
		for _, r := range oldUp.XValidations {
			if usesOldSelf(r) {
				continue
			}
			o, ok := j.parse(r.Rule)
			if !ok || !equal(p.rewrite(toTerm(o.Expr()), env), n) {
				continue
			}
			because := append([]string{fmt.Sprintf("it restates rule %q of .%s, which held on every object the old schema accepted", r.Rule, fieldPath(up))}, p.because...)
			return Result{Verdict: Implied, ByText: true, Because: because}
		}
	}
	return Result{}
}

// below is t with self read as self.<path>.
func below(t *term, path []string) *term {
	if t.kind == "ident" && t.name == "self" {
		out := t
		for _, name := range path {
			out = &term{kind: "select", name: name, args: []*term{out}}
		}
		return out
	}
	out := *t
	out.args = make([]*term, len(t.args))
	for i, a := range t.args {
		out.args[i] = below(a, path)
	}
	return &out
}

// shadows reports whether a comprehension of t names a variable name.
func shadows(t *term, name string) bool {
	if t.kind == "comp" && slices.Contains(t.vars[:], name) {
		return true
	}
	for _, a := range t.args {
		if shadows(a, name) {
			return true
		}
	}
	return false
}
