package source

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// fetch brings commits (and, within depth, their history, trees and blobs) from the remote into
// the temporary store. The remote's URL comes from the repository's configuration.
func (r *Repo) fetch(commits []plumbing.Hash, depth int) error {
	cfg, err := r.repo.Config()
	if err != nil {
		return fmt.Errorf("reading the repository's configuration: %w", err)
	}
	rc, ok := cfg.Remotes[r.Remote]
	if !ok || len(rc.URLs) == 0 {
		return fmt.Errorf("the repository has no remote %q", r.Remote)
	}
	extra, err := r.store.store()
	if err != nil {
		return err
	}
	var specs []config.RefSpec
	for _, h := range commits {
		specs = append(specs, config.RefSpec("+"+h.String()+":refs/crdguard/"+h.String()))
	}
	remote := git.NewRemote(extra, &config.RemoteConfig{Name: r.Remote, URLs: rc.URLs})
	get := func(specs []config.RefSpec, depth int) error {
		err := remote.FetchContext(context.Background(), &git.FetchOptions{
			RemoteName: r.Remote, RefSpecs: specs, Depth: depth, Tags: git.NoTags, Auth: r.auth(),
		})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil
		}
		return err
	}
	if err := get(specs, depth); err != nil {
		if r.PullRequest == 0 {
			return err
		}
		if perr := r.fetchPull(get, commits, depth); perr != nil {
			return fmt.Errorf("by SHA: %v; as %s: %v", err, pullRef(r.PullRequest), perr)
		}
	}
	for _, h := range commits {
		if !slices.Contains(r.Fetched, h.String()) {
			r.Fetched = append(r.Fetched, h.String())
		}
	}
	return nil
}

// pullDepth is the least history fetched with a pull request's head ref: the commit wanted may
// be behind the ref's tip when the pull request moved on after the run's event.
const pullDepth = 50

func pullRef(n int) string { return fmt.Sprintf("refs/pull/%d/head", n) }

// fetchPull fetches the commits the remote serves by SHA one by one (a base commit), and the
// others (a fork's head) through the pull request's head ref; it checks that the ref brought them.
func (r *Repo) fetchPull(get func([]config.RefSpec, int) error, commits []plumbing.Hash, depth int) error {
	var refused []plumbing.Hash
	for _, h := range commits {
		if get([]config.RefSpec{config.RefSpec("+" + h.String() + ":refs/crdguard/" + h.String())}, depth) != nil {
			refused = append(refused, h)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	ref := pullRef(r.PullRequest)
	if err := get([]config.RefSpec{config.RefSpec("+" + ref + ":refs/crdguard/pull/" + strconv.Itoa(r.PullRequest))}, max(depth, pullDepth)); err != nil {
		return err
	}
	for _, h := range refused {
		if r.store.HasEncodedObject(h) != nil {
			return fmt.Errorf("it does not hold %s within %d commits of its tip (the pull request's head moved on, or the commit is not in it)", h, max(depth, pullDepth))
		}
	}
	return nil
}

// fetchWanted is called when an object is in neither store (a partial clone lacks most blobs):
// it fetches the wanted commits whole, once each.
func (r *Repo) fetchWanted() bool {
	var todo []plumbing.Hash
	for _, h := range r.wanted {
		if !r.complete[h] {
			todo = append(todo, h)
			r.complete[h] = true // one attempt each, even when it fails
		}
	}
	return len(todo) > 0 && r.fetch(todo, 1) == nil
}

func (r *Repo) auth() transport.AuthMethod {
	if r.Token == "" {
		return nil
	}
	return &githttp.BasicAuth{Username: "x-access-token", Password: r.Token}
}

// deepenSteps are the depths a shallow clone's history is fetched at, in turn, while the merge
// base is not found; the last one is the whole history.
var deepenSteps = []int{50, 500, 5000, math.MaxInt32}

// MergeBase returns the best common ancestor of base and head: what a pull request's diff is
// computed against. In a shallow clone the history is fetched deeper and deeper (into the
// temporary store) until it is found, the whole history last.
func (r *Repo) MergeBase(base, head *object.Commit) (*object.Commit, error) {
	if !r.isShallow() {
		bases, err := base.MergeBase(head)
		if err != nil {
			return nil, fmt.Errorf("merge base of %s and %s: %w", short(base), short(head), err)
		}
		if len(bases) == 0 {
			return nil, fmt.Errorf("commits %s and %s have no common ancestor", short(base), short(head))
		}
		sort.Slice(bases, func(i, j int) bool { return bases[i].Hash.String() < bases[j].Hash.String() })
		r.want(bases[0].Hash)
		return bases[0], nil
	}
	var ferr error
	for i := 0; ; i++ {
		mb, complete, err := r.shallowMergeBase(base.Hash, head.Hash)
		if err != nil {
			return nil, err
		}
		if mb != nil {
			r.want(mb.Hash)
			return mb, nil
		}
		if complete {
			return nil, fmt.Errorf("commits %s and %s have no common ancestor", short(base), short(head))
		}
		if i == len(deepenSteps) || ferr != nil {
			break
		}
		// Each depth is fetched into a new store rather than deepening the last one.
		if ferr = r.store.close(); ferr != nil {
			break
		}
		ferr = r.fetch([]plumbing.Hash{base.Hash, head.Hash}, deepenSteps[i])
		r.complete = map[plumbing.Hash]bool{base.Hash: true, head.Hash: true}
	}
	why := ""
	if ferr != nil {
		why = fmt.Sprintf(" (fetching from %s: %v)", r.Remote, ferr)
	}
	return nil, fmt.Errorf("no merge base of %s and %s: %w%s; %s", short(base), short(head), ErrNeedHistory, why, r.historyHint())
}

// shallowMergeBase finds the newest commit reachable from both base and head among the commits
// the stores have. go-git's MergeBase fails at the first missing parent, and a shallow history of
// a project with merges always has some; here a missing parent is a boundary, and complete says
// whether any was met. Newest first from base: the first common commit is the one the pull
// request branched from (commit dates would have to go backwards to mislead it).
func (r *Repo) shallowMergeBase(base, head plumbing.Hash) (mb *object.Commit, complete bool, err error) {
	complete = true
	get := func(h plumbing.Hash) (*object.Commit, error) {
		c, err := r.repo.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			complete = false
			return nil, nil
		}
		return c, err
	}
	fromHead := map[plumbing.Hash]bool{}
	for stack := []plumbing.Hash{head}; len(stack) > 0; {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if fromHead[h] {
			continue
		}
		c, err := get(h)
		if err != nil {
			return nil, false, fmt.Errorf("reading commit %s: %w", h, err)
		}
		if c == nil {
			continue
		}
		fromHead[h] = true
		stack = append(stack, c.ParentHashes...)
	}
	seen := map[plumbing.Hash]bool{}
	var queue []*object.Commit // newest last
	push := func(h plumbing.Hash) error {
		if seen[h] {
			return nil
		}
		seen[h] = true
		c, err := get(h)
		if err != nil || c == nil {
			return err
		}
		i := sort.Search(len(queue), func(i int) bool { return queue[i].Committer.When.After(c.Committer.When) })
		queue = slices.Insert(queue, i, c)
		return nil
	}
	if err := push(base); err != nil {
		return nil, false, fmt.Errorf("reading commit %s: %w", base, err)
	}
	for len(queue) > 0 {
		c := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if fromHead[c.Hash] {
			return c, complete, nil
		}
		for _, p := range c.ParentHashes {
			if err := push(p); err != nil {
				return nil, false, fmt.Errorf("reading commit %s: %w", p, err)
			}
		}
	}
	return nil, complete, nil
}

func (r *Repo) isShallow() bool {
	s, err := r.repo.Storer.Shallow()
	return err == nil && len(s) > 0
}
