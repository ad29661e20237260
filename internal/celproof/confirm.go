package celproof

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/validation"
)

// confirm embeds a node value in a whole object and asks the API server's validator: accepted by
// the old version, rejected by the new one at this node. For an update (old not nil) both values
// are embedded alike and the update is judged, with ratcheting as the server applies it. It
// returns the object (and the stored object of an update) when both hold.
func (j *Judge) confirm(steps []Step, rule apiextv1.ValidationRule, v, old any, read *refNode) (obj, stored map[string]any) {
	obj = j.object(steps, v)
	if old == nil {
		if !j.confirmCreate(steps, obj, read) {
			return nil, nil
		}
		return j.asNamed(obj), nil
	}
	stored = j.object(steps, old)
	// The validators leave out the rules of nodes neither object reaches: they never run.
	var sides [2]*validation.Schema
	for i, ver := range j.versions {
		var err error
		if sides[i], err = ver.Reaching(mergeObjects(obj, stored)); err != nil {
			return nil, nil
		}
	}
	if sides[0].Create(stored).Errors != nil || sides[0].Update(obj, stored) != nil {
		return nil, nil
	}
	for _, e := range sides[1].Update(obj, stored) {
		if isRuleError(e, steps, rule) {
			return j.asNamed(obj), j.asNamed(stored)
		}
	}
	return nil, nil
}

// asNamed gives a witness the apiVersion of the version the example is written for (the one
// validated may be another version with the same schemas).
func (j *Judge) asNamed(obj map[string]any) map[string]any {
	obj["apiVersion"] = j.old.Object.Spec.Group + "/" + j.named
	return obj
}

// isRuleError reports whether a validation error is the one the rule raises: at the rule's node
// (or its fieldPath), with the rule's message, or the server's "failed rule: …" when it has none
// (a messageExpression's text cannot be known in advance), or the server's report of its
// evaluation failing. Another error there, such as a bound
// the same change tightened, does not show that the rule rejects the object.
func isRuleError(e *field.Error, steps []Step, rule apiextv1.ValidationRule) bool {
	at := fieldPath(steps)
	if fp := strings.TrimSpace(rule.FieldPath); fp != "" {
		at = strings.TrimPrefix(at+fp, ".")
	}
	if e.Field != at && !(at == "" && e.Field == "<nil>") {
		return false
	}
	ruleText := strings.TrimSpace(rule.Rule)
	if m := strings.TrimSpace(rule.Message); m != "" {
		ruleText = m
	}
	// A rule that errs (no such key, index out of bounds) refuses the object as surely as one
	// that is false; the server says so with the error before the rule's message or text.
	if e.Type == field.ErrorTypeInvalid && strings.HasSuffix(e.Detail, " evaluating rule: "+ruleText) {
		return true
	}
	switch {
	case rule.MessageExpression != "":
		return e.Type == field.ErrorTypeInvalid || e.Type == field.ErrorTypeForbidden || e.Type == field.ErrorTypeRequired || e.Type == field.ErrorTypeDuplicate
	case strings.TrimSpace(rule.Message) != "":
		return e.Detail == strings.TrimSpace(rule.Message)
	}
	return e.Detail == "failed rule: "+strings.TrimSpace(rule.Rule)
}

// confirmCreate asks the API server's validators whether the old version accepts creating obj
// and the new one refuses it because of a rule at the node. The object goes through the server's
// create path without CEL (pruning, defaulting, OpenAPI, metadata, list and embedded checks),
// then the CEL validator of every schema node the object reaches runs on that node's value, as
// the server's recursive CEL validator does — with each node's rules compiled once per run
// instead of the whole CRD's for every object.
func (j *Judge) confirmCreate(steps []Step, obj map[string]any, read *refNode) bool {
	var sides [2]*validation.Schema
	for i, ver := range j.versions {
		var err error
		if sides[i], err = ver.WithoutCEL(); err != nil {
			return false
		}
	}
	for round := 0; ; round++ {
		before := sides[0].Create(obj)
		if before.Errors != nil {
			return false
		}
		if f := j.celFailure("old", j.oldRoot, before.Object, ".", nil, true, ""); f != nil {
			// Another node's old rules refuse the object: make it one they accept, if the
			// witness's rules cannot tell.
			if round == maxRepairs || !j.repairRule(obj, steps, read, f) {
				return false
			}
			continue
		}
		after := sides[1].Create(obj)
		if after.Errors == nil {
			return j.celFails("new", j.newRoot, after.Object, ".", true, fieldPath(steps))
		}
		// The server skips CEL rules when the OpenAPI schema refuses the object; a tightening
		// elsewhere in the same change must not hide the rule's witness.
		if round == maxRepairs || !j.repair(obj, steps, read, after.Errors) {
			return false
		}
	}
}

// maxRepairs bounds the rounds of repair for one witness (each fixes every refused value it can).
const maxRepairs = 3

// repair replaces in obj every value the new version's OpenAPI validation refuses that the
// rules do not read (read is what they read of the node steps lead to) with the new schema's
// minimal value there: the rules' outcome cannot change, since they never see those values. A
// value they read that is refused for its format is renamed (see rename). Both versions are
// asked again. It reports whether anything changed.
func (j *Judge) repair(obj map[string]any, steps []Step, read *refNode, errs field.ErrorList) bool {
	changed := false
	for _, e := range errs {
		p := crd.FieldPath(e.Field)
		if len(p) == 0 || p[0] == "metadata" || p[0] == "apiVersion" || p[0] == "kind" {
			continue
		}
		if !reads(read, steps, p) {
			changed = setMinimal(obj, j.newRoot, p) || changed
		} else if m := formatRE.FindStringSubmatch(e.Detail); m != nil && formatSamples[m[1]] != "" {
			changed = rename(obj, p, formatSamples[m[1]]) || changed
		}
	}
	return changed
}

// formatRE finds the format the new schema wants in an OpenAPI error.
var formatRE = regexp.MustCompile(`must be of type ([a-z0-9-]+)`)

// rename replaces a string the rules read, which the new schema refuses for its format, with a
// sample of that format — everywhere the same string stands at the same place in the object's
// lists (addresses[0].value and addresses[1].value alike), so that the comparisons the rules make
// between them come out as before. Both versions then judge the object anew.
func rename(obj map[string]any, p crd.Path, to string) bool {
	from, ok := valueAt(obj, p).(string)
	if !ok || from == to {
		return false
	}
	changed := false
	var walk func(x any, at crd.Path)
	// visit renames the child c at key k (set replaces it), or looks inside it.
	visit := func(at crd.Path, k, c any, set func()) {
		if s, ok := c.(string); ok && s == from && sameShape(append(at, k), p) {
			set()
			changed = true
		} else {
			walk(c, append(at, k))
		}
	}
	walk = func(x any, at crd.Path) {
		switch v := x.(type) {
		case map[string]any:
			for k, c := range v {
				visit(at, k, c, func() { v[k] = to })
			}
		case []any:
			for i, c := range v {
				visit(at, i, c, func() { v[i] = to })
			}
		}
	}
	walk(obj, nil)
	return changed
}

// sameShape reports whether two paths lead to the same schema node: equal but for list indexes.
func sameShape(a, b crd.Path) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		_, ai := a[i].(int)
		_, bi := b[i].(int)
		if ai != bi || !ai && a[i] != b[i] {
			return false
		}
	}
	return true
}

// reads reports whether the value at p (an API server field path) is, or contains, or lies
// inside something the rules at the node steps lead to read — or is an ancestor of that node.
func reads(read *refNode, steps []Step, p crd.Path) bool {
	switch where, rest := locate(steps, p); where {
	case besideNode:
		return false
	case aboveNode:
		return true // replacing it would drop the candidate
	default:
		r, whole := follow(read, rest)
		return whole || r != nil
	}
}

// Where a path lies against the node a witness is about.
const (
	besideNode = iota
	aboveNode  // a strict ancestor of the node
	inNode     // the node itself or below it
)

// locate places p (an API server field path) against the node steps lead to; rest is the part
// of p below the node.
func locate(steps []Step, p crd.Path) (where int, rest crd.Path) {
	for i, st := range steps {
		if i == len(p) {
			return aboveNode, nil
		}
		if _, isIndex := p[i].(int); st.Kind == Property && p[i] != st.Name || st.Kind == Items && !isIndex {
			return besideNode, nil
		}
	}
	return inNode, p[len(steps):]
}

// follow walks what the rules read of the node (read) along rest: r is what they read of the
// value there (nil: nothing), whole whether a value on the way down is used whole.
func follow(read *refNode, rest crd.Path) (r *refNode, whole bool) {
	r = read
	for _, seg := range rest {
		if r == nil {
			return nil, whole
		}
		whole = whole || r.value
		if name, ok := seg.(string); ok && r.fields[name] != nil {
			r = r.fields[name]
		} else {
			r = r.elem
		}
	}
	return r, whole
}

// setMinimal puts the minimal value of the schema at p in place of obj's value there.
func setMinimal(obj map[string]any, s *structuralschema.Structural, p crd.Path) bool {
	return setAt(obj, s, p, minimal)
}

// setAt replaces obj's value at p with value(the schema of p), walking s alongside.
func setAt(obj map[string]any, s *structuralschema.Structural, p crd.Path, value func(*structuralschema.Structural) any) bool {
	var cur any = obj
	for i, seg := range p {
		if s == nil {
			return false
		}
		var next *structuralschema.Structural
		switch k := seg.(type) {
		case string:
			if prop, ok := s.Properties[k]; ok {
				next = &prop
			} else if s.AdditionalProperties != nil {
				next = s.AdditionalProperties.Structural
			}
			m, ok := cur.(map[string]any)
			if !ok || next == nil {
				return false
			}
			if i == len(p)-1 {
				m[k] = value(next)
				return true
			}
			cur = m[k]
		case int:
			next = s.Items
			l, ok := cur.([]any)
			if !ok || next == nil || k < 0 || k >= len(l) {
				return false
			}
			if i == len(p)-1 {
				l[k] = value(next)
				return true
			}
			cur = l[k]
		}
		s = next
	}
	return false
}

// celFails reports whether a rule fails at a node the value x reaches (at the node at target,
// when target is not empty: the node a witness is about). at is the node's API server path.
func (j *Judge) celFails(side string, s *structuralschema.Structural, x any, at string, isRoot bool, target string) bool {
	return j.celFailure(side, s, x, at, nil, isRoot, target) != nil
}

// failure is a node whose rules refuse its value: where the value is in the object (p), and the
// node's schema and program key.
type failure struct {
	p      crd.Path
	s      *structuralschema.Structural
	key    string
	isRoot bool
	// broken: a rule could not be evaluated at all; no value helps.
	broken bool
}

// celFailure is the first node, in a fixed order, where a rule fails for the value x (see
// celFails); p is where x is in the object.
func (j *Judge) celFailure(side string, s *structuralschema.Structural, x any, at string, p crd.Path, isRoot bool, target string) *failure {
	if s == nil || x == nil {
		return nil
	}
	return j.celFailureAt(side, *s, s, x, at, p, isRoot, target)
}

// celFailureAt is celFailure with the node passed by value, and by address (node) where the schema
// holds it so (items, map values; nil for a property): a property taken by address from the map
// in this recursive walk would be copied to the heap for every field of every witness; only a
// property with rules is (for its program and the failure).
func (j *Judge) celFailureAt(side string, s structuralschema.Structural, node *structuralschema.Structural, x any, at string, p crd.Path, isRoot bool, target string) *failure {
	key := strings.TrimPrefix(at, ".")
	if len(s.XValidations) > 0 && (target == "" || key == target) {
		root := isRoot || s.XEmbeddedResource
		if node == nil {
			node = new(structuralschema.Structural)
			*node = s
		}
		failed, ok := j.program(side+":"+key, node, root, -1).eval(x, nil)
		if !ok || slices.Contains(failed, true) {
			return &failure{p: slices.Clone(p), s: node, key: key, isRoot: root, broken: !ok}
		}
	}
	switch v := x.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			child := at + "." + k
			if at == "." {
				child = "." + k
			}
			if ps, ok := s.Properties[k]; ok {
				if v[k] == nil {
					continue
				}
				if f := j.celFailureAt(side, ps, nil, v[k], child, append(p, k), ps.XEmbeddedResource, target); f != nil {
					return f
				}
			} else if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
				if f := j.celFailure(side, ap.Structural, v[k], at+"[a]", append(p, k), ap.Structural.XEmbeddedResource, target); f != nil {
					return f
				}
			}
		}
	case []any:
		for i, e := range v {
			if s.Items != nil {
				if f := j.celFailure(side, s.Items, e, at+"[0]", append(p, i), s.Items.XEmbeddedResource, target); f != nil {
					return f
				}
			}
		}
	}
	return nil
}

// repairRule replaces the value at a node whose old rules refuse it — a node other than the
// witness's — with one they accept that keeps the fields the witness's rules select there: two
// CORS filters make a witness only once each carries the cors block its own rule demands. The
// replacements are the node's candidate values (its rules' data varied, the rest minimal), with
// those fields copied over. It reports whether a replacement was made; the caller validates the
// repaired object again, both versions, whole.
func (j *Judge) repairRule(obj map[string]any, steps []Step, read *refNode, f *failure) bool {
	if f.broken {
		return false
	}
	kept, ok := keptAt(read, steps, f.p)
	if !ok {
		return false
	}
	cur := valueAt(obj, f.p)
	memo := f.key
	if kept != nil {
		had, _ := cur.(map[string]any)
		for _, name := range kept.sortedFields() {
			if v, ok := had[name]; ok {
				b, _ := json.Marshal(v)
				memo += "\x00" + name + "=" + string(b)
			}
		}
	}
	found := remember(&j.mu, j.repairs, memo, func() any { return j.repairValue(f, kept, cur) })
	if found == nil {
		return false
	}
	return setAt(obj, j.oldRoot, f.p, func(*structuralschema.Structural) any { return copyValue(found) })
}

// repairValue finds a value for the failed node that its old rules accept, with the kept fields
// of cur; nil when none of the candidates tried is.
func (j *Judge) repairValue(f *failure, kept *refNode, cur any) any {
	g := &gen{limit: maxRepairCandidates, absentFirst: true}
	root, ok := j.readBy(f.s.XValidations, &g.consts)
	if !ok {
		return nil
	}
	prog := j.program("old:"+f.key, f.s, f.isRoot, -1)
	// One field changed at a time first (see singleChanges), then the usual product.
	single := g.singleChanges(root, f.s)
	for i, c := range append(single, g.values(root, f.s, false)...) {
		if i >= maxRepairCandidates+len(single) {
			break
		}
		if kept != nil {
			m, ok1 := c.(map[string]any)
			had, ok2 := cur.(map[string]any)
			if !ok1 || !ok2 {
				continue
			}
			for name := range kept.fields {
				if v, ok := had[name]; ok {
					m[name] = copyValue(v)
				} else {
					delete(m, name)
				}
			}
		}
		v := copyValue(c)
		structuraldefaulting.Default(v, f.s)
		if failed, ok := prog.eval(v, nil); ok && !slices.Contains(failed, true) {
			return c
		}
	}
	return nil
}

// maxRepairCandidates bounds the values tried for one repair: the first ones change the fewest
// of the node's fields, which is what a repair wants.
const maxRepairCandidates = 32

// keptAt is what a replacement of the value at p must keep of it: what the rules at the node
// steps lead to select there, or, above that node, the property on the way to it; nil when p is
// beside that node (they read none of it). ok is false when p is that node, or a list above it.
// Whether the rules' verdict survives (they may also use a value whole) is for the validators to
// say, which judge the repaired object anew.
func keptAt(read *refNode, steps []Step, p crd.Path) (kept *refNode, ok bool) {
	switch where, rest := locate(steps, p); {
	case where == besideNode:
		return nil, true
	case where == aboveNode:
		if st := steps[len(p)]; st.Kind == Property {
			return &refNode{fields: map[string]*refNode{st.Name: {value: true}}}, true
		}
		return nil, false
	case len(rest) == 0:
		return nil, false // the node itself
	default:
		r, _ := follow(read, rest)
		return r, true
	}
}

// valueAt is obj's value at p, or nil.
func valueAt(obj any, p crd.Path) any {
	for _, seg := range p {
		switch k := seg.(type) {
		case string:
			m, _ := obj.(map[string]any)
			obj = m[k]
		case int:
			l, _ := obj.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			obj = l[k]
		}
	}
	return obj
}

// mergeObjects is an object that reaches every field either of two objects sets.
func mergeObjects(a, b any) map[string]any {
	out := map[string]any{}
	for _, x := range []any{a, b} {
		m, _ := x.(map[string]any)
		for k, v := range m {
			if prev, ok := out[k]; ok {
				switch p := prev.(type) {
				case map[string]any:
					out[k] = mergeObjects(p, v)
				case []any:
					if l, ok := v.([]any); ok {
						out[k] = append(append([]any{}, p...), l...)
					}
				}
				continue
			}
			out[k] = v
		}
	}
	return out
}

// object is a whole resource of the old schema with v at the node.
func (j *Judge) object(steps []Step, v any) map[string]any {
	obj, _ := place(minimal(j.oldRoot), j.oldRoot, steps, copyValue(v)).(map[string]any)
	if obj == nil {
		obj = map[string]any{}
	}
	obj["apiVersion"] = j.old.Object.Spec.Group + "/" + j.version
	obj["kind"] = j.old.Object.Spec.Names.Kind
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil || len(steps) > 0 {
		meta = map[string]any{}
	}
	if _, ok := meta["name"]; !ok {
		meta["name"] = "example"
	}
	if j.old.Object.Spec.Scope == apiextv1.NamespaceScoped {
		meta["namespace"] = "default"
	}
	obj["metadata"] = meta
	return obj
}

// place puts v at the end of steps inside x (a value of schema s), creating what is missing with
// minimal values.
func place(x any, s *structuralschema.Structural, steps []Step, v any) any {
	if len(steps) == 0 {
		return v
	}
	st, rest := steps[0], steps[1:]
	switch st.Kind {
	case Property:
		m, _ := x.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		child := walk(s, steps[:1])
		cur, ok := m[st.Name]
		if !ok {
			cur = minimal(child)
		}
		m[st.Name] = place(cur, child, rest, v)
		return m
	case Items:
		l, _ := x.([]any)
		if len(l) == 0 {
			l = []any{minimal(s.Items)}
		}
		l[0] = place(l[0], s.Items, rest, v)
		return l
	default:
		child := walk(s, steps[:1])
		return map[string]any{"a": place(minimal(child), child, rest, v)}
	}
}

// fieldPath is the API server's field path of the node (spec.a[0].b, spec.m[a]).
func fieldPath(steps []Step) string {
	var b strings.Builder
	for _, st := range steps {
		switch st.Kind {
		case Property:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.Name)
		case Items:
			b.WriteString("[0]")
		case MapValues:
			b.WriteString("[a]")
		}
	}
	return b.String()
}
