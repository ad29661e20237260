package celproof

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
