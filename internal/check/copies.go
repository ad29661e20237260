package check

import (
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// sameCopies finds pairs whose base and head documents are both the same text as an earlier
// pair's (a CRD shipped in an install bundle and in config/crd, changed the same way in both):
// copyOf[i] is that earlier pair, or -1. Such a copy is compared once and its findings name
// every copy (locateCopies), instead of repeating each finding per file.
func sameCopies(pairs []crd.Pair) []int {
	copyOf := make([]int, len(pairs))
	for i, p := range pairs {
		copyOf[i] = -1
		for j := 0; j < i; j++ {
			if copyOf[j] < 0 && pairs[j].Name() == p.Name() && sameSide(pairs[j].Old, p.Old) && sameSide(pairs[j].New, p.New) {
				copyOf[i] = j
				break
			}
		}
	}
	return copyOf
}

// sameSide: both absent, or the same text (possibly the very same document, when one base
// definition is the counterpart of several head copies).
func sameSide(a, b *crd.CRD) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a == b || a.SameText(b)
}

// locateCopies gives each finding of a compared pair the locations of the same key in every
// copy: the copy's document starts elsewhere, so its line is shifted by the difference.
// Findings located outside the pair's own documents (samples, patches) keep their one location.
func locateCopies(pairs []crd.Pair, copyOf []int, perPair [][]finding.Finding) {
	copies := map[int][]int{}
	for i, j := range copyOf {
		if j >= 0 {
			copies[j] = append(copies[j], i)
		}
	}
	for j, others := range copies {
		for k := range perPair[j] {
			f := &perPair[j][k]
			doc := func(p crd.Pair) *crd.CRD {
				if f.Location.Side == finding.Base {
					return p.Old
				}
				return p.New
			}
			own := doc(pairs[j])
			if own == nil || own.File != f.Location.File {
				continue
			}
			locs := []finding.Location{f.Location}
			seen := map[finding.Location]bool{f.Location: true}
			for _, i := range others {
				c := doc(pairs[i])
				l := finding.Location{File: c.File, Line: f.Location.Line + c.Line - own.Line, Side: f.Location.Side}
				if !seen[l] {
					seen[l] = true
					locs = append(locs, l)
				}
			}
			if len(locs) > 1 {
				finding.SortLocations(locs)
				f.Locations = locs
			}
		}
	}
}
