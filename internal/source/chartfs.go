package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Charts are read as Helm's loader reads a chart folder: every file below it, links followed
// (Helm walks the folder with its own link-following walk), names through the links. In git
// mode the files come from the commit's objects, and a link is followed only inside the
// repository; on disk (crdguard diff) links are followed wherever they point, as Helm does.

// maxLinkHops bounds the links followed to resolve one path, as the kernel's ELOOP does.
const maxLinkHops = 40

// errLinkOutside is a link a commit holds that points outside the repository.
var errLinkOutside = errors.New("links outside the repository")

// chartFS lists and reads one side's files for its charts.
type chartFS interface {
	// list returns the files of a chart folder, names from the folder, links followed.
	list(dir string) ([]chartFile, error)
	// read reads one file by its name in the tree, links followed.
	read(name string) ([]byte, bool)
}

// gitFS reads the charts of a commit's tree, the working tree's changes (nil: deleted) laid over
// it.
type gitFS struct {
	r       *Repo
	root    *object.Tree
	working map[string][]byte
	// held are the blobs the comparison has read already, by hash (the changed files, kept for
	// the diff): served again instead of resolving their deltas a second time (kustomize reads
	// the definitions it builds; argo-workflows' 2.8 MB ones took a quarter of the run's CPU).
	held map[plumbing.Hash][]byte
}

// resolved is what a path of a commit names once its links are followed.
type resolved struct {
	real  string // the path with every link resolved
	tree  *object.Tree
	entry object.TreeEntry
}

// resolve follows a path through the commit's tree, each link on the way (the last one too)
// resolved against the folder it lies in.
func (g *gitFS) resolve(name string) (resolved, error) {
	parts := splitPath(name)
	hops := 0
	for {
		t, done := g.root, []string{}
		restart := false
		for i, p := range parts {
			e, err := t.FindEntry(p)
			if err != nil {
				return resolved{}, fs.ErrNotExist
			}
			if e.Mode == filemode.Symlink {
				if hops++; hops > maxLinkHops {
					return resolved{}, fmt.Errorf("%s: too many levels of links", name)
				}
				target, err := g.linkTarget(e)
				if err != nil {
					return resolved{}, err
				}
				if path.IsAbs(target) {
					return resolved{}, fmt.Errorf("%s: %w (%s)", path.Join(append(done, p)...), errLinkOutside, target)
				}
				joined := path.Join(path.Join(done...), target)
				if joined == ".." || strings.HasPrefix(joined, "../") {
					return resolved{}, fmt.Errorf("%s: %w (%s)", path.Join(append(done, p)...), errLinkOutside, target)
				}
				parts = append(splitPath(joined), parts[i+1:]...)
				restart = true
				break
			}
			done = append(done, p)
			if i == len(parts)-1 {
				if e.Mode == filemode.Dir {
					sub, err := g.r.repo.TreeObject(e.Hash)
					if err != nil {
						return resolved{}, err
					}
					return resolved{real: path.Join(done...), tree: sub}, nil
				}
				return resolved{real: path.Join(done...), entry: *e}, nil
			}
			if e.Mode != filemode.Dir {
				return resolved{}, fs.ErrNotExist
			}
			if t, err = g.r.repo.TreeObject(e.Hash); err != nil {
				return resolved{}, err
			}
		}
		if !restart {
			return resolved{real: ".", tree: g.root}, nil // the root itself
		}
	}
}

func splitPath(name string) []string {
	var out []string
	for _, p := range strings.Split(path.Clean(name), "/") {
		if p != "" && p != "." {
			out = append(out, p)
		}
	}
	return out
}

// linkTarget reads the path a link holds.
func (g *gitFS) linkTarget(e *object.TreeEntry) (string, error) {
	blob, err := g.r.repo.BlobObject(e.Hash)
	if err != nil {
		return "", err
	}
	rd, err := blob.Reader()
	if err != nil {
		return "", err
	}
	defer rd.Close()
	data, err := readCapped(e.Name, rd)
	return strings.TrimSpace(string(data)), err
}

func (g *gitFS) read(name string) ([]byte, bool) {
	if data, ok := g.working[name]; ok {
		return data, data != nil
	}
	res, err := g.resolve(name)
	if err != nil || res.tree != nil {
		return nil, false
	}
	if res.real != name {
		if data, ok := g.working[res.real]; ok {
			return data, data != nil
		}
	}
	if data, ok := g.held[res.entry.Hash]; ok {
		return data, len(data) <= MaxFileSize
	}
	data, err := g.r.readBlob(res.real, res.entry)
	return data, err == nil && len(data) <= MaxFileSize
}

func (g *gitFS) list(dir string) ([]chartFile, error) {
	res, err := g.resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", dir, err)
	}
	if res.tree == nil {
		return nil, fmt.Errorf("reading chart %s: not a folder", dir)
	}
	var out []chartFile
	if err := g.walk(res.tree, res.real, "", []string{res.real}, &out); err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	// Uncommitted changes under the chart (crdguard check before you push).
	for name, data := range g.working {
		rel, ok := strings.CutPrefix(name, dir+"/")
		if !ok {
			continue
		}
		i := sort.Search(len(out), func(i int) bool { return out[i].Name >= rel })
		switch {
		case i < len(out) && out[i].Name == rel && data == nil:
			out = append(out[:i], out[i+1:]...)
		case i < len(out) && out[i].Name == rel:
			out[i].Data = data
		case data != nil:
			out = append(out[:i], append([]chartFile{{Name: rel, Data: data}}, out[i:]...)...)
		}
	}
	return out, nil
}

// walk lists a folder of the commit (real: its path with links resolved; prefix: its name from
// the chart), following links; stack holds the real folders being walked, to stop link cycles.
func (g *gitFS) walk(t *object.Tree, real, prefix string, stack []string, out *[]chartFile) error {
	for _, e := range t.Entries {
		name, realName := prefix+e.Name, path.Join(real, e.Name)
		switch e.Mode {
		case filemode.Dir:
			sub, err := g.r.repo.TreeObject(e.Hash)
			if err != nil {
				return err
			}
			if err := g.walk(sub, realName, name+"/", append(stack, realName), out); err != nil {
				return err
			}
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			data, err := g.r.readBlob(realName, e)
			if err != nil {
				return err
			}
			*out = append(*out, chartFile{Name: name, Data: data})
		case filemode.Symlink:
			res, err := g.resolve(realName)
			if errors.Is(err, fs.ErrNotExist) {
				continue // a dangling link: Helm's walk skips nothing it can read, and this is nothing
			}
			if err != nil {
				return err
			}
			if res.tree == nil {
				data, err := g.r.readBlob(res.real, res.entry)
				if err != nil {
					return err
				}
				*out = append(*out, chartFile{Name: name, Data: data})
				continue
			}
			for _, s := range stack {
				if res.real == s || res.real == "." || strings.HasPrefix(s, res.real+"/") {
					return fmt.Errorf("%s: the link leads back into a folder that holds it (a cycle)", realName)
				}
			}
			if err := g.walk(res.tree, res.real, name+"/", append(stack, res.real), out); err != nil {
				return err
			}
		}
	}
	return nil
}

// diskFS reads charts from the file system (crdguard diff), links followed as Helm follows them.
type diskFS struct{}

func (diskFS) read(name string) ([]byte, bool) {
	data, err := readLimited(filepath.FromSlash(name))
	return data, err == nil && len(data) <= MaxFileSize
}

func (diskFS) list(dir string) ([]chartFile, error) {
	var out []chartFile
	real, err := filepath.EvalSymlinks(filepath.FromSlash(dir))
	if err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", dir, err)
	}
	if err := diskWalk(filepath.FromSlash(dir), "", []string{real}, &out); err != nil {
		return nil, fmt.Errorf("reading chart %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func diskWalk(dir, prefix string, stack []string, out *[]chartFile) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p, name := filepath.Join(dir, e.Name()), prefix+e.Name()
		info, err := os.Stat(p) // follows links
		if err != nil {
			continue // a dangling link
		}
		if info.IsDir() {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err
			}
			for _, s := range stack {
				if real == s || strings.HasPrefix(s, real+string(filepath.Separator)) {
					return fmt.Errorf("%s: the link leads back into a folder that holds it (a cycle)", p)
				}
			}
			if err := diskWalk(p, name+"/", append(stack, real), out); err != nil {
				return err
			}
			continue
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("cannot load irregular file %s", p)
		}
		data, err := readLimited(p)
		if err != nil {
			return err
		}
		*out = append(*out, chartFile{Name: name, Data: data})
	}
	return nil
}
