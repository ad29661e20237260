package source

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
	"github.com/go-git/go-git/v5/storage/filesystem"

	gitconfig "github.com/go-git/go-git/v5/config"
)

// overlay is the repository as crdguard reads it: the user's .git, only ever read, with a
// temporary object store under it for what had to be fetched. Writing into the user's .git is
// not an option: the action runs as root, so fetched packs (go-git writes them 0600), refs and a
// rewritten .git/shallow would be root-owned and break the job's later git steps.
type overlay struct {
	storage.Storer // the user's repository; every write method is overridden below
	// extra holds fetched objects; nil until the first fetch.
	extra    *filesystem.Storage
	extraDir string
	// missing is called when a tree or blob is found nowhere (a partial clone lacks them); it
	// fetches what may hold it into extra and reports whether anything was fetched.
	missing func() bool
	// mu serialises fetching on demand, which readers in several goroutines may trigger.
	mu sync.Mutex
	// kept is the repository's storage when it keeps its pack files open; go-git's reads of
	// a kept pack share its file offset, so reads holds them one at a time.
	kept  *filesystem.Storage
	reads sync.Mutex
}

// store returns the temporary store, creating it outside the repository on first use.
func (o *overlay) store() (*filesystem.Storage, error) {
	if o.extra != nil {
		return o.extra, nil
	}
	dir, err := os.MkdirTemp("", "crdguard-objects-")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary object store: %w", err)
	}
	o.extraDir = dir
	o.extra = filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	return o.extra, nil
}

// close closes the kept pack files and removes the temporary store.
func (o *overlay) close() error {
	if o.kept != nil {
		o.kept.Close()
		o.kept = nil
	}
	if o.extraDir == "" {
		return nil
	}
	dir := o.extraDir
	o.extra, o.extraDir = nil, ""
	return os.RemoveAll(dir)
}

// EncodedObject reads an object from the repository, else from the fetched objects, else
// fetches what may hold it once.
func (o *overlay) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o.reads.Lock()
	obj, err := o.Storer.EncodedObject(t, h)
	o.reads.Unlock()
	if !errors.Is(err, plumbing.ErrObjectNotFound) {
		return obj, err
	}
	if o.extra != nil {
		if obj, err = o.extra.EncodedObject(t, h); !errors.Is(err, plumbing.ErrObjectNotFound) {
			return obj, err
		}
	}
	if o.missing == nil || (t != plumbing.BlobObject && t != plumbing.TreeObject) {
		return nil, plumbing.ErrObjectNotFound // a missing commit is a shallow boundary, not a partial clone
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.extra != nil {
		if obj, err := o.extra.EncodedObject(t, h); err == nil {
			return obj, nil // fetched meanwhile
		}
	}
	if !o.missing() || o.extra == nil {
		return nil, plumbing.ErrObjectNotFound
	}
	return o.extra.EncodedObject(t, h)
}

// HasEncodedObject looks in both stores.
func (o *overlay) HasEncodedObject(h plumbing.Hash) error {
	if err := o.Storer.HasEncodedObject(h); err == nil || o.extra == nil {
		return err
	}
	return o.extra.HasEncodedObject(h)
}

// EncodedObjectSize looks in both stores.
func (o *overlay) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	o.reads.Lock()
	n, err := o.Storer.EncodedObjectSize(h)
	o.reads.Unlock()
	if err == nil || o.extra == nil {
		return n, err
	}
	return o.extra.EncodedObjectSize(h)
}

// Reference resolves in the repository, then among the fetched commits.
func (o *overlay) Reference(name plumbing.ReferenceName) (*plumbing.Reference, error) {
	ref, err := o.Storer.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) && o.extra != nil {
		return o.extra.Reference(name)
	}
	return ref, err
}

// Shallow lists the shallow commits of both stores.
func (o *overlay) Shallow() ([]plumbing.Hash, error) {
	s, err := o.Storer.Shallow()
	if err != nil || o.extra == nil {
		return s, err
	}
	more, err := o.extra.Shallow()
	return append(s, more...), err
}

var errReadOnly = errors.New("crdguard never writes into the repository")

// NewEncodedObject returns an object for the temporary store.
func (o *overlay) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

// SetEncodedObject refuses: objects are fetched into the temporary store directly.
func (o *overlay) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}

// AddAlternate refuses.
func (o *overlay) AddAlternate(string) error { return errReadOnly }

// SetReference refuses.
func (o *overlay) SetReference(*plumbing.Reference) error { return errReadOnly }

// CheckAndSetReference refuses.
func (o *overlay) CheckAndSetReference(_, _ *plumbing.Reference) error { return errReadOnly }

// RemoveReference refuses.
func (o *overlay) RemoveReference(plumbing.ReferenceName) error { return errReadOnly }

// PackRefs refuses.
func (o *overlay) PackRefs() error { return errReadOnly }

// SetShallow refuses.
func (o *overlay) SetShallow([]plumbing.Hash) error { return errReadOnly }

// SetIndex refuses.
func (o *overlay) SetIndex(*index.Index) error { return errReadOnly }

// SetConfig refuses.
func (o *overlay) SetConfig(*gitconfig.Config) error { return errReadOnly }

// Module refuses: submodules are not read.
func (o *overlay) Module(string) (storage.Storer, error) { return nil, errReadOnly }

var _ storer.EncodedObjectStorer = (*overlay)(nil)
