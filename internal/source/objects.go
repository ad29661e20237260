package source

import (
	"bytes"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/crd"
)

// Objects reads the Kubernetes objects of a commit that may be custom resources of the given API
// groups: from the files the filter allows (its Paths are the samples globs; none: every YAML or
// JSON file) that mention one of the groups. What the filter leaves out is never read.
func (r *Repo) Objects(c *object.Commit, groups []string, filter Filter) ([]*crd.Object, []string, error) {
	if len(groups) == 0 {
		return nil, nil, nil
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, nil, fmt.Errorf("reading tree of %s: %w", short(c), err)
	}
	// A custom resource names its group in apiVersion; a mere mention (CRD descriptions are full
	// of them) is not enough to parse a file. Every form contains "group/", so one scan for that
	// rules a group out before its five forms are tried.
	type groupNeedles struct {
		group []byte
		forms [][]byte
	}
	var needles []groupNeedles
	for _, g := range groups {
		n := groupNeedles{group: []byte(g + "/")}
		for _, form := range []string{"apiVersion: %s/", "apiVersion: \"%s/", "apiVersion: '%s/", "\"apiVersion\": \"%s/", "\"apiVersion\":\"%s/"} {
			n.forms = append(n.forms, []byte(fmt.Sprintf(form, g)))
		}
		needles = append(needles, n)
	}
	usesGroup := func(data []byte) bool {
		for _, n := range needles {
			if bytes.Contains(data, n.group) && containsAny(data, n.forms) {
				return true
			}
		}
		return false
	}
	var (
		out     []*crd.Object
		notices []string
		// none are the blobs that hold no custom resource of these groups: a copy of one (a
		// release's bundle, kept many times over) is not read again.
		none = map[plumbing.Hash]bool{}
	)
	err = eachFile(tree, func(name string, entry object.TreeEntry) error {
		if !filter.Allows(name) || none[entry.Hash] {
			return nil
		}
		data, err := r.readBlob(name, entry)
		if err != nil {
			// A sample is evidence, not the subject: one that cannot be read is a notice.
			notices = append(notices, fmt.Sprintf("samples: %s: %s; the custom resources it may hold were not validated against head's CRDs", name, blobProblem(err)))
			return nil
		}
		if len(data) > MaxFileSize || bytes.IndexByte(data, 0) >= 0 || !usesGroup(data) || hasTemplate(data) {
			if entry.Mode != filemode.Symlink && entry.Mode != filemode.Submodule { // read as nothing
				none[entry.Hash] = true
			}
			return nil
		}
		objs := crd.ParseObjects(name, data)
		if !PathFacts(name).Ships() {
			// Fixtures of test suites are counted, never validated as samples: their content
			// is not kept (a repository's test folders can hold thousands of objects).
			for i, o := range objs {
				objs[i] = o.Header()
			}
		}
		out = append(out, objs...)
		return nil
	})
	return out, notices, err
}
