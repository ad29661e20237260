package source

import "math"

// GitHub places review comments only inside the hunks of its own diff, which is git's. A
// minimal diff is not always git's: git's xdiff first drops lines that cannot match (and runs
// of lines that match too often), then runs Myers' algorithm with cost cut-offs that give up
// minimality on large rewrites. The same steps are done here, with git's constants (xdiff's
// xprepare.c and xdiffi.c), so hunks match `git diff -U3` line for line.

const (
	xdlMaxCostMin    = 256  // XDL_MAX_COST_MIN
	xdlHeurMinCost   = 256  // XDL_HEUR_MIN_COST
	xdlSnakeCnt      = 20   // XDL_SNAKE_CNT
	xdlKHeur         = 4    // XDL_K_HEUR
	xdlMaxEqLimit    = 1024 // XDL_MAX_EQLIMIT
	xdlSimscanWindow = 100  // XDL_SIMSCAN_WINDOW
	xdlKpdisRun      = 4    // XDL_KPDIS_RUN
)

// bogosqrt is xdiff's approximate square root: the power of two near sqrt(n).
func bogosqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// xdiffMarks marks the removed lines of x and the added lines of y (line class IDs below
// classes) as git's xdl_do_diff does, before its compaction.
func xdiffMarks(x, y []int, classes int) (ca, cb []bool) {
	ca, cb = make([]bool, len(x)), make([]bool, len(y))
	inX, inY := make([]int, classes), make([]int, classes)
	for _, c := range x {
		inX[c]++
	}
	for _, c := range y {
		inY[c]++
	}
	// Common lines at both ends take no part (xdl_trim_ends).
	start, lim := 0, min(len(x), len(y))
	for start < lim && x[start] == y[start] {
		start++
	}
	tail := 0
	for tail < lim-start && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	rx, hx := cleanup(x, inY, start, len(x)-tail-1, ca)
	ry, hy := cleanup(y, inX, start, len(y)-tail-1, cb)
	e := newXdiffEnv(len(hx), len(hy))
	e.recsCmp(hx, 0, len(hx), hy, 0, len(hy), false, func(i int) { ca[rx[i]] = true }, func(j int) { cb[ry[j]] = true })
	return ca, cb
}

// cleanup is xdl_cleanup_records for one side: lines with no match on the other side are
// changed for sure and left out, and so are lines with very many matches that sit among
// unmatched ones. It returns the kept lines' indexes and classes.
func cleanup(lines, otherCount []int, dstart, dend int, changed []bool) (rindex, ha []int) {
	if dend < dstart {
		return nil, nil
	}
	mlim := min(bogosqrt(len(lines)), xdlMaxEqLimit)
	dis := make([]byte, len(lines)+1)
	for i := dstart; i <= dend; i++ {
		switch nm := otherCount[lines[i]]; {
		case nm == 0:
			dis[i] = 0
		case nm >= mlim:
			dis[i] = 2
		default:
			dis[i] = 1
		}
	}
	for i := dstart; i <= dend; i++ {
		if dis[i] == 1 || (dis[i] == 2 && !cleanMmatch(dis, i, dstart, dend)) {
			rindex = append(rindex, i)
			ha = append(ha, lines[i])
		} else {
			changed[i] = true
		}
	}
	return rindex, ha
}

// cleanMmatch reports whether a line with many matches is surrounded, within a window, by
// mostly unmatched lines, so that dropping it cannot lose a real match (xdl_clean_mmatch).
func cleanMmatch(dis []byte, i, s, e int) bool {
	s = max(s, i-xdlSimscanWindow)
	e = min(e, i+xdlSimscanWindow)
	rdis0, rpdis0 := 0, 1
	for r := 1; i-r >= s; r++ {
		if dis[i-r] == 0 {
			rdis0++
		} else if dis[i-r] == 2 {
			rpdis0++
		} else {
			break
		}
	}
	if rdis0 == 0 {
		return false
	}
	rdis1, rpdis1 := 0, 1
	for r := 1; i+r <= e; r++ {
		if dis[i+r] == 0 {
			rdis1++
		} else if dis[i+r] == 2 {
			rpdis1++
		} else {
			break
		}
	}
	if rdis1 == 0 {
		return false
	}
	rdis1 += rdis0
	rpdis1 += rpdis0
	return rpdis1*xdlKpdisRun < rpdis1+rdis1
}

// xdiffEnv holds the diagonal vectors of the forward and backward searches, indexed by
// diagonal k = i1 - i2 plus off, and the cost past which the search settles for a good path.
type xdiffEnv struct {
	kvdf, kvdb []int
	off        int
	mxcost     int
}

func newXdiffEnv(n1, n2 int) *xdiffEnv {
	ndiags := n1 + n2 + 3
	return &xdiffEnv{kvdf: make([]int, ndiags), kvdb: make([]int, ndiags), off: n2 + 1, mxcost: max(bogosqrt(ndiags), xdlMaxCostMin)}
}

// recsCmp is xdl_recs_cmp: trim the common ends of the box, then split it where a forward and
// a backward search meet and recurse.
func (e *xdiffEnv) recsCmp(ha1 []int, off1, lim1 int, ha2 []int, off2, lim2 int, needMin bool, mark1, mark2 func(int)) {
	for off1 < lim1 && off2 < lim2 && ha1[off1] == ha2[off2] {
		off1, off2 = off1+1, off2+1
	}
	for off1 < lim1 && off2 < lim2 && ha1[lim1-1] == ha2[lim2-1] {
		lim1, lim2 = lim1-1, lim2-1
	}
	switch {
	case off1 == lim1:
		for ; off2 < lim2; off2++ {
			mark2(off2)
		}
	case off2 == lim2:
		for ; off1 < lim1; off1++ {
			mark1(off1)
		}
	default:
		i1, i2, minLo, minHi := e.split(ha1, off1, lim1, ha2, off2, lim2, needMin)
		e.recsCmp(ha1, off1, i1, ha2, off2, i2, minLo, mark1, mark2)
		e.recsCmp(ha1, i1, lim1, ha2, i2, lim2, minHi, mark1, mark2)
	}
}

// split is xdl_split: it returns a point of the box on a good edit path and whether each half
// must then be diffed minimally. Beyond mxcost, or past the heuristic's cost when a long
// snake was seen, it stops at the furthest-reaching path instead of the optimal one.
func (e *xdiffEnv) split(ha1 []int, off1, lim1 int, ha2 []int, off2, lim2 int, needMin bool) (int, int, bool, bool) {
	kvdf := func(d int) *int { return &e.kvdf[d+e.off] }
	kvdb := func(d int) *int { return &e.kvdb[d+e.off] }
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	*kvdf(fmid) = off1
	*kvdb(bmid) = lim1
	for ec := 1; ; ec++ {
		gotSnake := false
		if fmin > dmin {
			fmin--
			*kvdf(fmin - 1) = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			*kvdf(fmax + 1) = -1
		} else {
			fmax--
		}
		for d := fmax; d >= fmin; d -= 2 {
			var i1 int
			if *kvdf(d - 1) >= *kvdf(d + 1) {
				i1 = *kvdf(d - 1) + 1
			} else {
				i1 = *kvdf(d + 1)
			}
			prev1 := i1
			i2 := i1 - d
			for i1 < lim1 && i2 < lim2 && ha1[i1] == ha2[i2] {
				i1, i2 = i1+1, i2+1
			}
			if i1-prev1 > xdlSnakeCnt {
				gotSnake = true
			}
			*kvdf(d) = i1
			if odd && bmin <= d && d <= bmax && *kvdb(d) <= i1 {
				return i1, i2, true, true
			}
		}
		if bmin > dmin {
			bmin--
			*kvdb(bmin - 1) = math.MaxInt
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			*kvdb(bmax + 1) = math.MaxInt
		} else {
			bmax--
		}
		for d := bmax; d >= bmin; d -= 2 {
			var i1 int
			if *kvdb(d - 1) < *kvdb(d + 1) {
				i1 = *kvdb(d - 1)
			} else {
				i1 = *kvdb(d + 1) - 1
			}
			prev1 := i1
			i2 := i1 - d
			for i1 > off1 && i2 > off2 && ha1[i1-1] == ha2[i2-1] {
				i1, i2 = i1-1, i2-1
			}
			if prev1-i1 > xdlSnakeCnt {
				gotSnake = true
			}
			*kvdb(d) = i1
			if !odd && fmin <= d && d <= fmax && i1 <= *kvdf(d) {
				return i1, i2, true, true
			}
		}
		if needMin {
			continue
		}
		// A long snake after a costly search: take the diagonal that got furthest from the
		// corner, if it ends in a snake, rather than searching on.
		if gotSnake && ec > xdlHeurMinCost {
			best, s1, s2 := 0, 0, 0
			for d := fmax; d >= fmin; d -= 2 {
				dd := abs(d - fmid)
				i1 := *kvdf(d)
				i2 := i1 - d
				v := (i1 - off1) + (i2 - off2) - dd
				if v > xdlKHeur*ec && v > best && off1+xdlSnakeCnt <= i1 && i1 < lim1 && off2+xdlSnakeCnt <= i2 && i2 < lim2 {
					for k := 1; ha1[i1-k] == ha2[i2-k]; k++ {
						if k == xdlSnakeCnt {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, true, false
			}
			for d := bmax; d >= bmin; d -= 2 {
				dd := abs(d - bmid)
				i1 := *kvdb(d)
				i2 := i1 - d
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > xdlKHeur*ec && v > best && off1 < i1 && i1 <= lim1-xdlSnakeCnt && off2 < i2 && i2 <= lim2-xdlSnakeCnt {
					for k := 0; ha1[i1+k] == ha2[i2+k]; k++ {
						if k == xdlSnakeCnt-1 {
							best, s1, s2 = v, i1, i2
							break
						}
					}
				}
			}
			if best > 0 {
				return s1, s2, false, true
			}
		}
		// Enough: take the furthest-reaching path of either search.
		if ec >= e.mxcost {
			fbest, fbest1 := -1, -1
			for d := fmax; d >= fmin; d -= 2 {
				i1 := min(*kvdf(d), lim1)
				i2 := i1 - d
				if lim2 < i2 {
					i1, i2 = lim2+d, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := math.MaxInt, math.MaxInt
			for d := bmax; d >= bmin; d -= 2 {
				i1 := max(off1, *kvdb(d))
				i2 := i1 - d
				if i2 < off2 {
					i1, i2 = off2+d, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
