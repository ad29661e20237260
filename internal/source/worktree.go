package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/crd"
)

// WorkingChanges returns the manifests the filter allows whose content in the working tree
// differs from commit c and that hold a CRD on either side (path → content, nil for a file
// deleted from the working tree): uncommitted edits, and new files git does not ignore. A bare
// repository has none. Only manifests are read, so the cost follows the repository's
// manifests, not its files.
func (r *Repo) WorkingChanges(c *object.Commit, f Filter) (map[string][]byte, error) {
	root := r.Root()
	if root == "" {
		return nil, nil
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", short(c), err)
	}
	tracked := map[string]object.TreeEntry{}
	err = eachFile(tree, func(name string, entry object.TreeEntry) error {
		if entry.Mode != filemode.Symlink && f.Allows(name) {
			tracked[name] = entry
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("reading the working tree: %w", err)
	}
	patterns, _ := gitignore.ReadPatterns(wt.Filesystem, nil) // unreadable .gitignore: nothing ignored
	ignored := gitignore.NewMatcher(append(patterns, wt.Excludes...))

	out := map[string][]byte{}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		parts := strings.Split(rel, "/")
		if d.IsDir() {
			if d.Name() == ".git" || ignored.Match(parts, true) {
				return filepath.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return filepath.SkipDir // a submodule or nested repository
			}
			return nil
		}
		if !d.Type().IsRegular() || !f.Allows(rel) {
			return nil
		}
		seen[rel] = true
		entry, isTracked := tracked[rel]
		if !isTracked && ignored.Match(parts, false) {
			return nil
		}
		data, err := readLimited(p)
		if err != nil {
			return err
		}
		if !isTracked {
			return r.keepIfCRD(out, rel, data, entry, false)
		}
		same, err := holdsBlob(p, data, entry.Hash)
		if err != nil || same {
			return err
		}
		return r.keepIfCRD(out, rel, data, entry, true)
	})
	if err != nil {
		return nil, fmt.Errorf("reading the working tree: %w", err)
	}
	for name, entry := range tracked {
		if seen[name] {
			continue
		}
		// Not walked: deleted, or inside an ignored folder (still tracked).
		p := filepath.Join(root, filepath.FromSlash(name))
		data, err := readLimited(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = r.keepIfCRD(out, name, nil, entry, true)
		case err == nil:
			var same bool
			if same, err = holdsBlob(p, data, entry.Hash); err == nil && !same {
				err = r.keepIfCRD(out, name, data, entry, true)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// holdsBlob reports whether a working-tree file holds the committed blob h. data is what was
// read of it (at most MaxFileSize+1 bytes): a longer file is hashed whole from disk, since the
// hash of its first bytes never matches and a committed file over the limit would always look
// edited.
func holdsBlob(path string, data []byte, h plumbing.Hash) (bool, error) {
	if len(data) <= MaxFileSize {
		return plumbing.ComputeHash(plumbing.BlobObject, data) == h, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	hasher := plumbing.NewHasher(plumbing.BlobObject, info.Size())
	if _, err := io.Copy(hasher, f); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return hasher.Sum() == h, nil
}

// keepIfCRD records a working-tree change when the new or the committed content holds a CRD:
// other manifests (the config file, samples) cannot change what is compared.
func (r *Repo) keepIfCRD(out map[string][]byte, name string, data []byte, entry object.TreeEntry, tracked bool) error {
	if !crd.MentionsCRD(data) && tracked {
		old, err := r.readBlob(name, entry)
		if err != nil {
			return err
		}
		if !crd.MentionsCRD(old) {
			return nil
		}
	} else if !crd.MentionsCRD(data) {
		return nil
	}
	out[name] = data
	return nil
}
