package source

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/gittest"
)

// The history's own delta resolution reads every blob of a packed history exactly as go-git's
// reader does, also when what it keeps is too small for a whole delta chain, and resolves most
// of them as deltas (the pack deltifies the revisions of one bundle against each other).
func TestHistoryBlobsReadAsGoGit(t *testing.T) {
	dir := t.TempDir()
	sh := gittest.HistoryShape{Commits: 60, TagEvery: 5, ChangeEvery: 2, CRDs: 3, StoredFrom: 0, StoredTo: 10}
	if err := gittest.WriteHistory(dir, sh, gittest.HistoryChange{Drop: "v2alpha1"}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var hashes []plumbing.Hash
	deltas := 0
	iter, err := r.repo.BlobObjects()
	if err != nil {
		t.Fatal(err)
	}
	if err := iter.ForEach(func(b *object.Blob) error {
		hashes = append(hashes, b.Hash)
		if o, err := r.store.kept.DeltaObject(plumbing.AnyObject, b.Hash); err == nil {
			if _, ok := o.(plumbing.DeltaObject); ok {
				deltas++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(hashes) < 30 || deltas < len(hashes)/2 {
		t.Fatalf("%d blobs, %d of them deltas: the pack does not exercise delta chains", len(hashes), deltas)
	}
	for _, max := range []int{1 << 20, 8 << 10} { // a whole chain kept; less than two bundles
		b := newHistoryBlobs(r, max)
		for _, h := range hashes {
			got, err := b.read(h)
			if err != nil {
				t.Fatalf("keeping %d bytes: %s: %v", max, h, err)
			}
			want, err := r.readBlob(h.String(), object.TreeEntry{Hash: h})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("keeping %d bytes: %s reads %d bytes, go-git %d", max, h, len(got), len(want))
			}
		}
		if b.used > max && b.order.Len() > 1 {
			t.Errorf("keeps %d bytes in %d blobs, more than %d", b.used, b.order.Len(), max)
		}
	}
}
