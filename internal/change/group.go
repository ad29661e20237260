package change

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// Group is one change and the findings that are its places, the first of which a report shows.
type Group struct {
	ID     string
	Places []*finding.Finding
}

// First is the place a report shows the change at.
func (g *Group) First() *finding.Finding { return g.Places[0] }

// Groups gathers the findings by change, in the order of each change's first place; findings
// without a change ID are changes of their own. The groups point into fs.
func Groups(fs []finding.Finding) []Group {
	var out []Group
	at := map[string]int{}
	for i := range fs {
		f := &fs[i]
		if j, ok := at[f.Change]; ok && f.Change != "" {
			out[j].Places = append(out[j].Places, f)
			continue
		}
		at[f.Change] = len(out)
		out = append(out, Group{ID: f.Change, Places: []*finding.Finding{f}})
	}
	return out
}

// Count is the number of places: each finding, and each further copy it was compared once for.
func (g *Group) Count() int {
	n := 0
	for _, f := range g.Places {
		n += max(1, len(f.Locations))
	}
	return n
}

// Paths are the distinct paths of the places, in order of appearance.
func (g *Group) Paths() []string {
	return g.distinct(func(f *finding.Finding) []string { return []string{f.Path} })
}

// CRDs are the distinct CRDs of the places, sorted: more than one for a change an embedded
// built-in type brings to several CRDs.
func (g *Group) CRDs() []string {
	cs := g.distinct(func(f *finding.Finding) []string { return []string{f.CRD} })
	slices.Sort(cs)
	return cs
}

// Versions are the distinct versions of the places, sorted.
func (g *Group) Versions() []string {
	vs := g.distinct(func(f *finding.Finding) []string { return []string{f.Version} })
	slices.Sort(vs)
	return vs
}

// Files are the distinct files of the places (every copy of a CRD the change is in), sorted.
func (g *Group) Files() []string {
	fs := g.distinct(func(f *finding.Finding) []string {
		out := []string{f.Location.File}
		for _, l := range f.Locations {
			out = append(out, l.File)
		}
		return out
	})
	slices.Sort(fs)
	return fs
}

func (g *Group) distinct(of func(*finding.Finding) []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range g.Places {
		for _, v := range of(f) {
			if v != "" && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// Title names a change by the built-in type field it is about and what changed, for a change an
// embedded Kubernetes type brings (Container.env: atomic → map, keyed by name); "" for any
// other change.
func (g *Group) Title() string { return Title(g.First()) }

// Title names one finding's change as Group.Title does.
func Title(f *finding.Finding) string {
	if f.Builtin == "" {
		return ""
	}
	before, after := listWords(f.Before), listWords(f.After)
	switch {
	case f.Rule == "list-type-changed" && before != "" && after != "":
		return f.Builtin + ": " + before + " → " + after
	case f.Before == nil && f.After == nil:
		return f.Builtin + ": " + f.Rule
	case f.Before == nil:
		return f.Builtin + ": " + f.Rule + ", " + compact(f.After)
	case f.After == nil:
		return f.Builtin + ": " + f.Rule + ", was " + compact(f.Before)
	}
	return f.Builtin + ": " + f.Rule + ", " + compact(f.Before) + " → " + compact(f.After)
}

// listWords reads a list type change's before or after: a list type ("atomic"), or the list
// type with its keys ({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys":
// ["name"]}) as "map, keyed by name". "" for anything else.
func listWords(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var l struct {
		Type string   `json:"x-kubernetes-list-type"`
		Keys []string `json:"x-kubernetes-list-map-keys"`
	}
	if json.Unmarshal(raw, &l) != nil || l.Type == "" {
		return ""
	}
	if len(l.Keys) == 0 {
		return l.Type
	}
	return l.Type + ", keyed by " + strings.Join(l.Keys, " and ")
}

// Where says in a few words where else the change is, beyond its first place: the number of
// places, the paths collapsed to their shared shape, the versions and the copies. "" for a
// change at one place.
func (g *Group) Where() string {
	n := g.Count()
	if n == 1 {
		return ""
	}
	parts := []string{Places(n)}
	if paths := g.Paths(); len(paths) > 1 {
		parts = append(parts, fmt.Sprintf("%s (%d paths)", Collapse(paths), len(paths)))
	}
	if crds := g.CRDs(); len(crds) > 1 {
		parts = append(parts, fmt.Sprintf("%d CRDs: %s", len(crds), strings.Join(crds, ", ")))
	}
	if vs := g.Versions(); len(vs) > 1 {
		parts = append(parts, "versions "+strings.Join(vs, ", "))
	}
	if files := g.Files(); len(files) > 1 {
		parts = append(parts, Copies(len(files))+": "+strings.Join(files, ", "))
	}
	return strings.Join(parts, "; ")
}

// Places is "1 place" or "N places".
func Places(n int) string { return plural(n, "place") }

// Copies is "1 copy" or "N copies".
func Copies(n int) string {
	if n == 1 {
		return "1 copy"
	}
	return fmt.Sprintf("%d copies", n)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Collapse writes many paths as the steps they share at the start and at the end, with … for
// the steps between: .spec.template.spec.….name. One path is itself.
func Collapse(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	if len(paths) == 1 {
		return paths[0]
	}
	segs := make([][]string, len(paths))
	shortest := -1
	for i, p := range paths {
		segs[i] = Segments(p)
		if shortest < 0 || len(segs[i]) < shortest {
			shortest = len(segs[i])
		}
	}
	pre := 0
	for pre < shortest && allEqual(segs, func(s []string) string { return s[pre] }) {
		pre++
	}
	suf := 0
	for suf < shortest-pre && allEqual(segs, func(s []string) string { return s[len(s)-1-suf] }) {
		suf++
	}
	first := segs[0]
	return strings.Join(first[:pre], "") + ".…" + strings.Join(first[len(first)-suf:], "")
}

func allEqual(segs [][]string, at func([]string) string) bool {
	v := at(segs[0])
	for _, s := range segs[1:] {
		if at(s) != v {
			return false
		}
	}
	return true
}
