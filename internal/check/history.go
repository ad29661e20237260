package check

import (
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing/object"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// readHistory reads the history of every CRD of a comparison that removes a version base does
// not mark as stored, or stops serving a deprecated one, and adds what it says to opts: the
// versions earlier releases or commits stored, and since when versions were deprecated. The
// history is paid for only then. It returns notices that say what was read.
func readHistory(repo *source.Repo, at *object.Commit, cmp *source.Comparison, opts *rules.Options) []string {
	var notices []string
	read := map[string]bool{}
	// A shipped copy's history is the one that says what clusters stored: a test fixture of the
	// same CRD (Maven's src/test/resources, say) was written, and kept, for other reasons.
	olds := slices.Clone(cmp.Old.CRDs)
	slices.SortStableFunc(olds, func(a, b *crd.CRD) int {
		return cmpBool(!cmp.Old.Facts(a.File).Ships(), !cmp.Old.Facts(b.File).Ships())
	})
	for _, old := range olds {
		if read[old.Name] || !needsHistory(old, cmp.New.CRDs, opts.StoredVersions[old.Name]) {
			continue
		}
		read[old.Name] = true
		h, err := repo.History(at, old.File, old.Name)
		if err != nil {
			notices = append(notices, fmt.Sprintf("history of %s (%s) not read: %v", old.Name, old.File, err))
			continue
		}
		setIn(&opts.StoredIn, old.Name, h.Stored)
		setIn(&opts.DeprecatedSince, old.Name, h.Deprecated)
		if !h.Truncated && h.Unread == 0 {
			if opts.HistoryRead == nil {
				opts.HistoryRead = map[string]bool{}
			}
			opts.HistoryRead[old.Name] = true
		}
		what := fmt.Sprintf("read the history of %s (%s: %d release tags, %d commits of the file) to learn which of its versions were ever stored", old.Name, old.File, h.Tags, h.Commits)
		switch {
		case h.Truncated:
			what += "; the history ends early (a shallow clone, or more than " + fmt.Sprint(source.MaxHistoryCommits) + " commits), so a removed version it does not show stored stays a warning"
		case h.Unread > 0:
			what += fmt.Sprintf("; %d of its revisions are missing from the clone (a partial clone), so a removed version it does not show stored stays a warning", h.Unread)
		}
		notices = append(notices, what)
	}
	return notices
}

// needsHistory reports whether a base CRD loses a version whose history matters: removed
// without being marked stored in base, deprecated and no longer served (the message says since
// when), or no longer served without being marked stored (its schema then matters only if an
// earlier release stored objects in it).
func needsHistory(old *crd.CRD, news []*crd.CRD, stored []string) bool {
	var nw *crd.CRD
	for _, c := range news {
		if c.Name == old.Name {
			nw = c
			break
		}
	}
	if nw == nil {
		return false // the whole CRD is removed: crd-removed says it
	}
	for _, ov := range old.Object.Spec.Versions {
		i := slices.IndexFunc(nw.Object.Spec.Versions, func(v apiextv1.CustomResourceDefinitionVersion) bool { return v.Name == ov.Name })
		removed := i < 0
		known := ov.Storage || slices.Contains(old.Object.Status.StoredVersions, ov.Name) || slices.Contains(stored, ov.Name)
		if removed && !known {
			return true
		}
		if ov.Deprecated && ov.Served && (removed || !nw.Object.Spec.Versions[i].Served) {
			return true
		}
		if !removed && !known && ov.Served && !nw.Object.Spec.Versions[i].Served {
			return true // its schema matters only if objects were ever stored in it
		}
	}
	return false
}

// setIn adds one CRD's entries to a by-CRD map of version facts.
func setIn(m *map[string]map[string]string, name string, facts map[string]string) {
	if len(facts) == 0 {
		return
	}
	if *m == nil {
		*m = map[string]map[string]string{}
	}
	(*m)[name] = facts
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
