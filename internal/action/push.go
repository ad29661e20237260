package action

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/policy"
)

// maxPushCommits is the most commits GitHub lists in a push event; a list that long may be cut.
const maxPushCommits = 2048

// pushTarget is what a push compares: before with after; a forced push directly (what the branch
// held with what it holds now); a new branch, which has no before, from where its listed commits
// start (found once the repository is open).
func pushTarget(ev *event) (target, error) {
	t := target{base: ev.Before, head: ev.After, kind: policy.PushRun, forced: ev.Forced}
	if strings.Trim(ev.Before, "0") != "" {
		return t, nil
	}
	t.base = ""
	for _, c := range ev.Commits {
		t.pushed = append(t.pushed, c.ID)
	}
	switch {
	case len(t.pushed) == 0:
		t.nothingToCompare = "a new branch was pushed with no commit of its own: there is nothing new to compare"
	case len(t.pushed) >= maxPushCommits:
		return t, fmt.Errorf("a new branch was pushed with %d or more commits, more than GitHub lists in a push event: crdguard cannot tell where the branch starts; give the base input (the commit it starts from)", maxPushCommits)
	}
	return t, nil
}

// newBranchBase finds where a new branch starts: its head's first parents back to the first
// commit the push does not list (GitHub lists the commits no other branch has). A head the push
// does not list brings nothing new.
func (r *run) newBranchBase(head *object.Commit) error {
	if r.target.pushed == nil {
		return nil
	}
	c := head
	for slices.Contains(r.target.pushed, c.Hash.String()) {
		if c.NumParents() == 0 { // the repository's first push: nothing earlier to compare with
			r.logf("new branch: its commits reach the repository's first commit %s; there is nothing earlier to compare with", abbrev(c.Hash.String()))
			r.target.base = r.target.head
			return nil
		}
		p, err := c.Parent(0)
		if err != nil {
			return fmt.Errorf("the new branch starts before %s, whose parent could not be read: %w", abbrev(c.Hash.String()), err)
		}
		c = p
	}
	r.target.base = c.Hash.String()
	r.logf("new branch: compared from %s, where its %d pushed commits start", abbrev(r.target.base), len(r.target.pushed))
	return nil
}
