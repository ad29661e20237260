package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// Text writes findings grouped by CRD, each CRD under a one-line tally and its errors before its
// warnings, and info findings as a count, so a clean run stays quiet and a long one readable.
func Text(w io.Writer, r Report) error {
	tw := &errWriter{w: w}
	if r.Compared != nil {
		tw.printf("%s\n", plain(r.Compared.Line()))
	}
	shown := make([]finding.Finding, 0, len(r.Findings))
	for _, f := range r.Findings {
		if f.Severity > finding.Info {
			shown = append(shown, f)
		}
	}
	sort.SliceStable(shown, func(i, j int) bool {
		a, b := &shown[i], &shown[j]
		if a.CRD != b.CRD {
			return a.CRD < b.CRD
		}
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return finding.Less(a, b)
	})
	ab := newAbbreviator(shown, textValueRunes)
	for i := 0; i < len(shown); {
		crd := shown[i].CRD
		j := i
		for j < len(shown) && shown[j].CRD == crd {
			j++
		}
		tally := Summarize(Report{Findings: shown[i:j]})
		tw.printf("%s: %s, %s\n", orDash(plain(crd), "(unnamed document)"), Count(tally.Error, "error"), Count(tally.Warning, "warning"))
		for _, f := range shown[i:j] {
			tw.printf("  %-7s %s %s %s  %s:%d (%s)\n", f.Severity, orDash(plain(f.Version), "-"), f.Rule, plain(orDash(f.Path, "")), plain(f.Location.File), f.Location.Line, f.Location.Side)
			tw.printf("          %s\n", plain(f.Message))
			if also := AlsoIn(f); also != "" {
				tw.printf("          also in %s\n", plain(also))
			}
			if f.Source != nil {
				tw.printf("          Go source %s:%d (%s)\n", plain(f.Source.File), f.Source.Line, f.Source.Side)
			}
			if ba := ab.beforeAfter(&f); ba != "" {
				tw.printf("          %s\n", plain(ba))
			}
		}
		i = j
	}
	for _, n := range r.Notices {
		tw.printf("notice: %s\n", plain(n))
	}
	s := Summarize(r)
	tw.printf("%s compared: %s, %s, %d info", Count(s.CRDs, "CRD"), Count(s.Error, "error"), Count(s.Warning, "warning"), s.Info)
	if s.Ignored > 0 {
		tw.printf(", %d ignored", s.Ignored)
	}
	tw.printf("\n")
	return tw.err
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

func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
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
