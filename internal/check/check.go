// Package check runs the whole comparison of two trees: it pairs their CRDs, turns what the
// sources could not read into findings, and runs the rules on every pair.
package check

import (
	"fmt"
	"slices"

	"github.com/crdguard/crdguard/internal/crd"
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
	for _, rm := range new.Remotes() {
		r.Notices = append(r.Notices, fmt.Sprintf("head: %s:%d lists the remote resource %s, which crdguard does not fetch: the CRDs it installs are not checked", rm.File, rm.Line, rm.Entry))
	}
	// An input that held a CRD and could not be read on one side fails closed: its CRDs are
	// neither added nor removed, and an error names the file (see unreadable).
	baseUnread, headUnread := unreadable(old, new, finding.Base), unreadable(new, old, finding.Head)
	r.Findings = append(append(r.Findings, baseUnread.findings...), headUnread.findings...)
	unrendered, baseUnknown, headUnknown := notRendered(old, new)
	r.Findings = append(r.Findings, unrendered...)
	for n := range baseUnknown {
		baseUnread.names[n] = true
	}
	for n := range headUnknown {
		headUnread.names[n] = true
	}
	r.Notices = append(r.Notices, baseUnread.notices...)
	broken := map[string]bool{}
	for _, p := range new.Problems {
		if p.Name != "" {
			broken[p.Name] = true
		}
	}
	for _, p := range headUnread.problems {
		r.Findings = append(r.Findings, rules.Unparsed(p, finding.Head))
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
	left, leftFindings := leftRepository(old, new, pairs)
	r.Findings = append(r.Findings, leftFindings...)
	perPair := make([][]finding.Finding, len(pairs))
	skip := func(i int) bool {
		p := pairs[i]
		// A copy is compared once; an unchanged file's copy (one CRD on both sides) has nothing
		// to compare; an unread side is not a removal or an addition; a CRD that left for a
		// remote resource is crd-left-repository (leftRepository).
		return copyOf[i] >= 0 || left[i] || p.Old != nil && p.Old == p.New || p.New == nil && (broken[p.Old.Name] || headUnread.names[p.Old.Name]) || p.Old == nil && baseUnread.names[p.New.Name]
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
		if opts.OLM && !skip(i) {
			perPair[i] = withOLM(pairs[i], opts, perPair[i])
		}
	})
	sets := pairSets(old, new, pairs, copyOf)
	nameSets(sets, perPair)
	helm, helmNotices := rules.Helm(pairs, sets, old, new)
	r.Findings = append(r.Findings, withLeftRelease(old, helm, leftBundles(old, new))...)
	r.Notices = append(r.Notices, helmNotices...)
	newCopies(old, pairs, perPair)
	locateCopies(pairs, copyOf, perPair)
	mergeCopies(pairs, perPair)
	for _, fs := range perPair {
		r.Findings = append(r.Findings, fs...)
	}
	fs, notices := samples(pairs, new)
	r.Findings = append(r.Findings, fs...)
	r.Notices = append(r.Notices, notices...)
	finding.Sort(r.Findings)
	return r
}

// unread is what one side could not read.
type unread struct {
	// names are the CRDs defined in unread inputs.
	names map[string]bool
	// findings are the errors for them.
	findings []finding.Finding
	// notices name the base problems the head has at the same file: its invalid-crd says them.
	notices []string
	// problems are the side's problems once each (see once), named by their counterpart when
	// they name nothing.
	problems []crd.Problem
}

// unreadable collects the inputs of one side that held CRDs and could not be read: documents
// that do not decode and templates whose schema cannot be read. Where the other side has a
// readable copy of such a CRD (or, for a document whose name is unknown, nothing at the same
// file that fails there as well), the change to it cannot be checked, and an invalid-crd error
// on this side says so: a CRD this side cannot read must not pass as added or removed. One
// problem is one finding, whatever number of CRDs the file may have held. A base file that
// does not parse is not what the change brings: when the head deletes or fixes it, a notice says
// so, and when the head breaks it as well, the head's invalid-crd alone.
func unreadable(t, other *source.Tree, side finding.Side) unread {
	u := unread{names: map[string]bool{}}
	readable := map[string]bool{}
	for _, c := range t.CRDs {
		readable[c.Name] = true
	}
	otherReadable := map[string]bool{}
	for _, c := range other.CRDs {
		otherReadable[c.Name] = true
	}
	// unknown marks what a problem leaves unknown, and names it: by its own name, else by the
	// CRDs of its counterpart on the other side (what the file held is unknown).
	unknown := func(p crd.Problem) crd.Problem {
		if p.Name != "" {
			u.names[p.Name] = true
			return p
		}
		var named []string
		for _, c := range other.CRDs {
			if source.SameInput(t, p.File, other, c.File) && !u.names[c.Name] {
				u.names[c.Name] = true
				named = append(named, c.Name)
			}
		}
		if len(named) == 1 {
			p.Name = named[0]
		}
		return p
	}
	named := map[crd.Problem]crd.Problem{}
	for _, p := range append(slices.Clone(t.Problems), t.Unread...) {
		named[p] = unknown(p)
	}
	// nameOf is a problem as once merged it, named by its counterpart when it names nothing.
	nameOf := func(p crd.Problem) crd.Problem {
		if q, ok := named[p]; ok {
			return q
		}
		return p
	}
	noticed := map[string]bool{}
	for _, p := range once(t.Problems) {
		u.problems = append(u.problems, nameOf(p))
		switch {
		case side == finding.Head: // the head's problems are invalid-crd of their own
		case t.Input != "":
			// A file named on the command line is what the user asked to compare.
			u.findings = append(u.findings, rules.Unreadable(nameOf(p), side))
		case fileHasProblem(t, p.File, other):
			u.notices = append(u.notices, "base: "+p.Error())
		case p.TooLarge:
			// A file over the size limit is unknown, not broken (clusters may run it).
			u.findings = append(u.findings, rules.Unreadable(nameOf(p), side))
		case !noticed[p.File]:
			noticed[p.File] = true
			what := "is deleted, so nothing of it is compared"
			if other.HasCounterpart(t, p.File) {
				what = "is fixed in head: its CRDs are compared with nothing, as if new; review them by hand against what clusters run"
			}
			u.notices = append(u.notices, fmt.Sprintf("%s did not parse in base and %s (line %d: %s)", p.File, what, p.Line, p.Message))
		}
	}
	u.findings = append(u.findings, unknownAtStake(t, other, u.names, readable, otherReadable, side)...)
	for _, p := range once(t.Unread) {
		if p.Name != "" && otherReadable[p.Name] && !readable[p.Name] || p.Name == "" && !fileUnread(other, p.File) {
			u.findings = append(u.findings, rules.Unreadable(nameOf(p), side))
		}
	}
	return u
}

// unknownAtStake turns the files of t that were not read and do not look like CRDs (Tree.Unknown)
// into one invalid-crd each where a CRD is at stake: the other side has CRDs at the file's place,
// or defines a CRD the file's text names that t reads nowhere (it would look removed or added).
// Those CRDs are marked in names. Else nothing is at stake (a broken Helm values file) and the
// file says nothing.
func unknownAtStake(t, other *source.Tree, names, readable, otherReadable map[string]bool, side finding.Side) []finding.Finding {
	type place struct {
		file, message string
		line          int
	}
	stake := map[place][]string{}
	var order []crd.Problem
	for _, p := range t.Unknown {
		k := place{p.File, p.Message, p.Line}
		if _, ok := stake[k]; !ok {
			stake[k] = []string{}
			order = append(order, p)
		}
		for _, c := range other.CRDs {
			if source.SameInput(t, p.File, other, c.File) && !names[c.Name] {
				names[c.Name] = true
				stake[k] = append(stake[k], c.Name)
			}
		}
		if p.Name != "" && otherReadable[p.Name] && !readable[p.Name] && !names[p.Name] {
			names[p.Name] = true
			stake[k] = append(stake[k], p.Name)
		}
	}
	var out []finding.Finding
	for _, p := range order {
		at := stake[place{p.File, p.Message, p.Line}]
		if len(at) == 0 {
			continue
		}
		p.Name = ""
		if len(at) == 1 {
			p.Name = at[0]
		}
		out = append(out, rules.Unreadable(p, side))
	}
	return out
}

// once keeps the first of the problems that say the same thing at the same place, named by the
// CRD they all name, if any: a file that does not parse is one problem, whatever number of CRD
// names its text holds.
func once(ps []crd.Problem) []crd.Problem {
	type key struct {
		file, message string
		line          int
	}
	at := map[key]int{}
	var out []crd.Problem
	for _, p := range ps {
		k := key{p.File, p.Message, p.Line}
		if i, ok := at[k]; ok {
			if out[i].Name != p.Name {
				out[i].Name = "" // the CRDs of the file, not one of them
			}
			continue
		}
		at[k] = len(out)
		out = append(out, p)
	}
	return out
}

// fileHasProblem reports whether other has a problem at the counterpart of t's file: the same
// path in git mode, the same place under the folders compared.
func fileHasProblem(t *source.Tree, file string, other *source.Tree) bool {
	return slices.ContainsFunc(other.Problems, func(p crd.Problem) bool { return source.SameInput(t, file, other, p.File) })
}

func fileUnread(t *source.Tree, file string) bool {
	return slices.ContainsFunc(t.Unread, func(p crd.Problem) bool { return p.File == file })
}

// newCopies words the crd-added finding of a copy at a new path of a CRD the base already
// defines elsewhere: the CRD is not new, this copy is, and it is compared with nothing.
func newCopies(old *source.Tree, pairs []crd.Pair, perPair [][]finding.Finding) {
	for i, p := range pairs {
		if p.Old != nil || p.New == nil {
			continue
		}
		j := slices.IndexFunc(old.CRDs, func(c *crd.CRD) bool { return c.Name == p.New.Name })
		if j < 0 {
			continue
		}
		for k := range perPair[i] {
			if f := &perPair[i][k]; f.Rule == "crd-added" {
				at := old.CRDs[j]
				f.Message = fmt.Sprintf("a new copy of CRD %s, which the base defines at %s:%d: a copy at a new path is new there (a second bundle, a chart, a release file) and is compared with nothing; its other copies are compared with their own counterparts", p.New.Name, at.File, at.LineOf(crd.Path{"metadata", "name"}))
			}
		}
	}
}

// NamedInputs fails closed on the inputs a user named (crdguard diff): a CRD the head's files
// hold but crdguard could not read (a templated schema), and that no readable copy in head
// stands for, is an invalid-crd error even when the base could not read it either or lacks it.
// A git comparison leaves those to a notice, as most templated CRDs are Helm's to render.
func NamedInputs(res *Result, new *source.Tree) {
	readable := map[string]bool{}
	for _, c := range new.CRDs {
		readable[c.Name] = true
	}
	added := false
	for _, p := range new.Unread {
		reported := slices.ContainsFunc(res.Findings, func(f finding.Finding) bool {
			return f.Rule == rules.InvalidCRD && f.Location.Side == finding.Head && f.Location.File == p.File && f.Location.Line == p.Line
		})
		if reported || p.Name != "" && readable[p.Name] {
			continue
		}
		res.Findings = append(res.Findings, rules.Unreadable(p, finding.Head))
		added = true
	}
	if added {
		finding.Sort(res.Findings)
	}
}
