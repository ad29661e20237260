package source

import (
	"errors"
	"fmt"
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
		if !isTracked || plumbing.ComputeHash(plumbing.BlobObject, data) != entry.Hash {
			return r.keepIfCRD(out, rel, data, entry, isTracked)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the working tree: %w", err)
	}
	for name, entry := range tracked {
		if seen[name] {
			continue
		}
		// Not walked: deleted, or inside an ignored folder (still tracked).
		data, err := readLimited(filepath.Join(root, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = r.keepIfCRD(out, name, nil, entry, true)
		case err == nil && plumbing.ComputeHash(plumbing.BlobObject, data) != entry.Hash:
			err = r.keepIfCRD(out, name, data, entry, true)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
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
