package celproof

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// absent stands for a field the object does not set.
type absentT struct{}

var absent any = absentT{}

// gen builds the candidate values of the data a rule set reads, from the old schema. Where a
// value's domain is finite under the old schema (presence, booleans, enums, small integer ranges,
// fields the old schema does not have) every value is listed; elsewhere the list is a sample of
// boundary values, and infinite records that the enumeration proves nothing.
type gen struct {
	consts   constants
	limit    int
	infinite bool
	// truncated: some product of field values was cut at limit.
	truncated bool
	// resourceRoot is the node that is a whole resource (apiVersion, kind, metadata), if any.
	resourceRoot *structuralschema.Structural
	// absentFirst: optional fields are absent in the first candidate, for a repair that wants
	// the smallest value its rules accept.
	absentFirst bool
	// at is the path of the field being listed, below the node judged; pruned are the paths
	// of fields the rules read that the old schema does not have and prunes (no stored object
	// holds them); heldRead records that the rules read a value, or test the presence, of a
	// field the old schema has.
	at       []string
	pruned   map[string]bool
	heldRead bool
}

// within lists the candidates of a step below the current field (a property, or "[*]").
func (g *gen) within(step string, list func() []any) []any {
	g.at = append(g.at, step)
	defer func() { g.at = g.at[:len(g.at)-1] }()
	return list()
}

// field lists the candidates of a property: absent unless required, null when nullable, then its
// values. s is nil for a property the old schema does not have.
func (g *gen) field(r *refNode, s *structuralschema.Structural, required, preserve bool) []any {
	// Absence comes last (unless absentFirst): a witness that sets a field shows a rule's
	// verdict rather than the error of reading a missing field.
	var out []any
	switch {
	case s == nil && preserve: // a kept unknown field: any value may be stored
		g.infinite = true
		out = g.anyValues()
	case s != nil:
		out = g.values(r, s, preserve)
		if s.Nullable {
			out = append(out, nil)
		}
	default: // pruned: no stored object has it
		if g.pruned == nil {
			g.pruned = map[string]bool{}
		}
		g.pruned[strings.Join(g.at, "")] = true
	}
	if !required || s == nil {
		if g.absentFirst {
			return append([]any{absent}, out...)
		}
		out = append(out, absent)
	}
	return out
}

// values lists the candidates of a present value.
func (g *gen) values(r *refNode, s *structuralschema.Structural, preserve bool) []any {
	if r.value || r.elem == nil && len(r.fields) == 0 {
		g.heldRead = true
	}
	if !r.value && r.elem == nil && len(r.fields) == 0 {
		return []any{minimal(s)} // only its presence is read
	}
	if vv := s.ValueValidation; vv != nil && len(vv.Enum) > 0 {
		out := make([]any, 0, len(vv.Enum))
		for _, e := range vv.Enum {
			out = append(out, deepCopy(e.Object))
		}
		return out
	}
	preserve = preserve || s.XPreserveUnknownFields
	used := r.value || r.elem != nil
	switch {
	case s.XIntOrString:
		g.infinite = true
		return append(g.ints(s), stringsOf(g.strs(s))...)
	case s.Type == "boolean":
		return []any{true, false}
	case s.Type == "integer":
		if lo, hi, ok := intRange(s); ok && hi-lo <= 32 {
			out := make([]any, 0, hi-lo+1)
			for i := lo; i <= hi; i++ {
				out = append(out, i)
			}
			return out
		}
		g.infinite = true
		return g.ints(s)
	case s.Type == "number":
		g.infinite = true
		return g.numbers(s)
	case s.Type == "string":
		g.infinite = true
		return stringsOf(g.strs(s))
	case s.Type == "array":
		if !used && len(r.fields) == 0 {
			return []any{minimal(s)}
		}
		g.infinite = true
		return g.lists(r, s, preserve)
	case s.Type == "object" || (s.Type == "" && preserve):
		if len(r.fields) == 0 && !used {
			return []any{minimal(s)}
		}
		out := g.objects(r, s, preserve)
		if used {
			g.infinite = true
			out = append(append(out, g.maps(s)...), g.variants(s)...)
		}
		return out
	}
	g.infinite = true
	return []any{minimal(s)}
}

// objects varies the fields the rules read; the others keep their minimal values.
func (g *gen) objects(r *refNode, s *structuralschema.Structural, preserve bool) []any {
	names := r.sortedFields()
	dims := make([][]any, len(names))
	for i, name := range names {
		child, required := g.childSchema(s, name)
		dims[i] = g.within("."+name, func() []any {
			return g.field(r.fields[name], child, required, preserve || s.XPreserveUnknownFields)
		})
	}
	base, _ := minimal(s).(map[string]any)
	var out []any
	g.product(dims, func(vals []any) {
		m := make(map[string]any, len(base)+len(vals))
		for k, v := range base {
			m[k] = v
		}
		for i, v := range vals {
			if v == absent {
				delete(m, names[i])
			} else {
				m[names[i]] = v
			}
		}
		out = append(out, m)
	})
	return out
}

// singleChanges are the object's first candidate (every field the rules read at its first
// value) and then that candidate with one field changed at a time: a few dozen values that
// reach every value of every field, where the product reaches a field's last enum value only
// after thousands (a repair needs the filter's type that its cors block demands).
func (g *gen) singleChanges(r *refNode, s *structuralschema.Structural) []any {
	if s.Type != "object" || len(r.fields) == 0 {
		return nil
	}
	names := r.sortedFields()
	dims := make([][]any, len(names))
	for i, name := range names {
		child, required := g.childSchema(s, name)
		dims[i] = g.within("."+name, func() []any { return g.field(r.fields[name], child, required, s.XPreserveUnknownFields) })
		if len(dims[i]) == 0 {
			return nil
		}
	}
	base, _ := minimal(s).(map[string]any)
	with := func(pick func(i int) any) map[string]any {
		m := make(map[string]any, len(base)+len(names))
		for k, v := range base {
			m[k] = copyValue(v)
		}
		for i, name := range names {
			if v := pick(i); v == absent {
				delete(m, name)
			} else {
				m[name] = copyValue(v)
			}
		}
		return m
	}
	out := []any{with(func(i int) any { return dims[i][0] })}
	for k := range names {
		for _, v := range dims[k][1:] {
			out = append(out, with(func(i int) any {
				if i == k {
					return v
				}
				return dims[i][0]
			}))
		}
	}
	return out
}

// variants of an object used whole: its minimal value with one property set, or set to
// another value, each in turn, so that comparisons of whole objects (self == oldSelf) see
// different values.
func (g *gen) variants(s *structuralschema.Structural) []any {
	base, ok := minimal(s).(map[string]any)
	if !ok {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []any
	for _, name := range names {
		p := s.Properties[name]
		v, set := base[name]
		if set {
			if v = other(&p, v); v == nil {
				continue
			}
		} else {
			v = minimal(&p)
		}
		m := copyValue(base).(map[string]any)
		m[name] = v
		out = append(out, m)
	}
	return out
}

// other is a value of the schema different from v, where one is easy to make: nil otherwise.
func other(s *structuralschema.Structural, v any) any {
	if vv := s.ValueValidation; vv != nil && len(vv.Enum) > 1 {
		for _, e := range vv.Enum {
			if !reflect.DeepEqual(normalize(deepCopy(e.Object)), v) {
				return deepCopy(e.Object)
			}
		}
	}
	switch x := v.(type) {
	case string:
		vv := s.ValueValidation
		if vv == nil {
			return x + "a"
		}
		var re *regexp.Regexp
		if vv.Pattern != "" {
			var err error
			if re, err = regexp.Compile(vv.Pattern); err != nil {
				return nil
			}
		}
		for _, c := range []string{x + "a", x + "1", "a" + x, x + "-a"} {
			if (vv.MaxLength == nil || int64(len(c)) <= *vv.MaxLength) && (re == nil || re.MatchString(c)) {
				return c
			}
		}
	case bool:
		return !x
	case int64:
		if inBounds(s, float64(x+1)) {
			return x + 1
		}
	}
	return nil
}

// childSchema is the schema of a field: a property (and whether it is required) or a map value.
// A resource always has apiVersion, kind and a metadata name, whatever its schema says.
func (g *gen) childSchema(s *structuralschema.Structural, name string) (*structuralschema.Structural, bool) {
	if s == g.resourceRoot || s.XEmbeddedResource {
		if m, ok := resourceFields[name]; ok {
			return m, true
		}
	}
	if p, ok := s.Properties[name]; ok {
		required := s.ValueValidation != nil && slices.Contains(s.ValueValidation.Required, name)
		return &p, required
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		return s.AdditionalProperties.Structural, false
	}
	return nil, false
}

// maps are the sizes of a map (or an object used whole) around the rules' constants.
func (g *gen) maps(s *structuralschema.Structural) []any {
	if s.AdditionalProperties == nil || s.AdditionalProperties.Structural == nil {
		return nil
	}
	v := minimal(s.AdditionalProperties.Structural)
	out := []any{map[string]any{}, map[string]any{"a": v}}
	for _, k := range g.consts.strings {
		out = append(out, map[string]any{k: v})
	}
	// Keys as long as the rules' integer constants, and one longer: rules bound keys too.
	for _, n := range g.consts.ints {
		for _, k := range []int64{n, n + 1} {
			if k > 1 && k <= 256 {
				out = append(out, map[string]any{strings.Repeat("a", int(k)): v})
			}
		}
	}
	return out
}

// lists are the empty list, one item of each candidate, two items, and lengths around the rules'
// integer constants.
func (g *gen) lists(r *refNode, s *structuralschema.Structural, preserve bool) []any {
	var items []any
	if s.Items != nil {
		if r.elem != nil {
			items = g.within("[*]", func() []any { return g.values(r.elem, s.Items, preserve) })
		} else {
			items = []any{minimal(s.Items)}
		}
	}
	// The first items alone, twice (what uniqueness and counting rules are about) and in pairs
	// of different items come before the other items: rules about combinations of items (two
	// references to one parent, one with a sectionName, one with a port) are broken by pairs,
	// and a bounded search must reach them before the many other single items.
	first := min(len(items), 8)
	out := []any{[]any{}}
	for _, it := range items[:first] {
		out = append(out, []any{it})
	}
	for _, it := range items[:first] {
		out = append(out, []any{it, copyValue(it)})
	}
	out = append(out, pairs(items[:first])...)
	for _, it := range items[first:] {
		out = append(out, []any{it})
	}
	for _, it := range items[first:] {
		out = append(out, []any{it, copyValue(it)})
	}
	if len(items) > 0 {
		for _, n := range g.consts.ints {
			for _, k := range []int64{n, n + 1} {
				if k > 1 && k <= 16 {
					out = append(out, slices.Repeat([]any{items[0]}, int(k)))
				}
			}
		}
	}
	// Only lists the old schema can hold: within its bounds, and keyed (which rewrites keys).
	vv := s.ValueValidation
	held := out[:0]
	for _, v := range out {
		l := v.([]any)
		n := int64(len(l))
		if vv != nil && (vv.MinItems != nil && n < *vv.MinItems || vv.MaxItems != nil && n > *vv.MaxItems) || !keyed(s, l) {
			continue
		}
		held = append(held, l)
	}
	return held
}

// pairs are the lists of two different items.
func pairs(items []any) []any {
	var out []any
	for i := range items {
		for j := i + 1; j < len(items); j++ {
			out = append(out, []any{items[i], copyValue(items[j])})
		}
	}
	return out
}

// keyed makes a candidate list one the old schema can hold, in place: the items of a map-type
// list get distinct keys (only the keys change, so the items stay alike in everything a rule may
// compare: two listeners on one port need two names), and a set-type list may not repeat an item.
// It reports false when that cannot be done.
func keyed(s *structuralschema.Structural, l []any) bool {
	if s.XListType == nil || len(l) < 2 {
		return true
	}
	switch *s.XListType {
	case "set":
		for i := range l {
			for j := range i {
				if reflect.DeepEqual(l[i], l[j]) {
					return false
				}
			}
		}
	case "map":
		seen := map[string]bool{}
		for i := range l {
			item, ok := l[i].(map[string]any)
			if !ok || s.Items == nil || len(s.XListMapKeys) == 0 {
				return false
			}
			item = copyValue(item).(map[string]any)
			l[i] = item
			for tries := 0; seen[keyOf(item, s.XListMapKeys)]; tries++ {
				k := s.XListMapKeys[0]
				ks, ok := s.Items.Properties[k]
				next := other(&ks, item[k])
				if !ok || next == nil || tries == 16 {
					return false
				}
				item[k] = next
			}
			seen[keyOf(item, s.XListMapKeys)] = true
		}
	}
	return true
}

// keyOf is the key of a map-type list's item, as a comparable string.
func keyOf(item map[string]any, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%#v\x00", item[k])
	}
	return b.String()
}

// anyValues are samples for a field whose schema is unknown.
func (g *gen) anyValues() []any {
	out := []any{true, int64(0), "", map[string]any{}, []any{}}
	for _, n := range g.consts.ints {
		out = append(out, n)
	}
	return append(out, stringsOf(g.consts.strings)...)
}

// product calls f with combinations of one value per dimension, fewest deviations from the first
// values first (so a bounded search tries every single change before pairs of changes), up to
// the limit.
func (g *gen) product(dims [][]any, f func([]any)) {
	for _, d := range dims {
		if len(d) == 0 {
			return
		}
	}
	idx := make([]int, len(dims))
	vals := make([]any, len(dims))
	count := 0
	maxSum := 0
	for _, d := range dims {
		maxSum += len(d) - 1
	}
	var rec func(i, left int) bool
	rec = func(i, left int) bool {
		if i == len(dims) {
			if left != 0 {
				return true
			}
			if count >= g.limit {
				g.truncated = true
				return false
			}
			for j, k := range idx {
				vals[j] = dims[j][k]
			}
			f(slices.Clone(vals))
			count++
			return true
		}
		for k := 0; k < len(dims[i]) && k <= left; k++ {
			idx[i] = k
			if !rec(i+1, left-k) {
				return false
			}
		}
		return true
	}
	for sum := 0; sum <= maxSum; sum++ {
		if !rec(0, sum) {
			return
		}
	}
}

func intRange(s *structuralschema.Structural) (lo, hi int64, ok bool) {
	vv := s.ValueValidation
	if vv == nil || vv.Minimum == nil || vv.Maximum == nil {
		return 0, 0, false
	}
	lo, hi = int64(math.Ceil(*vv.Minimum)), int64(math.Floor(*vv.Maximum))
	if vv.ExclusiveMinimum && float64(lo) == *vv.Minimum {
		lo++
	}
	if vv.ExclusiveMaximum && float64(hi) == *vv.Maximum {
		hi--
	}
	return lo, hi, lo <= hi
}

// inBounds reports whether x satisfies the schema's minimum and maximum.
func inBounds(s *structuralschema.Structural, x float64) bool {
	vv := s.ValueValidation
	if vv == nil {
		return true
	}
	if vv.Minimum != nil && (x < *vv.Minimum || vv.ExclusiveMinimum && x == *vv.Minimum) {
		return false
	}
	return vv.Maximum == nil || x < *vv.Maximum || !vv.ExclusiveMaximum && x == *vv.Maximum
}

func (g *gen) ints(s *structuralschema.Structural) []any {
	cands := []int64{0, 1, -1}
	for _, c := range g.consts.ints {
		cands = append(cands, c, c-1, c+1)
	}
	if vv := s.ValueValidation; vv != nil {
		for _, b := range []*float64{vv.Minimum, vv.Maximum} {
			if b != nil && math.Abs(*b) < 1<<53 {
				cands = append(cands, int64(*b)-1, int64(*b), int64(*b)+1)
			}
		}
	}
	var out []any
	seen := map[int64]bool{}
	for _, c := range cands {
		if !seen[c] && inBounds(s, float64(c)) {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func (g *gen) numbers(s *structuralschema.Structural) []any {
	cands := []float64{0, 0.5, 1, -1}
	for _, c := range g.consts.ints {
		cands = append(cands, float64(c), float64(c)-1, float64(c)+1)
	}
	for _, c := range g.consts.doubles {
		cands = append(cands, c, c-0.5, c+0.5)
	}
	var out []any
	seen := map[float64]bool{}
	for _, c := range cands {
		if !seen[c] && inBounds(s, c) {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// strs are the empty string, the rules' string constants and variations of them, strings as
// long as the rules' integer constants, and a value of the schema's format.
func (g *gen) strs(s *structuralschema.Structural) []string {
	low := minimalString(s)
	cands := []string{"", "a", "A", low, low + "a"}
	for _, c := range g.consts.strings {
		cands = append(cands, c, c+"a", "a"+c)
	}
	for _, n := range g.consts.ints {
		for _, k := range []int64{n, n + 1} {
			if k > 1 && k <= 256 {
				cands = append(cands, strings.Repeat("a", int(k)))
			}
		}
	}
	vv := s.ValueValidation
	if vv != nil && vv.Format != "" {
		if f, ok := formatSamples[vv.Format]; ok {
			cands = append(cands, f)
		}
	}
	var re *regexp.Regexp
	if vv != nil && vv.Pattern != "" {
		re, _ = regexp.Compile(vv.Pattern)
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		n := int64(len([]rune(c)))
		if seen[c] || vv != nil && (vv.MinLength != nil && n < *vv.MinLength || vv.MaxLength != nil && n > *vv.MaxLength) || re != nil && !re.MatchString(c) {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out
}

func stringsOf(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// formatSamples are valid values of the formats the API server checks.
var formatSamples = map[string]string{
	"date-time": "2024-01-01T00:00:00Z", "date": "2024-01-01", "duration": "1s",
	"uri": "https://example.com", "email": "a@example.com", "hostname": "example.com",
	"ipv4": "10.0.0.1", "ipv6": "::1", "cidr": "10.0.0.0/8", "mac": "00:00:5e:00:53:01",
	"uuid": "123e4567-e89b-12d3-a456-426614174000", "byte": "YQ==", "password": "a",
}

// deepCopy copies a JSON value.
func deepCopy(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return normalize(out)
}

// copyValue copies the maps and lists of a candidate value; scalars are immutable.
func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = copyValue(e)
		}
		return l
	}
	return v
}

// normalize turns JSON numbers decoded as float64 into int64 where they are integral, as the
// API server's decoder does.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	}
	return v
}

var str = structuralschema.Structural{Generic: structuralschema.Generic{Type: "string"}}

// resourceFields are the fields the API server hands CEL for every resource.
var resourceFields = map[string]*structuralschema.Structural{
	"apiVersion": &str,
	"kind":       &str,
	"metadata": {
		Generic:         structuralschema.Generic{Type: "object"},
		Properties:      map[string]structuralschema.Structural{"name": str, "generateName": str},
		ValueValidation: &structuralschema.ValueValidation{Required: []string{"name"}},
	},
}
