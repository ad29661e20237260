package source

import (
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/crd"
)

// A kustomization that stops listing a CRD file takes the CRD out of what `kubectl apply -k`
// (and Argo CD or Flux pointed at the folder) installs, like a bundle that drops it, although the
// file itself did not change. Source records what each kustomization installs, as kustomize
// builds it (Listing), and a git comparison reads the unchanged files a changed kustomization
// stopped installing, so that check can tell which CRDs left it.

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

// Remote is a resource a kustomization of the tree lists, or a dependency a chart takes from a
// chart repository, that crdguard does not fetch.
type Remote struct {
	// File and Line are the kustomization (or Chart.yaml) and its entry's line.
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

// Remotes returns the remote resources the kustomizations the tree read list, and the
// dependencies its rendered charts take from chart repositories, by file and line: what they
// install is not checked.
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

// unlisted records what each changed kustomization lists on both sides, and returns the
// unchanged CRD files that it listed in base and no longer lists in head, for both sides: what
// they define must be known to tell what left the kustomization. They are marked changed, so
// that addUnchanged does not add them again.
func (r *Repo) unlisted(cmp *Comparison, files []changedFile, newTree *object.Tree, changed map[string]bool, f Filter) []File {
	var out []File
	for _, c := range files {
		if c.from == "" || c.to == "" || c.oldErr != nil || c.newErr != nil || !slices.Contains(kustomizationNames, path.Base(c.to)) {
			continue
		}
		before, ok1 := cmp.Old.installedBy(c.from)
		after, ok2 := cmp.New.installedBy(c.to)
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
