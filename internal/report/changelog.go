package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
)

// additions are the safe changes a changelog lists as added: fields, versions, printer columns,
// enum values and the like. The other safe changes are loosenings, except descriptions.
var additions = map[string]bool{
	"crd-added": true, "names-added": true, "version-added": true, "field-added": true, "enum-value-added": true,
	"printer-columns-changed": true, "selectable-field-added": true, "subresource-added": true, "conversion-webhook-added": true,
	"preserve-unknown-fields-added": true, "int-or-string-added": true, "additional-properties-added": true,
}

// notInChangelog are changes release notes leave out: they change no behaviour.
var notInChangelog = map[string]bool{"description-changed": true, "validation-message-changed": true}

// section is one heading of a version's notes, in the order they are written.
type section int

const (
	breaking section = iota
	acknowledged
	toReview
	deprecations
	added
	loosened
	sections
)

var sectionTitles = [sections]string{"Breaking changes", "Acknowledged breaking changes", "Changes to review", "Deprecations", "Additions", "Loosenings"}

// entry is one change in a changelog, with the reasons it was acknowledged.
type entry struct {
	g       change.Group
	reasons []string
}

// Changelog writes Markdown release notes: per CRD, and within it per set of versions a change
// is in, the breaking changes first, then those acknowledged (with the reasons of the ignore
// entries, or the pull request's label), changes to review, deprecations, additions and
// loosenings, each change once with its places counted. Text from the CRDs is escaped.
func Changelog(w io.Writer, r Report) error {
	var b strings.Builder
	b.WriteString("# CRD changes\n\n")
	if r.Compared != nil {
		fmt.Fprintf(&b, "%s.\n\n", Escape(upperFirst(r.Compared.Line())))
	}
	// The findings ignore entries dropped are changes of their own (a change ignored in one
	// version stays breaking in the others), with the entries' reasons.
	fs := append([]finding.Finding{}, r.Findings...)
	reasons := map[string][]string{}
	for _, a := range r.Acknowledged {
		f := a.Finding
		f.Change = change.ID(&f) + "-acknowledged"
		if !slices.Contains(reasons[f.Change], a.Reason) {
			reasons[f.Change] = append(reasons[f.Change], a.Reason)
		}
		fs = append(fs, f)
	}
	crds := byCRD(fs, finding.Info)
	if len(crds) == 0 {
		b.WriteString("No changes to the CRDs.\n")
	}
	v := r.verdict()
	for _, c := range crds {
		notes := map[string]*[sections][]entry{}
		for _, g := range c.Groups {
			f := g.First()
			if notInChangelog[f.Rule] || reasons[g.ID] != nil && f.Severity == finding.Info {
				continue
			}
			sec := sectionOf(f, reasons[g.ID] != nil)
			key := strings.Join(g.Versions(), ", ")
			if notes[key] == nil {
				notes[key] = &[sections][]entry{}
			}
			notes[key][sec] = append(notes[key][sec], entry{g: g, reasons: reasons[g.ID]})
		}
		if len(notes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n", orDash(Escape(c.CRD), "(unnamed document)"))
		keys := make([]string, 0, len(notes))
		for k := range notes {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the CRD-wide changes (no version) first
		for _, k := range keys {
			if k == "" {
				k = "All versions"
			}
			fmt.Fprintf(&b, "\n### %s\n", Escape(k))
			for sec, es := range notes[orEmpty(k)] {
				if len(es) == 0 {
					continue
				}
				title := sectionTitles[sec]
				if section(sec) == breaking && v.Acknowledged {
					title += " (acknowledged with the label " + Escape(v.Label) + ")"
				}
				fmt.Fprintf(&b, "\n#### %s\n\n", title)
				for _, e := range es {
					b.WriteString(changelogItem(&e))
				}
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func orEmpty(k string) string {
	if k == "All versions" {
		return ""
	}
	return k
}

// sectionOf picks where a change goes.
func sectionOf(f *finding.Finding, acked bool) section {
	switch {
	case acked:
		return acknowledged
	case f.Severity == finding.Error:
		return breaking
	case f.Severity == finding.Warning:
		return toReview
	case f.Rule == "deprecation-changed" && string(f.After) == "true":
		return deprecations
	case additions[f.Rule]:
		return added
	}
	return loosened
}

// changelogItem is one list item: what changed (the message without the advice and the
// witness), the rule, and where else the change is.
func changelogItem(e *entry) string {
	f := e.g.First()
	what := f.Message
	if r, ok := rules.Lookup(f.Rule); ok && r.Advice != "" {
		if i := strings.Index(what, ": "+r.Advice); i >= 0 {
			what = what[:i]
		}
	}
	if i := strings.Index(what, ": e.g. "); i >= 0 {
		what = what[:i]
	}
	s := fmt.Sprintf("- %s (`%s`", Escape(what), f.Rule)
	if where := e.g.Where(); where != "" {
		s += "; at " + Escape(where)
	}
	s += ")"
	if len(e.reasons) > 0 {
		quoted := make([]string, len(e.reasons))
		for i, r := range e.reasons {
			quoted[i] = "“" + Escape(r) + "”"
		}
		s += ": " + strings.Join(quoted, "; ")
	}
	return s + "\n"
}
