package celproof

import (
	"math"
	"regexp"
	"regexp/syntax"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// minimal is a small value the schema accepts: its default, its first enum value, or the least
// value of its type that meets its bounds, with every required property set.
func minimal(s *structuralschema.Structural) any {
	if s == nil {
		return map[string]any{}
	}
	if s.Default.Object != nil {
		return deepCopy(s.Default.Object)
	}
	vv := s.ValueValidation
	if vv != nil && len(vv.Enum) > 0 {
		return deepCopy(vv.Enum[0].Object)
	}
	switch {
	case s.XIntOrString:
		return int64(1)
	case s.Type == "boolean":
		return false
	case s.Type == "integer":
		for _, c := range []int64{0, 1} {
			if inBounds(s, float64(c)) {
				return c
			}
		}
		if lo, _, ok := intRange(s); ok || vv != nil && vv.Minimum != nil {
			if !ok {
				lo = int64(math.Ceil(*vv.Minimum)) + 1
			}
			return lo
		}
		return int64(-1)
	case s.Type == "number":
		if inBounds(s, 0) {
			return float64(0)
		}
		if vv.Minimum != nil {
			return *vv.Minimum + 1
		}
		return float64(-1)
	case s.Type == "string":
		return minimalString(s)
	case s.Type == "array":
		var out []any
		if vv != nil && vv.MinItems != nil {
			for i := int64(0); i < *vv.MinItems; i++ {
				out = append(out, minimal(s.Items))
			}
		}
		if out == nil {
			out = []any{}
		}
		return out
	}
	m := map[string]any{}
	if vv != nil {
		for _, name := range vv.Required {
			if p, ok := s.Properties[name]; ok {
				m[name] = minimal(&p)
			}
		}
	}
	return m
}

func minimalString(s *structuralschema.Structural) string {
	vv := s.ValueValidation
	if vv == nil {
		return "a"
	}
	cands := []string{"a", "a1", "1", "example", "a-b", "A", "a.b", "a/b", "example.com/a"}
	if f, ok := formatSamples[vv.Format]; ok {
		cands = append([]string{f}, cands...)
	}
	var re *regexp.Regexp
	if vv.Pattern != "" {
		re, _ = regexp.Compile(vv.Pattern)
		if m, ok := shortestMatch(vv.Pattern); ok {
			cands = append(cands, m)
		}
	}
	for _, c := range cands {
		if vv.MinLength != nil && *vv.MinLength > 1 {
			c += strings.Repeat("a", int(min(*vv.MinLength, 253))-1)
		}
		if re == nil || re.MatchString(c) {
			return c
		}
	}
	return cands[0]
}

// shortestMatch builds a short string the pattern matches (as Go's regexp, which the API server
// validates patterns with, reads it): every repetition at its least count, the first branch of an
// alternation, the first character of a class. Durations, versions and hostnames have patterns
// that no generic sample meets.
func shortestMatch(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		case syntax.OpLiteral:
			if r.Flags&syntax.FoldCase != 0 {
				b.WriteString(strings.ToLower(string(r.Rune)))
			} else {
				b.WriteString(string(r.Rune))
			}
		case syntax.OpCharClass:
			if len(r.Rune) == 0 {
				return false
			}
			b.WriteRune(classRune(r.Rune))
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpStar, syntax.OpQuest:
		case syntax.OpPlus:
			return walk(r.Sub[0])
		case syntax.OpRepeat:
			for i := 0; i < r.Min; i++ {
				if !walk(r.Sub[0]) {
					return false
				}
			}
		case syntax.OpConcat:
			for _, sub := range r.Sub {
				if !walk(sub) {
					return false
				}
			}
		case syntax.OpAlternate:
			return walk(r.Sub[0])
		default:
			return false
		}
		return true
	}
	if !walk(re) || b.Len() > 253 {
		return "", false
	}
	return b.String(), true
}

// classRune picks a readable character of a class (pairs of range bounds): a lower-case letter
// or a digit if the class has one, else its first character.
func classRune(ranges []rune) rune {
	for _, want := range []rune{'a', '1', '0'} {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= want && want <= ranges[i+1] {
				return want
			}
		}
	}
	return ranges[0]
}
