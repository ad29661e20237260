package gittest

import (
	"fmt"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// HistoryShape is a synthetic history (issue 43's benchmarks): Commits commits, a release tag
// every TagEvery, an install bundle of CRDs CRDs changed every ChangeEvery; v1alpha1 is the
// storage version of the bundles of revisions [StoredFrom, StoredTo), v1beta1 of the others.
type HistoryShape struct {
	Commits, TagEvery, ChangeEvery, CRDs, StoredFrom, StoredTo int
}

// HistoryChange is the change a synthetic history ends with, on branch pr.
type HistoryChange struct {
	// Drop is the version the head bundle drops ("": head changes only a description, and no
	// history is needed).
	Drop string
	// Marked lists Drop in status.storedVersions of base's bundle: the same change, with the
	// question the history would answer already answered by base (no history read).
	Marked bool
}

// Bundle is the shape's install bundle at revision rev without the version drop ("" drops
// none): v2alpha1 is served and never stored; every CRD's description carries the revision, so
// each revision is a new blob. A version mark ("" none) is listed in each CRD's
// status.storedVersions, beside the storage version.
func (sh HistoryShape) Bundle(rev int, drop, mark string) []byte {
	var b strings.Builder
	for i := range sh.CRDs {
		fmt.Fprintf(&b, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widget%02ds.example.com\nspec:\n  group: example.com\n  names: {kind: Widget%02d, plural: widget%02ds}\n  scope: Namespaced\n  versions:\n", i, i, i)
		old := rev >= sh.StoredFrom && rev < sh.StoredTo
		for _, v := range []string{"v1alpha1", "v1beta1", "v2alpha1"} {
			if v == drop {
				continue
			}
			storage := v == "v1alpha1" && old || v == "v1beta1" && !old
			fmt.Fprintf(&b, "  - name: %s\n    served: %t\n    storage: %t\n    schema:\n      openAPIV3Schema:\n        type: object\n        description: revision %d\n        properties:\n", v, v != "v1alpha1", storage, rev)
			for f := range 20 {
				fmt.Fprintf(&b, "          field%02d:\n            type: string\n            description: field %d of a widget, kept as it is in every revision of the bundle\n", f, f)
			}
		}
		if mark != "" {
			stored := "v1beta1"
			if old {
				stored = "v1alpha1"
			}
			if mark != stored {
				stored += ", " + mark
			}
			fmt.Fprintf(&b, "status:\n  storedVersions: [%s]\n", stored)
		}
	}
	return []byte(b.String())
}

// WriteHistory builds the shape's history in a new repository at dir, straight into the object
// store (a worktree would spend minutes on 2,000 commits), then packs it as git gc would: branch
// main at the last commit, release tags v0.K.0, and branch pr (HEAD) one commit on, with the
// change ch.
func WriteHistory(dir string, sh HistoryShape, ch HistoryChange) error {
	r, err := git.PlainInit(dir, false)
	if err != nil {
		return err
	}
	st := r.Storer
	put := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) (plumbing.Hash, error) {
		obj := st.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			return plumbing.ZeroHash, err
		}
		return st.SetEncodedObject(obj)
	}
	blob := func(data []byte) (plumbing.Hash, error) {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if _, err := w.Write(data); err != nil {
			return plumbing.ZeroHash, err
		}
		if err := w.Close(); err != nil {
			return plumbing.ZeroHash, err
		}
		return st.SetEncodedObject(obj)
	}
	readme, err := blob([]byte("bench\n"))
	if err != nil {
		return err
	}
	var parent plumbing.Hash
	when := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(i int, bundle []byte) error {
		b, err := blob(bundle)
		if err != nil {
			return err
		}
		tree, err := put(&object.Tree{Entries: []object.TreeEntry{
			{Name: "README.md", Mode: filemode.Regular, Hash: readme},
			{Name: "install.yaml", Mode: filemode.Regular, Hash: b},
		}})
		if err != nil {
			return err
		}
		sig := object.Signature{Name: "bench", Email: "bench@example.com", When: when.Add(time.Duration(i) * time.Hour)}
		c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("commit %d\n", i), TreeHash: tree}
		if !parent.IsZero() {
			c.ParentHashes = []plumbing.Hash{parent}
		}
		parent, err = put(c)
		return err
	}
	ref := func(name plumbing.ReferenceName) error {
		return st.SetReference(plumbing.NewHashReference(name, parent))
	}
	last := (sh.Commits - 1) / sh.ChangeEvery * sh.ChangeEvery
	for i := range sh.Commits {
		rev := i / sh.ChangeEvery * sh.ChangeEvery
		mark := ""
		if ch.Marked && rev == last {
			mark = ch.Drop
		}
		if err := commit(i, sh.Bundle(rev, "", mark)); err != nil {
			return err
		}
		if i%sh.TagEvery == sh.TagEvery-1 {
			if err := ref(plumbing.NewTagReferenceName(fmt.Sprintf("v0.%d.0", i/sh.TagEvery))); err != nil {
				return err
			}
		}
	}
	if err := ref(plumbing.NewBranchReferenceName("main")); err != nil {
		return err
	}
	head := sh.Bundle(last, ch.Drop, "")
	if ch.Drop == "" {
		head = []byte(strings.ReplaceAll(string(head), fmt.Sprintf("revision %d\n", last), fmt.Sprintf("revision %d\n", last+1)))
	}
	if err := commit(sh.Commits, head); err != nil {
		return err
	}
	if err := ref(plumbing.NewBranchReferenceName("pr")); err != nil {
		return err
	}
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("pr"))); err != nil {
		return err
	}
	// A clone's objects are packed, as git gc leaves them: loose objects cost an inflate and a
	// checksum each that no real repository pays.
	return r.RepackObjects(&git.RepackConfig{})
}
