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

// recordListing records the resources a kustomization lists, with the line of each entry.
func (t *Tree) recordListing(dir, file string, data []byte, resources []string) {
	if t.listing == nil {
		t.listing = map[string]map[string]int{}
	}
	lines := bytes.Split(data, []byte("\n"))
	listed := map[string]int{}
	for _, r := range resources {
		line := 1
		if i := slices.IndexFunc(lines, func(l []byte) bool {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(l)), "- ")) == r
		}); i >= 0 {
			line = i + 1
		}
		listed[t.rel(path.Join(dir, r))] = line
	}
	t.listing[t.rel(file)] = listed
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

// listResources records the resources a changed kustomization lists on one side, and returns
// them joined with its folder.
func (t *Tree) listResources(file string, data []byte) ([]string, bool) {
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, false
	}
	k.FixKustomization()
	t.recordListing(path.Dir(file), file, data, k.Resources)
	out := make([]string, len(k.Resources))
	for i, r := range k.Resources {
		out[i] = path.Join(path.Dir(file), r)
	}
	return out, true
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
		before, ok1 := cmp.Old.listResources(c.from, c.old)
		after, ok2 := cmp.New.listResources(c.to, c.new)
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
