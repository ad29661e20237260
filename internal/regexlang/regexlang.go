// Package regexlang decides whether every string one regular expression matches is matched by
// another, as Go's regexp (RE2 syntax, which the API server validates `pattern` and CEL's
// matches() with) matches them: unanchored, a match anywhere in the string, unless the pattern
// anchors itself. It compiles both patterns to regexp/syntax programs and explores the product
// of their subset constructions breadth first, so a string the old pattern matches and the new
// one does not is found at its shortest. The work is bounded; beyond the bound the answer is
// Undecided.
package regexlang

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
)

// Verdict is what Includes decided.
type Verdict int

// The verdicts.
const (
	// Undecided: a pattern does not compile, or the bound was reached.
	Undecided Verdict = iota
	// Included: every string the old pattern matches (within the bounds) the new one matches.
	Included
	// Witness: Examples are matched by the old pattern and not by the new one.
	Witness
)

// Bounds restrict the strings that count, as minLength and maxLength do on the schema node (in
// runes, as the API server counts them). Max < 0 means no upper bound.
type Bounds struct {
	Min, Max int
}

// Result is the decision for one pair of patterns.
type Result struct {
	Verdict Verdict
	// Examples are strings the old pattern matches and the new one does not, shortest first.
	Examples []string
	// Why says why the verdict is Undecided.
	Why string
	// Steps is the work spent, in the units MaxSteps bounds, so that callers can bound the
	// work of many comparisons.
	Steps int
}

// The bounds on the work, so that a hostile pattern (`(.{0,100}){0,10}`) cannot stall a run:
// product states explored, and steps — rune intervals classified, rune groups stepped over and
// instructions followed in ε-closures — in total (2^21 steps take about 0.2 s).
const (
	MaxStates = 4096
	MaxSteps  = 1 << 21
	// MaxExamples is how many witnesses are returned, for callers that must also meet
	// constraints the automaton does not know (a format).
	MaxExamples = 8
	// MaxWhere bounds the further patterns of IncludesWhere (a state keeps one bit per pattern
	// on the old side).
	MaxWhere = 6
)

// Includes decides whether every string within b that old matches is matched by new.
func Includes(old, new string, b Bounds) Result {
	return IncludesWhere(old, nil, new, b)
}

// IncludesWhere is Includes for the strings old matches that also match every pattern of
// where: what a format demands of them (at most MaxWhere patterns).
func IncludesWhere(old string, where []string, new string, b Bounds) Result {
	if len(where) > MaxWhere {
		return Result{Why: fmt.Sprintf("more than %d further patterns", MaxWhere)}
	}
	var progs []*syntax.Prog
	for i, p := range append(append([]string{old}, where...), new) {
		prog, err := compile(p)
		if err != nil {
			which := "the old pattern"
			if i == len(where)+1 {
				which = "the new pattern"
			} else if i > 0 {
				which = "a further pattern"
			}
			return Result{Why: fmt.Sprintf("%s does not compile: %v", which, err)}
		}
		progs = append(progs, prog)
	}
	if b.Max >= 0 && b.Min > b.Max {
		return Result{Verdict: Included} // the old bounds allow no string at all
	}
	g := newGraph(progs)
	res := g.decide(b)
	res.Steps = g.steps
	return res
}

// decide explores the product and searches it for witnesses within the bounds.
func (g *graph) decide(b Bounds) Result {
	if !g.explore(b) {
		return Result{Why: fmt.Sprintf("comparing the patterns takes more than %d states or %d steps", MaxStates, MaxSteps)}
	}
	ex, ok := g.witnesses(b)
	switch {
	case !ok:
		return Result{Why: fmt.Sprintf("searching for a string of the allowed lengths takes more than %d steps", MaxSteps)}
	case len(ex) == 0:
		return Result{Verdict: Included}
	}
	return Result{Verdict: Witness, Examples: ex}
}

// compile turns a pattern into the program Go's regexp runs (regexp.Compile: Perl flags,
// simplified).
func compile(pattern string) (*syntax.Prog, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return syntax.Compile(re.Simplify())
}

// The context of a position that empty-width assertions (^, $, \b, with (?m) too) look at: the
// rune before it. The API server's strings are valid UTF-8 (JSON decoding replaces invalid
// bytes), so the alphabet is every Unicode scalar value.
const (
	atBegin = iota // no rune before
	afterNewline
	afterWord
	afterOther
)

// contextRune stands for each kind of previous rune in syntax.EmptyOpContext.
var contextRune = [...]rune{atBegin: -1, afterNewline: '\n', afterWord: 'a', afterOther: ' '}

func kindOf(r rune) int {
	switch {
	case r == '\n':
		return afterNewline
	case syntax.IsWordChar(r):
		return afterWord
	}
	return afterOther
}

// state is a product state: for each side (the old pattern, the further patterns the old
// strings match, the new pattern last) the program counters waiting for the next rune (before
// the start of a new match is added and the ε-closure taken), and which sides of the old have
// matched already (a match anywhere matches the string; a side that matched drops its threads).
// The new side never has matched in an explored state: no extension can be a witness then.
type state struct {
	pcs     [][]uint32
	matched uint8 // bit i: side i matched
	prev    int
}

func (s *state) key() string {
	var b strings.Builder
	b.WriteByte(byte('0' + s.prev))
	b.WriteByte('0' + s.matched)
	for i, pcs := range s.pcs {
		if i > 0 {
			b.WriteByte('|')
		}
		for _, pc := range pcs {
			b.WriteString(strconv.FormatUint(uint64(pc), 36))
			b.WriteByte(',')
		}
	}
	return b.String()
}

// edge is a transition over one rune: every rune of the intervals it stands for leads to the
// same state; r is a readable one of them.
type edge struct {
	r  rune
	to int
}

// graph is the explored product automaton.
type graph struct {
	sides  []*syntax.Prog
	ids    map[string]int
	states []*state
	edges  [][]edge
	// accepts marks the states where the string read so far is a witness: every side of the
	// old matches it and the new one does not.
	accepts []bool
	// depth is each state's distance from the start in runes.
	depth []int
	steps int
	// class numbers the rune instructions of each side by the runes they match, so that
	// states waiting on the same classes share one partition of the alphabet (a class repeated
	// {1,253} times is one class).
	class   [][]int
	classes []*syntax.Inst
	groups  map[string][]group
}

// add returns the id of a state, adding it at this distance from the start if it is new.
func (g *graph) add(s *state, depth int) int {
	k := s.key()
	if id, ok := g.ids[k]; ok {
		return id
	}
	id := len(g.states)
	g.ids[k] = id
	g.states = append(g.states, s)
	g.depth = append(g.depth, depth)
	g.edges = append(g.edges, nil)
	g.accepts = append(g.accepts, false)
	return id
}

// explore builds the reachable product states breadth first, so that states are expanded in
// the order of their distance from the start. It stops early once a witness within the bounds
// is known and the states one rune further are expanded too (for more examples): the shortest
// witnesses lie in the explored part then. false when the bounds on the work come first.
func (g *graph) explore(b Bounds) bool {
	g.add(&state{prev: atBegin, pcs: make([][]uint32, len(g.sides))}, 0)
	found := -1
	for id := 0; id < len(g.states); id++ {
		d := g.depth[id]
		if found >= 0 && d > found+1 {
			return true
		}
		if len(g.states) > MaxStates || g.steps > MaxSteps {
			return found >= 0
		}
		g.expand(id)
		if found < 0 && g.accepts[id] && d >= b.Min && (b.Max < 0 || d <= b.Max) {
			found = d
		}
	}
	return found >= 0 || len(g.states) <= MaxStates && g.steps <= MaxSteps
}

// closure is what one side does at a position: the rune instructions waiting there, and
// whether it matches there.
type closure struct {
	runes   []uint32
	matched bool
	// visited counts the instructions followed, the work the closure took.
	visited int
}

// closeOver follows the ε-transitions of prog from pcs and from the program's start (a match
// may begin at any position), under the empty-width flags of the position.
func closeOver(prog *syntax.Prog, pcs []uint32, flags syntax.EmptyOp) closure {
	var c closure
	seen := make(map[uint32]bool, 2*len(pcs)+4)
	stack := append(slices.Clone(pcs), uint32(prog.Start))
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		c.visited++
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flags == 0 {
				stack = append(stack, in.Out)
			}
		case syntax.InstMatch:
			c.matched = true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			c.runes = append(c.runes, pc)
		}
	}
	slices.Sort(c.runes)
	return c
}

// expand computes the edges of a state and whether it accepts.
func (g *graph) expand(id int) {
	s := g.states[id]
	last := len(g.sides) - 1 // the new side
	all := uint8(1)<<last - 1
	// At the end of the string.
	end := s.matched
	for side, prog := range g.sides {
		c := closeOver(prog, s.pcs[side], syntax.EmptyOpContext(contextRune[s.prev], -1))
		g.steps += c.visited
		if c.matched {
			end |= 1 << side
		}
	}
	g.accepts[id] = end == all
	// Before each kind of next rune.
	var at [3][]closure
	var classes []int
	for k := afterNewline; k <= afterOther; k++ {
		flags := syntax.EmptyOpContext(contextRune[s.prev], contextRune[k])
		at[k-1] = make([]closure, len(g.sides))
		for side, prog := range g.sides {
			if s.matched&(1<<side) != 0 {
				continue
			}
			c := closeOver(prog, s.pcs[side], flags)
			g.steps += c.visited
			at[k-1][side] = c
			for _, pc := range c.runes {
				classes = append(classes, g.class[side][pc])
			}
		}
	}
	slices.Sort(classes)
	classes = slices.Compact(classes)
	best := map[int]int{} // target → index in edges
	for _, gr := range g.partition(classes) {
		g.steps++
		cl := at[gr.kind-1]
		if cl[last].matched {
			continue // the new side matches here, whatever follows
		}
		next := &state{prev: gr.kind, matched: s.matched, pcs: make([][]uint32, len(g.sides))}
		for side := range last {
			if cl[side].matched {
				next.matched |= 1 << side
			}
		}
		for side, prog := range g.sides {
			if next.matched&(1<<side) != 0 {
				continue
			}
			var out []uint32
			for _, pc := range cl[side].runes {
				if gr.in[g.class[side][pc]] {
					out = append(out, prog.Inst[pc].Out)
				}
			}
			slices.Sort(out)
			next.pcs[side] = slices.Compact(out)
		}
		to := g.add(next, g.depth[id]+1)
		if i, ok := best[to]; ok {
			if rank(gr.r) < rank(g.edges[id][i].r) {
				g.edges[id][i].r = gr.r
			}
			continue
		}
		best[to] = len(g.edges[id])
		g.edges[id] = append(g.edges[id], edge{r: gr.r, to: to})
	}
	slices.SortStableFunc(g.edges[id], func(a, b edge) int { return rank(a.r) - rank(b.r) })
}
