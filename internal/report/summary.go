package report

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
)

// whatRunes bounds what a breaking change's line in the summary says it is.
const whatRunes = 160

// footReserve is kept for the line that counts what was cut and says where to read it.
const footReserve = 600

// MarkdownWithin is the Markdown report in at most limit bytes, with headline (Markdown the
// caller vouches for) under the title and elsewhere (Markdown) saying where to read what it
// cuts. What fits is decided by importance, never by the order of names: first every CRD with
// its counts and every breaking change as one line; then the details — a table per CRD, one row
// per change at its first place with its places counted, a collapsed block listing the places
// and the full values, the safe changes collapsed at the end — taken errors first, then
// warnings, then info. The notices take at most a quarter of the room. Every piece of text from
// the CRDs is escaped: it cannot break the table, inject HTML or links, or @-mention anyone.
// What is cut is counted in a last line that points at elsewhere.
func MarkdownWithin(r Report, limit int, headline, elsewhere string) string {
	s := Summarize(r)
	set := byCRD(r.Findings, finding.Info)
	var head strings.Builder
	fmt.Fprintf(&head, "### crdguard: %s (%s compared)\n\n", Tally(set.All, finding.Error, finding.Warning), Count(s.CRDs, "CRD"))
	if headline != "" {
		head.WriteString(headline + "\n\n")
	}
	if r.Compared != nil {
		fmt.Fprintf(&head, "%s.\n\n", Escape(upperFirst(r.Compared.Line())))
	}
	var end strings.Builder
	if s.Ignored > 0 {
		fmt.Fprintf(&end, "\n%s ignored by configuration.\n", Count(s.Ignored, "finding"))
	}
	word, advice := r.verdict().words(s, Escape)
	fmt.Fprintf(&end, "\n**Verdict: %s** — %s\n", word, advice)
	room := limit - head.Len() - end.Len() - footReserve
	if len(set.All) == 0 {
		return head.String() + "No CRD changes found.\n" + notices(r.Notices, room/4) + end.String()
	}
	var firsts []finding.Finding
	for _, g := range set.All {
		firsts = append(firsts, *g.First())
	}
	ab := newAbbreviator(firsts, textValueRunes)
	index, unlisted := overview(set, room)
	room -= len(index)
	notes := notices(r.Notices, min(room, limit/4))
	room -= len(notes)
	sections := set.CRDs
	if len(set.Shared) > 0 {
		sections = append(sections, crdChanges{Groups: set.Shared, several: true})
	}
	details, cut := fitDetails(sections, ab, room)
	var foot strings.Builder
	if unlisted > 0 {
		fmt.Fprintf(&foot, "\n%s could not be listed within GitHub's limit of %d characters.", Count(unlisted, "more breaking change"), limit)
	}
	if c := cut.String(); c != "" {
		fmt.Fprintf(&foot, "\nNot shown here (GitHub's limit of %d characters): %s.", limit, c)
	}
	if foot.Len() > 0 && elsewhere != "" {
		fmt.Fprintf(&foot, " Read them in full: %s.", elsewhere)
	}
	if foot.Len() > 0 {
		foot.WriteString("\n")
	}
	return head.String() + index + details + foot.String() + notes + end.String()
}

// notices are the notices as quotes within room bytes; those that do not fit are counted.
func notices(ns []string, room int) string {
	var b strings.Builder
	const moreReserve = 40
	for i, n := range ns {
		line := fmt.Sprintf("\n> notice: %s\n", Escape(n))
		if b.Len()+len(line)+moreReserve > room {
			fmt.Fprintf(&b, "\n> %s not shown.\n", Count(len(ns)-i, "more notice"))
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// overview is the part of the summary nothing is cut from: a table of every CRD with its counts,
// then every breaking change as one line, the most serious CRDs first. When the lines do not fit
// in room they lose what they say the change is, and only then the last of them are counted
// (unlisted) instead of listed.
func overview(set changeSet, room int) (string, int) {
	var b strings.Builder
	b.WriteString("| CRD | Breaking changes | Warnings | Safe changes |\n|---|---|---|---|\n")
	for _, c := range set.CRDs {
		gs := c.counted()
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", orDash(Escape(c.CRD), "(unnamed document)"),
			cell(gs, finding.Error), cell(gs, finding.Warning), cell(gs, finding.Info))
	}
	var full, short []string
	add := func(crd string, g *change.Group) {
		if g.First().Severity != finding.Error {
			return
		}
		line := breakingLine(crd, g)
		short = append(short, line+"\n")
		full = append(full, line+": "+whatOf(g.First())+"\n")
	}
	for _, c := range set.CRDs {
		for i := range c.Groups {
			add(c.CRD, &c.Groups[i])
		}
	}
	for i := range set.Shared {
		add(severalCRDs(set.Shared[i].CRDs()), &set.Shared[i])
	}
	if len(full) == 0 {
		return b.String(), 0
	}
	fmt.Fprintf(&b, "\n**%s:**\n\n", upperFirst(Count(len(full), "breaking change")))
	lines := full
	if b.Len()+total(full) > room {
		lines = short
	}
	for i, l := range lines {
		if b.Len()+len(l) > room {
			return b.String(), len(lines) - i
		}
		b.WriteString(l)
	}
	return b.String(), 0
}

// severalCRDs names the CRDs a shared change is in: all of them up to three, else how many and
// the first.
func severalCRDs(crds []string) string {
	if len(crds) <= 3 {
		return strings.Join(crds, ", ")
	}
	return fmt.Sprintf("%d CRDs (%s, …)", len(crds), crds[0])
}

// breakingLine names a breaking change: CRD, rule, version, path and how many places (the
// message names the built-in type's field a change an embedded type brings is about).
func breakingLine(crd string, g *change.Group) string {
	f := g.First()
	s := fmt.Sprintf("- %s `%s`", orDash(Escape(crd), "(unnamed document)"), f.Rule)
	for _, p := range []string{f.Version, f.Path} {
		if p != "" {
			s += " " + Escape(p)
		}
	}
	if g.Count() > 1 {
		s += " (" + change.Places(g.Count()) + ")"
	}
	return s
}

// whatOf is what a change is, for its one line, in Markdown: the message up to its witness and
// advice, without the path the line already names, cut at whatRunes. A CEL rule goes by its
// message (or messageExpression), as in the changelog, not by an expression that may run to
// hundreds of characters.
func whatOf(f *finding.Finding) string {
	w := what(plainJSON(f.Message))
	if f.Path != "" && strings.HasPrefix(w, f.Path+" ") {
		w = w[len(f.Path)+1:]
	}
	before, after, ok := ruleNamed(f, w)
	switch {
	case !ok:
		return Escape(shorten(w, whatRunes))
	case f.RuleMessage != "":
		return Escape(shorten(before+"“"+f.RuleMessage+"”"+after, whatRunes))
	}
	// The expression of a message is code, shown as it is; what is around it shares the room.
	room := max(whatRunes-utf8.RuneCountInString(before+after), whatRunes/2)
	if strings.HasPrefix(after, " ") { // which Escape would drop
		after = " " + Escape(after)
	} else {
		after = Escape(after)
	}
	return Escape(before) + "with the message " + CodeSpan(shorten(f.RuleMessageExpression, room)) + after
}

func total(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// cell counts a CRD's changes of one severity with their places: "2 at 5 places", "0".
func cell(gs []change.Group, sev finding.Severity) string {
	n, p := 0, 0
	for i := range gs {
		if gs[i].First().Severity == sev {
			n++
			p += gs[i].Count()
		}
	}
	if p > n {
		return fmt.Sprintf("%d at %s", n, change.Places(p))
	}
	return fmt.Sprint(n)
}

// cuts counts the details a summary left out, by severity.
type cuts struct {
	rows   [3]int // changes without their row, by severity
	places int    // changes whose places or full values are not listed
}

func (c cuts) String() string {
	var parts []string
	for _, sev := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
		if n := c.rows[sev]; n > 0 {
			parts = append(parts, Count(n, severityNoun[sev]))
		}
	}
	var out []string
	if len(parts) > 0 {
		out = append(out, "the details of "+strings.Join(parts, ", "))
	}
	if c.places > 0 {
		out = append(out, "the places or full values of "+Count(c.places, "change"))
	}
	return strings.Join(out, "; ")
}

// piece is a row of a CRD's table or the collapsed block under it.
type piece struct {
	crd, group int
	text       string
	taken      bool
}

// fitDetails writes the tables of changes within room bytes: rows, then their blocks of places,
// taken for errors first, then warnings, then info; safe changes go in one collapsed block.
func fitDetails(all []crdChanges, ab *abbreviator, room int) (string, cuts) {
	var rows, blocks [3][]piece
	for ci, c := range all {
		for gi := range c.Groups {
			g := &c.Groups[gi]
			sev := g.First().Severity
			rows[sev] = append(rows[sev], piece{crd: ci, group: gi, text: mdRow(g, ab)})
			if d := detailsOf(g, ab); d != "" {
				blocks[sev] = append(blocks[sev], piece{crd: ci, group: gi, text: d})
			}
		}
	}
	infoOpen := "\n<details><summary>" + upperFirst(Tally(infoGroups(all))) + " (info)</summary>\n"
	const infoClose = "\n</details>\n"
	opened := map[[2]int]bool{} // CRD, info: its table is started
	heading := func(ci int, info bool) string {
		name := orDash(Escape(all[ci].CRD), "(unnamed document)")
		if all[ci].several {
			name = "In several CRDs"
		}
		if info {
			return "\n**" + name + "**\n\n" + mdTableHead
		}
		return "\n#### " + name + ": " + Tally(nonInfo(all[ci].Groups)) + "\n\n" + mdTableHead
	}
	used := 0
	var c cuts
	taken := map[[2]int]bool{} // CRD, group: its row is in
	// Rows of breaking changes and warnings, then their places, then the safe changes' rows and
	// places: a warning's row says more than the list of a breaking change's places.
	for _, step := range []struct {
		sev  finding.Severity
		rows bool
	}{{finding.Error, true}, {finding.Warning, true}, {finding.Error, false}, {finding.Warning, false}, {finding.Info, true}, {finding.Info, false}} {
		sev, info := step.sev, step.sev == finding.Info
		if !step.rows {
			for i := range blocks[sev] {
				p := &blocks[sev][i]
				if !taken[[2]int{p.crd, p.group}] || used+len(p.text) > room {
					c.places++
					continue
				}
				used += len(p.text)
				p.taken = true
			}
			continue
		}
		for i := range rows[sev] {
			p := &rows[sev][i]
			cost := len(p.text)
			if !opened[[2]int{p.crd, b2i(info)}] {
				cost += len(heading(p.crd, info))
			}
			if info && !anyInfo(opened) {
				cost += len(infoOpen) + len(infoClose)
			}
			if used+cost > room {
				c.rows[sev]++
				continue
			}
			used += cost
			p.taken = true
			opened[[2]int{p.crd, b2i(info)}] = true
			taken[[2]int{p.crd, p.group}] = true
		}
	}
	var b strings.Builder
	for _, info := range []bool{false, true} {
		var sec strings.Builder
		for ci := range all {
			if !opened[[2]int{ci, b2i(info)}] {
				continue
			}
			sec.WriteString(heading(ci, info))
			for _, sev := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
				if (sev == finding.Info) == info {
					writeTaken(&sec, rows[sev], ci)
				}
			}
			for _, sev := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
				if (sev == finding.Info) == info {
					writeTaken(&sec, blocks[sev], ci)
				}
			}
		}
		if info && sec.Len() > 0 {
			b.WriteString(infoOpen + sec.String() + infoClose)
		} else {
			b.WriteString(sec.String())
		}
	}
	return b.String(), c
}

func writeTaken(b *strings.Builder, ps []piece, crd int) {
	for _, p := range ps {
		if p.crd == crd && p.taken {
			b.WriteString(p.text)
		}
	}
}

func anyInfo(opened map[[2]int]bool) bool {
	for k := range opened {
		if k[1] == 1 {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nonInfo are the changes at warning or error.
func nonInfo(gs []change.Group) []change.Group {
	var out []change.Group
	for _, g := range gs {
		if g.First().Severity > finding.Info {
			out = append(out, g)
		}
	}
	return out
}

// infoGroups are the safe changes of every CRD.
func infoGroups(all []crdChanges) []change.Group {
	var out []change.Group
	for _, c := range all {
		for _, g := range c.Groups {
			if g.First().Severity == finding.Info {
				out = append(out, g)
			}
		}
	}
	return out
}
