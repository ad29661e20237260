package source

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// The history reads hundreds of revisions of the same bundles, nearly all stored in the pack as
// deltas against one another. go-git resolves such a chain and puts each object it resolves in
// its cache under the object's hash, which it computes anew with its collision-detecting SHA-1
// over the whole content: a fifth of the walk, for hashes the tree entries already give. The
// walk resolves the deltas of its blobs itself instead (go-git's delta objects and PatchDelta),
// and keeps what it resolved by the hash it asked for.

// deltaChainLimit bounds the deltas resolved for one blob (git's own default depth is 50): a
// longer chain is left to go-git.
const deltaChainLimit = 4096

// errUnresolved says a blob is left to go-git's reader: not in a pack file kept open, larger
// than MaxFileSize, or a delta this reader does not resolve.
var errUnresolved = errors.New("blob left to go-git")

// historyBlobs reads blobs for one history walk, resolving their deltas against contents it
// keeps (most recently used first, at most max bytes).
type historyBlobs struct {
	r         *Repo
	used, max int
	order     *list.List // of *keptBlob, most recently used first
	byHash    map[plumbing.Hash]*list.Element
}

type keptBlob struct {
	hash plumbing.Hash
	data []byte
}

func newHistoryBlobs(r *Repo, max int) *historyBlobs {
	return &historyBlobs{r: r, max: max, order: list.New(), byHash: map[plumbing.Hash]*list.Element{}}
}

// read returns a blob's content whole, or errUnresolved (read it with readBlob).
func (b *historyBlobs) read(h plumbing.Hash) ([]byte, error) {
	return b.resolve(h, 0)
}

func (b *historyBlobs) resolve(h plumbing.Hash, depth int) ([]byte, error) {
	if e, ok := b.byHash[h]; ok {
		b.order.MoveToFront(e)
		return e.Value.(*keptBlob).data, nil
	}
	kept := b.r.store.kept
	if kept == nil || depth > deltaChainLimit {
		return nil, errUnresolved
	}
	b.r.store.reads.Lock() // go-git's reads of a kept pack share its file offset
	obj, err := kept.DeltaObject(plumbing.AnyObject, h)
	var delta []byte
	d, isDelta := obj.(plumbing.DeltaObject)
	if err == nil && isDelta {
		delta, err = readObject(d)
	}
	b.r.store.reads.Unlock()
	if err != nil {
		return nil, errUnresolved // missing (a partial clone) or unreadable: go-git says which
	}
	if !isDelta {
		if obj.Type() != plumbing.BlobObject || obj.Size() > MaxFileSize {
			return nil, errUnresolved
		}
		rd, err := obj.Reader()
		if err != nil {
			return nil, errUnresolved
		}
		data, err := readSized(h.String(), rd, obj.Size())
		rd.Close()
		if err != nil {
			return nil, errUnresolved
		}
		b.keep(h, data)
		return data, nil
	}
	// A delta starts with the sizes of its base and of its result (LEB128, as Uvarint reads).
	_, n := binary.Uvarint(delta)
	size, m := binary.Uvarint(delta[max(n, 0):])
	if n <= 0 || m <= 0 || size > MaxFileSize {
		return nil, errUnresolved
	}
	base, err := b.resolve(d.BaseHash(), depth+1)
	if err != nil {
		return nil, err
	}
	// ApplyDelta patches in go-git's pooled buffers and writes the result once, into a buffer
	// of its size (PatchDelta grows a new one from 64 KiB by doubling: more than the hashing
	// saved).
	out := &blobBytes{}
	if err := packfile.ApplyDelta(out, &blobBytes{data: base}, delta); err != nil || len(out.data) != int(size) {
		return nil, errUnresolved
	}
	b.keep(h, out.data)
	return out.data, nil
}

// blobBytes is a blob's content as the object packfile.ApplyDelta reads a base from and writes
// the result to.
type blobBytes struct{ data []byte }

func (o *blobBytes) Hash() plumbing.Hash         { return plumbing.ZeroHash } // ApplyDelta never asks
func (o *blobBytes) Type() plumbing.ObjectType   { return plumbing.BlobObject }
func (o *blobBytes) SetType(plumbing.ObjectType) {}
func (o *blobBytes) Size() int64                 { return int64(len(o.data)) }
func (o *blobBytes) SetSize(n int64)             { o.data = make([]byte, 0, n) }
func (o *blobBytes) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *blobBytes) Writer() (io.WriteCloser, error) { return o, nil }
func (o *blobBytes) Close() error                    { return nil }
func (o *blobBytes) Write(p []byte) (int, error) {
	o.data = append(o.data, p...)
	return len(p), nil
}

// keep remembers a content, forgetting the least recently used beyond max bytes.
func (b *historyBlobs) keep(h plumbing.Hash, data []byte) {
	b.byHash[h] = b.order.PushFront(&keptBlob{hash: h, data: data})
	b.used += len(data)
	for b.used > b.max && b.order.Len() > 1 {
		old := b.order.Remove(b.order.Back()).(*keptBlob)
		delete(b.byHash, old.hash)
		b.used -= len(old.data)
	}
}

// readObject reads a (small, in memory) object's content whole.
func readObject(o plumbing.EncodedObject) ([]byte, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("reading a delta: %w", err)
	}
	return data, nil
}
