package finding

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Cut keeps at most n bytes, the mark of the cut among them, and never splits a character.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven …"},
		{"größer als", 6, "gr…"}, // ö is 2 bytes: "grö" + "…" would be 7
		{"日本語の文", 7, "日…"},       // 3-byte runes
		{"abc", 2, "…"},          // no room but for the mark
		{strings.Repeat("x", 61000), MaxMessage, strings.Repeat("x", MaxMessage-3) + "…"},
	} {
		got := Cut(tc.s, tc.n)
		if got != tc.want || !utf8.ValidString(got) || len(tc.s) > tc.n && len(got) > max(tc.n, len("…")) {
			t.Errorf("Cut(%.20q, %d) = %.40q (%d bytes), want %.40q", tc.s, tc.n, got, len(got), tc.want)
		}
	}
}
