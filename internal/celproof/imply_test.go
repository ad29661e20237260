package celproof

import (
	"testing"

	celast "github.com/google/cel-go/common/ast"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestProveByText proves rule changes from their text, and must leave every change it cannot
// prove (tightenings, facts that do not hold, shapes it does not know) undecided.
func TestProveByText(t *testing.T) {
	o, n := loadCRD(t, "testdata/prover/old.yaml"), loadCRD(t, "testdata/prover/new.yaml")
	j := NewJudge(o, n, "v1")
	if j.err != nil {
		t.Fatal(j.err)
	}
	for _, tc := range []struct {
		name, before, after string
		want                Verdict
		oldRule             string // another rule of the old node
	}{
		{"value outside the old enum", "self.mode == 'A'", "self.mode == 'A' || self.mode == 'C'", Equivalent, ""},
		{"disjunct added", "size(self.list) > 0", "size(self.list) > 0 || size(self.name) > 0", Looser, ""},
		{"guard in a branch", "self.mode == 'A' ? size(self.list) > 0 : true", "self.mode == 'A' ? (!has(self.name) || size(self.list) > 0) : true", Looser, ""},
		{"all() of a weaker predicate", "self.list.all(x, x == 'a')", "self.list.all(x, x == 'a' || x == 'b')", Looser, ""},
		{"required field present", "size(self.list) > 0", "has(self.mode) && size(self.list) > 0", Equivalent, ""},
		{"new field absent", "", "!has(self.extra) || self.extra == 'x'", Implied, ""},
		{"an old rule beside a field that gains a default", "", "self.name == 'x'", Undecided, "!has(self.late) || self.name == 'x'"},
		{"a rule moved up from a field below", "", "!has(self.tls) || !has(self.tls.sni) || self.tls.sni != 'x'", Implied, ""},
		{"a rule moved up and narrowed", "", "!has(self.tls) || !has(self.tls.sni) || self.tls.sni != 'y'", Undecided, ""},
		{"a rule moved up without its guard", "", "!has(self.tls.sni) || self.tls.sni != 'x'", Undecided, ""},
		{"a field that gains a default", "", "!has(self.late) || self.name == 'x'", Undecided, "!has(self.late)"},
		{"transition rule, a value outside the old enum", "self.mode == oldSelf.mode", "self.mode == oldSelf.mode || self.mode == 'C'", Equivalent, ""},
		{"transition guard on a new field", "", "!has(oldSelf.extra) || has(self.extra)", Implied, ""},
		{"guard on a new field", "", "!has(self.tls) || !(has(self.tls.autoSNI) && self.tls.autoSNI) || !has(self.tls.sni)", Implied, ""},
		{"guard on a new field defaulted to false", "", "!has(self.tls) || !(has(self.tls.autoOff) && self.tls.autoOff) || !has(self.tls.sni)", Implied, ""},
		{"guard in a conjunction", "", "!(has(self.tls) && has(self.tls.autoSNI))", Implied, ""},
		{"items of a set-type list", "", "self.tags.all(x, self.tags.exists_one(y, y == x))", Implied, ""},
		{"items of a set-type list, other order", "", "self.tags.all(x, self.tags.exists_one(y, x == y))", Implied, ""},
		{"no item of a set-type list repeated", "", "size(self.tags.filter(i, size(self.tags.filter(j, j == i)) > 1)) == 0", Implied, ""},
		{"key of a map-type list", "", "self.ports.all(a, self.ports.exists_one(b, a.name == b.name))", Implied, ""},
		{"key of a map-type list, counted", "", "self.ports.all(a, size(self.ports.filter(b, b.name == a.name)) == 1)", Implied, ""},
		{"key of a map-type list, counted by a member call", "", "self.ports.all(a, self.ports.filter(b, a.name == b.name).size() == 1)", Implied, ""},
		{"keys of a map-type list with two keys", "", "self.routes.all(a, self.routes.exists_one(b, a.host == b.host && b.path == a.path))", Implied, ""},
		{"keys of a map-type list with two keys, counted", "", "self.routes.all(a, size(self.routes.filter(b, b.path == a.path && b.host == a.host)) == 1)", Implied, ""},
		{"all() of true over a required list", "", "self.ports.all(x, true)", Implied, ""},
		{"sum within the old bounds", "", "(self.slots.size() > 0 ? self.slots[0].items.size() : 0) + (self.slots.size() > 1 ? self.slots[1].items.size() : 0) <= 6", Implied, ""},
		{"guarded optional list within bounds", "", "(self.slots.size() > 0 ? (has(self.slots[0].extra) ? self.slots[0].extra.size() : 0) : 0) <= 3", Implied, ""},
		{"implied by an old rule", "", "size(self.list) > 0 || self.mode == 'B'", Implied, "size(self.list) > 0"},
		{"conjunction false by a bound", "", "!(self.slots.size() > 2 && self.name == 'x')", Implied, ""},
		{"disjunction true by a bound", "", "self.slots.size() <= 2 || self.name == 'x'", Implied, ""},
		{"string within its minLength", "", "!has(self.short) || size(self.short) > 0", Implied, ""},
		{"matches within the old pattern", "", `!has(self.host) || self.host.matches('^(\\*\\.)?[a-z0-9.]+$')`, Implied, ""},
		{"matches where the old pattern allows no star", "", `!has(self.host) || (!self.host.contains('*') ? self.host.matches('^[a-z0-9]+(\\.[a-z0-9]+)*$') : true)`, Implied, ""},
		{"past the wildcard's prefix", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(2).matches('^[a-z0-9]+(\\.[a-z0-9]+)*$')) : true)`, Implied, ""},
		{"past the prefix, the prefix second", "", `!has(self.host) || (self.host.contains('*') ? (self.host.substring(2).matches('^[a-z0-9]+(\\.[a-z0-9]+)*$') && self.host.startsWith('*.')) : true)`, Implied, ""},
		{"past the prefix, anchored at the end", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(2).matches('[a-z0-9]$')) : true)`, Implied, ""},
		{"past the prefix, anchored at the start", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(2).matches('^[a-z0-9]')) : true)`, Implied, ""},
		{"starts with under a condition", "", `!has(self.host) || (self.host.contains('*') ? self.host.startsWith('*.') : true)`, Implied, ""},
		{"every value ends with a label", "", `!has(self.host) || self.host.matches('[a-z0-9]$')`, Implied, ""},
		{"both or neither, rewritten as ==", "self.ports.all(a, self.ports.all(b, ((!has(a.port) || a.port == 0) && (!has(b.port) || b.port == 0)) || (has(a.port) && a.port != 0 && has(b.port) && b.port != 0)))",
			"self.ports.all(a, self.ports.all(b, (!has(a.port) || a.port == 0) == (!has(b.port) || b.port == 0)))", Equivalent, ""},
		{"exactly one match, fewer matches", "self.ports.all(a, self.ports.exists_one(b, a.name == b.name && (has(a.port) && has(b.port) ? a.port == b.port : true)))",
			"self.ports.all(a, self.ports.exists_one(b, a.name == b.name && (has(a.port) && has(b.port) ? a.port == b.port : !has(a.port) && !has(b.port))))", Looser, ""},

		{"guard before a read", "self.name == 'x'", "has(self.name) && self.name == 'x'", Equivalent, ""},
		{"guarded uniqueness", "self.ports.all(a, a.name == 'x' ? self.ports.exists_one(b, b.name == a.name && b.port == a.port) : true)",
			"self.ports.all(a, a.name == 'x' && has(a.port) ? self.ports.exists_one(b, b.name == a.name && has(b.port) && b.port == a.port) : true)", Looser, ""},
		{"guard in exists()", "self.ports.exists(x, x.port == 1)", "self.ports.exists(x, has(x.port) && x.port == 1)", Equivalent, ""},
		{"guard under a negation", "!(self.name == 'x')", "!(has(self.name) && self.name == 'x')", Looser, ""},

		{"upper bound raised", "self.ports.all(p, p.port <= 6553)", "self.ports.all(p, p.port <= 65535)", Looser, ""},
		{"lower bound lowered, literal first", "self.ports.all(p, 1024 < p.port)", "self.ports.all(p, p.port >= 1024)", Looser, ""},
		{"size bound raised", "size(self.list) < 8", "size(self.list) < 16", Looser, ""},
		{"member bound made inclusive", "self.list.size() < 8", "self.list.size() <= 8", Looser, ""},
		{"bound raised, size() written the other way", "self.list.size() <= 8", "size(self.list) <= 16", Looser, ""},
		{"double bound raised", "self.ports.all(p, double(p.port) <= 1.5)", "self.ports.all(p, double(p.port) <= 2.5)", Looser, ""},
		{"list gains a member", "self.name in ['Gateway', 'HTTPRoute']", "self.name in ['Gateway', 'ListenerSet', 'HTTPRoute']", Looser, ""},
		{"equality becomes a list", "self.name == 'Gateway'", "self.name in ['Gateway', 'ListenerSet']", Looser, ""},
		{"equality, literal first", "'Gateway' == self.name", "self.name in ['ListenerSet', 'Gateway']", Looser, ""},
		{"either equality becomes a list", "self.name == 'Gateway' || self.name == 'HTTPRoute'", "self.name in ['Gateway', 'HTTPRoute', 'GRPCRoute']", Looser, ""},
		{"bound raised in a branch", "self.mode == 'A' ? size(self.list) <= 2 : true", "self.mode == 'A' ? size(self.list) <= 4 : true", Looser, ""},
		{"regex widened", "self.name.matches('^(rbd|cephfs|nfs)$')", "self.name.matches('^(rbd|cephfs|nfs|nvmeof)$')", Looser, ""},
		{"regex anchor dropped", "matches(self.name, '^a')", "matches(self.name, 'a')", Looser, ""},

		{"list written as exists() gains a member", "self.name in ['Gateway', 'HTTPRoute']", "['Gateway', 'ListenerSet', 'HTTPRoute'].exists(k, k == self.name)", Looser, ""},
		{"list gains a member, written as equalities", "self.name in ['A', 'B']", "self.name == 'A' || self.name == 'B' || self.name == 'C'", Looser, ""},
		{"list gains a member with a check of its own", "self.name in ['A', 'B']", "self.name in ['A', 'B', 'C'] && (self.name != 'C' || size(self.list) > 0)", Looser, ""},
		{"list gains a member with a check of its own, negated", "self.name in ['A', 'B']", "self.name in ['A', 'B', 'C'] && (!(self.name == 'C') || size(self.list) > 0)", Looser, ""},
		{"all() of a filtered list", "self.ports.all(p, has(p.port))", "self.ports.filter(p, p.name != 'metrics').all(p, has(p.port))", Looser, ""},
		{"all() of a list filtered by presence", "self.ports.all(p, p.port > 0)", "self.ports.filter(p, has(p.port)).all(p, p.port > 0)", Looser, ""},
		{"all() of a filtered list, the old check true under the filter", "self.ports.all(p, p.name == 'a' || has(p.port))", "self.ports.filter(p, p.name != 'a').all(p, has(p.port))", Looser, ""},

		{"upper bound lowered", "self.ports.all(p, p.port <= 65535)", "self.ports.all(p, p.port <= 6553)", Undecided, ""},
		{"upper bound made strict", "size(self.list) <= 8", "size(self.list) < 8", Undecided, ""},
		{"lower bound raised", "size(self.list) >= 1", "size(self.list) >= 2", Undecided, ""},
		{"bound turned around", "size(self.list) <= 8", "size(self.list) >= 8", Undecided, ""},
		{"bound of another term", "size(self.list) <= 8", "size(self.name) <= 16", Undecided, ""},
		{"bound of another function", "size(self.list) <= 8", "int(self.list) <= 16", Undecided, ""},
		{"bound of another member function", "size(self.list) <= 8", "self.list.count() <= 16", Undecided, ""},
		{"bound of another type", "self.ports.all(p, p.port <= 6553)", "self.ports.all(p, p.port <= 65535.0)", Undecided, ""},
		{"bound under a negation", "!(size(self.list) > 8)", "!(size(self.list) > 16)", Undecided, ""},
		{"list loses a member", "self.name in ['Gateway', 'ListenerSet', 'HTTPRoute']", "self.name in ['Gateway', 'HTTPRoute']", Undecided, ""},
		{"list gains a member that can err", "self.name in ['Gateway']", "self.name in ['Gateway', self.list[0]]", Undecided, ""},
		{"list of another term", "self.name in ['Gateway']", "self.opt in ['Gateway', 'B']", Undecided, ""},
		{"equality not in the list", "self.name == 'Gateway'", "self.name in ['ListenerSet']", Undecided, ""},
		{"regex narrowed", "self.name.matches('^(rbd|cephfs|nfs|nvmeof)$')", "self.name.matches('^(rbd|cephfs|nfs)$')", Undecided, ""},
		{"regex anchor added", "self.name.matches('a')", "self.name.matches('^a')", Undecided, ""},
		{"regex of another string", "self.name.matches('a')", "self.opt.matches('a|b')", Undecided, ""},

		{"list written as exists() loses a member", "self.name in ['Gateway', 'HTTPRoute']", "['Gateway', 'ListenerSet'].exists(k, k == self.name)", Undecided, ""},
		{"list written as fewer equalities", "self.name in ['A', 'B']", "self.name == 'A' || self.name == 'C'", Undecided, ""},
		{"list gains a member with a check of one it had", "self.name in ['A', 'B']", "self.name in ['A', 'B', 'C'] && (self.name != 'B' || size(self.list) > 0)", Undecided, ""},
		{"exists() over a list that is not a literal", "self.name in ['A']", "self.tags.exists(k, k == self.name)", Undecided, ""},
		{"filtered by a field that may be absent", "self.ports.all(p, has(p.port))", "self.ports.filter(p, p.port > 1).all(p, has(p.port))", Undecided, ""},
		{"filtered, checked harder", "self.ports.all(p, has(p.port))", "self.ports.filter(p, p.name != 'x').all(p, has(p.port) && p.port > 1)", Undecided, ""},
		{"filtered, the old check false under the filter", "self.ports.all(p, p.name == 'a' || has(p.port))", "self.ports.filter(p, p.name != 'b').all(p, has(p.port))", Undecided, ""},
		{"filtered another list", "self.ports.all(p, has(p.port))", "self.backends.filter(p, p.name != 'x').all(p, has(p.port))", Undecided, ""},
		{"filtered by a time compared with a string", "self.events.all(e, has(e.note))", "self.events.filter(e, e.at != 'x').all(e, has(e.note))", Undecided, ""},
		{"compared with a literal of another type", "self.ports.all(p, has(p.port))", "self.ports.filter(p, p.name != 1).all(p, has(p.port))", Undecided, ""},

		{"disjunct removed", "size(self.list) > 0 || size(self.name) > 0", "size(self.list) > 0", Undecided, ""},
		{"optional field may be absent", "size(self.list) > 0", "size(self.list) > 0 && self.opt != 'C'", Undecided, ""},
		{"new field with a default", "", "!has(self.defaulted) || self.defaulted == 'y'", Undecided, ""},
		{"unknown fields kept", "", "!has(self.free.x)", Undecided, ""},
		{"nullable field", "", "self.nul != 'Z'", Undecided, ""},
		{"other condition", "self.mode == 'A' ? size(self.list) > 0 : true", "self.mode == 'B' ? size(self.list) > 0 : true", Undecided, ""},
		{"exists_one is not monotone", "self.list.exists_one(x, x == 'a')", "self.list.exists_one(x, x == 'a' || x == 'b')", Undecided, ""},
		{"transition rule, a value the old enum allows", "self.mode == oldSelf.mode", "self.mode == oldSelf.mode || self.mode == 'A'", Undecided, ""},
		{"transition guard on an optional field", "", "!has(oldSelf.opt) || has(self.opt)", Undecided, ""},
		{"guard on a new field defaulted to true", "", "!has(self.tls) || !(has(self.tls.autoOn) && self.tls.autoOn) || !has(self.tls.sni)", Undecided, ""},
		{"guard to the right", "", "!(has(self.tls.autoSNI) && self.tls.autoSNI) || !has(self.tls)", Undecided, ""},
		{"no guard", "", "!(has(self.tls.autoSNI) && self.tls.autoSNI)", Undecided, ""},
		{"items of a list of any type", "", "self.plain.all(x, self.plain.exists_one(y, y == x))", Undecided, ""},
		{"items of a set-type list of numbers", "", "self.numbers.all(x, self.numbers.exists_one(y, y == x))", Undecided, ""},
		{"items of another set-type list", "", "self.tags.all(x, self.list.exists_one(y, y == x))", Undecided, ""},
		{"item compared with itself", "", "self.tags.all(x, self.tags.exists_one(y, x == x))", Undecided, ""},
		{"exists instead of exists_one", "", "self.tags.all(x, self.tags.exists_one(y, y != x))", Undecided, ""},
		{"no item of a plain list repeated", "", "size(self.plain.filter(i, size(self.plain.filter(j, j == i)) > 1)) == 0", Undecided, ""},
		{"an item of a set-type list repeated", "", "size(self.tags.filter(i, size(self.tags.filter(j, j == i)) > 0)) == 0", Undecided, ""},
		{"items of a set-type list counted with inequality", "", "size(self.tags.filter(i, size(self.tags.filter(j, j != i)) > 1)) == 0", Undecided, ""},
		{"guard of another field", "", "!has(self.name) || !(has(self.tls.autoSNI) && self.tls.autoSNI)", Undecided, ""},
		{"guarded in the other branch", "", "has(self.tls) ? true : !has(self.tls.autoSNI)", Undecided, ""},
		{"one of two keys", "", "self.routes.all(a, self.routes.exists_one(b, a.host == b.host))", Undecided, ""},
		{"two keys of two items", "", "self.routes.all(a, self.routes.all(c, self.routes.exists_one(b, a.host == b.host && c.path == b.path)))", Undecided, ""},
		{"one key twice", "", "self.routes.all(a, self.routes.exists_one(b, a.host == b.host && b.host == a.host))", Undecided, ""},
		{"counted, not the key", "", "self.ports.all(a, size(self.ports.filter(b, b.port == a.port)) == 1)", Undecided, ""},
		{"counted in another list", "", "self.ports.all(a, size(self.backends.filter(b, b.name == a.name)) == 1)", Undecided, ""},
		{"not the key", "", "self.ports.all(a, self.ports.exists_one(b, a.port == b.port))", Undecided, ""},
		{"not equality of keys", "", "self.ports.all(a, self.ports.exists_one(b, a.name != b.name))", Undecided, ""},
		{"item of another list", "", "self.backends.all(a, self.ports.exists_one(b, a.name == b.name))", Undecided, ""},
		{"key compared with itself", "", "self.ports.all(a, self.ports.exists_one(b, a.name == a.name))", Undecided, ""},
		{"all() of true over an optional list", "", "self.list.all(x, true)", Undecided, ""},
		{"guard nothing reads", "self.mode == 'A'", "has(self.name) && self.mode == 'A'", Undecided, ""},
		{"guarded condition, else false", "self.mode == 'A' ? size(self.list) > 0 : false", "self.mode == 'A' && has(self.name) ? size(self.list) > 0 : false", Undecided, ""},
		{"guard that can err", "self.mode == 'A' ? size(self.list) > 0 : true", "self.mode == 'A' && has(self.free.x) ? size(self.list) > 0 : true", Undecided, ""},
		{"guard in exists_one() nothing reads", "self.ports.exists_one(b, b.name == 'x')", "self.ports.exists_one(b, has(b.port) && b.name == 'x')", Undecided, ""},
		{"guard before an optional read", "self.?name.orValue('') == 'x'", "has(self.name) && self.?name.orValue('') == 'x'", Undecided, ""},
		{"sum over the old bounds", "", "(self.slots.size() > 0 ? self.slots[0].items.size() : 0) + (self.slots.size() > 1 ? self.slots[1].items.size() : 0) <= 5", Undecided, ""},
		{"index without a size guard", "", "self.slots[1].items.size() <= 3", Undecided, ""},
		{"index past its guard", "", "(self.slots.size() > 0 ? self.slots[1].items.size() : 0) <= 3", Undecided, ""},
		{"optional list read without has()", "", "(self.slots.size() > 0 ? self.slots[0].extra.size() : 0) <= 3", Undecided, ""},
		{"optional list within bounds", "", "self.spare.size() <= 2", Undecided, ""},
		{"shadowed variable", "self.list.all(self, self == 'a')", "self.list.all(self, self.mode != 'C')", Undecided, ""},
		{"conjunction with a bound it may meet", "", "!(self.slots.size() > 1 && self.name == 'x')", Undecided, ""},
		{"disjunction with a bound it may break", "", "self.slots.size() <= 1 || self.name == 'x'", Undecided, ""},
		{"string beyond its minLength", "", "!has(self.short) || size(self.short) > 1", Undecided, ""},
		{"guard that may fail", "", "!has(self.tls.sni) || size(self.tls.sni) > 0", Undecided, ""},
		{"conjunction false by the bound of an optional list", "", "!(self.spare.size() > 2 && self.name == 'x')", Undecided, ""},
		{"disjunction true by the bound of an optional list", "", "self.spare.size() <= 2 || self.name == 'x'", Undecided, ""},
		{"matches narrower than the old pattern", "", `!has(self.host) || self.host.matches('^[a-z0-9]+$')`, Undecided, ""},
		{"matches where the old pattern allows a star", "", `!has(self.host) || self.host.matches('^[a-z0-9]+(\\.[a-z0-9]+)*$')`, Undecided, ""},
		{"matches where the old pattern allows no other character", "", `!has(self.host) || (!self.host.contains('-') ? self.host.matches('^[a-z0-9]+(\\.[a-z0-9]+)*$') : true)`, Undecided, ""},
		{"past the prefix, narrower", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(2).matches('^[a-z]+(\\.[a-z0-9]+)*$')) : true)`, Undecided, ""},
		{"past a shorter prefix than the one tested", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(1).matches('^[a-z0-9]+(\\.[a-z0-9]+)*$')) : true)`, Undecided, ""},
		{"past the prefix, an anchor inside", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(2).matches('^[a-z0-9]+$|^[a-z0-9]+\\.')) : true)`, Undecided, ""},
		{"past the prefix, a word boundary inside", "", `!has(self.host) || (self.host.startsWith('ab') ? (self.host.startsWith('a') && self.host.substring(1).matches('\\B')) : true)`, Undecided, ""},
		{"past a prefix another string starts with", "", `!has(self.host) || (self.host.contains('*') ? (self.host.substring(2).matches('^[a-z0-9]+(\\.[a-z0-9]+)*$') && self.name.startsWith('*.')) : true)`, Undecided, ""},
		{"starts with under another condition", "", `!has(self.host) || (self.host.contains('.') ? self.host.startsWith('*.') : true)`, Undecided, ""},
		{"past the prefix, unanchored, narrower", "", `!has(self.host) || (self.host.contains('*') ? (self.host.startsWith('*.') && self.host.substring(2).matches('[a-z]')) : true)`, Undecided, ""},
		{"both or neither, rewritten as differ", "self.ports.all(a, self.ports.all(b, ((!has(a.port) || a.port == 0) && (!has(b.port) || b.port == 0)) || (has(a.port) && a.port != 0 && has(b.port) && b.port != 0)))",
			"self.ports.all(a, self.ports.all(b, (!has(a.port) || a.port == 0) != (!has(b.port) || b.port == 0)))", Undecided, ""},
		{"both or neither, narrowed to neither", "self.ports.all(a, self.ports.all(b, ((!has(a.port) || a.port == 0) && (!has(b.port) || b.port == 0)) || (has(a.port) && a.port != 0 && has(b.port) && b.port != 0)))",
			"self.ports.all(a, self.ports.all(b, (!has(a.port) || a.port == 0) && (!has(b.port) || b.port == 0)))", Undecided, ""},
		{"exactly one match, the item itself no longer matches", "self.ports.all(a, self.ports.exists_one(b, a.name == b.name && (has(a.port) && has(b.port) ? a.port == b.port : true)))",
			"self.ports.all(a, self.ports.exists_one(b, a.name == b.name && (has(a.port) && has(b.port) ? a.port == b.port : has(a.port) && has(b.port))))", Undecided, ""},
		{"exactly one match, more matches", "self.ports.all(a, self.ports.exists_one(b, a.name == b.name && (has(a.port) && has(b.port) ? a.port == b.port : true)))",
			"self.ports.all(a, self.ports.exists_one(b, a.name == b.name || (has(a.port) && has(b.port) ? a.port == b.port : true)))", Undecided, ""},
		{"exactly one match in another list", "self.ports.all(a, self.backends.exists_one(b, a.name == b.name && (has(a.port) && has(b.name) ? a.port == 1 : true)))",
			"self.ports.all(a, self.backends.exists_one(b, a.name == b.name && (has(a.port) && has(b.name) ? a.port == 1 : !has(a.port))))", Undecided, ""},
		{"exactly one match, the item compared with itself", "self.ports.all(a, self.ports.exists_one(b, a.port == b.port && (has(a.name) ? true : true)))",
			"self.ports.all(a, self.ports.exists_one(b, a.port == b.port && b.name != 'x'))", Undecided, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j.parsed = map[string]*celast.AST{}
			node := walk(j.oldRoot, spec) // a copy: the rules set here stay in this case
			node.XValidations = nil
			c := Change{Steps: spec, After: apiextv1.ValidationRule{Rule: tc.after}}
			if tc.before != "" {
				c.Before = &apiextv1.ValidationRule{Rule: tc.before}
				node.XValidations = append(node.XValidations, *c.Before)
			}
			if tc.oldRule != "" {
				node.XValidations = append(node.XValidations, apiextv1.ValidationRule{Rule: tc.oldRule})
			}
			got, because := j.proveByText(node, walk(j.newRoot, spec), c)
			if got != tc.want {
				t.Errorf("%q → %q: %v (because %q), want %v", tc.before, tc.after, got, because, tc.want)
			}
		})
	}
}

// TestProveByTextOptionalOldSelf: with optionalOldSelf a rule also runs on creates, where oldSelf
// is an optional value the prover does not model, so it proves nothing.
func TestProveByTextOptionalOldSelf(t *testing.T) {
	o, n := loadCRD(t, "testdata/prover/old.yaml"), loadCRD(t, "testdata/prover/new.yaml")
	j := NewJudge(o, n, "v1")
	yes := true
	c := Change{Steps: spec, After: apiextv1.ValidationRule{Rule: "!has(oldSelf.extra) || has(self.extra)", OptionalOldSelf: &yes}}
	node := walk(j.oldRoot, spec)
	if got, because := j.proveByText(node, walk(j.newRoot, spec), c); got != Undecided {
		t.Errorf("%v (because %q), want undecided", got, because)
	}
}

// TestTruthTables checks the three-valued tables the prover decides rewrites with, on atoms
// that may each be true, false or an error.
func TestTruthTables(t *testing.T) {
	x := &term{kind: "select", name: "x", args: []*term{{kind: "ident", name: "self"}}}
	y := &term{kind: "select", name: "y", args: []*term{{kind: "ident", name: "self"}}}
	and := func(a, b *term) *term { return &term{kind: "call", name: "_&&_", args: []*term{a, b}} }
	or := func(a, b *term) *term { return &term{kind: "call", name: "_||_", args: []*term{a, b}} }
	not := func(a *term) *term { return &term{kind: "call", name: "!_", args: []*term{a}} }
	for _, tc := range []struct {
		name string
		got  func(p *prover) bool
		want bool
	}{
		{"x && y implies x", func(p *prover) bool { return p.tableImplies(and(x, y), x) }, true},
		{"x does not imply x && y", func(p *prover) bool { return p.tableImplies(x, and(x, y)) }, false},
		{"x implies x || y, y erring", func(p *prover) bool { return p.tableImplies(x, or(x, y)) }, true},
		{"!!x is x", func(p *prover) bool { return p.tableImplies(x, not(not(x))) && p.tableImplies(not(not(x)), x) }, true},
		{"x || !x is not always true: x may err", func(p *prover) bool { return p.tableImplies(trueTerm, or(x, not(x))) }, false},
		{"x && y is narrower than x where y cannot err", func(p *prover) bool { return p.narrower(x, and(x, y)) }, false},
		{"x && y errs where x || y is true", func(p *prover) bool { return p.narrower(or(x, y), and(x, y)) }, false},
		{"x && !!x is as narrow as x", func(p *prover) bool { return p.narrower(x, and(x, not(not(x)))) }, true},
		{"x is not narrower than x && y", func(p *prover) bool { return p.narrower(and(x, y), x) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.got(&prover{seen: map[string]bool{}}); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
