package source

import (
	"bytes"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/crd"
)

// A kustomization that stops listing a CRD file takes the CRD out of what `kubectl apply -k`
// (and Argo CD or Flux pointed at the folder) installs, like a bundle that drops it, although the
// file itself did not change. Source records what each kustomization lists (Listing), and a git
// comparison reads the unchanged files a changed kustomization stopped listing, so that check
// can tell which CRDs left it.

// maxKustomizeDepth bounds how deep folder resources are followed (kustomizations listing
// folders whose kustomizations list folders …); real layouts go two or three deep.
const maxKustomizeDepth = 10

// recordListing records the files a kustomization installs, with the line of the entry that
// brings each: the files it lists, and, through each folder it lists, the files that folder's
// kustomization installs (kubectl apply -k renders them all). read reads a file of the same side
// by its name in the tree (from the commit in git mode, never the file system there); nil reads
// no folder. A remote resource (a URL, a git repository) is not fetched: Remote names it. The
// files are returned in the order listed.
func (t *Tree) recordListing(dir, file string, data []byte, resources []string, read func(string) ([]byte, bool)) []string {
	if t.listing == nil {
		t.listing = map[string]map[string]int{}
	}
	listed := map[string]int{}
	var files []string
	var remotes []Remote
	for _, r := range resources {
		line := entryLine(data, r)
		for _, f := range t.installs(file, line, path.Join(dir, r), r, read, map[string]bool{file: true}, 0, &remotes) {
			if _, ok := listed[t.rel(f)]; !ok {
				listed[t.rel(f)] = line
				files = append(files, f)
			}
		}
	}
	t.listing[t.rel(file)] = listed
	t.setRemoteVia(t.rel(file), remotes)
	return files
}

// entryLine is the line of a kustomization's entry for a resource, 1 when it cannot be found.
func entryLine(data []byte, r string) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(l)), "- ")) == r {
			return i + 1
		}
	}
	return 1
}

// installs returns the files a resource entry of a kustomization (file, at line) brings: the
// file itself, or, for a folder with a kustomization, what that kustomization lists, followed
// down (seen stops cycles). A remote entry is recorded in t.remote and in remotes, and brings
// nothing read.
func (t *Tree) installs(file string, line int, name, entry string, read func(string) ([]byte, bool), seen map[string]bool, depth int, remotes *[]Remote) []string {
	if read == nil || depth >= maxKustomizeDepth {
		return []string{name}
	}
	for _, k := range kustomizationNames {
		data, ok := read(path.Join(name, k))
		if !ok {
			continue
		}
		inner := path.Join(name, k)
		var kz types.Kustomization
		if seen[inner] || yaml.Unmarshal(data, &kz) != nil {
			return nil // a cycle, or a kustomization kustomize refuses: nothing it installs is known
		}
		seen[inner] = true
		kz.FixKustomization()
		var out []string
		for _, r := range kz.Resources {
			out = append(out, t.installs(inner, entryLine(data, r), path.Join(name, r), r, read, seen, depth+1, remotes)...)
		}
		return out
	}
	if isRemote(entry) {
		// kustomize reads a local path first: only what the tree does not hold is fetched.
		if _, ok := read(name); !ok {
			*remotes = append(*remotes, t.addRemote(file, line, entry))
			return nil
		}
	}
	return []string{name} // a file, or nothing kustomize could read
}

// isRemote reports whether a kustomization resource is remote, as kustomize tells: not a path
// in the tree but a URL (https://…, a git URL) or a repository spec such as
// github.com/org/repo//config/crd?ref=v1.
func isRemote(entry string) bool {
	if strings.Contains(entry, "://") || strings.HasPrefix(entry, "git@") || strings.Contains(entry, "?ref=") || strings.Contains(entry, "?version=") {
		return true
	}
	host, _, ok := strings.Cut(entry, "/")
	return ok && strings.Contains(host, ".") && host != "." && host != ".." && !strings.HasPrefix(host, ".")
}

// Remote is a resource a kustomization of the tree lists that crdguard does not fetch.
type Remote struct {
	// File and Line are the kustomization and its entry's line.
	File string
	Line int
	// Entry is the resource as written.
	Entry string
}

func (t *Tree) addRemote(file string, line int, entry string) Remote {
	r := Remote{File: file, Line: line, Entry: entry}
	if !slices.Contains(t.remote, r) {
		t.remote = append(t.remote, r)
	}
	return r
}

// Remotes returns the remote resources the kustomizations the tree read list, by file and line:
// what they install is not checked.
func (t *Tree) Remotes() []Remote {
	out := slices.Clone(t.remote)
	slices.SortFunc(out, CompareRemotes)
	return out
}

// Listing returns the kustomizations this tree read that list the file at a path under the root
// as a resource, by their paths under the root (as copies pair), each with the line of the entry.
func (t *Tree) Listing(rel string) map[string]int {
	out := map[string]int{}
	for k, listed := range t.listing {
		if line, ok := listed[rel]; ok {
			out[k] = line
		}
	}
	return out
}

// ReadKustomization reports whether the tree read (parsed) the kustomization at a path under
// its root.
func (t *Tree) ReadKustomization(rel string) bool {
	_, ok := t.listing[rel]
	return ok
}

// Under is the file of the tree at a path under its root.
func (t *Tree) Under(rel string) string {
	if t.Root == "" {
		return rel
	}
	return t.Root + "/" + rel
}

// listResources records the files a changed kustomization installs on one side (folders
// followed through read), and returns them.
func (t *Tree) listResources(file string, data []byte, read func(string) ([]byte, bool)) ([]string, bool) {
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, false
	}
	k.FixKustomization()
	return t.recordListing(path.Dir(file), file, data, k.Resources, read), true
}

// unlisted records what each changed kustomization lists on both sides, and returns the
// unchanged CRD files that it listed in base and no longer lists in head, for both sides: what
// they define must be known to tell what left the kustomization. They are marked changed, so
// that addUnchanged does not add them again.
func (r *Repo) unlisted(cmp *Comparison, files []changedFile, newTree *object.Tree, readOld, readNew func(string) ([]byte, bool), changed map[string]bool, f Filter) []File {
	var out []File
	for _, c := range files {
		if c.from == "" || c.to == "" || c.oldErr != nil || c.newErr != nil || !slices.Contains(kustomizationNames, path.Base(c.to)) {
			continue
		}
		before, ok1 := cmp.Old.listResources(c.from, c.old, readOld)
		after, ok2 := cmp.New.listResources(c.to, c.new, readNew)
		if !ok1 || !ok2 {
			continue
		}
		for _, name := range before {
			if slices.Contains(after, name) || changed[name] || !f.Allows(name) {
				continue
			}
			e, err := newTree.FindEntry(name)
			if err != nil || !e.Mode.IsFile() {
				continue
			}
			data, err := r.readBlob(name, *e)
			if err != nil || !crd.MentionsCRD(data) {
				continue
			}
			changed[name] = true
			out = append(out, File{Tree: cmp.Old, Name: name, Data: data}, File{Tree: cmp.New, Name: name, Data: data})
		}
	}
	return out
}
