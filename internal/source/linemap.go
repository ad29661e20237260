package source

import (
	"bytes"
	"strings"
)

// lineMap maps each line of what a template rendered to the line of the template it comes
// from, so that a finding on a rendered CRD lands on the template's line. The two texts are
// aligned by git's line diff over trimmed lines (an include or nindent moves text sideways):
// a rendered line that the template holds as it is maps to that line; the lines between two
// aligned ones map line for line when both runs are as long (a value filled in on its line),
// else to the template line of the same key in the run, else to the run's first line. What
// comes wholly from elsewhere (a helper of _helpers.tpl) maps to the line before it, where the
// template calls it. Lines are 1-based; a template with no source maps everything to line 1.
func lineMap(src, out []byte) func(int) int {
	if len(src) == 0 {
		return func(int) int { return 1 }
	}
	a, b := trimmedLines(src), trimmedLines(out)
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			if l == "" {
				out[i] = -1 // blank lines align with nothing: they would pair anything
				continue
			}
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	// Blank lines get classes of their own, one per line, so that they never match.
	classes := len(ids)
	for _, s := range [][]int{x, y} {
		for i, c := range s {
			if c < 0 {
				s[i] = classes
				classes++
			}
		}
	}
	removed, added := xdiffMarks(x, y, classes)
	to := make([]int, len(b)) // 0-based template line of each rendered line, -1 unknown
	var anchors [][2]int      // aligned (rendered, template) lines, in order
	i := 0
	for j := range b {
		for i < len(a) && removed[i] {
			i++
		}
		to[j] = -1
		if !added[j] && i < len(a) {
			to[j] = i
			anchors = append(anchors, [2]int{j, i})
			i++
		}
	}
	// Fill the runs between anchors.
	prevJ, prevI := -1, -1
	fill := func(nextJ, nextI int) {
		runJ, runI := nextJ-prevJ-1, nextI-prevI-1
		for j := prevJ + 1; j < nextJ; j++ {
			switch {
			case runJ == runI:
				to[j] = prevI + 1 + (j - prevJ - 1)
			default:
				to[j] = sameKey(a, b[j], prevI+1, nextI)
				if to[j] < 0 {
					to[j] = max(prevI, 0)
					if runI > 0 {
						to[j] = prevI + 1
					}
				}
			}
		}
	}
	for _, an := range anchors {
		fill(an[0], an[1])
		prevJ, prevI = an[0], an[1]
	}
	fill(len(b), len(a))
	return func(line int) int {
		if line < 1 || line > len(to) {
			return 1
		}
		return min(to[line-1], len(a)-1) + 1
	}
}

// sameKey finds, among the template lines [from, to), the one that writes the same mapping key
// as a rendered line, -1 when none does.
func sameKey(a []string, rendered string, from, to int) int {
	k, _, ok := strings.Cut(strings.TrimPrefix(rendered, "- "), ":")
	if !ok || k == "" || strings.ContainsAny(k, "{} ") {
		return -1
	}
	for i := from; i < to && i < len(a); i++ {
		if strings.HasPrefix(strings.TrimPrefix(a[i], "- "), k+":") {
			return i
		}
	}
	return -1
}

// trimmedLines splits text into lines without their indentation and trailing space.
func trimmedLines(data []byte) []string {
	data = bytes.TrimSuffix(data, []byte("\n"))
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}
