package celproof

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/crdguard/crdguard/internal/regexlang"
)

// build makes the node's value (and, when a requirement names oldSelf, the stored value it
// replaces) that meets every requirement of a synthesized way, starting from the old node's
// smallest value; ok is false when the requirements conflict or ask for a value the old schema
// does not allow at that place.
func build(node *structuralschema.Structural, s sol, prefer []any) (obj, old any, ok bool) {
	obj = minimal(node)
	hasOld := false
	for _, w := range s {
		hasOld = hasOld || w.at.old || w.kind == wDiffer && w.to.old
	}
	if hasOld {
		old = minimal(node)
	}
	// Sizes first, so that items placed later keep the list's length; differences last, once
	// the value they differ from is set.
	for _, phase := range []func(want) bool{
		func(w want) bool { return w.kind == wSize },
		func(w want) bool { return w.kind != wSize && w.kind != wDiffer },
		func(w want) bool { return w.kind == wDiffer },
	} {
		for _, w := range s {
			if !phase(w) {
				continue
			}
			root := &obj
			if w.at.old {
				root = &old
			}
			var src any
			if w.kind == wDiffer {
				from := obj
				if w.to.old {
					from = old
				}
				var found bool
				if src, found = get(from, w.to.steps); !found {
					return nil, nil, false
				}
			}
			v, fine := apply(*root, node, w.at.steps, w, src, prefer)
			if !fine {
				return nil, nil, false
			}
			*root = v
		}
	}
	return unique(obj, node), unique(old, node), true
}

// apply meets one requirement at steps below cur (of schema sc) and returns the new value.
func apply(cur any, sc *structuralschema.Structural, steps []sstep, w want, src any, prefer []any) (any, bool) {
	if sc == nil {
		return nil, false
	}
	if len(steps) == 0 {
		return leaf(cur, sc, w, src, prefer)
	}
	st := steps[0]
	if st.item {
		if sc.Items == nil {
			return nil, false
		}
		l, _ := cur.([]any)
		for len(l) <= st.index {
			l = append(l, minimal(sc.Items))
		}
		l = append([]any(nil), l...)
		v, ok := apply(l[st.index], sc.Items, steps[1:], w, src, prefer)
		if !ok {
			return nil, false
		}
		l[st.index] = v
		return l, true
	}
	m, isMap := cur.(map[string]any)
	if !isMap {
		m = map[string]any{}
	}
	child, ok := sc.Properties[st.name]
	var cs *structuralschema.Structural
	switch {
	case ok:
		cs = &child
	case sc.AdditionalProperties != nil && sc.AdditionalProperties.Structural != nil:
		cs = sc.AdditionalProperties.Structural
	default:
		return nil, false
	}
	m = maps.Clone(m)
	prev, set := m[st.name]
	if len(steps) == 1 && w.kind == wAbsent {
		if sc.ValueValidation != nil && slices.Contains(sc.ValueValidation.Required, st.name) {
			return nil, false
		}
		delete(m, st.name)
		return m, true
	}
	if !set {
		if w.kind == wAbsent {
			return m, true // absent already, with everything below it
		}
		prev = minimal(cs)
	}
	v, ok := apply(prev, cs, steps[1:], w, src, prefer)
	if !ok {
		return nil, false
	}
	m[st.name] = v
	return m, true
}

// leaf meets a requirement on the value itself.
func leaf(cur any, sc *structuralschema.Structural, w want, src any, prefer []any) (any, bool) {
	switch w.kind {
	case wPresent, wAbsent:
		return cur, w.kind == wPresent
	case wEq:
		v := w.val
		if f, isFloat := v.(float64); isFloat && sc.Type == "integer" && f == float64(int64(f)) {
			v = int64(f)
		}
		return v, fits(sc, v)
	case wNeq:
		return otherThan(sc, w.vals, prefer)
	case wMatch:
		return matching(sc, w.val.(string), w.n == 1, w.where)
	case wDiffer:
		return otherThan(sc, []any{src}, nil)
	case wSize:
		switch sc.Type {
		case "string":
			v := strings.Repeat("a", w.n)
			if m := minimalString(sc); len([]rune(m)) == w.n {
				v = m
			}
			return v, fits(sc, v)
		case "array":
			l, _ := cur.([]any)
			l = append([]any(nil), l...)
			if len(l) > w.n {
				l = l[:w.n]
			}
			for len(l) < w.n {
				l = append(l, minimal(sc.Items))
			}
			return l, fits(sc, l)
		case "object":
			if sc.AdditionalProperties == nil || sc.AdditionalProperties.Structural == nil {
				return nil, false
			}
			m := map[string]any{}
			for i := range w.n {
				m[string(rune('a'+i%26))+strings.Repeat("a", i/26)] = minimal(sc.AdditionalProperties.Structural)
			}
			return m, fits(sc, m)
		}
	}
	return nil, false
}

// otherThan is a value the old schema allows at a node that is none of avoid: among prefer, the
// values the generator would try, or else a string its pattern matches (found by regexlang).
func otherThan(sc *structuralschema.Structural, avoid, prefer []any) (any, bool) {
	for _, c := range append(slices.Clip(prefer), alternatives(sc)...) {
		if !containsValue(avoid, c) && fits(sc, c) {
			return c, true
		}
	}
	if sc.Type == "object" && len(avoid) > 0 {
		return otherObject(sc, avoid)
	}
	vv := sc.ValueValidation
	if sc.Type != "string" || vv == nil || vv.Pattern == "" {
		return nil, false
	}
	var quoted []string
	for _, a := range avoid {
		if s, ok := a.(string); ok {
			quoted = append(quoted, regexp.QuoteMeta(s))
		}
	}
	b := regexlang.Bounds{Max: -1}
	if vv.MinLength != nil {
		b.Min = int(*vv.MinLength)
	}
	if vv.MaxLength != nil {
		b.Max = int(*vv.MaxLength)
	}
	// The strings the pattern matches that are not one of avoid.
	res := regexlang.Includes(vv.Pattern, "^(?:"+strings.Join(quoted, "|")+")$", b)
	for _, c := range res.Examples {
		if fits(sc, c) {
			return c, true
		}
	}
	return nil, false
}

// otherObject is an object the old schema allows that differs from the first of avoid in one
// property (changed, or set where it was not, to a value other than what defaulting would give
// it), and is none of avoid: `self == oldSelf` on an object (a cluster reference whose name
// defaults to ”) is refuted by an update that changes one of its fields.
func otherObject(sc *structuralschema.Structural, avoid []any) (any, bool) {
	base, _ := avoid[0].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(sc.Properties)) {
		p := sc.Properties[name]
		cur, set := base[name]
		if !set {
			cur = p.Default.Object
			if cur == nil {
				cur = minimal(&p)
			}
		}
		v, ok := otherThan(&p, []any{cur}, nil)
		if !ok {
			continue
		}
		out := maps.Clone(base)
		if out == nil {
			out = map[string]any{}
		}
		out[name] = v
		if !containsValue(avoid, out) && fits(sc, out) {
			return out, true
		}
	}
	return nil, false
}

// matching is a string the node's pattern and lengths allow that re matches (or, not match,
// does not), among those every pattern of where matches, found by regexlang.
func matching(sc *structuralschema.Structural, re string, match bool, where []string) (any, bool) {
	if sc.Type != "string" {
		return nil, false
	}
	pattern, b := "", regexlang.Bounds{Max: -1}
	if vv := sc.ValueValidation; vv != nil {
		pattern = vv.Pattern
		if vv.MinLength != nil {
			b.Min = int(*vv.MinLength)
		}
		if vv.MaxLength != nil {
			b.Max = int(*vv.MaxLength)
		}
	}
	var res regexlang.Result
	switch {
	case match && pattern != "":
		res = regexlang.IncludesWhere(re, append([]string{pattern}, where...), nothing, b)
	case match:
		res = regexlang.IncludesWhere(re, where, nothing, b)
	default:
		res = regexlang.IncludesWhere(pattern, where, re, b) // "" matches every string
	}
	for _, c := range res.Examples {
		if fits(sc, c) {
			return c, true
		}
	}
	return nil, false
}

// nothing is a regular expression that matches no string.
const nothing = "[^\\x00-\\x{10FFFF}]"

// alternatives are the values worth trying at a place, as the generator lists them.
func alternatives(sc *structuralschema.Structural) []any {
	g := &gen{limit: 64}
	switch {
	case sc.ValueValidation != nil && len(sc.ValueValidation.Enum) > 0:
		var out []any
		for _, e := range sc.ValueValidation.Enum {
			out = append(out, deepCopy(e.Object))
		}
		return out
	case sc.Type == "string":
		return stringsOf(append(g.strs(sc), "b", "x-1"))
	case sc.Type == "integer":
		return g.ints(sc)
	case sc.Type == "number":
		return g.numbers(sc)
	case sc.Type == "boolean":
		return []any{true, false}
	}
	return nil
}

// fits reports whether the old schema allows v at a node, as far as its enum, pattern, lengths,
// bounds and sizes say (the validator decides the rest).
func fits(sc *structuralschema.Structural, v any) bool {
	if !typed(sc, v) {
		return false
	}
	vv := sc.ValueValidation
	if vv == nil {
		return true
	}
	if len(vv.Enum) > 0 {
		found := false
		for _, e := range vv.Enum {
			found = found || reflect.DeepEqual(normalize(deepCopy(e.Object)), normalize(deepCopy(v)))
		}
		if !found {
			return false
		}
	}
	switch x := v.(type) {
	case string:
		n := int64(len([]rune(x)))
		if vv.MinLength != nil && n < *vv.MinLength || vv.MaxLength != nil && n > *vv.MaxLength {
			return false
		}
		if vv.Pattern != "" {
			re, err := regexp.Compile(vv.Pattern)
			if err != nil || !re.MatchString(x) {
				return false
			}
		}
	case int64:
		return inBounds(sc, float64(x))
	case float64:
		return inBounds(sc, x)
	case []any:
		n := int64(len(x))
		return (vv.MinItems == nil || n >= *vv.MinItems) && (vv.MaxItems == nil || n <= *vv.MaxItems)
	case map[string]any:
		n := int64(len(x))
		return (vv.MinProperties == nil || n >= *vv.MinProperties) && (vv.MaxProperties == nil || n <= *vv.MaxProperties)
	}
	return true
}

// typed reports whether v is of the node's type.
func typed(sc *structuralschema.Structural, v any) bool {
	switch v.(type) {
	case string:
		return sc.Type == "string" || sc.XIntOrString
	case int64:
		return sc.Type == "integer" || sc.Type == "number" || sc.XIntOrString
	case float64:
		return sc.Type == "number"
	case bool:
		return sc.Type == "boolean"
	case []any:
		return sc.Type == "array"
	case map[string]any:
		return sc.Type == "object"
	}
	return sc.Type == ""
}

// unique makes the lists of a built value ones the old schema can hold: distinct keys in a
// map-type list, distinct items in a set (see keyed). A value that cannot be made so is kept
// as built; the validator refuses it.
func unique(v any, sc *structuralschema.Structural) any {
	if sc == nil || v == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p, ok := sc.Properties[k]; ok {
				x[k] = unique(e, &p)
			} else if sc.AdditionalProperties != nil && sc.AdditionalProperties.Structural != nil {
				x[k] = unique(e, sc.AdditionalProperties.Structural)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = unique(e, sc.Items)
		}
		if sc.XListType != nil && *sc.XListType == "set" && sc.Items != nil {
			for i := range x {
				if slices.ContainsFunc(x[:i], func(y any) bool { return reflect.DeepEqual(x[i], y) }) {
					if o, ok := otherThan(sc.Items, x[:i], nil); ok {
						x[i] = o
					}
				}
			}
		}
		keyed(sc, x)
	}
	return v
}

// get is the value at steps, if set.
func get(v any, steps []sstep) (any, bool) {
	for _, st := range steps {
		switch x := v.(type) {
		case map[string]any:
			if st.item {
				return nil, false
			}
			var ok bool
			if v, ok = x[st.name]; !ok {
				return nil, false
			}
		case []any:
			if !st.item || st.index >= len(x) {
				return nil, false
			}
			v = x[st.index]
		default:
			return nil, false
		}
	}
	return v, true
}

func containsValue(l []any, v any) bool {
	for _, x := range l {
		if reflect.DeepEqual(normalize(deepCopy(x)), normalize(deepCopy(v))) {
			return true
		}
	}
	return false
}
