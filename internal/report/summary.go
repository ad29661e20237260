package report

import (
	"fmt"
	"slices"
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
	summary, _ := MarkdownSplit(r, limit, 0, headline, elsewhere)
	return summary
}

// MarkdownSplit is MarkdownWithin for a place with two fields, as a check run has: the summary
// within limit bytes, then a text shown below it within textLimit bytes (none when 0). The
// summary keeps the overview — every CRD, every breaking change, the line that counts what is
// cut — and the details that fit; the text continues with the breaking changes' lines the
// summary had no room for and the details it left out, by the same order of importance. The
// summary says what the text continues with, and counts as not shown only what neither holds.
func MarkdownSplit(r Report, limit, textLimit int, headline, elsewhere string) (summary, text string) {
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
	if textLimit > 0 {
		room -= continuedReserve
	}
	if len(set.All) == 0 {
		return head.String() + "No CRD changes found.\n" + notices(r.Notices, room/4) + end.String(), ""
	}
	var firsts []finding.Finding
	for _, g := range set.All {
		firsts = append(firsts, *g.First())
	}
	ab := newAbbreviator(firsts, textValueRunes)
	index, rest := overview(set, room)
	room -= len(index)
	notes := notices(r.Notices, min(room, limit/4))
	room -= len(notes)
	sections := set.CRDs
	if len(set.Shared) > 0 {
		sections = append(sections, crdChanges{Groups: set.Shared, several: true})
	}
	d := newDetails(sections, ab)
	d.fit(inSummary, room)
	moved := 0
	if textLimit > 0 {
		var lines string
		lines, moved = fitLines(rest, textLimit-len(textHead))
		d.fit(inText, textLimit-len(textHead)-len(lines))
		if body := lines + d.render(inText); body != "" {
			text = textHead + body
		}
	}
	unlisted := len(rest) - moved
	var foot strings.Builder
	if c := d.count(inText).String(); moved > 0 || c != "" {
		what := []string{}
		if moved > 0 {
			what = append(what, Count(moved, "more breaking change"))
		}
		if c != "" {
			what = append(what, c)
		}
		fmt.Fprintf(&foot, "\nContinued below the summary (GitHub's limit of %d characters): %s.", limit, strings.Join(what, "; "))
	}
	limits := fmt.Sprintf("GitHub's limit of %d characters", limit)
	here := "here"
	if textLimit > 0 {
		limits = fmt.Sprintf("GitHub's limits of %d characters for the summary and %d for the text below it", limit, textLimit)
		here = "here or below"
	}
	if unlisted > 0 {
		where := ""
		if textLimit > 0 {
			where = " here or below"
		}
		fmt.Fprintf(&foot, "\n%s could not be listed%s within %s.", Count(unlisted, "more breaking change"), where, limits)
	}
	if c := d.count(nowhere).String(); c != "" {
		fmt.Fprintf(&foot, "\nNot shown %s (%s): %s.", here, limits, c)
	}
	if (unlisted > 0 || d.count(nowhere).String() != "") && elsewhere != "" {
		fmt.Fprintf(&foot, " Read them in full: %s.", elsewhere)
	}
	if foot.Len() > 0 {
		foot.WriteString("\n")
	}
	return head.String() + index + d.render(inSummary) + foot.String() + notes + end.String(), text
}

// textHead starts the text a check run shows below its summary.
const textHead = "### crdguard: continued from the summary\n"

// continuedReserve is kept in a summary followed by a text for the line that says what the text
// continues with.
const continuedReserve = 300

// fitLines are as many of lines as fit in room bytes, under a title that counts them, and how
// many that is.
func fitLines(lines []string, room int) (string, int) {
	if len(lines) == 0 {
		return "", 0
	}
	var b strings.Builder
	const titleReserve = 60
	n := 0
	for _, l := range lines {
		if b.Len()+len(l)+titleReserve > room {
			break
		}
		b.WriteString(l)
		n++
	}
	if n == 0 {
		return "", 0
	}
	return fmt.Sprintf("\n**%s:**\n\n", upperFirst(Count(n, "more breaking change"))) + b.String(), n
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
// in room they lose what they say the change is, and only then the last of them are left out:
// rest are those lines, for another field to list or the report to count.
func overview(set changeSet, room int) (string, []string) {
	var b strings.Builder
	b.WriteString("| CRD | Breaking changes | Warnings | Safe changes |\n|---|---|---|---|\n")
	for _, c := range set.CRDs {
		gs := c.counted()
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", orDash(Escape(c.CRD), "(unnamed document)"),
			cell(gs, finding.Error), cell(gs, finding.Warning), cell(gs, finding.Info))
	}
	type breaking struct {
		crd string
		g   *change.Group
	}
	var bs []breaking
	for _, c := range set.CRDs {
		for i := range c.Groups {
			bs = append(bs, breaking{c.CRD, &c.Groups[i]})
		}
	}
	for i := range set.Shared {
		bs = append(bs, breaking{severalCRDs(set.Shared[i].CRDs()), &set.Shared[i]})
	}
	// Across CRDs too, what the API server refuses outright is listed first: the last lines
	// are the ones that may not fit.
	slices.SortStableFunc(bs, func(a, b breaking) int { return finding.Importance(a.g.First(), b.g.First()) })
	var full, short []string
	for _, b := range bs {
		if b.g.First().Severity != finding.Error {
			continue
		}
		line := breakingLine(b.crd, b.g)
		short = append(short, line+"\n")
		full = append(full, line+": "+whatOf(b.g.First())+"\n")
	}
	if len(full) == 0 {
		return b.String(), nil
	}
	fmt.Fprintf(&b, "\n**%s:**\n\n", upperFirst(Count(len(full), "breaking change")))
	lines := full
	if b.Len()+total(full) > room {
		lines = short
	}
	for i, l := range lines {
		if b.Len()+len(l) > room {
			return b.String(), lines[i:]
		}
		b.WriteString(l)
	}
	return b.String(), nil
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
		// The built-in type's field the message names after the path is the subject now:
		// "PodResourceClaim.source was removed", not "(PodResourceClaim.source) was removed".
		if f.Builtin != "" && strings.HasPrefix(w, "("+f.Builtin+") ") {
			w = f.Builtin + w[len(f.Builtin)+2:]
		}
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
	return Escape(before) + byExpression(before) + CodeSpan(shorten(f.RuleMessageExpression, room)) + after
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
