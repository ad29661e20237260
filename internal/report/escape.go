package report

import (
	"strings"
	"unicode/utf8"
)

// zwsp is a zero-width space: invisible where text is read, it stops GitHub from seeing an
// @-mention, an autolink (https://, www., an e-mail address), an issue reference (#12), an HTML
// tag or a link's ](.
const zwsp = "\u200b"

// Escape makes untrusted text (field names, enum values, rule expressions, notices) inert where
// it becomes GitHub Markdown, and only as much as that takes, so the rendered text reads as the
// plain text: no @-mention, link, autolink, issue reference or HTML comes out of it, it cannot
// break a table cell or a code span, and it does not start a heading, list or quote. Markdown
// punctuation that would change how it reads (emphasis, strikethrough, math) is
// backslash-escaped; line breaks become spaces and control characters go.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	s = strings.TrimLeft(plain(s), " ") // four spaces start a code block; Markdown drops fewer
	for i, r := range s {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '>' && i == 0: // a quote; elsewhere > is text
			b.WriteString("&gt;")
		case strings.ContainsRune("\\`*_~[]|$", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if i == 0 && strings.ContainsRune("#+-=", r) { // a heading, list item or underline
				b.WriteByte('\\')
			}
			b.WriteRune(r)
			if defuseAfter(s, i, r) {
				b.WriteString(zwsp)
			}
		}
	}
	out := b.String()
	// "1. x" or "1) x" at the start is a list item.
	if n := len(out) - len(strings.TrimLeft(out, "0123456789")); n > 0 && n < len(out) && (out[n] == '.' || out[n] == ')') {
		out = out[:n] + `\` + out[n:]
	}
	return out
}

// Defuse is untrusted text for receivers that take plain text but may show it as Markdown
// (reviewdog posts rdjson messages as comments; SARIF viewers link "[text](target)"): no
// Markdown escapes, so it reads as written with reviewdog -reporter=local, Gerrit or a
// terminal, but zero-width spaces keep @-mentions, autolinks, issue references, HTML tags and
// links from forming; control characters become spaces.
func Defuse(s string) string {
	s = plain(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		b.WriteRune(r)
		if defuseAfter(s, i, r) || r == '<' && i+1 < len(s) && isTagStart(s[i+1]) {
			b.WriteString(zwsp)
		}
	}
	return b.String()
}

// defuseAfter says a zero-width space must follow the rune r at s[i]: after @ (mentions, e-mail
// autolinks), # before a digit (issue references), ] before ( (links), : before an emoji
// shortcode's name and colon (:+1: would show 👍), and within the schemes and www. that GitHub
// autolinks (before "://" and "." of "www.").
func defuseAfter(s string, i int, r rune) bool {
	next := s[i+utf8.RuneLen(r):]
	switch {
	case r == '@':
		return true
	case r == '#':
		return next != "" && next[0] >= '0' && next[0] <= '9'
	case r == ']':
		return strings.HasPrefix(next, "(")
	case r == ':':
		return emojiCode(next)
	case strings.HasPrefix(next, "://"):
		return true
	case strings.HasPrefix(next, ".") && (r == 'w' || r == 'W') && i >= 2 && strings.EqualFold(s[i-2:i+1], "www"):
		return true
	}
	return false
}

// isTagStart reports whether a byte after < makes it an HTML tag, comment or autolink.
func isTagStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

// emojiCode says s starts with the rest of an emoji shortcode: a name of lower-case letters,
// digits, _, + and -, then a colon. A name of digits alone is left alone: file:12:3 positions
// are far more common than :100:.
func emojiCode(s string) bool {
	digits := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':':
			return i > 0 && !digits
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c == '_', c == '+', c == '-':
			digits = false
		default:
			return false
		}
	}
	return false
}
