package check

import (
	"slices"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// leftRepository finds the removed copies (pairs without a head side) of CRDs that head holds
// nowhere while an installer of their base file now lists a remote resource: the CRD left the
// repository for that remote, which crdguard does not fetch. Those pairs are not crd-removed
// (left says which); each such CRD is one crd-left-repository finding naming every remote.
func leftRepository(old, new *source.Tree, pairs []crd.Pair) (left map[int]bool, out []finding.Finding) {
	inHead := map[string]bool{}
	for _, c := range new.CRDs {
		inHead[c.Name] = true
	}
	type gone struct {
		copies  []*crd.CRD
		remotes []source.Remote
	}
	byName := map[string]*gone{}
	var names []string
	for i, p := range pairs {
		if p.New != nil || p.Old == nil || p.Old.Patch || inHead[p.Old.Name] {
			continue
		}
		remotes := source.LeftTo(old, new, p.Old.File)
		if len(remotes) == 0 {
			continue
		}
		if left == nil {
			left = map[int]bool{}
		}
		left[i] = true
		g := byName[p.Old.Name]
		if g == nil {
			g = &gone{}
			byName[p.Old.Name] = g
			names = append(names, p.Old.Name)
		}
		g.copies = append(g.copies, p.Old)
		for _, r := range remotes {
			if !slices.Contains(g.remotes, r) {
				g.remotes = append(g.remotes, r)
			}
		}
	}
	for _, name := range names {
		g := byName[name]
		slices.SortFunc(g.remotes, source.CompareRemotes)
		f := rules.LeftRepository(g.copies, g.remotes)
		var sets []string
		for _, c := range g.copies {
			sets = append(sets, old.SetsOf(c.Name, c.File)...)
		}
		f.Message = source.SetPrefix(sets) + f.Message
		out = append(out, f)
	}
	return left, out
}
