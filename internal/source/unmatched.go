package source

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/crd"
)

// A paths glob with a typo (config/crds/** for config/crd/**), or one that matches only files
// without CRDs, makes every comparison "0 CRDs compared: pass": a required check that can never
// fail. Both are configuration errors, named with the folder the user probably meant.

// maxScan bounds the files read to find CRDs under paths or to suggest a folder: it is only
// about words in an error, and a partial clone's missing blobs are never fetched for it.
const maxScan = 2000

// PathsCheck checks a Filter's Paths against the base and head commits (head with the working
// tree's changes laid over it, nil for deleted): a glob that matches no manifest in either is
// an error, and so are globs that together match only files holding no CRD in either commit
// (foundCRD says the comparison already read one, so nothing needs to be read). A glob that
// matches files in base only (a folder removed by the change) is a notice: the comparison
// reports what went.
func (r *Repo) PathsCheck(base, head *object.Commit, f Filter, working map[string][]byte, foundCRD bool) (notices []string, err error) {
	if len(f.Paths) == 0 {
		return nil, nil
	}
	headFiles, err := r.manifests(head, working)
	if err != nil {
		return nil, err
	}
	baseFiles, err := r.manifests(base, nil)
	if err != nil {
		return nil, err
	}
	var typos []string
	for _, g := range f.Unmatched(headFiles.names) {
		if len(f.withPaths(g).Unmatched(baseFiles.names)) == 0 {
			notices = append(notices, UnmatchedNotice(g, "head"))
			continue
		}
		typos = append(typos, g)
	}
	if len(typos) > 0 {
		msgs := make([]string, len(typos))
		for i, g := range typos {
			what := "no YAML or JSON file"
			matches := func(f Filter) bool {
				return len(f.Unmatched(headFiles.names)) == 0 || len(f.Unmatched(baseFiles.names)) == 0
			}
			withTests := f.withPaths(g)
			withTests.SkipTests = false
			switch {
			case matches(withTests):
				what = "only files in test or fixture folders, which are read only where paths names the folder,"
			case matches(Filter{Paths: []string{g}}):
				what = "only excluded files (exclude: " + flowList(f.Exclude) + ")"
			}
			msgs[i] = fmt.Sprintf("paths: %q matches %s in head or in base, so no CRD is ever read from it%s", g, what, headFiles.suggest(g, f))
		}
		return nil, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	if foundCRD || headFiles.holdCRD(f) || baseFiles.holdCRD(f) {
		return notices, nil
	}
	return nil, fmt.Errorf("paths: %s match YAML or JSON files in head or base, but none of them holds a CustomResourceDefinition, so every run would compare nothing%s", flowList(f.Paths), headFiles.suggest(f.Paths[0], f))
}

// withPaths is f with one glob as its Paths.
func (f Filter) withPaths(glob string) Filter {
	f.Paths = []string{glob}
	return f
}

// flowList renders globs as a YAML flow list, as the config may write them.
func flowList(globs []string) string {
	q := make([]string, len(globs))
	for i, g := range globs {
		q[i] = fmt.Sprintf("%q", g)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// manifestFiles are the manifests of one commit, read on demand.
type manifestFiles struct {
	names []string // sorted
	read  func(name string) (data []byte, ok bool)
}

// manifests lists a commit's YAML and JSON files (working-tree changes laid over it). read
// returns false for a file whose content is not in the clone: it is not fetched.
func (r *Repo) manifests(c *object.Commit, working map[string][]byte) (*manifestFiles, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", short(c), err)
	}
	entries := map[string]object.TreeEntry{}
	err = eachFile(tree, func(name string, e object.TreeEntry) error {
		if IsManifest(name) {
			entries[name] = e
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m := &manifestFiles{}
	for name, data := range working {
		if !IsManifest(name) {
			continue
		}
		if data == nil {
			delete(entries, name)
		} else {
			entries[name] = object.TreeEntry{} // read from working below
		}
	}
	for name := range entries {
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	m.read = func(name string) ([]byte, bool) {
		if data, ok := working[name]; ok {
			return data, data != nil
		}
		e := entries[name]
		if r.store.HasEncodedObject(e.Hash) != nil {
			return nil, false
		}
		data, err := r.readBlob(name, e)
		return data, err == nil
	}
	return m, nil
}

// holdCRD reports whether a file the filter allows mentions a CRD, or may: a file whose
// content is not in the clone, or one past maxScan, counts as holding one.
func (m *manifestFiles) holdCRD(f Filter) bool {
	read := 0
	for _, name := range m.names {
		if !f.Allows(name) {
			continue
		}
		if read++; read > maxScan {
			return true
		}
		data, ok := m.read(name)
		if !ok || crd.MentionsCRD(data) {
			return true
		}
	}
	return false
}

// suggest words the nearest folder to a glob's literal folder that holds a CRD file the filter
// would read (its Paths aside), as the glob rewritten to it: `; did you mean "config/crd/**"?`.
func (m *manifestFiles) suggest(glob string, f Filter) string {
	prefix := literalPrefix(glob)
	folders := map[string][]string{}
	f.Paths = nil
	for _, name := range m.names {
		if f.Allows(name) {
			dir := path.Dir(name)
			folders[dir] = append(folders[dir], name)
		}
	}
	order := make([]string, 0, len(folders))
	for dir := range folders {
		order = append(order, dir)
	}
	sort.Slice(order, func(i, j int) bool {
		di, dj := crd.EditDistance(prefix, order[i]), crd.EditDistance(prefix, order[j])
		if di != dj {
			return di < dj
		}
		return order[i] < order[j]
	})
	read := 0
	for _, dir := range order {
		for _, name := range folders[dir] {
			if read++; read > maxScan {
				return ""
			}
			if data, ok := m.read(name); ok && crd.MentionsCRD(data) {
				if dir == "." {
					return fmt.Sprintf("; the CRDs are at the repository root (%s)", name)
				}
				better := dir + strings.TrimPrefix(glob, prefix)
				if !Match(better, name) {
					better = dir + "/**"
				}
				return fmt.Sprintf("; did you mean %q? (%s holds CRDs)", better, dir)
			}
		}
	}
	return "; no YAML or JSON file in head holds a CustomResourceDefinition"
}

// literalPrefix is the folders of a glob before its first wildcard: config/crds for
// config/crds/**.
func literalPrefix(glob string) string {
	parts := strings.Split(strings.Trim(glob, "/"), "/")
	i := 0
	for i < len(parts) && !strings.ContainsAny(parts[i], "*?[") {
		i++
	}
	if i == len(parts) && i > 0 && IsManifest(parts[i-1]) {
		i-- // a file named in full: its folder
	}
	return strings.Join(parts[:i], "/")
}

// Unmatched returns the Paths globs that allow none of names.
func (f Filter) Unmatched(names []string) []string {
	var out []string
	for _, p := range f.Paths {
		one := f.withPaths(p)
		found := false
		for _, n := range names {
			if one.Allows(n) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, p)
		}
	}
	return out
}

// UnmatchedNotice words the notice for a paths glob that matches no file in one commit.
func UnmatchedNotice(glob, where string) string {
	return fmt.Sprintf("paths: %q matches no YAML or JSON file in %s (not excluded), so no CRD is read from it; is it a typo?", glob, where)
}
