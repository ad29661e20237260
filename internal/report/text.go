package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
)

// Text writes each change once, most serious first: CRDs with errors first, each under a
// one-line tally, its errors before its warnings; each change at its first place with the
// others counted and collapsed on one line (every place and full values with Verbose). Info is
// a count unless ShowInfo. The last lines count changes and places and give the verdict.
func Text(w io.Writer, r Report) error {
	tw := &errWriter{w: w}
	if r.Compared != nil {
		tw.printf("%s\n", plain(r.Compared.Line()))
	}
	min := finding.Warning
	if r.ShowInfo {
		min = finding.Info
	}
	set := byCRD(r.Findings, min)
	var shown []finding.Finding
	for _, g := range set.All {
		shown = append(shown, *g.First())
	}
	ab := newAbbreviator(shown, textValueRunes)
	for _, c := range set.CRDs {
		tw.printf("%s: %s\n", orDash(plain(c.CRD), "(unnamed document)"), Tally(c.counted()))
		for i := range c.Groups {
			textChange(tw, &c.Groups[i], ab, r.Verbose)
		}
		if len(c.Shared) > 0 {
			tw.printf("  and %s shared with other CRDs, below\n", Count(len(c.Shared), "change"))
		}
	}
	if len(set.Shared) > 0 {
		tw.printf("in several CRDs: %s\n", Tally(set.Shared))
		for i := range set.Shared {
			textChange(tw, &set.Shared[i], ab, r.Verbose)
		}
	}
	for _, n := range r.Notices {
		tw.printf("notice: %s\n", plain(n))
	}
	s := Summarize(r)
	tw.printf("%s compared: %s", Count(s.CRDs, "CRD"), Tally(byCRD(r.Findings, finding.Info).All, finding.Error, finding.Warning))
	if s.Info > 0 && !r.ShowInfo {
		tw.printf(" (not shown: --show-info)")
	}
	if s.Ignored > 0 {
		tw.printf(", %d ignored", s.Ignored)
	}
	tw.printf("\n%s\n", r.verdict().Line(s))
	return tw.err
}

// textChange writes one change at its first place: severity, version, rule, path and line, the
// message, the Go source, before → after, and its other places, collapsed unless verbose.
func textChange(tw *errWriter, g *change.Group, ab *abbreviator, verbose bool) {
	f := g.First()
	tw.printf("  %-7s %s %s %s  %s\n", f.Severity, orDash(plain(f.Version), "-"), f.Rule, plain(orDash(f.Path, "")), plain(Where(f)))
	msg := f.Message
	if !verbose {
		msg = ab.cutQuoted(msg)
	}
	tw.printf("          %s\n", plain(msg))
	if f.Source != nil {
		tw.printf("          Go source %s:%d (%s)\n", plain(f.Source.File), f.Source.Line, f.Source.Side)
	}
	ba := ab.beforeAfter(f)
	if verbose {
		ba = BeforeAfter(f, math.MaxInt, nil)
	}
	if ba != "" {
		tw.printf("          %s\n", plain(ba))
	}
	switch {
	case verbose && len(g.Places) > 1:
		tw.printf("          at %s:\n", change.Places(g.Count()))
		several := len(g.CRDs()) > 1
		for _, p := range g.Places {
			if several {
				tw.printf("            %s %s\n", plain(p.CRD), plain(PlaceLine(p)))
			} else {
				tw.printf("            %s\n", plain(PlaceLine(p)))
			}
		}
	case g.Count() > 1:
		tw.printf("          at %s\n", plain(g.Where()))
	}
}

// textValueRunes bounds each value in the text and Markdown reports' before → after column.
const textValueRunes = 80

// BeforeAfter renders "before → after" from the raw JSON values, each cut to n runes and then
// passed through esc when it is not nil, or "" when both are absent.
func BeforeAfter(f *finding.Finding, n int, esc func(string) string) string {
	if f.Before == nil && f.After == nil {
		return ""
	}
	val := func(b []byte) string {
		if b == nil {
			return "null"
		}
		s := shorten(plainJSON(string(b)), n)
		if esc != nil {
			s = esc(s)
		}
		return s
	}
	return val(f.Before) + " → " + val(f.After)
}

// shorten cuts s to n runes, the last of them the mark of the cut (finding.Cut at the byte
// where the n-th rune starts): columns are counted in characters, not bytes.
func shorten(s string, n int) string {
	at, runes := 0, 0
	for i := range s {
		if runes == n-1 {
			at = i
		}
		if runes++; runes > n {
			return finding.Cut(s, at+len("…"))
		}
	}
	return s
}

// plain keeps untrusted text on one line and free of terminal control sequences.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

func orDash(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// AlsoIn lists the other copies a finding applies to (Locations besides Location) as file:line.
func AlsoIn(f finding.Finding) string {
	var out []string
	for _, l := range f.Locations {
		if l != f.Location {
			out = append(out, fmt.Sprintf("%s:%d", l.File, l.Line))
		}
	}
	return strings.Join(out, ", ")
}
