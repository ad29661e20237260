// Package check runs the whole comparison of two trees: it pairs their CRDs, turns what the
// sources could not read into findings, and runs the rules on every pair.
package check

import (
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// Result is what one comparison found, before the policy is applied.
type Result struct {
	// Findings are sorted by file, line, rule, path and message (finding.Sort).
	Findings []finding.Finding
	// CRDs is the number of CRD names compared.
	CRDs int
	// Notices say what was skipped on either side.
	Notices []string
}

// Trees compares the CRDs of an old and a new tree.
func Trees(old, new *source.Tree, opts rules.Options) Result {
	var r Result
	pairs, newDups := source.PairTrees(old, new)
	r.Notices = append(append(r.Notices, old.Notices...), new.Notices...)
	for _, s := range old.Skipped {
		r.Notices = append(r.Notices, "base: "+s)
	}
	for _, s := range new.Skipped {
		r.Notices = append(r.Notices, "head: "+s)
	}
	unread := map[string]bool{} // the notice says it; it is not a removal
	for _, n := range new.SkippedNames {
		unread[n] = true
	}
	for _, p := range old.Problems {
		r.Notices = append(r.Notices, "base: "+p.Error())
	}
	broken := map[string]bool{}
	for _, p := range new.Problems {
		r.Findings = append(r.Findings, rules.Invalid(p, finding.Head))
		if p.Name != "" {
			broken[p.Name] = true
		}
	}
	for _, d := range newDups {
		r.Findings = append(r.Findings, rules.Duplicate(d.First, d.Again, finding.Head))
	}
	names := map[string]bool{} // copies of one CRD (channels, bundles) count once
	for _, p := range pairs {
		names[p.Name()] = true
	}
	r.CRDs = len(names)
	copyOf := sameCopies(pairs)
	perPair := make([][]finding.Finding, len(pairs))
	skip := func(i int) bool {
		p := pairs[i]
		// A copy is compared once; invalid-crd already says it, it is not a removal.
		return copyOf[i] >= 0 || p.New == nil && (broken[p.Old.Name] || unread[p.Old.Name])
	}
	compared := 0
	for i := range pairs {
		if !skip(i) {
			compared++
		}
	}
	source.Parallel(len(pairs), func(i int) {
		switch {
		case skip(i):
		case compared == 1: // one pair cannot keep two cores busy: its own steps share them
			perPair[i] = compareAlone(pairs[i], opts)
		default:
			perPair[i] = serverChecks(pairs[i], rules.Compare(pairs[i], opts))
		}
	})
	locateCopies(pairs, copyOf, perPair)
	for _, fs := range perPair {
		r.Findings = append(r.Findings, fs...)
	}
	r.Findings = append(r.Findings, samples(pairs, new.Objects)...)
	finding.Sort(r.Findings)
	return r
}
