package source

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// OLM v1 delivery is a fact of the repository, not of one file: an operator shipped through OLM
// keeps an operator bundle whose manifests include a ClusterServiceVersion. operator-sdk and
// the OperatorHub layouts name that file NAME.clusterserviceversion.yaml (bundle/manifests/,
// config/manifests/bases/, VERSION/manifests/), so the file names alone tell, without reading
// any file of a large repository.

// IsOLMManifest reports whether a file is an OLM ClusterServiceVersion by the name operator-sdk
// and OperatorHub give it.
func IsOLMManifest(name string) bool {
	base := strings.ToLower(path.Base(name))
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(base, ".clusterserviceversion"+ext) {
			return true
		}
	}
	return false
}

// olmBundle returns the first of names (sorted) that is a ClusterServiceVersion the project
// ships: one in a test or fixture folder is an input of tests, not a delivery.
func olmBundle(names []string) string {
	sort.Strings(names)
	for _, n := range names {
		if IsOLMManifest(n) && PathFacts(n).Ships() {
			return n
		}
	}
	return ""
}

// DirOLMBundle returns the ClusterServiceVersion file under a folder, "" when it has none (or
// when root is a file).
func DirOLMBundle(root string) (string, error) {
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && IsOLMManifest(p):
			rel, _ := filepath.Rel(root, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("looking for an OLM bundle in %s: %w", root, err)
	}
	if b := olmBundle(names); b != "" {
		return path.Join(filepath.ToSlash(root), b), nil
	}
	return "", nil
}

// OLMBundle returns the ClusterServiceVersion file of a commit, "" when it has none. Only tree
// objects are read, never a file's content.
func (r *Repo) OLMBundle(c *object.Commit) (string, error) {
	tree, err := c.Tree()
	if err != nil {
		return "", fmt.Errorf("reading the tree of %s: %w", c.Hash, err)
	}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	var names []string
	for {
		name, e, err := w.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("looking for an OLM bundle in %s: %w", c.Hash, err)
		}
		if e.Mode.IsFile() && e.Mode != filemode.Symlink && IsOLMManifest(name) {
			names = append(names, name)
		}
	}
	return olmBundle(names), nil
}
