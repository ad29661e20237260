package report

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// plainJSON undoes encoding/json's HTML escaping (\u003c, \u003e, \u0026, \u2028, \u2029) in
// a JSON text, so people read x < 3 && y rather than x \u003c 3 \u0026\u0026 y. Other escapes
// stay, and an escaped backslash before "u003c" is kept as it is.
func plainJSON(s string) string {
	if !strings.Contains(s, `\u`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			if r, ok := map[string]string{"003c": "<", "003e": ">", "0026": "&", "2028": "\u2028", "2029": "\u2029"}[s[i+2:i+6]]; ok {
				b.WriteString(r)
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2]) // any other escape, \\ included, stays whole
		i++
	}
	return b.String()
}

// abbreviator shortens long values so that two different values of one report never print the
// same text: a long CEL rule is cut where it differs from its nearest sibling, not only at a
// fixed length.
type abbreviator struct {
	n      int
	values []string
}

// newAbbreviator collects the before and after values of the findings, as plainJSON shows them.
func newAbbreviator(fs []finding.Finding, n int) *abbreviator {
	a := &abbreviator{n: n}
	seen := map[string]bool{}
	for i := range fs {
		for _, raw := range [][]byte{fs[i].Before, fs[i].After} {
			if v := plainJSON(string(raw)); raw != nil && !seen[v] {
				seen[v] = true
				a.values = append(a.values, v)
			}
		}
	}
	return a
}

// shorten cuts s to about n runes. When another value shares a prefix longer than that, the
// cut keeps the start, then the text around the first rune where they differ.
func (a *abbreviator) shorten(s string) string {
	r := []rune(s)
	if len(r) <= a.n {
		return s
	}
	d := 0 // runes s shares with the most similar other value
	for _, v := range a.values {
		if v != s {
			d = max(d, commonPrefix(r, []rune(v)))
		}
	}
	if d < a.n-1 {
		return string(r[:a.n-1]) + "…"
	}
	head := a.n / 2
	start := max(head, d-(a.n/2-12))
	end := min(len(r), d+10)
	out := string(r[:head]) + "…" + string(r[start:end])
	if end < len(r) {
		out += "…"
	}
	return out
}

func commonPrefix(a, b []rune) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// beforeAfter is BeforeAfter for reports that list many findings: values without HTML escapes,
// shortened so that distinct values stay distinct.
func (a *abbreviator) beforeAfter(f *finding.Finding) string {
	if f.Before == nil && f.After == nil {
		return ""
	}
	val := func(b []byte) string {
		if b == nil {
			return "null"
		}
		return a.shorten(plainJSON(string(b)))
	}
	return val(f.Before) + " → " + val(f.After)
}

// cutQuoted shortens the long quoted texts in a message (a CEL rule, a regex) as values are
// shortened, so that a changed rule is not printed in full twice; --verbose prints it whole.
func (a *abbreviator) cutQuoted(msg string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(msg, '"')
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + 1
		for end < len(msg) && msg[end] != '"' {
			if msg[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(msg) {
			b.WriteString(msg)
			return b.String()
		}
		q := a.shorten(msg[i : end+1])
		if !strings.HasSuffix(q, `"`) {
			q += `"` // the message goes on after the quote
		}
		b.WriteString(msg[:i] + q)
		msg = msg[end+1:]
	}
}
