package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// GitOptions says which commits of a repository to compare.
type GitOptions struct {
	// Base is the ref the change goes into; head is compared with its merge base with Head, or
	// with Base itself when both are releases (Base a tag, Head not a branch).
	Base string
	// Head is the ref with the change; HEAD when empty.
	Head string
	// WorkingTree compares head with the uncommitted manifests of the working tree laid over
	// it, when there are any (crdguard check "before you push").
	WorkingTree bool
	// Baselines are more refs (e.g. release tags) head is compared with as well.
	Baselines []string
	// Filter narrows the files read.
	Filter source.Filter
	// Samples are globs of custom resources to validate; empty: any file that mentions the API
	// group of a changed CRD.
	Samples []string
	// Cluster, when set, reads the installed CRDs of these names (kube://); they are compared
	// with head like a baseline named "cluster", and their status.storedVersions count as stored.
	Cluster func(names []string) (*source.Tree, error)
	// Stored, when set with Cluster, checks the objects the cluster stores (live, its CRDs)
	// against head: see Stored.
	Stored func(live, head *source.Tree) (Result, error)
	// KubernetesVersion is the minor of the oldest Kubernetes the CRDs must install on (see
	// rules.Options).
	KubernetesVersion uint
	// OLM says whether OLM v1's upgrade preflight judges the changed CRDs (delivery.olm);
	// nil: when the head holds an OLM bundle.
	OLM *bool
	// Direct compares base and head as they are rather than head with their merge base: a
	// force-push replaced what the branch held (base) with head, dropped commits included.
	Direct bool
}

// GitResult is a comparison of two commits.
type GitResult struct {
	Result
	// Diff is the unified diff from the merge base to head, for placing review comments.
	Diff *source.Diff
	// Base, Head and MergeBase are the resolved commit SHAs.
	Base, Head, MergeBase string
	// Release says base and head are releases, compared directly (MergeBase is Base).
	Release bool
	// Working lists the manifests whose uncommitted working-tree content was compared.
	Working []string
	// Behind counts the commits of base that the merge base does not have (0 when base is an
	// ancestor of head); BehindAtLeast says the count stopped early and is a lower bound.
	Behind        int
	BehindAtLeast bool
}

// Git compares head with the merge base of base and head (what a pull request shows) and with
// every baseline. Baseline findings that base already reports are dropped; the others say which
// baseline they come from. A version stored in any baseline counts as stored.
func Git(repo *source.Repo, o GitOptions) (*GitResult, error) {
	if o.Head == "" {
		o.Head = "HEAD"
	}
	head, err := repo.Commit(o.Head)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	base, err := repo.Commit(o.Base)
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	// Two releases are compared as they are: upgrading from v1.0.0 to v1.1.0 replaces the one's
	// CRDs with the other's, and what only the old release's branch had (a backport) must not
	// be lost in a merge base. A branch is compared with its merge base, as a pull request shows
	// it. Head counts as a release unless it is a branch (a tag, a SHA, a detached checkout).
	mb, release := base, repo.IsRelease(o.Base) && !repo.IsBranch(o.Head)
	if !release && !o.Direct {
		if mb, err = repo.MergeBase(base, head); err != nil {
			return nil, err
		}
	}
	var working map[string][]byte
	if o.WorkingTree {
		if working, err = repo.WorkingChanges(head, o.Filter); err != nil {
			return nil, err
		}
	}
	// Samples are read where CRDs are: what exclude and the test folders leave out is not read.
	samples := source.Filter{Paths: o.Samples, Exclude: o.Filter.Exclude, SkipTests: o.Filter.SkipTests}
	main, err := repo.CompareWorking(mb, head, o.Filter, working, &samples)
	if err != nil {
		return nil, err
	}
	oldGo, newGo := commitGo(repo, mb), headGo(repo, head, o.WorkingTree)
	main.Old.Go, main.New.Go = oldGo, newGo
	// A base file that does not parse is compared through its last version that did.
	main.Old.Notices = append(main.Old.Notices, repo.ThroughLastParsed(mb, main.Old)...)
	type baseline struct {
		ref string
		cmp *source.Comparison
	}
	var baselines []baseline
	var objects Result // the cluster's stored objects
	stored := map[string][]string{}
	for _, ref := range o.Baselines {
		c, err := repo.Commit(ref)
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		cmp, err := repo.CompareWorking(c, head, o.Filter, working, nil)
		if err != nil {
			return nil, err
		}
		cmp.Old.Go, cmp.New.Go = commitGo(repo, c), main.New.Go
		baselines = append(baselines, baseline{ref, cmp})
		for _, old := range cmp.Old.CRDs {
			for _, v := range old.Object.Spec.Versions {
				if v.Storage {
					stored[old.Name] = append(stored[old.Name], v.Name)
				}
			}
			stored[old.Name] = append(stored[old.Name], old.Object.Status.StoredVersions...)
		}
	}
	var groups []string
	for _, c := range main.New.CRDs {
		if !slices.Contains(groups, c.Object.Spec.Group) {
			groups = append(groups, c.Object.Spec.Group)
		}
	}
	var notices []string
	if main.New.Objects, notices, err = repo.Objects(head, groups, samples); err != nil {
		return nil, err
	}
	main.New.Notices = append(main.New.Notices, notices...)
	if o.Cluster != nil {
		var names []string
		for _, c := range main.New.CRDs {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
		live, err := o.Cluster(names)
		if err != nil {
			return nil, err
		}
		baselines = append(baselines, baseline{"cluster", &source.Comparison{Old: live, New: main.New}})
		if o.Stored != nil {
			if objects, err = o.Stored(live, main.New); err != nil {
				return nil, err
			}
		}
		for _, c := range live.CRDs {
			stored[c.Name] = append(stored[c.Name], c.Object.Status.StoredVersions...)
		}
	}
	opts := rules.Options{StoredVersions: stored, KubernetesVersion: o.KubernetesVersion}
	olmNotice, err := OLMDelivery(&opts, o.OLM, func() (string, error) { return repo.OLMBundle(head) })
	if err != nil {
		return nil, err
	}
	history := readHistory(repo, mb, main, &opts)
	res := &GitResult{Result: Trees(main.Old, main.New, opts), Diff: main.Diff,
		Base: base.Hash.String(), Head: head.Hash.String(), MergeBase: mb.Hash.String(), Release: release}
	if mb.Hash != base.Hash {
		if res.Behind, res.BehindAtLeast, err = source.CommitsAhead(mb, base); err != nil {
			return nil, err
		}
	}
	res.Notices = append(append(res.Notices, history...), olmNotice...)
	res.Findings = append(res.Findings, addedUnknown(res.Findings, main.Unread)...)
	// A paths glob that can never read a CRD is a configuration error, whatever the findings.
	found := readSomething(main.Old) || readSomething(main.New)
	pathNotices, err := repo.PathsCheck(mb, head, o.Filter, working, found)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	res.Notices = append(res.Notices, pathNotices...)
	if len(main.LeftOut) > 0 {
		res.Notices = append(res.Notices, source.LeftOutNotice(main.LeftOut))
	}
	if !found {
		// Nothing compared: that must not be because every CRD is a test input.
		folders, err := repo.TestOnlyFolders(head, o.Filter)
		if err != nil {
			return nil, err
		}
		if len(folders) > 0 {
			return nil, fmt.Errorf("config: %w", source.TestOnlyError(folders))
		}
	}
	diffs := map[string]*source.Diff{"": main.Diff}
	seen := map[string]bool{}
	for _, f := range res.Findings {
		seen[f.Key()] = true
	}
	compared := comparedNames(main.Old, main.New)
	for _, b := range baselines {
		diffs[b.ref] = b.cmp.Diff
		r := Trees(b.cmp.Old, b.cmp.New, opts)
		res.Notices = append(res.Notices, r.Notices...)
		for n := range comparedNames(b.cmp.Old, b.cmp.New) {
			compared[n] = true
		}
		for _, f := range r.Findings {
			if seen[f.Key()] || f.Severity == finding.Info {
				continue // info findings since a release are history, not news
			}
			seen[f.Key()] = true
			f.Baseline = b.ref
			f.Message += " (compared with baseline " + b.ref + ")"
			res.Findings = append(res.Findings, f)
		}
	}
	for _, f := range objects.Findings {
		f.Baseline = "cluster"
		res.Findings = append(res.Findings, f)
	}
	res.Notices = append(res.Notices, objects.Notices...)
	res.CRDs = len(compared) // a baseline can compare CRDs the merge base does not touch
	for name := range working {
		res.Working = append(res.Working, name)
	}
	if len(res.Working) > 0 {
		slices.Sort(res.Working)
		res.Notices = append([]string{workingNotice(res.Working)}, res.Notices...)
	}
	for _, sha := range repo.Fetched {
		res.Notices = append(res.Notices, "fetched commit "+sha+" from the remote into a temporary store (the clone lacked it, its history or its files; the repository was not written to)")
	}
	source.Place(res.Findings, diffs)
	if _, err := goSources(oldGo, newGo, main, res); err != nil {
		// The Go lines only add a place to the findings: without them the findings stand.
		res.Notices = append(res.Notices, err.Error()+"; findings point at the CRD YAML only")
	}
	finding.Sort(res.Findings)
	return res, nil
}

// addedUnknown fails closed on a CRD the change seems to add while unchanged files could not be
// read: one of them may define it already, and then the change is a change to compare, not an
// addition. One invalid-crd per such CRD names the first unread file and counts the others.
func addedUnknown(fs []finding.Finding, unread []string) []finding.Finding {
	if len(unread) == 0 {
		return nil
	}
	others := ""
	if len(unread) > 1 {
		others = fmt.Sprintf(" (and %d more unchanged files)", len(unread)-1)
	}
	var out []finding.Finding
	for _, f := range fs {
		if f.Rule != rules.CRDAdded || f.Baseline != "" {
			continue
		}
		out = append(out, rules.Unreadable(crd.Problem{File: unread[0], Line: 1, Name: f.CRD,
			Message: fmt.Sprintf("CRD %s looks new, but the content of %s%s is missing from the repository (object not found), as in a partial or shallow clone, and may define it already", f.CRD, unread[0], others)}, finding.Base))
	}
	return out
}

// readSomething reports whether a tree holds a CRD document, or one it could not read.
func readSomething(t *source.Tree) bool {
	return len(t.CRDs)+len(t.Patches)+len(t.Problems)+len(t.Unread)+len(t.NotRendered) > 0
}

// comparedNames is the CRD names a comparison of two trees pairs.
func comparedNames(old, new *source.Tree) map[string]bool {
	names := map[string]bool{}
	for _, t := range []*source.Tree{old, new} {
		for _, c := range t.CRDs {
			names[c.Name] = true
		}
	}
	return names
}

// workingNotice says that uncommitted manifests were compared, naming a few.
func workingNotice(names []string) string {
	shown := names[:min(len(names), 5)]
	more := ""
	if len(names) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	what := "manifests differ"
	if len(names) == 1 {
		what = "manifest differs"
	}
	return fmt.Sprintf("compared the working tree: %d %s from HEAD (uncommitted): %s%s", len(names), what, strings.Join(shown, ", "), more)
}
