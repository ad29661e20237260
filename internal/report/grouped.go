package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
)

// MaxMarkdown is the most characters GitHub keeps in a comment or step summary; the Markdown
// report stays within it.
const MaxMarkdown = 65536

// maxPlacesListed bounds the places a change's details list; the rest are counted.
const maxPlacesListed = 100

// CLIElsewhere says, in the Markdown report of the command line, where what it cut can be read.
const CLIElsewhere = "`--format text --show-info --verbose` lists every change and place, `--format json` every finding"

// Markdown writes the changes a reviewer reads, within MaxMarkdown bytes (so within GitHub's
// character limit); see MarkdownWithin.
func Markdown(w io.Writer, r Report) error {
	_, err := io.WriteString(w, MarkdownWithin(r, MaxMarkdown, "", CLIElsewhere))
	return err
}

// mdTableHead starts a CRD's table of changes.
const mdTableHead = "| Severity | Rule | Version | Path | Before → after | Location | Places | What it means |\n|---|---|---|---|---|---|---|---|\n"

// mdRow is a change as one row of a CRD's table: its first place, with the others counted.
func mdRow(g *change.Group, ab *abbreviator) string {
	f := g.First()
	return fmt.Sprintf("| %s | `%s` | %s | %s | %s | %s | %s | %s |\n",
		severityIcon(f.Severity), f.Rule, Escape(f.Version), Escape(f.Path), Escape(ab.beforeAfter(f)),
		Escape(Where(f)), places(g), Escape(f.Message))
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
func detailsOf(g *change.Group, ab *abbreviator) string {
	f := g.First()
	cut := ab.beforeAfter(f) != BeforeAfter(f, math.MaxInt, nil)
	if g.Count() == 1 && !cut {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n<details><summary><code>%s</code> %s: %s</summary>\n\n", f.Rule, Escape(orDash(f.Path, f.Version)), Escape(orDash(g.Where(), "the full values")))
	if cut {
		fmt.Fprintf(&b, "Before: %s\n\nAfter: %s\n\n", Escape(fullValue(f.Before)), Escape(fullValue(f.After)))
	}
	if g.Count() > 1 {
		several := len(g.CRDs()) > 1
		for i, p := range g.Places {
			if i == maxPlacesListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(g.Places)-i)
				break
			}
			line := PlaceLine(p)
			if several {
				line = p.CRD + " " + line
			}
			fmt.Fprintf(&b, "- %s\n", Escape(line))
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
