package check

import (
	"fmt"
	"regexp"
	"strings"
)

// placed is a notice about one line of a file: "[base: |head: ]file:line: cause".
var placed = regexp.MustCompile(`^((?:base|head): )?([^\s:]+):(\d+): (.+)$`)

// maxNoticeLines bounds the lines one notice lists; the rest are counted.
const maxNoticeLines = 5

// Notices joins notice lists into one in which each is said once per file and cause, in the
// order of their first appearance: the same notice from several trees (base, head, each
// baseline, each commit of the history) once; the same on base and head as "base and head: …";
// the same cause at several lines of one file as one notice listing the lines. A run that read
// one unreadable file for every baseline said so once per baseline before.
func Notices(lists ...[]string) []string {
	type key struct{ side, file, cause string }
	var out []string
	seen := map[string]bool{}
	at := map[key]int{}         // a placed notice's index in out
	lines := map[key][]string{} // its lines, in order
	for _, ns := range lists {
		for _, n := range ns {
			if seen[n] {
				continue
			}
			seen[n] = true
			if m := placed.FindStringSubmatch(n); m != nil {
				k := key{m[1], m[2], m[4]}
				if i, ok := at[k]; ok {
					lines[k] = append(lines[k], m[3])
					out[i] = placedNotice(k.side, k.file, k.cause, lines[k])
					continue
				}
				at[k] = len(out)
				lines[k] = []string{m[3]}
			}
			out = append(out, n)
		}
	}
	// The same on base and head: once, where base said it.
	onBase := map[string]int{}
	for i, n := range out {
		if rest, ok := strings.CutPrefix(n, "base: "); ok {
			onBase[rest] = i
		}
	}
	drop := map[int]bool{}
	for i, n := range out {
		if rest, ok := strings.CutPrefix(n, "head: "); ok {
			if b, ok := onBase[rest]; ok {
				out[b] = "base and head: " + rest
				drop[i] = true
			}
		}
	}
	kept := out[:0]
	for i, n := range out {
		if !drop[i] {
			kept = append(kept, n)
		}
	}
	return kept
}

// placedNotice says one cause at several lines of a file.
func placedNotice(side, file, cause string, lines []string) string {
	shown := lines
	more := ""
	if len(lines) > maxNoticeLines {
		shown = lines[:maxNoticeLines]
		more = fmt.Sprintf(" and %d more", len(lines)-maxNoticeLines)
	}
	return fmt.Sprintf("%s%s: lines %s%s: %s", side, file, strings.Join(shown, ", "), more, cause)
}
