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
	w := &historyWalk{r: r, names: map[string]bool{}, trees: map[plumbing.Hash][]fileFacts{}, blobs: map[plumbing.Hash]*blobFacts{}, contents: newHistoryBlobs(r, int(objectCacheSize))}
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
	w.jobs = make(chan func(), 64)
	defer close(w.jobs)
	go func(jobs <-chan func()) {
		for job := range jobs {
			job()
		}
	}(w.jobs)
	revs := make([]revision, len(tags))
	for i, t := range tags {
		revs[i] = revision{tree: t.tree, name: t.name}
	}
	var stopped bool // every question answered before the end of the history
	h.Tags, stopped = w.walk(h, revs, answered)
	if !answered() {
		commits, capped, shallow := r.commitsOldestFirst(at)
		revs = make([]revision, len(commits))
		for i, c := range commits {
			revs[i] = revision{tree: c.TreeHash, name: c.Hash.String()[:12]}
		}
		h.Commits, stopped = w.walk(h, revs, answered)
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

// revision is a tree the walk reads and the release tag or commit that names it.
type revision struct {
	tree plumbing.Hash
	name string
}

// walk records the revisions in order until every question is answered (stopped: before the
// last one), and returns how many it recorded. It reads the next revision's tree and blobs while the blobs of the one
// it is about to record are scanned on another goroutine: the two take about as long.
func (w *historyWalk) walk(h *History, revs []revision, answered func() bool) (n int, stopped bool) {
	var next []fileFacts
	if len(revs) > 0 && !answered() {
		next = w.tree(revs[0].tree)
	}
	for i, rv := range revs {
		if answered() {
			return i, true
		}
		files := next
		if i+1 < len(revs) {
			next = w.tree(revs[i+1].tree)
		}
		w.record(h, files, rv.name)
	}
	return len(revs), false
}

// historyWalk holds what one walk has read: the facts of each subtree and blob, by hash.
type historyWalk struct {
	r      *Repo
	names  map[string]bool
	trees  map[plumbing.Hash][]fileFacts
	blobs  map[plumbing.Hash]*blobFacts
	unread map[plumbing.Hash]bool
	// contents reads the blobs, resolving their deltas by the hashes the trees give.
	contents *historyBlobs
	// jobs are the blob scans, run in order on a goroutine of their own.
	jobs chan func()
}

// blobFacts are the version facts of one blob, once done is closed.
type blobFacts struct {
	done  chan struct{}
	facts []crd.VersionFacts
}

// fileFacts are the version facts of one file of a tree, by its path below the tree.
type fileFacts struct {
	path string
	blob *blobFacts
}

// record notes, for each CRD asked about, the versions a revision's files store and deprecate,
// first seen first; files in path order.
func (w *historyWalk) record(h *History, files []fileFacts, rev string) {
	for _, f := range files {
		<-f.blob.done
		for _, vf := range f.blob.facts {
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

// tree returns the facts of the files below a tree that may hold CRDs, in path order (the
// scans of blobs not seen before still running). Folders of tests and fixtures, vendor/ and hidden folders are not what a project
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
					out = append(out, fileFacts{path: e.Name + "/" + f.path, blob: f.blob})
				}
			case e.Mode.IsFile() && IsManifest(e.Name):
				if b := w.blob(e); b != nil {
					out = append(out, fileFacts{path: e.Name, blob: b})
				}
			}
		}
	}
	w.trees[hash] = out
	return out
}

// blob reads one file's content and, when the cheap text test says it may hold a CRD, has its
// version facts scanned (nil: it holds none).
func (w *historyWalk) blob(e object.TreeEntry) *blobFacts {
	if b, ok := w.blobs[e.Hash]; ok {
		return b
	}
	var b *blobFacts
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
		b = &blobFacts{done: make(chan struct{})}
		w.jobs <- func() {
			b.facts, _ = crd.ReadVersionFacts(data, w.names) // a revision that does not parse says nothing
			close(b.done)
		}
	}
	w.blobs[e.Hash] = b
	return b
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
