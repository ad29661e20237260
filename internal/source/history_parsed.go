package source

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/crdguard/crdguard/internal/crd"
)

// A base file that does not parse (a merge-conflict marker, a bad indent) hides what clusters
// run: taken as nothing, its CRDs look new in a head that fixes it, and a field the same change
// removes passes. Clusters run the last version that parsed, so that is what the change is
// compared with (issue 43, item 4).

// ThroughLastParsed replaces, in the base tree t of a comparison read at commit at, each file
// whose CRD documents do not decode with its last version before at that decodes whole, and
// returns a notice for each naming the commit; a file with no such version stays as it is. A
// file over the size limit is not one that does not parse: clusters may run it, what it holds
// is unknown, and it stays a problem (the caller fails closed on it).
func (r *Repo) ThroughLastParsed(at *object.Commit, t *Tree) []string {
	var files []string
	why := map[string]string{}
	for _, p := range t.Problems {
		if p.TooLarge {
			continue
		}
		if !slices.Contains(files, p.File) {
			files = append(files, p.File)
			why[p.File] = fmt.Sprintf("line %d: %s", p.Line, p.Message)
		}
	}
	var notices []string
	for _, f := range files {
		commit, data, ok := r.lastParsed(at, f)
		if !ok {
			continue
		}
		t.replaceFile(f, data)
		notices = append(notices, fmt.Sprintf("base: %s does not parse at %s (%s): its CRDs are compared through its last version that parsed, at %s, which is what clusters can run; base lines are that version's", f, short(at), why[f], commit))
	}
	return notices
}

// lastParsed finds the newest version of a file before at (at most MaxHistoryCommits commits
// back) that holds CRDs and decodes without a problem.
func (r *Repo) lastParsed(at *object.Commit, name string) (commit string, data []byte, ok bool) {
	tried := map[plumbing.Hash]bool{}
	walked := 0
	iter := object.NewCommitPreorderIter(at, nil, nil)
	err := iter.ForEach(func(c *object.Commit) error {
		if walked++; walked > MaxHistoryCommits {
			return storer.ErrStop
		}
		tree, err := c.Tree()
		if err != nil {
			return storer.ErrStop
		}
		e, err := tree.FindEntry(name)
		if err != nil || !e.Mode.IsFile() || tried[e.Hash] {
			return nil
		}
		tried[e.Hash] = true
		body, err := r.readBlob(name, *e)
		if err != nil {
			return nil
		}
		one := &Tree{}
		one.AddFile(name, body, false)
		if len(one.Problems) == 0 && len(one.CRDs) > 0 {
			commit, data, ok = c.Hash.String()[:12], body, true
			return storer.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return "", nil, false
	}
	return commit, data, ok
}

// replaceFile reads a file anew in place of what the tree read of it.
func (t *Tree) replaceFile(name string, data []byte) {
	inFile := func(c *crd.CRD) bool { return c.File == name }
	problem := func(p crd.Problem) bool { return p.File == name }
	t.CRDs = slices.DeleteFunc(t.CRDs, inFile)
	t.Patches = slices.DeleteFunc(t.Patches, inFile)
	t.Problems = slices.DeleteFunc(t.Problems, problem)
	t.Unread = slices.DeleteFunc(t.Unread, problem)
	t.Unknown = slices.DeleteFunc(t.Unknown, problem)
	t.AddFile(name, data, false)
}
