package source

// Git does not print the diff Myers' algorithm returns: it first slides each group of changed
// lines up or down where the surrounding lines allow it, to line up with changes in the other file
// or, by its indent heuristic, to where a reader expects the change (xdiff's
// xdl_change_compact, the default since git 2.14). Review comments must land inside the hunks
// GitHub shows, so the same compaction is done here. The constants are git's.

const (
	maxIndent                       = 200
	maxBlanks                       = 20
	startOfFilePenalty              = 1
	endOfFilePenalty                = 21
	totalBlankWeight                = -30
	postBlankWeight                 = 6
	relativeIndentPenalty           = -4
	relativeIndentWithBlankPenalty  = 10
	relativeOutdentPenalty          = 24
	relativeOutdentWithBlankPenalty = 17
	relativeDedentPenalty           = 23
	relativeDedentWithBlankPenalty  = 17
	indentWeight                    = 60
	indentHeuristicMaxSliding       = 100
)

// diffFile is one side of a diff: its line IDs and texts, and which lines changed, with a false
// sentinel before the first and after the last line as xdiff keeps them.
type diffFile struct {
	ids   []int
	lines [][]byte
	chg   []bool
}

func newDiffFile(ids []int, lines [][]byte, changed []bool) *diffFile {
	f := &diffFile{ids: ids, lines: lines, chg: make([]bool, len(ids)+2)}
	copy(f.chg[1:], changed)
	return f
}

func (f *diffFile) n() int             { return len(f.ids) }
func (f *diffFile) changed(i int) bool { return f.chg[i+1] }
func (f *diffFile) set(i int, v bool)  { f.chg[i+1] = v }

type group struct{ start, end int }

func (f *diffFile) groupInit() group {
	g := group{}
	for f.changed(g.end) {
		g.end++
	}
	return g
}

func (f *diffFile) groupNext(g *group) bool {
	if g.end == f.n() {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; f.changed(g.end); g.end++ {
	}
	return true
}

func (f *diffFile) groupPrevious(g *group) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; f.changed(g.start - 1); g.start-- {
	}
	return true
}

func (f *diffFile) slideDown(g *group) bool {
	if g.end < f.n() && f.ids[g.start] == f.ids[g.end] {
		f.set(g.start, false)
		g.start++
		f.set(g.end, true)
		g.end++
		for f.changed(g.end) {
			g.end++
		}
		return true
	}
	return false
}

func (f *diffFile) slideUp(g *group) bool {
	if g.start > 0 && f.ids[g.start-1] == f.ids[g.end-1] {
		g.start--
		f.set(g.start, true)
		g.end--
		f.set(g.end, false)
		for f.changed(g.start - 1) {
			g.start--
		}
		return true
	}
	return false
}

// compact slides the change groups of f, keeping the groups of the other file o in step.
func compact(f, o *diffFile) {
	g, go_ := f.groupInit(), o.groupInit()
	for {
		if g.end != g.start {
			var earliestEnd, endMatchingOther, size int
			for {
				size = g.end - g.start
				endMatchingOther = -1
				for f.slideUp(&g) {
					o.groupPrevious(&go_)
				}
				earliestEnd = g.end
				if go_.end > go_.start {
					endMatchingOther = g.end
				}
				for f.slideDown(&g) {
					o.groupNext(&go_)
					if go_.end > go_.start {
						endMatchingOther = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
			case endMatchingOther != -1:
				for go_.end == go_.start {
					f.slideUp(&g)
					o.groupPrevious(&go_)
				}
			default:
				best, bestScore := -1, splitScore{}
				shift := max(earliestEnd, g.end-size-1, g.end-indentHeuristicMaxSliding)
				for ; shift <= g.end; shift++ {
					var s splitScore
					s.add(f.measure(shift))
					s.add(f.measure(shift - size))
					if best == -1 || s.cmp(bestScore) <= 0 {
						best, bestScore = shift, s
					}
				}
				for g.end > best {
					f.slideUp(&g)
					o.groupPrevious(&go_)
				}
			}
		}
		if !f.groupNext(&g) {
			break
		}
		o.groupNext(&go_)
	}
}

func indentOf(line []byte) int {
	n := 0
	for _, c := range line {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		case '\n', '\r', '\f', '\v':
		default:
			return n
		}
		if n >= maxIndent {
			return maxIndent
		}
	}
	return -1 // only white space
}

type splitMeasure struct {
	endOfFile                                          bool
	indent, preBlank, preIndent, postBlank, postIndent int
}

func (f *diffFile) measure(split int) splitMeasure {
	var m splitMeasure
	if split >= f.n() {
		m.endOfFile, m.indent = true, -1
	} else {
		m.indent = indentOf(f.lines[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = indentOf(f.lines[i]); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < f.n(); i++ {
		if m.postIndent = indentOf(f.lines[i]); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

type splitScore struct{ effectiveIndent, penalty int }

func (s *splitScore) add(m splitMeasure) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += indent
	switch {
	case indent == -1, m.preIndent == -1, indent == m.preIndent:
	case indent > m.preIndent:
		s.penalty += pick(anyBlanks, relativeIndentWithBlankPenalty, relativeIndentPenalty)
	case m.postIndent != -1 && m.postIndent > indent:
		s.penalty += pick(anyBlanks, relativeOutdentWithBlankPenalty, relativeOutdentPenalty)
	default:
		s.penalty += pick(anyBlanks, relativeDedentWithBlankPenalty, relativeDedentPenalty)
	}
}

func (s splitScore) cmp(o splitScore) int {
	c := 0
	if s.effectiveIndent > o.effectiveIndent {
		c = 1
	} else if s.effectiveIndent < o.effectiveIndent {
		c = -1
	}
	return indentWeight*c + s.penalty - o.penalty
}

func pick(cond bool, a, b int) int {
	if cond {
		return a
	}
	return b
}
