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
// contents: a minimal line diff (Myers), then git's sliding of change groups and its indent
// heuristic. Git itself gives up minimality on very large rewrites (xdiff's cost cut-offs),
// where hunks can differ; the GitHub reporter must survive that (GitHub answers 422).
func Hunks(old, new []byte) []Hunk {
	_, _, ca, cb := diffLines(old, new)
	return hunksOf(ca, cb)
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
	changedA, changedB := make([]bool, len(x)), make([]bool, len(y))
	myers(x, y, 0, len(x), 0, len(y), changedA, changedB)
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

// myers marks the lines of x[a0:a1] and y[b0:b1] that are not part of a longest common
// subsequence, by divide and conquer on the middle snake (linear space).
func myers(x, y []int, a0, a1, b0, b1 int, ca, cb []bool) {
	for a0 < a1 && b0 < b1 && x[a0] == y[b0] {
		a0, b0 = a0+1, b0+1
	}
	for a0 < a1 && b0 < b1 && x[a1-1] == y[b1-1] {
		a1, b1 = a1-1, b1-1
	}
	switch {
	case a0 == a1:
		for j := b0; j < b1; j++ {
			cb[j] = true
		}
		return
	case b0 == b1:
		for i := a0; i < a1; i++ {
			ca[i] = true
		}
		return
	}
	mx, my := middleSnake(x, y, a0, a1, b0, b1)
	if mx < a0 || mx > a1 || my < b0 || my > b1 || (mx == a0 && my == b0) || (mx == a1 && my == b1) {
		// Cannot happen for a correct middle snake; never loop forever on a bug.
		for i := a0; i < a1; i++ {
			ca[i] = true
		}
		for j := b0; j < b1; j++ {
			cb[j] = true
		}
		return
	}
	myers(x, y, a0, mx, b0, my, ca, cb)
	myers(x, y, mx, a1, my, b1, ca, cb)
}

// middleSnake returns a point on an optimal edit path of x[a0:a1] → y[b0:b1], found where a
// forward and a backward search meet (Myers 1986, section 4b). The callers trimmed common
// prefixes and suffixes, so the edit distance is at least 2 and the point splits the problem
// into two strictly smaller ones.
func middleSnake(x, y []int, a0, a1, b0, b1 int) (int, int) {
	n, m := a1-a0, b1-b0
	delta := n - m
	odd := delta%2 != 0
	maxD := (n + m + 1) / 2
	off := maxD + 1
	// vf[off+k]: furthest x on forward diagonal k = x - y. vb[off+k]: furthest distance from the
	// end on backward diagonal k = (n - x) - (m - y).
	vf := make([]int, 2*off+1)
	vb := make([]int, 2*off+1)
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && vf[off+k-1] < vf[off+k+1]) {
				i = vf[off+k+1]
			} else {
				i = vf[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[a0+i] == y[b0+j] {
				i, j = i+1, j+1
			}
			vf[off+k] = i
			if kb := delta - k; odd && kb >= -(d-1) && kb <= d-1 && i+vb[off+kb] >= n {
				return a0 + i, b0 + j
			}
		}
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && vb[off+k-1] < vb[off+k+1]) {
				i = vb[off+k+1]
			} else {
				i = vb[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[a1-1-i] == y[b1-1-j] {
				i, j = i+1, j+1
			}
			vb[off+k] = i
			if kf := delta - k; !odd && kf >= -d && kf <= d && i+vf[off+kf] >= n {
				return a1 - i, b1 - j
			}
		}
	}
	return a0 + n/2, b0 + m/2 // unreachable: the searches always meet by maxD
}

// hunksOf turns per-line change marks into hunks with Context lines of context, merging hunks
// whose changes are at most 2*Context unchanged lines apart, as git does.
func hunksOf(ca, cb []bool) []Hunk {
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
		for k+1 < len(changes) && changes[k+1].i-(last.i+last.di) <= 2*Context {
			k++
			last = changes[k]
		}
		k++
		startA := max(first.i-Context, 0)
		startB := first.j - (first.i - startA)
		endA := min(last.i+last.di+Context, len(ca))
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
	for _, h := range hunksOf(ca, cb) {
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
