package check

import (
	"slices"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// departure is a base copy of a CRD that left a bundle (via "") or a kustomization's resources
// (via names it; line is its entry's base line) while elsewhere still ships it; remotes are the
// remote resources that kustomization lists now and did not in base, where it presumably
// installs the CRD from.
type departure struct {
	gone      *crd.CRD
	via       string
	line      int
	elsewhere []string
	remotes   []source.Remote
}

// withLeftRelease folds the departures from a bundle that is a chart's templates/ file into
// the helm-crd-left-release finding of the same base copy: one change, one finding naming both
// consequences (helm upgrade deletes it; so does applying the bundle with pruning). A departure
// from a kustomization that now lists a remote resource is crd-left-repository; the other
// departures are crd-removed-from-bundle findings.
func withLeftRelease(old *source.Tree, helm []finding.Finding, gone []departure) []finding.Finding {
	for _, d := range gone {
		at := slices.IndexFunc(helm, func(f finding.Finding) bool {
			return d.via == "" && f.Rule == rules.HelmCRDLeftRelease && f.CRD == d.gone.Name && f.Location == rules.RemovedFromBundle(d.gone, "", 0, nil).Location
		})
		switch {
		case len(d.remotes) > 0:
			helm = append(helm, rules.InstalledFromRemote(d.gone, d.via, d.remotes))
			continue
		case at < 0:
			helm = append(helm, rules.RemovedFromBundle(d.gone, d.via, d.line, d.elsewhere))
			continue
		}
		helm[at] = rules.LeftReleaseAndBundle(d.gone, old.Facts(d.gone.File).Chart, d.elsewhere)
	}
	return helm
}

// leftBundles finds the CRDs that left a bundle while they still ship elsewhere in head: a base
// definition in a file source records as a bundle (Facts.Bundle), which head still has, readable,
// without that CRD. Users who apply that bundle with pruning delete the CRD. Whatever the pairing
// made of the copy (compared with a copy at a new path, or left over), the bundle lost it; a CRD
// with no shipped copy left is crd-removed instead.
func leftBundles(old, new *source.Tree) []departure {
	ships := map[string][]string{} // CRD name → the head files that ship it, sorted
	for _, c := range new.CRDs {
		if new.Facts(c.File).Ships() && !slices.Contains(ships[c.Name], c.File) {
			ships[c.Name] = append(ships[c.Name], c.File)
		}
	}
	for _, files := range ships {
		slices.Sort(files) // in path order, whatever order the files were read in
	}
	type key struct{ file, name string }
	seen := map[key]bool{}
	var out []departure
	for _, c := range old.CRDs {
		facts := old.Facts(c.File)
		k := key{c.File, c.Name}
		if seen[k] || !facts.Bundle || !facts.Ships() || len(ships[c.Name]) == 0 || !new.HasCounterpart(old, c.File) {
			continue
		}
		seen[k] = true
		counterpart := func(file string) bool { return source.SameInput(old, c.File, new, file) }
		still := slices.ContainsFunc(new.CRDs, func(n *crd.CRD) bool { return n.Name == c.Name && counterpart(n.File) })
		// A head bundle that does not read may still hold the CRD: its invalid-crd says so.
		broken := slices.ContainsFunc(new.Problems, func(p crd.Problem) bool { return counterpart(p.File) }) ||
			slices.ContainsFunc(new.Unread, func(p crd.Problem) bool { return counterpart(p.File) })
		if !still && !broken {
			out = append(out, departure{gone: c, elsewhere: ships[c.Name]})
		}
	}
	return append(out, leftKustomizations(old, new, ships)...)
}

// leftKustomizations finds the CRDs whose file a kustomization listed in base and, read in head,
// no longer lists (nor any other file that defines them), while the file or another shipped file still defines them in head: who
// applies the kustomization with pruning deletes them.
func leftKustomizations(old, new *source.Tree, ships map[string][]string) []departure {
	type key struct{ kustomization, name string }
	seen := map[key]bool{}
	var out []departure
	for _, c := range old.CRDs {
		if !old.Facts(c.File).Ships() || len(ships[c.Name]) == 0 {
			continue
		}
		still := new.Listing(old.Rel(c.File))
		for k, line := range old.Listing(old.Rel(c.File)) {
			// Still listing the file, or another file of the same CRD (the file renamed and
			// listed under its new name), the kustomization still installs it.
			if _, ok := still[k]; ok || seen[key{k, c.Name}] || !new.ReadKustomization(k) || new.Installs(k, c.Name) {
				continue
			}
			seen[key{k, c.Name}] = true
			// A kustomization that swapped the CRD's file for a remote resource installs the CRD
			// from there, as kubectl apply -k would: not a removal, but not checked either.
			remotes := source.Gained(old, new, k)
			slices.SortFunc(remotes, source.CompareRemotes)
			out = append(out, departure{gone: c, via: old.Under(k), line: line, elsewhere: ships[c.Name], remotes: remotes})
		}
	}
	return out
}
