package report

import (
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
)

// The fields of a report the details go in: a check run has two, its summary and the text
// below it; other reports only the first.
const (
	nowhere   = 0 // cut: counted in the summary's last line
	inSummary = 1
	inText    = 2
)

// cuts counts details by severity: those a report left out, or those a field holds.
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

// piece is a row of a CRD's table or the collapsed block under it, and the field it went in.
type piece struct {
	crd, group int
	text       string
	in         int
}

// part is what one field shows of a CRD's changes: those at warning or error, or its safe ones.
type part struct {
	field, crd int
	info       bool
}

// details are the tables of changes of a report, which its fields take by importance.
type details struct {
	all          []crdChanges
	rows, blocks [3][]piece     // by severity
	rowIn        map[[2]int]int // CRD, change: the field its row went in
	headed       map[part]bool  // the part has its heading
	tabled       map[part]bool  // the part has rows, under a table's head
	infoOpen     map[int]bool   // field: its collapsed block of safe changes is started
	infoTitle    string
}

func newDetails(all []crdChanges, ab *abbreviator) *details {
	d := &details{all: all, rowIn: map[[2]int]int{}, headed: map[part]bool{}, tabled: map[part]bool{}, infoOpen: map[int]bool{},
		infoTitle: "\n<details><summary>" + upperFirst(Tally(infoGroups(all))) + " (info)</summary>\n"}
	for ci, c := range all {
		for gi := range c.Groups {
			g := &c.Groups[gi]
			sev := g.First().Severity
			d.rows[sev] = append(d.rows[sev], piece{crd: ci, group: gi, text: mdRow(g, ab)})
			if b := detailsOf(g, ab); b != "" {
				d.blocks[sev] = append(d.blocks[sev], piece{crd: ci, group: gi, text: b})
			}
		}
	}
	// The fields take the errors the API server refuses outright first, whatever their CRD.
	byImportance := func(a, b piece) int {
		return finding.Importance(all[a.crd].Groups[a.group].First(), all[b.crd].Groups[b.group].First())
	}
	slices.SortStableFunc(d.rows[finding.Error], byImportance)
	slices.SortStableFunc(d.blocks[finding.Error], byImportance)
	return d
}

const infoClose = "\n</details>\n"

// heading starts a part: its CRD and counts, "(continued)" in the text when the summary has
// the same part, and the head of a table when it has rows.
func (d *details) heading(p part, table bool) string {
	name := orDash(Escape(d.all[p.crd].CRD), "(unnamed document)")
	if d.all[p.crd].several {
		name = "In several CRDs"
	}
	continued := ""
	if p.field == inText && d.headed[part{inSummary, p.crd, p.info}] {
		continued = " (continued)"
	}
	h := "\n#### " + name + ": " + Tally(nonInfo(d.all[p.crd].Groups)) + continued + "\n"
	if p.info {
		h = "\n**" + name + "**" + continued + "\n"
	}
	if table {
		h += "\n" + mdTableHead
	}
	return h
}

// fit puts in field, within room bytes, the pieces no field holds yet: rows of breaking changes
// and warnings, then their places, then the safe changes' rows and places (a warning's row says
// more than the list of a breaking change's places). A piece that does not fit is left for the
// next field; a block of places goes only where its row is, or after it.
func (d *details) fit(field, room int) {
	used := 0
	for _, step := range []struct {
		sev  finding.Severity
		rows bool
	}{{finding.Error, true}, {finding.Warning, true}, {finding.Error, false}, {finding.Warning, false}, {finding.Info, true}, {finding.Info, false}} {
		info := step.sev == finding.Info
		pieces := d.blocks[step.sev]
		if step.rows {
			pieces = d.rows[step.sev]
		}
		for i := range pieces {
			p := &pieces[i]
			key := [2]int{p.crd, p.group}
			if p.in != nowhere || !step.rows && d.rowIn[key] == nowhere {
				continue
			}
			at := part{field, p.crd, info}
			cost := len(p.text)
			if !d.headed[at] {
				cost += len(d.heading(at, step.rows))
			}
			if info && !d.infoOpen[field] {
				cost += len(d.infoTitle) + len(infoClose)
			}
			if used+cost > room {
				continue
			}
			used += cost
			p.in = field
			d.headed[at] = true
			if step.rows {
				d.tabled[at] = true
				d.rowIn[key] = field
			}
			if info {
				d.infoOpen[field] = true
			}
		}
	}
}

// count counts the pieces in field (nowhere: those cut).
func (d *details) count(field int) cuts {
	var c cuts
	for sev := range d.rows {
		for _, p := range d.rows[sev] {
			if p.in == field {
				c.rows[sev]++
			}
		}
		for _, p := range d.blocks[sev] {
			if p.in == field {
				c.places++
			}
		}
	}
	return c
}

// render writes the pieces of field: per CRD its heading, rows and blocks; the safe changes
// in one collapsed block at the end.
func (d *details) render(field int) string {
	var b strings.Builder
	for _, info := range []bool{false, true} {
		var sec strings.Builder
		for ci := range d.all {
			at := part{field, ci, info}
			if !d.headed[at] {
				continue
			}
			sec.WriteString(d.heading(at, d.tabled[at]))
			for _, ps := range [][3][]piece{d.rows, d.blocks} {
				for _, sev := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
					if (sev == finding.Info) != info {
						continue
					}
					for _, p := range ps[sev] {
						if p.crd == ci && p.in == field {
							sec.WriteString(p.text)
						}
					}
				}
			}
		}
		if info && sec.Len() > 0 {
			b.WriteString(d.infoTitle + sec.String() + infoClose)
		} else {
			b.WriteString(sec.String())
		}
	}
	return b.String()
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
