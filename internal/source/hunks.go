package source

import (
	"bytes"
	"fmt"
)

// Context is the number of unchanged lines a unified diff shows around each change, as git and
// GitHub do by default.
const Context = 3

// Hunk is one @@ -OldStart,OldLines +NewStart,NewLines @@ block of a unified diff. Lines are
// 1-based; a side with no lines has Lines 0.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
}

// Hunks computes the hunks of a unified diff with Context lines of context between two file
// contents as git computes them: xdiff's line diff (Myers with git's pruning and cost
// cut-offs), then git's sliding of change groups and its indent heuristic.
func Hunks(old, new []byte) []Hunk {
	_, _, ca, cb := diffLines(old, new)
	return hunksOf(ca, cb, Context)
}

// NewFileDiff diffs the two contents of a changed file (nil where a side does not exist): its
// hunks, and without context the runs of removed and added lines.
func NewFileDiff(from, to string, old, new []byte) FileDiff {
	a, b, ca, cb := diffLines(old, new)
	return FileDiff{From: from, To: to, Hunks: hunksOf(ca, cb, Context), Changes: hunksOf(ca, cb, 0), oldLines: a, newLines: b}
}

// diffLines splits both contents into lines and marks the removed and added ones as git would.
func diffLines(old, new []byte) (a, b [][]byte, ca, cb []bool) {
	a, b = splitLines(old), splitLines(new)
	ids := map[string]int{}
	intern := func(lines [][]byte) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[string(l)]
			if !ok {
				id = len(ids)
				ids[string(l)] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	changedA, changedB := xdiffMarks(x, y, len(ids))
	fa, fb := newDiffFile(x, a, changedA), newDiffFile(y, b, changedB)
	compact(fa, fb)
	compact(fb, fa)
	return a, b, fa.chg[1 : len(x)+1], fb.chg[1 : len(y)+1]
}

func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// hunksOf turns per-line change marks into hunks with ctx lines of context, merging hunks
// whose changes are at most 2*ctx unchanged lines apart, as git does.
func hunksOf(ca, cb []bool, ctx int) []Hunk {
	type change struct{ i, j, di, dj int } // a run of deletions and insertions at old i, new j
	var changes []change
	i, j := 0, 0
	for i < len(ca) || j < len(cb) {
		if i < len(ca) && j < len(cb) && !ca[i] && !cb[j] {
			i, j = i+1, j+1
			continue
		}
		c := change{i: i, j: j}
		for i < len(ca) && ca[i] {
			i, c.di = i+1, c.di+1
		}
		for j < len(cb) && cb[j] {
			j, c.dj = j+1, c.dj+1
		}
		if c.di == 0 && c.dj == 0 { // inconsistent marks; never expected
			break
		}
		changes = append(changes, c)
	}
	var hunks []Hunk
	for k := 0; k < len(changes); {
		first := changes[k]
		last := first
		for k+1 < len(changes) && changes[k+1].i-(last.i+last.di) <= 2*ctx {
			k++
			last = changes[k]
		}
		k++
		startA := max(first.i-ctx, 0)
		startB := first.j - (first.i - startA)
		endA := min(last.i+last.di+ctx, len(ca))
		endB := last.j + last.dj + (endA - (last.i + last.di))
		h := Hunk{OldStart: startA + 1, OldLines: endA - startA, NewStart: startB + 1, NewLines: endB - startB}
		// git numbers an empty side by the line before it.
		if h.OldLines == 0 {
			h.OldStart--
		}
		if h.NewLines == 0 {
			h.NewStart--
		}
		hunks = append(hunks, h)
	}
	return hunks
}

// UnifiedDiff renders the hunks between two contents as unified-diff text (without file headers).
func UnifiedDiff(old, new []byte) string {
	a, b, ca, cb := diffLines(old, new)
	var out []byte
	line := func(prefix byte, l []byte) {
		out = append(append(out, prefix), l...)
		if len(l) == 0 || l[len(l)-1] != '\n' {
			out = append(out, '\n')
		}
	}
	for _, h := range hunksOf(ca, cb, Context) {
		out = append(out, fmt.Sprintf("@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)...)
		i, j := h.OldStart-1, h.NewStart-1
		if h.OldLines == 0 {
			i = h.OldStart
		}
		if h.NewLines == 0 {
			j = h.NewStart
		}
		endA, endB := i+h.OldLines, j+h.NewLines
		for i < endA || j < endB {
			switch {
			case i < endA && ca[i]:
				line('-', a[i])
				i++
			case j < endB && cb[j]:
				line('+', b[j])
				j++
			default:
				line(' ', a[i])
				i, j = i+1, j+1
			}
		}
	}
	return string(out)
}
