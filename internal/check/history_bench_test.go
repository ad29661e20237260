package check

import (
	"fmt"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/crdguard/crdguard/internal/source"
)

// historyShape is a synthetic history: commits commits, a release tag every tagEvery, an
// install bundle of crds CRDs changed every changeEvery; v1alpha1 is the storage version of
// the bundles of revisions [storedFrom, storedTo), v1beta1 of the others.
type historyShape struct {
	commits, tagEvery, changeEvery, crds, storedFrom, storedTo int
}

// historyBundle is the shape's install bundle at revision rev: v2alpha1 is served and never
// stored; every CRD's description carries the revision, so each revision is a new blob.
func (sh historyShape) historyBundle(rev int, drop string) []byte {
	var b strings.Builder
	for i := range sh.crds {
		fmt.Fprintf(&b, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widget%02ds.example.com\nspec:\n  group: example.com\n  names: {kind: Widget%02d, plural: widget%02ds}\n  scope: Namespaced\n  versions:\n", i, i, i)
		for _, v := range []string{"v1alpha1", "v1beta1", "v2alpha1"} {
			if v == drop {
				continue
			}
			old := rev >= sh.storedFrom && rev < sh.storedTo
			storage := v == "v1alpha1" && old || v == "v1beta1" && !old
			fmt.Fprintf(&b, "  - name: %s\n    served: %t\n    storage: %t\n    schema:\n      openAPIV3Schema:\n        type: object\n        description: revision %d\n        properties:\n", v, v != "v1alpha1", storage, rev)
			for f := range 20 {
				fmt.Fprintf(&b, "          field%02d:\n            type: string\n            description: field %d of a widget, kept as it is in every revision of the bundle\n", f, f)
			}
		}
	}
	return []byte(b.String())
}

// historyRepo builds a synthetic history of the shape straight into the object store (go-git's
// worktree would spend minutes on 2,000 commits), then packs it: main at the last commit, and
// head one commit on, whose bundle drops the version drop ("" changes only a description: no
// history needed).
func historyRepo(b *testing.B, sh historyShape, drop string) *source.Repo {
	b.Helper()
	dir := b.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	st := r.Storer
	put := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := st.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			b.Fatal(err)
		}
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	blob := func(data []byte) plumbing.Hash {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, _ := obj.Writer()
		_, _ = w.Write(data)
		_ = w.Close()
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	readme := blob([]byte("bench\n"))
	var parent plumbing.Hash
	when := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(i int, bundle []byte) plumbing.Hash {
		tree := put(&object.Tree{Entries: []object.TreeEntry{
			{Name: "README.md", Mode: filemode.Regular, Hash: readme},
			{Name: "install.yaml", Mode: filemode.Regular, Hash: blob(bundle)},
		}})
		sig := object.Signature{Name: "bench", Email: "bench@example.com", When: when.Add(time.Duration(i) * time.Hour)}
		c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("commit %d\n", i), TreeHash: tree}
		if !parent.IsZero() {
			c.ParentHashes = []plumbing.Hash{parent}
		}
		parent = put(c)
		return parent
	}
	for i := range sh.commits {
		h := commit(i, sh.historyBundle(i/sh.changeEvery*sh.changeEvery, ""))
		if i%sh.tagEvery == sh.tagEvery-1 {
			if err := st.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(fmt.Sprintf("v0.%d.0", i/sh.tagEvery)), h)); err != nil {
				b.Fatal(err)
			}
		}
	}
	setRef := func(name plumbing.ReferenceName, h plumbing.Hash) {
		if err := st.SetReference(plumbing.NewHashReference(name, h)); err != nil {
			b.Fatal(err)
		}
	}
	setRef(plumbing.NewBranchReferenceName("main"), parent)
	last := (sh.commits - 1) / sh.changeEvery * sh.changeEvery
	head := sh.historyBundle(last, drop)
	if drop == "" {
		head = []byte(strings.ReplaceAll(string(head), fmt.Sprintf("revision %d\n", last), fmt.Sprintf("revision %d\n", last+1)))
	}
	setRef(plumbing.NewBranchReferenceName("pr"), commit(sh.commits, head))
	setRef(plumbing.HEAD, plumbing.ZeroHash)
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("pr"))); err != nil {
		b.Fatal(err)
	}
	// A clone's objects are packed, as git gc leaves them: loose objects cost an inflate and a
	// checksum each that no real repository pays.
	if err := r.RepackObjects(&git.RepackConfig{}); err != nil {
		b.Fatal(err)
	}
	repo, err := source.OpenRepo(dir)
	if err != nil {
		b.Fatal(err)
	}
	return repo
}

var _ storer.EncodedObjectStorer // the store historyRepo writes into

// BenchmarkGitHistory is issue 43's synthetic history: 2,000 commits, 200 tags, a 30-CRD bundle
// changed every 10 commits. "none" is the same change without a removed version (no history
// read); "stored" drops v1alpha1, stored by the first 100 commits (the oldest release answers,
// and the walk stops); "never-stored" drops v2alpha1, which no revision stored (every tag and
// commit is read to say so). The bound: the run that needs history costs at most 3x
// the run without.
func BenchmarkGitHistory(b *testing.B) {
	sh := historyShape{commits: 2000, tagEvery: 10, changeEvery: 10, crds: 30, storedFrom: 0, storedTo: 100}
	for _, bc := range []struct{ name, drop string }{{"none", ""}, {"stored", "v1alpha1"}, {"never-stored", "v2alpha1"}} {
		b.Run(bc.name, func(b *testing.B) {
			benchmarkHistory(b, sh, bc.drop)
		})
	}
}

// BenchmarkGitHistoryLargeBundle is the other shape: an install bundle of 1 MB (110
// CRDs) that changes in every one of 220 releases (one commit each), dropping v1alpha1, the
// storage version of releases 20 to 39: the walk reads the 21 oldest releases' bundles, about
// 21 MB, to name the release that stored it. "none" is the same change without the removal.
func BenchmarkGitHistoryLargeBundle(b *testing.B) {
	sh := historyShape{commits: 220, tagEvery: 1, changeEvery: 1, crds: 110, storedFrom: 20, storedTo: 40}
	for _, bc := range []struct{ name, drop string }{{"none", ""}, {"stored-long-ago", "v1alpha1"}} {
		b.Run(bc.name, func(b *testing.B) {
			benchmarkHistory(b, sh, bc.drop)
		})
	}
}

func benchmarkHistory(b *testing.B, sh historyShape, drop string) {
	b.Helper()
	repo := historyRepo(b, sh, drop)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Git(repo, GitOptions{Base: "main", Head: "pr"}); err != nil {
			b.Fatal(err)
		}
	}
}
