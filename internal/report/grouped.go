package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
)

// MaxMarkdown is the most characters GitHub keeps in a comment or step summary; the Markdown
// report stays within it.
const MaxMarkdown = 65536

// maxPlacesListed bounds the places a change's details list; the rest are counted.
const maxPlacesListed = 100

// Markdown writes the changes a reviewer reads, within MaxMarkdown bytes (so within GitHub's
// character limit); see MarkdownWithin.
func Markdown(w io.Writer, r Report) error {
	_, err := io.WriteString(w, MarkdownWithin(r, MaxMarkdown, ""))
	return err
}

// MarkdownWithin is the Markdown report in at most limit bytes, with headline (Markdown the
// caller vouches for) under the title: one table per CRD, CRDs with errors first, one row per
// change at its first place with its places counted, and below each table a collapsed details
// block per change at several places or with values cut short, listing the places and the
// full values. Every piece of text from the CRDs is escaped: it cannot break the table, inject
// HTML or links, or @-mention anyone. Changes that do not fit are counted in a last line.
func MarkdownWithin(r Report, limit int, headline string) string {
	s := Summarize(r)
	all := byCRD(r.Findings, finding.Info)
	var head strings.Builder
	fmt.Fprintf(&head, "### crdguard: %s (%s compared)\n\n", Tally(allGroups(all), finding.Error, finding.Warning), Count(s.CRDs, "CRD"))
	if headline != "" {
		head.WriteString(headline + "\n\n")
	}
	if r.Compared != nil {
		fmt.Fprintf(&head, "%s.\n\n", Escape(upperFirst(r.Compared.Line())))
	}
	// The end: notices, what is not shown, and the verdict last.
	var end strings.Builder
	if s.Info > 0 {
		fmt.Fprintf(&end, "\n%s (info) not shown.\n", Count(s.Info, "safe change"))
	}
	if s.Ignored > 0 {
		fmt.Fprintf(&end, "%s ignored by configuration.\n", Count(s.Ignored, "finding"))
	}
	word, advice := r.verdict().words(s, Escape)
	fmt.Fprintf(&end, "\n**Verdict: %s** — %s\n", word, advice)
	var tail strings.Builder
	for i, n := range r.Notices {
		line := fmt.Sprintf("\n> notice: %s\n", Escape(n))
		if head.Len()+tail.Len()+end.Len()+len(line) > limit/2 { // notices never crowd out findings
			fmt.Fprintf(&tail, "\n> %s not shown.\n", Count(len(r.Notices)-i, "more notice"))
			break
		}
		tail.WriteString(line)
	}
	tail.WriteString(end.String())
	crds := byCRD(r.Findings, finding.Warning)
	var body strings.Builder
	if len(crds) == 0 {
		body.WriteString("No breaking CRD changes found.\n")
		return head.String() + body.String() + tail.String()
	}
	var firsts []finding.Finding
	for _, g := range allGroups(crds) {
		firsts = append(firsts, *g.First())
	}
	ab := newAbbreviator(firsts, textValueRunes)
	const moreReserve = 150
	total, written := len(firsts), 0
	fits := func(more int) bool { return head.Len()+body.Len()+more+tail.Len()+moreReserve <= limit }
	for _, c := range crds {
		table := fmt.Sprintf("#### %s: %s\n\n| Severity | Rule | Version | Path | Before → after | Location | Places | What it means |\n|---|---|---|---|---|---|---|---|\n",
			orDash(Escape(c.CRD), "(unnamed document)"), Tally(c.Groups))
		var rows, details strings.Builder
		full := true
		for i := range c.Groups {
			g := &c.Groups[i]
			f := g.First()
			ba := ab.beforeAfter(f)
			row := fmt.Sprintf("| %s | `%s` | %s | %s | %s | %s | %s | %s |\n",
				severityIcon(f.Severity), f.Rule, Escape(f.Version), Escape(f.Path), Escape(ba),
				Escape(Where(f)), places(g), Escape(f.Message))
			if !fits(len(table) + rows.Len() + len(row) + details.Len()) {
				full = false
				break
			}
			rows.WriteString(row)
			written++
			if d := detailsOf(g, ba != BeforeAfter(f, math.MaxInt, nil)); fits(len(table) + rows.Len() + details.Len() + len(d)) {
				details.WriteString(d)
			}
		}
		if rows.Len() > 0 {
			if body.Len() > 0 {
				body.WriteString("\n")
			}
			body.WriteString(table + rows.String() + details.String())
		}
		if !full { // the next CRD's changes are less serious or later: stop here, counted below
			break
		}
	}
	if written < total {
		fmt.Fprintf(&body, "\n%s not shown here (GitHub's %d-character limit): the JSON and SARIF reports have every finding.\n", Count(total-written, "more change"), limit)
	}
	return head.String() + body.String() + tail.String()
}

// places is the Places cell: how many, in how many versions and copies.
func places(g *change.Group) string {
	s := fmt.Sprint(g.Count())
	var in []string
	if vs := g.Versions(); len(vs) > 1 {
		in = append(in, Count(len(vs), "version"))
	}
	if fs := g.Files(); len(fs) > 1 {
		in = append(in, change.Copies(len(fs)))
	}
	if len(in) > 0 {
		s += " (" + strings.Join(in, ", ") + ")"
	}
	return s
}

// detailsOf is the collapsed block under a table that lists a change's places and, when the
// table cut them, its values in full; "" when there is nothing more to say.
func detailsOf(g *change.Group, cut bool) string {
	if g.Count() == 1 && !cut {
		return ""
	}
	f := g.First()
	var b strings.Builder
	fmt.Fprintf(&b, "\n<details><summary><code>%s</code> %s: %s</summary>\n\n", f.Rule, Escape(orDash(f.Path, f.Version)), Escape(orDash(g.Where(), "the full values")))
	if cut {
		fmt.Fprintf(&b, "Before: %s\n\nAfter: %s\n\n", Escape(fullValue(f.Before)), Escape(fullValue(f.After)))
	}
	if g.Count() > 1 {
		for i, p := range g.Places {
			if i == maxPlacesListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(g.Places)-i)
				break
			}
			fmt.Fprintf(&b, "- %s\n", Escape(placeLine(p)))
		}
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// fullValue is a JSON value as people read it, uncut.
func fullValue(raw []byte) string {
	if raw == nil {
		return "null"
	}
	return plainJSON(string(raw))
}
