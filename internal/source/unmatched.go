package source

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// UnmatchedPaths returns the Paths globs of f that match no manifest of a commit (the working
// tree's changes laid over it, nil for deleted) that f would read: a typo such as
// config/crds/** must not pass silently as "nothing changed".
func (r *Repo) UnmatchedPaths(c *object.Commit, f Filter, working map[string][]byte) ([]string, error) {
	if len(f.Paths) == 0 {
		return nil, nil
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", short(c), err)
	}
	var names []string
	for name, data := range working {
		if data != nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	err = eachFile(tree, func(name string, _ object.TreeEntry) error {
		names = append(names, name)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f.Unmatched(names), nil
}

// Unmatched returns the Paths globs that allow none of names.
func (f Filter) Unmatched(names []string) []string {
	var out []string
	for _, p := range f.Paths {
		one := f
		one.Paths = []string{p}
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

// UnmatchedNotice words the notice for a paths glob that matches no file.
func UnmatchedNotice(glob, where string) string {
	return fmt.Sprintf("paths: %q matches no YAML or JSON file in %s (not excluded), so no CRD is read from it; is it a typo?", glob, where)
}
