package regexlang

import (
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// newGraph prepares the product of the programs (the new one last), numbering their rune
// instructions by class.
func newGraph(progs []*syntax.Prog) *graph {
	g := &graph{sides: progs, ids: map[string]int{}, groups: map[string][]group{}, class: make([][]int, len(progs))}
	byRunes := map[string]int{}
	for side, prog := range g.sides {
		g.class[side] = make([]int, len(prog.Inst))
		for pc := range prog.Inst {
			in := &prog.Inst[pc]
			key, ok := classKey(in)
			if !ok {
				continue
			}
			c, seen := byRunes[key]
			if !seen {
				c = len(g.classes)
				byRunes[key] = c
				g.classes = append(g.classes, in)
			}
			g.class[side][pc] = c
		}
	}
	return g
}

// classKey identifies the runes a rune instruction matches; false for other instructions.
func classKey(in *syntax.Inst) (string, bool) {
	var b strings.Builder
	switch in.Op {
	case syntax.InstRune:
		b.WriteByte('r')
		if len(in.Rune) == 1 && syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
			b.WriteByte('i')
		}
	case syntax.InstRune1:
		b.WriteByte('r')
	case syntax.InstRuneAny:
		return "any", true
	case syntax.InstRuneAnyNotNL:
		return "notnl", true
	default:
		return "", false
	}
	for _, r := range in.Rune {
		b.WriteString(strconv.Itoa(int(r)))
		b.WriteByte(',')
	}
	return b.String(), true
}

// group is a set of runes of one kind (newline, word, other) that the classes a state waits on
// all treat alike: every one leads to the same next state. in says which classes match them; r
// is the most readable of them.
type group struct {
	kind int
	r    rune
	in   map[int]bool
}

// partition groups the alphabet for a set of classes, once per set.
func (g *graph) partition(classes []int) []group {
	var key strings.Builder
	for _, c := range classes {
		key.WriteString(strconv.Itoa(c))
		key.WriteByte(',')
	}
	if gs, ok := g.groups[key.String()]; ok {
		return gs
	}
	var cuts []rune
	for _, c := range classes {
		cuts = instCuts(g.classes[c], cuts)
	}
	var gs []group
	index := map[string]int{}
	sig := make([]byte, 0, 16)
	for _, iv := range intervals(cuts) {
		g.steps++
		r := iv.representative()
		k := kindOf(r)
		sig = append(sig[:0], byte(k))
		for _, c := range classes {
			if matchRune(g.classes[c], iv.lo) {
				sig = strconv.AppendInt(sig, int64(c), 36)
			}
			sig = append(sig, ',')
		}
		if i, ok := index[string(sig)]; ok {
			if rank(r) < rank(gs[i].r) {
				gs[i].r = r
			}
			continue
		}
		in := map[int]bool{}
		for _, c := range classes {
			if matchRune(g.classes[c], iv.lo) {
				in[c] = true
			}
		}
		index[string(sig)] = len(gs)
		gs = append(gs, group{kind: k, r: r, in: in})
	}
	g.groups[key.String()] = gs
	return gs
}

func matchRune(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRune:
		return in.MatchRune(r)
	case syntax.InstRune1:
		return r == in.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// instCuts adds the boundaries of the runes an instruction matches: each interval starts a
// class of runes the instruction cannot tell apart.
func instCuts(in *syntax.Inst, cuts []rune) []rune {
	switch in.Op {
	case syntax.InstRune1:
		return append(cuts, in.Rune[0], in.Rune[0]+1)
	case syntax.InstRune:
		if len(in.Rune) == 1 {
			r0 := in.Rune[0]
			cuts = append(cuts, r0, r0+1)
			if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
				for r := unicode.SimpleFold(r0); r != r0; r = unicode.SimpleFold(r) {
					cuts = append(cuts, r, r+1)
				}
			}
			return cuts
		}
		for i := 0; i+1 < len(in.Rune); i += 2 {
			cuts = append(cuts, in.Rune[i], in.Rune[i+1]+1)
		}
	}
	return cuts
}

// interval is a range of runes no instruction of a state tells apart.
type interval struct{ lo, hi rune }

// intervals splits the alphabet (every Unicode scalar value) at the cuts, and where the context
// of empty-width assertions changes (newline, ASCII word characters).
func intervals(cuts []rune) []interval {
	all := append(slices.Clone(cuts), 0, '\n', '\n'+1, '0', '9'+1, 'A', 'Z'+1, '_', '_'+1, 'a', 'z'+1,
		utf8.MaxRune+1, 0xD800, 0xE000)
	slices.Sort(all)
	all = slices.Compact(all)
	var out []interval
	for i := 0; i+1 < len(all); i++ {
		lo, hi := all[i], all[i+1]-1
		if lo < 0 || lo > utf8.MaxRune || lo >= 0xD800 && hi < 0xE000 {
			continue // not a scalar value: surrogates
		}
		out = append(out, interval{lo, min(hi, utf8.MaxRune)})
	}
	return out
}

// readable are the runes examples are written with when they may choose.
const readable = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-._/:"

// representative is a rune of the interval a reader recognises: a letter or digit if there is
// one, else printable ASCII, else a printable rune, else the first.
func (iv interval) representative() rune {
	if iv.lo < utf8.RuneSelf {
		for _, r := range readable {
			if iv.lo <= r && r <= iv.hi {
				return r
			}
		}
	}
	for r := iv.lo; r <= iv.hi && r < iv.lo+16; r++ {
		if unicode.IsPrint(r) && r != ' ' {
			return r
		}
	}
	return iv.lo
}

// rank orders runes by readability (lower is better), so examples prefer letters.
func rank(r rune) int {
	if i := strings.IndexRune(readable, r); i >= 0 {
		return i
	}
	switch {
	case r < utf8.RuneSelf && unicode.IsPrint(r) && r != ' ':
		return len(readable)
	case r == ' ':
		return len(readable) + 1
	case unicode.IsPrint(r):
		return len(readable) + 2
	}
	return len(readable) + 3
}
