package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// Markdown writes a table a reviewer can read. Every piece of text from the CRDs (field names,
// enum values, rule expressions) is escaped: it cannot break the table, inject HTML or links,
// or @-mention anyone.
func Markdown(w io.Writer, r Report) error {
	mw := &errWriter{w: w}
	s := Summarize(r)
	mw.printf("### %s\n\n", s.Line())
	if r.Compared != nil {
		mw.printf("%s.\n\n", Escape(upperFirst(r.Compared.Line())))
	}
	var shown []finding.Finding
	for _, f := range r.Findings {
		if f.Severity > finding.Info {
			shown = append(shown, f)
		}
	}
	if len(shown) == 0 {
		mw.printf("No breaking CRD changes found.\n")
	} else {
		mw.printf("| Severity | Rule | CRD | Version | Path | Before → after | Location | What it means |\n")
		mw.printf("|---|---|---|---|---|---|---|---|\n")
		for _, f := range shown {
			mw.printf("| %s | `%s` | %s | %s | %s | %s | %s | %s |\n",
				severityIcon(f.Severity), f.Rule, Escape(f.CRD), Escape(f.Version), Escape(f.Path),
				Escape(BeforeAfter(&f, textValueRunes, nil)), Escape(fmt.Sprintf("%s:%d", f.Location.File, f.Location.Line)), Escape(f.Message))
		}
	}
	if s.Info > 0 {
		mw.printf("\n%s (info) not shown.\n", Count(s.Info, "safe change"))
	}
	if s.Ignored > 0 {
		mw.printf("%s ignored by configuration.\n", Count(s.Ignored, "finding"))
	}
	for _, n := range r.Notices {
		mw.printf("\n> notice: %s\n", Escape(n))
	}
	return mw.err
}

func severityIcon(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "❌ error"
	case finding.Warning:
		return "⚠️ warning"
	}
	return "ℹ️ info"
}

// markdownSpecial are the characters that can start Markdown or HTML syntax.
const markdownSpecial = "\\`*_{}[]()<>#+-.!|~&"

// Escape makes untrusted text inert in GitHub Markdown: special characters are
// backslash-escaped or entity-encoded, line breaks become spaces, and @ and URL schemes are
// broken so they neither mention nor link.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '@':
			b.WriteString("@\u200b") // a zero-width space after @ prevents mentions
		case r == ':':
			b.WriteString("&#58;") // breaks autolinks such as https://… and javascript:
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
		case strings.ContainsRune(markdownSpecial, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
