package source

import (
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/crdguard/crdguard/internal/crd"
)

// A version that was the storage version in an earlier release is often marked nowhere in the
// current files: Gateway API v1.0 removed v1alpha2, the storage version up to v0.5, and clusters
// installed from those releases still list it in status.storedVersions, so the API server
// refused the upgrade. The history of a CRD's file says which versions were ever stored.

// MaxHistoryCommits bounds the commits walked for one file's history.
const MaxHistoryCommits = 5000

// VersionHistory is what the earlier revisions of one CRD say about its versions.
type VersionHistory struct {
	// Stored maps each version that was ever the storage version (or listed in
	// status.storedVersions) to the oldest release tag, else the oldest commit, that stored it.
	Stored map[string]string
	// Deprecated maps each version that was ever deprecated to the oldest release tag, else the
	// oldest commit, where it was.
	Deprecated map[string]string
	// Tags and Commits count the release tags and the commits of the file that were read.
	Tags, Commits int
	// Truncated says the walk stopped at MaxHistoryCommits or at a shallow clone's boundary.
	Truncated bool
	// Unread counts the revisions whose content the clone lacks (a partial clone): what they
	// stored is unknown.
	Unread int
}

// revision is one earlier state of the file: its blob, and the name to report it by.
type revision struct {
	name string
	when int64
	blob plumbing.Hash
}

// History reads the CRD named name at every release tag (the file at filePath, or a file of
// the same name elsewhere in the tree) and at every commit reachable from at that changed
// filePath, and says which versions were ever stored or deprecated. Each distinct content is
// parsed once; tags come first, so a version is named by the oldest release that had it.
func (r *Repo) History(at *object.Commit, filePath, name string) (VersionHistory, error) {
	h := VersionHistory{Stored: map[string]string{}, Deprecated: map[string]string{}}
	tags, err := r.tagRevisions(filePath)
	if err != nil {
		return h, err
	}
	commits, truncated := r.fileRevisions(at, filePath)
	h.Tags, h.Commits, h.Truncated = len(tags), len(commits), truncated
	seen := map[plumbing.Hash]bool{}
	for _, rev := range append(tags, commits...) {
		if seen[rev.blob] {
			continue
		}
		seen[rev.blob] = true
		data, err := r.readBlob(filePath, object.TreeEntry{Hash: rev.blob})
		if err != nil {
			h.Unread++ // an object a partial or shallow clone lacks: that revision is unknown
			continue
		}
		crds, _ := crd.Parse(filePath, data)
		for _, c := range crds {
			if c.Name != name {
				continue
			}
			for _, v := range c.Object.Spec.Versions {
				if v.Storage {
					first(h.Stored, v.Name, rev.name)
				}
				if v.Deprecated {
					first(h.Deprecated, v.Name, rev.name)
				}
			}
			for _, v := range c.Object.Status.StoredVersions {
				first(h.Stored, v, rev.name)
			}
		}
	}
	return h, nil
}

// first records where a version was seen, keeping the first name given: revisions come
// oldest first within tags and within commits.
func first(m map[string]string, version, where string) {
	if _, ok := m[version]; !ok {
		m[version] = where
	}
}

// tagRevisions are the file's contents at every tag, oldest commit first.
func (r *Repo) tagRevisions(filePath string) ([]revision, error) {
	iter, err := r.repo.Tags()
	if err != nil {
		return nil, fmt.Errorf("listing tags: %w", err)
	}
	var out []revision
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		c, err := r.tagCommit(ref)
		if err != nil {
			return nil // a tag of a tree or blob, or of a commit the clone lacks
		}
		tree, err := c.Tree()
		if err != nil {
			return nil
		}
		if blob, ok := r.findFile(tree, filePath); ok {
			out = append(out, revision{name: ref.Name().Short(), when: c.Committer.When.Unix(), blob: blob})
		}
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

// findFile returns the blob at filePath in a tree, or else of the only file elsewhere in the
// tree with the same name (generated CRD directories move between releases).
func (r *Repo) findFile(tree *object.Tree, filePath string) (plumbing.Hash, bool) {
	if e, err := tree.FindEntry(filePath); err == nil && e.Mode.IsFile() {
		return e.Hash, true
	}
	if found := r.named(tree.Hash, path.Base(filePath)); len(found) == 1 {
		return found[0], true
	}
	return plumbing.ZeroHash, false
}

// named lists the files called base in the tree with this hash and below. Release tags share
// most of their subtrees, so each subtree is searched once per name (r.searched), not once per
// tag: a file missing from hundreds of old tags no longer walks each of their trees whole.
func (r *Repo) named(treeHash plumbing.Hash, base string) []plumbing.Hash {
	key := searchKey{treeHash, base}
	if found, ok := r.searched[key]; ok {
		return found
	}
	var found []plumbing.Hash
	if tree, err := r.repo.TreeObject(treeHash); err == nil {
		for _, e := range tree.Entries {
			switch {
			case e.Mode == filemode.Dir:
				found = append(found, r.named(e.Hash, base)...)
			case e.Mode.IsFile() && e.Name == base:
				found = append(found, e.Hash)
			}
		}
	}
	if r.searched == nil {
		r.searched = map[searchKey][]plumbing.Hash{}
	}
	r.searched[key] = found
	return found
}

// searchKey is a subtree and a file name looked for in it.
type searchKey struct {
	tree plumbing.Hash
	base string
}

// fileRevisions walks the commits reachable from at, newest first, and returns the file's
// content where a commit changed it, oldest first. It stops at MaxHistoryCommits or where the
// clone's history ends (truncated).
func (r *Repo) fileRevisions(at *object.Commit, filePath string) ([]revision, bool) {
	var out []revision
	walked := 0
	truncated := false
	iter := object.NewCommitPreorderIter(at, nil, nil)
	err := iter.ForEach(func(c *object.Commit) error {
		walked++
		if walked > MaxHistoryCommits {
			truncated = true
			return storer.ErrStop
		}
		tree, err := c.Tree()
		if err != nil {
			truncated = true
			return storer.ErrStop
		}
		e, err := tree.FindEntry(filePath)
		if err != nil {
			return nil
		}
		if len(out) > 0 && out[len(out)-1].blob == e.Hash {
			out[len(out)-1].name = c.Hash.String()[:12] // the same content, an older commit
			return nil
		}
		out = append(out, revision{name: c.Hash.String()[:12], blob: e.Hash})
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		truncated = true // a parent the clone lacks (shallow)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, truncated
}
