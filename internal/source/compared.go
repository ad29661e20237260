package source

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxBehind bounds the walk of CommitsAhead; beyond it the count is only a lower bound.
const maxBehind = 10000

// CommitsAhead counts the commits of tip that its ancestor mb does not have: how far a base ref
// has moved on since the merge base. The walk stops at mb and at commits older than mb (they
// are almost always mb's own history), so the count is exact for release branches and
// branches that forked from mb, and capped at maxBehind (more reports maxBehind and true).
func CommitsAhead(mb, tip *object.Commit) (int, bool, error) {
	seen := map[plumbing.Hash]bool{mb.Hash: true}
	queue := []*object.Commit{tip}
	seen[tip.Hash] = true
	n := 0
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c.Hash == mb.Hash {
			continue
		}
		if c.Committer.When.Before(mb.Committer.When) {
			continue
		}
		n++
		if n >= maxBehind {
			return n, true, nil
		}
		err := c.Parents().ForEach(func(p *object.Commit) error {
			if !seen[p.Hash] {
				seen[p.Hash] = true
				queue = append(queue, p)
			}
			return nil
		})
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return n, true, nil // a shallow clone's boundary: at least n
		}
		if err != nil {
			return n, false, fmt.Errorf("walking the history of %s: %w", short(tip), err)
		}
	}
	return n, false, nil
}
