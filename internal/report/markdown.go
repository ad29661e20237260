package report

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

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
