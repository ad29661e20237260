package check

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

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
		if p.Old != nil && p.Old == p.New {
			// Unchanged, compared with nothing: no findings to share, and its text, which
			// telling copies apart would read again (crd.Shed), is left alone.
			continue
		}
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
			doc := func(p crd.Pair) *crd.CRD { return docOf(p, f.Location.Side) }
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

// mergeCopies makes the findings that say the same thing of several copies of one CRD one
// finding naming every copy's place. Copies that are the same text were compared once
// (sameCopies); copies that differ elsewhere — a label of their own, another bundle's
// formatting — are compared each, and the change they share must not come out once per file
// (issue 46). Only findings located in their own pair's documents are merged, only across
// pairs, and only when everything but the place is equal; the finding first in file order
// hosts the others' places.
func mergeCopies(pairs []crd.Pair, perPair [][]finding.Finding) {
	type ref struct{ pair, at int }
	groups := map[string][]ref{}
	var order []string
	for i, fs := range perPair {
		for k := range fs {
			f := &fs[k]
			if own := docOf(pairs[i], f.Location.Side); own == nil || own.File != f.Location.File {
				continue
			}
			key := sameSaying(f)
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], ref{i, k})
		}
	}
	drop := map[ref]bool{}
	for _, key := range order {
		g := groups[key]
		distinct := map[int]bool{}
		for _, r := range g {
			distinct[r.pair] = true
		}
		if len(distinct) != len(g) || len(g) < 2 {
			continue // one pair says it twice, or no other copy says it
		}
		host := g[0]
		for _, r := range g[1:] {
			a, b := perPair[r.pair][r.at].Location, perPair[host.pair][host.at].Location
			if a.File < b.File || a.File == b.File && a.Line < b.Line {
				host = r
			}
		}
		var locs []finding.Location
		seen := map[finding.Location]bool{}
		for _, r := range g {
			f := perPair[r.pair][r.at]
			for _, l := range append([]finding.Location{f.Location}, f.Locations...) {
				if !seen[l] {
					seen[l] = true
					locs = append(locs, l)
				}
			}
			if r != host {
				drop[r] = true
			}
		}
		finding.SortLocations(locs)
		perPair[host.pair][host.at].Locations = locs
	}
	if len(drop) == 0 {
		return
	}
	for i, fs := range perPair {
		kept := fs[:0]
		for k, f := range fs {
			if !drop[ref{i, k}] {
				kept = append(kept, f)
			}
		}
		perPair[i] = kept
	}
}

// docOf is a pair's document on one side.
func docOf(p crd.Pair, side finding.Side) *crd.CRD {
	if side == finding.Base {
		return p.Old
	}
	return p.New
}

// sameSaying is what a finding says, everything but where: two copies' findings with the same
// key are one change of one CRD.
func sameSaying(f *finding.Finding) string {
	var b strings.Builder
	for _, s := range []string{f.Rule, f.Severity.String(), f.CRD, f.Version, f.Path, f.Message, string(f.Before), string(f.After),
		f.Baseline, string(f.Example), f.Object, f.Builtin, f.Cause, f.Subject, f.RuleMessage, f.RuleMessageExpression, string(f.Location.Side),
		strconv.FormatBool(f.Ratchetable)} {
		b.WriteString(strconv.Quote(s))
	}
	if f.ExampleUpdate != nil {
		u, _ := json.Marshal(f.ExampleUpdate)
		b.Write(u)
	}
	if f.Source != nil {
		fmt.Fprintf(&b, "%q:%d:%s", f.Source.File, f.Source.Line, f.Source.Side)
	}
	if f.RenamedTo != nil {
		b.WriteString(strconv.Quote(f.RenamedTo.Path)) // its line is a place, like Location's
	}
	if f.Stored != nil {
		fmt.Fprintf(&b, "%+v", *f.Stored)
	}
	return b.String()
}
