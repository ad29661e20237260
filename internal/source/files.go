package source

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Files is every file of one side, listed at once and read on demand: the Go sources that
// generate the CRDs are looked up by path, and most are never read.
type Files struct {
	names []string
	read  func(name string) ([]byte, error)
}

// Names lists the files by slash path from the root, sorted.
func (f *Files) Names() []string { return f.names }

// Read returns one file's content (at most MaxFileSize+1 bytes).
func (f *Files) Read(name string) ([]byte, error) { return f.read(name) }

// CommitFiles lists the files of a commit.
func (r *Repo) CommitFiles(c *object.Commit) (*Files, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", short(c), err)
	}
	entries := map[string]object.TreeEntry{}
	f := &Files{}
	err = eachFile(tree, func(name string, e object.TreeEntry) error {
		if e.Mode != filemode.Symlink {
			entries[name] = e
			f.names = append(f.names, name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(f.names)
	f.read = func(name string) ([]byte, error) {
		e, ok := entries[name]
		if !ok {
			return nil, fmt.Errorf("%s: not in %s", name, short(c))
		}
		return r.readBlob(name, e)
	}
	return f, nil
}

// DirFiles lists the regular files under a folder, leaving out hidden folders and vendored or
// installed dependencies, which never hold the repository's own sources.
func DirFiles(root string) (*Files, error) {
	f := &Files{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "vendor" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			f.names = append(f.names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", root, err)
	}
	sort.Strings(f.names)
	f.read = func(name string) ([]byte, error) { return readLimited(filepath.Join(root, filepath.FromSlash(name))) }
	return f, nil
}
