package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// readHistory reads, in one walk, the storage history of every CRD of a comparison that removes
// a version base does not mark as stored, or stops serving a deprecated one, and adds what it
// says to opts: the versions earlier releases or commits stored (in any file that held the CRD),
// and since when versions were deprecated. The history is paid for only then. It returns the
// notices that say what was read and, when the walk was cut with questions open, why.
func readHistory(repo *source.Repo, at *object.Commit, cmp *source.Comparison, opts *rules.Options) []string {
	var qs []source.HistoryQuestion
	asked := map[string]bool{}
	for _, old := range cmp.Old.CRDs {
		if asked[old.Name] || !needsHistory(old, cmp.New.CRDs, opts.StoredVersions[old.Name]) {
			continue
		}
		asked[old.Name] = true
		qs = append(qs, question(old, cmp.New.CRDs, opts.StoredVersions[old.Name]))
	}
	if len(qs) == 0 {
		return nil
	}
	h, err := repo.StorageHistory(at, qs)
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.Name
	}
	slices.Sort(names)
	if err != nil {
		return []string{fmt.Sprintf("the storage history of %s was not read: %v", strings.Join(names, ", "), err)}
	}
	for _, q := range qs {
		a := h.Answers[q.Name]
		setIn(&opts.StoredIn, q.Name, wheres(a.Stored))
		setIn(&opts.DeprecatedSince, q.Name, wheres(a.Deprecated))
		if a.Complete {
			if opts.HistoryRead == nil {
				opts.HistoryRead = map[string]bool{}
			}
			opts.HistoryRead[q.Name] = true
		}
	}
	them, their := "it", "its"
	if len(names) > 1 {
		them, their = "them", "their"
	}
	notices := []string{fmt.Sprintf("read the storage history of %s (every file that held %s, by metadata.name): %s and %s %s read to learn which of %s versions were ever stored",
		strings.Join(names, ", "), them, count(h.Tags, "release tag"), count(h.Commits, "commit"), were(h.Tags+h.Commits), their)}
	open := h.Open(qs)
	if len(open) == 0 {
		return notices
	}
	switch {
	case h.Capped:
		notices = append(notices, fmt.Sprintf("the storage history stopped at its cap of %d commits before it showed whether a removed version of %s was ever stored, so such a version stays a warning", source.MaxHistoryCommits, strings.Join(open, ", ")))
	case h.Shallow:
		notices = append(notices, fmt.Sprintf("the clone is shallow: its history ends before it showed whether a removed version of %s was ever stored, so such a version stays a warning (fetch the whole history: fetch-depth: 0)", strings.Join(open, ", ")))
	case h.Unread > 0:
		notices = append(notices, fmt.Sprintf("%s of the history %s missing from the clone (a partial clone), so a removed version of %s that the history does not show stored stays a warning", count(h.Unread, "object"), is(h.Unread), strings.Join(open, ", ")))
	}
	return notices
}

// question is what the history must say about a base CRD: whether each version that goes (or
// stops being served) and that base does not mark as stored was ever stored, and since when each
// deprecated version that goes (or stops being served) has been deprecated. The other versions
// are not asked about: the walk stops when these are answered, and only a walk read to its end
// says that a version none of it stored never was (HistoryRead).
func question(old *crd.CRD, news []*crd.CRD, stored []string) source.HistoryQuestion {
	q := source.HistoryQuestion{Name: old.Name}
	var nw *crd.CRD
	for _, c := range news {
		if c.Name == old.Name {
			nw = c
			break
		}
	}
	for _, ov := range old.Object.Spec.Versions {
		i := slices.IndexFunc(nw.Object.Spec.Versions, func(v apiextv1.CustomResourceDefinitionVersion) bool { return v.Name == ov.Name })
		known := ov.Storage || slices.Contains(old.Object.Status.StoredVersions, ov.Name) || slices.Contains(stored, ov.Name)
		if !known && (i < 0 || ov.Served && !nw.Object.Spec.Versions[i].Served) {
			q.Versions = append(q.Versions, ov.Name)
		}
		if ov.Deprecated && ov.Served && (i < 0 || !nw.Object.Spec.Versions[i].Served) {
			q.Deprecated = append(q.Deprecated, ov.Name)
		}
	}
	return q
}

// wheres names each version's release and file.
func wheres(m map[string]source.Where) map[string]string {
	out := make(map[string]string, len(m))
	for v, w := range m {
		out[v] = w.String()
	}
	return out
}

// count counts things: "no commit", "1 release tag", "2 commits".
func count(n int, what string) string {
	switch n {
	case 0:
		return "no " + what
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func is(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
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
