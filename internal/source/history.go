package source

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/crdguard/crdguard/internal/crd"
)

// A version that was the storage version in an earlier release is often marked nowhere in the
// current files: Gateway API v1.0 removed v1alpha2, the storage version up to v0.5, and clusters
// installed from those releases still list it in status.storedVersions, so the API server
// refused the upgrade. The history says which versions were ever stored — the history of the
// CRD, by metadata.name, in every file that held it (install bundles, copies, renamed and moved
// files), not of one file.
//
// One walk answers every CRD's questions: release tags first, oldest first (a version is named
// by the oldest release that stored it), then the commits reachable from the base, oldest
// first, and it stops as soon as every question is answered. Trees share most of their subtrees
// between revisions, so each subtree is read once (by hash), and each blob once: a cheap
// text test (does it hold a CRD at all) first, then a line scan of each CRD document to its name,
// and of the CRDs asked about to their versions (crd.ReadVersionFacts).

// MaxHistoryCommits bounds the commits whose trees the history reads after the release tags: a
// cap, so that a run over a repository of 25,000 commits stays a pull-request check.
var MaxHistoryCommits = 5000

// HistoryQuestion asks about one CRD, by metadata.name: which of Versions any earlier release
// or commit stored, and since when each of Deprecated has been deprecated.
type HistoryQuestion struct {
	Name       string
	Versions   []string
	Deprecated []string
}

// Where is the release tag (else the commit) and the file at which a version was seen.
type Where struct {
	Rev, File string
}

// String names the release and file: "v0.5.0 (config/crd/gateways.yaml)".
func (w Where) String() string { return w.Rev + " (" + w.File + ")" }

// HistoryAnswer is what the history says about one CRD.
type HistoryAnswer struct {
	// Stored maps each version found stored (storage: true, or in status.storedVersions) to
	// where it was first seen so.
	Stored map[string]Where
	// Deprecated maps each version asked about that was found deprecated to where it first was.
	Deprecated map[string]Where
	// Complete says the whole history was read (no question ended the walk early, nothing cut
	// it): a version that is not in Stored was never stored.
	Complete bool
}

// History is what one walk over the history found for every CRD asked about.
type History struct {
	// Answers are by CRD name.
	Answers map[string]*HistoryAnswer
	// Tags and Commits count the release tags and the commits whose trees were read.
	Tags, Commits int
	// Capped says the walk stopped at MaxHistoryCommits with questions open; Shallow that it
	// reached the end of a shallow clone's history with questions open.
	Capped, Shallow bool
	// Unread counts the blobs that the clone lacks (a partial clone): what they held is unknown.
	Unread int
}

// Open returns the CRDs with a version asked about whose storage is still unknown, sorted.
func (h *History) Open(qs []HistoryQuestion) []string {
	var out []string
	for _, q := range qs {
		a := h.Answers[q.Name]
		if !a.Complete && slices.ContainsFunc(q.Versions, func(v string) bool { _, ok := a.Stored[v]; return !ok }) {
			out = append(out, q.Name)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// StorageHistory answers the questions from the release tags and the commits reachable from at,
// in one walk that stops when every question is answered.
func (r *Repo) StorageHistory(at *object.Commit, qs []HistoryQuestion) (*History, error) {
	w := &historyWalk{r: r, names: map[string]bool{}, trees: map[plumbing.Hash][]fileFacts{}, blobs: map[plumbing.Hash][]crd.VersionFacts{}, contents: newHistoryBlobs(r, int(objectCacheSize))}
	h := &History{Answers: map[string]*HistoryAnswer{}}
	for _, q := range qs {
		w.names[q.Name] = true
		if h.Answers[q.Name] == nil {
			h.Answers[q.Name] = &HistoryAnswer{Stored: map[string]Where{}, Deprecated: map[string]Where{}}
		}
	}
	answered := func() bool {
		for _, q := range qs {
			a := h.Answers[q.Name]
			for _, v := range q.Versions {
				if _, ok := a.Stored[v]; !ok {
					return false
				}
			}
			for _, v := range q.Deprecated {
				if _, ok := a.Deprecated[v]; !ok {
					return false
				}
			}
		}
		return true
	}
	tags, err := r.releases()
	if err != nil {
		return nil, err
	}
	stopped := false // every question answered before the end of the history
	for _, t := range tags {
		if stopped = answered(); stopped {
			break
		}
		h.Tags++
		w.record(h, t.tree, t.name)
	}
	if !answered() {
		commits, capped, shallow := r.commitsOldestFirst(at)
		for _, c := range commits {
			if stopped = answered(); stopped {
				break
			}
			h.Commits++
			w.record(h, c.TreeHash, c.Hash.String()[:12])
		}
		h.Capped, h.Shallow = capped && !answered(), shallow && !answered()
	}
	h.Unread = len(w.unread)
	// Only a walk read to its end says that a version it did not show stored never was: one that
	// stopped when every question was answered says nothing of the versions not asked about.
	whole := !stopped && !h.Capped && !h.Shallow && h.Unread == 0
	for _, q := range qs {
		h.Answers[q.Name].Complete = whole
	}
	return h, nil
}

// historyWalk holds what one walk has read: the facts of each subtree and blob, by hash.
type historyWalk struct {
	r      *Repo
	names  map[string]bool
	trees  map[plumbing.Hash][]fileFacts
	blobs  map[plumbing.Hash][]crd.VersionFacts
	unread map[plumbing.Hash]bool
	// contents reads the blobs, resolving their deltas by the hashes the trees give.
	contents *historyBlobs
}

// fileFacts are the version facts of one file of a tree, by its path below the tree.
type fileFacts struct {
	path  string
	facts []crd.VersionFacts
}

// record reads a revision's tree and notes, for each CRD asked about, the versions it stores and
// deprecates there, first seen first; files in path order.
func (w *historyWalk) record(h *History, tree plumbing.Hash, rev string) {
	for _, f := range w.tree(tree) {
		for _, vf := range f.facts {
			a := h.Answers[vf.Name]
			for _, v := range vf.Stored {
				if _, ok := a.Stored[v]; !ok {
					a.Stored[v] = Where{Rev: rev, File: f.path}
				}
			}
			for _, v := range vf.Deprecated {
				if _, ok := a.Deprecated[v]; !ok {
					a.Deprecated[v] = Where{Rev: rev, File: f.path}
				}
			}
		}
	}
}

// tree returns the facts of the files below a tree that hold the CRDs asked about, in path
// order. Folders of tests and fixtures, vendor/ and hidden folders are not what a project
// ships: their copies never said what clusters store.
func (w *historyWalk) tree(hash plumbing.Hash) []fileFacts {
	if out, ok := w.trees[hash]; ok {
		return out
	}
	var out []fileFacts
	t, err := w.r.repo.TreeObject(hash)
	if err != nil {
		w.missing(hash)
	} else {
		for _, e := range t.Entries {
			switch {
			case e.Mode == filemode.Dir:
				if isTestFolder(e.Name) || e.Name == "vendor" || strings.HasPrefix(e.Name, ".") {
					continue
				}
				for _, f := range w.tree(e.Hash) {
					out = append(out, fileFacts{path: e.Name + "/" + f.path, facts: f.facts})
				}
			case e.Mode.IsFile() && IsManifest(e.Name):
				if facts := w.blob(e); len(facts) > 0 {
					out = append(out, fileFacts{path: e.Name, facts: facts})
				}
			}
		}
	}
	w.trees[hash] = out
	return out
}

// blob returns the version facts of one file's content, the cheap text test first.
func (w *historyWalk) blob(e object.TreeEntry) []crd.VersionFacts {
	if out, ok := w.blobs[e.Hash]; ok {
		return out
	}
	var out []crd.VersionFacts
	data, err := []byte(nil), errUnresolved
	if e.Mode != filemode.Symlink && e.Mode != filemode.Submodule {
		data, err = w.contents.read(e.Hash)
	}
	if err != nil {
		data, err = w.r.readBlob(e.Name, e)
	}
	switch {
	case err != nil:
		w.missing(e.Hash)
	case len(data) <= MaxFileSize && bytes.Contains(data, []byte(crd.Kind)):
		out, _ = crd.ReadVersionFacts(data, w.names) // a revision that does not parse says nothing
	}
	w.blobs[e.Hash] = out
	return out
}

func (w *historyWalk) missing(hash plumbing.Hash) {
	if w.unread == nil {
		w.unread = map[plumbing.Hash]bool{}
	}
	w.unread[hash] = true
}

// release is a release tag and its commit's tree.
type release struct {
	name string
	when int64
	tree plumbing.Hash
}

// releases are the tags of commits, oldest commit first.
func (r *Repo) releases() ([]release, error) {
	iter, err := r.repo.Tags()
	if err != nil {
		return nil, fmt.Errorf("listing tags: %w", err)
	}
	var out []release
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		c, err := r.tagCommit(ref)
		if err != nil {
			return nil // a tag of a tree or blob, or of a commit the clone lacks
		}
		out = append(out, release{name: ref.Name().Short(), when: c.Committer.When.Unix(), tree: c.TreeHash})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading tags: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].when != out[j].when {
			return out[i].when < out[j].when
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

func (r *Repo) tagCommit(ref *plumbing.Reference) (*object.Commit, error) {
	if t, err := r.repo.TagObject(ref.Hash()); err == nil {
		return t.Commit()
	}
	return r.repo.CommitObject(ref.Hash())
}

// commitsOldestFirst returns the commits reachable from at, at most MaxHistoryCommits of them
// (capped: there were more), oldest first; shallow says the clone's history ended first (a
// parent it lacks).
func (r *Repo) commitsOldestFirst(at *object.Commit) (out []*object.Commit, capped, shallow bool) {
	iter := object.NewCommitPreorderIter(at, nil, nil)
	err := iter.ForEach(func(c *object.Commit) error {
		if len(out) == MaxHistoryCommits {
			capped = true
			return storer.ErrStop
		}
		out = append(out, c)
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		shallow = true
	}
	if !shallow {
		if s, err := r.repo.Storer.Shallow(); err == nil && len(s) > 0 {
			shallow = slices.ContainsFunc(out, func(c *object.Commit) bool { return slices.Contains(s, c.Hash) })
		}
	}
	slices.Reverse(out)
	return out, capped, shallow
}
