package source

import (
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
)

// Duplicate is a CRD name that two different definitions in one file or one kustomization give.
type Duplicate struct {
	First, Again *crd.CRD
}

// PairTrees pairs the definitions of two trees by name. Projects ship one CRD in several places
// on purpose (Gateway API's channels, a Helm chart and config/crd, install bundles), so where a
// name has several definitions on a side each is paired with its counterpart by path under the
// tree's root (git's rename pairing has already given a moved file its new path), and the rest
// in path order: every copy is compared. A copy that only head has is compared with the base's
// first definition; a copy that only base had, while head still defines the name, is gone
// without removing the CRD. Duplicates are two different definitions of a name in one file of
// the new tree.
func PairTrees(old, new *Tree) ([]crd.Pair, []Duplicate) {
	olds, news := byName(old), byName(new)
	names := make([]string, 0, len(olds)+len(news))
	for n := range olds {
		names = append(names, n)
	}
	for n := range news {
		if _, ok := olds[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var pairs []crd.Pair
	for _, n := range names {
		o, w := olds[n], news[n]
		switch {
		case len(o) == 0:
			pairs = append(pairs, crd.Pair{New: w[0]})
			continue
		case len(w) == 0:
			pairs = append(pairs, crd.Pair{Old: o[0]})
			continue
		}
		usedOld := make([]bool, len(o))
		var unpaired []*crd.CRD
		for _, c := range w {
			i := indexOf(o, usedOld, func(b *crd.CRD) bool { return old.rel(b.File) == new.rel(c.File) })
			if i < 0 {
				unpaired = append(unpaired, c)
				continue
			}
			usedOld[i] = true
			pairs = append(pairs, crd.Pair{Old: o[i], New: c})
		}
		// A copy at a new path takes the place of an old copy that left its path, but a test
		// fixture never stands in for a shipped definition, nor the reverse; a copy with no old
		// one left to replace is new there (a second bundle, a historical release file), not a
		// change to the definition it copies.
		for _, c := range unpaired {
			if historical(new, c, w) {
				pairs = append(pairs, crd.Pair{New: c, Elsewhere: o}) // a past release's bundle, new there
				continue
			}
			ships := new.Facts(c.File).Ships()
			i := indexOf(o, usedOld, func(b *crd.CRD) bool { return old.Facts(b.File).Ships() == ships })
			if i < 0 {
				// A second definition in the same file (a duplicate-crd) may be the one applied
				// last: it is compared with the file's old definition.
				same := slices.IndexFunc(o, func(b *crd.CRD) bool { return SameInput(old, b.File, new, c.File) })
				if same >= 0 {
					pairs = append(pairs, crd.Pair{Old: o[same], New: c})
				} else {
					pairs = append(pairs, crd.Pair{New: c, Elsewhere: o})
				}
				continue
			}
			usedOld[i] = true
			pairs = append(pairs, crd.Pair{Old: o[i], New: c})
		}
		// When only test fixtures are left of a shipped CRD, the CRD was removed.
		if !slices.ContainsFunc(w, func(c *crd.CRD) bool { return new.Facts(c.File).Ships() }) {
			if i := indexOf(o, usedOld, func(b *crd.CRD) bool { return old.Facts(b.File).Ships() }); i >= 0 {
				pairs = append(pairs, crd.Pair{Old: o[i]})
			}
		}
	}
	for i := range pairs {
		pairs[i].OldGo, pairs[i].NewGo = old.Go, new.Go
	}
	return pairs, duplicates(new)
}

// historical reports whether a copy at a new path is a past release's bundle committed now: its
// file carries a release version (Facts.Release) no newer than that of another head copy of the
// CRD. It is not the upgrade, so it never takes the place of a copy that left its path; the
// newest release file is.
func historical(t *Tree, c *crd.CRD, copies []*crd.CRD) bool {
	v := t.Facts(c.File).Release
	if v == "" {
		return false
	}
	return slices.ContainsFunc(copies, func(o *crd.CRD) bool {
		other := t.Facts(o.File).Release
		return o.File != c.File && other != "" && ReleaseAtMost(v, other)
	})
}

// byName groups a tree's definitions by name, each group in path order.
func byName(t *Tree) map[string][]*crd.CRD {
	m := map[string][]*crd.CRD{}
	for _, c := range t.CRDs {
		m[c.Name] = append(m[c.Name], c)
	}
	for _, cs := range m {
		sort.SliceStable(cs, func(i, j int) bool { return t.rel(cs[i].File) < t.rel(cs[j].File) })
	}
	return m
}

func indexOf(cs []*crd.CRD, used []bool, ok func(*crd.CRD) bool) int {
	for i, c := range cs {
		if !used[i] && ok(c) {
			return i
		}
	}
	return -1
}

// Rel returns a file's path below the tree's root, the path copies of a CRD are paired by.
func (t *Tree) Rel(file string) string { return t.rel(file) }

// SameInput reports whether a file of one side is the counterpart of a file of the other: the
// same path in the tree, or the one file each side is when two files are compared.
func SameInput(t *Tree, file string, other *Tree, otherFile string) bool {
	if t.rel(file) == other.rel(otherFile) {
		return true
	}
	return t.Input != "" && t.Input == file && other.Input == otherFile
}

// rel is a file's path under the tree's root.
func (t *Tree) rel(file string) string {
	if t.Root == "" {
		return file
	}
	if file == t.Root {
		return "." // the root itself: a chart compared as the folder named
	}
	return strings.TrimPrefix(file, t.Root+"/")
}

// duplicates finds the names that two different definitions in one file, or in the resources
// of one kustomization, give: only one of them can be applied. Identical copies, copies that
// are applied separately (different files outside one kustomization), and the renderings of one
// template with different named value sets of its chart (each a delivery of its own) are not
// duplicates.
func duplicates(t *Tree) []Duplicate {
	type key struct{ scope, set, name string }
	first := map[key]*crd.CRD{}
	var out []Duplicate
	for _, c := range t.CRDs {
		scope := c.File
		if k, ok := t.kustomizedBy[c.File]; ok {
			scope = k
		}
		k := key{scope, t.Delivery(c), c.Name}
		f, ok := first[k]
		if !ok {
			first[k] = c
			continue
		}
		if !reflect.DeepEqual(f.Object.Spec, c.Object.Spec) {
			out = append(out, Duplicate{First: f, Again: c})
		}
	}
	return out
}
