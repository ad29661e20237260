package action

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/source"
)

// A merge group or a push may carry several pull requests, each with its own acknowledgements.
// crdguard splits the compared range into segments, runs of consecutive first-parent commits
// that one pull request brought (or none known), compares each segment alone, and gives
// policy.Decide the change IDs each pull request brings: a change is then acknowledged by the
// pull requests that brought it, never by another one's label or reply.

// segment is a run of the compared range's first-parent commits that one pull request brought
// (pr 0: no pull request known); from is the commit before its first, to its last.
type segment struct {
	pr       int
	from, to string
}

// maxChain bounds the first-parent commits of a merge group or push that are attributed.
const maxChain = 500

// maxAsked bounds the commits of a push GitHub is asked about (one request each); older ones
// count as brought by no known pull request.
const maxAsked = 50

// firstParents lists the first-parent commits from head back to base (base excluded), oldest
// first; ok is false when base is not on that line within maxChain commits.
func firstParents(repo *source.Repo, base, head string) (out []*object.Commit, ok bool) {
	c, err := repo.Commit(head)
	for i := 0; err == nil && i < maxChain; i++ {
		if c.Hash.String() == base {
			for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
				out[l], out[r] = out[r], out[l]
			}
			return out, true
		}
		out = append(out, c)
		if c.NumParents() == 0 {
			break
		}
		c, err = c.Parent(0)
	}
	return nil, false
}

// queueBranch is the prefix of the merge queue's branches for a base branch.
func queueBranch(baseRef string) string {
	return "refs/heads/gh-readonly-queue/" + strings.TrimPrefix(baseRef, "refs/heads/") + "/"
}

// queueSegments splits a merge group at the heads of the queue's branches: GitHub builds each
// queued pull request's branch (gh-readonly-queue/<base>/pr-<N>-<sha>) on the one ahead of it,
// so the commits between two branch heads are the later one's. Only GitHub writes these
// branches. A branch gone (its pull request merged meanwhile) joins its commits to the next
// pull request's segment, which then has to acknowledge them too. ok is false when the branches
// cannot be read or the group's commits not walked: then no pull request's acknowledgement is
// applied.
func (r *run) queueSegments(ctx context.Context, repo *source.Repo, base string) (segs []segment, ok bool) {
	commits, walked := firstParents(repo, base, r.target.head)
	if !walked {
		r.logf("merge group: %s is not on the first-parent line of %s within %d commits: only the configuration acknowledges changes", abbrev(base), abbrev(r.target.head), maxChain)
		return nil, false
	}
	prefix := queueBranch(r.target.baseRef)
	refs, err := r.pub.API.MatchingRefs(ctx, strings.TrimSuffix(strings.TrimPrefix(prefix, "refs/"), "/"))
	if err != nil {
		r.logf("merge group: could not read the queue's branches (%v): only the configuration acknowledges changes", err)
		return nil, false
	}
	branchRE := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `pr-([0-9]+)-[0-9a-f]{40}$`)
	heads := map[string]int{}
	for _, ref := range refs {
		if m := branchRE.FindStringSubmatch(ref.Name); m != nil {
			heads[ref.SHA], _ = strconv.Atoi(m[1])
		}
	}
	if m := queueRefRE.FindStringSubmatch(r.target.queueRef); m != nil {
		heads[r.target.head], _ = strconv.Atoi(m[1]) // the group's own branch, whatever the listing said
	}
	from := base
	for _, c := range commits {
		if n, ok := heads[c.Hash.String()]; ok {
			segs = append(segs, segment{pr: n, from: from, to: c.Hash.String()})
			from = c.Hash.String()
		}
	}
	if from != r.target.head {
		segs = append(segs, segment{from: from, to: r.target.head})
	}
	return segs, true
}

// pushSegments attributes each pushed first-parent commit by asking GitHub which pull request
// introduced it (GET …/commits/{sha}/pulls): a merged pull request whose merge commit it is, or,
// for a rebase merge, whose merge commit follows it with only that pull request's commits
// between. A commit of no merged pull request (a direct push) is brought by none; so are those
// beyond the newest maxAsked.
func (r *run) pushSegments(ctx context.Context, commits []*object.Commit, base string) []segment {
	owner := make([]int, len(commits))
	lists := make([]map[int]bool, len(commits))
	mergeOf := map[string]int{}
	for i := max(0, len(commits)-maxAsked); i < len(commits); i++ {
		sha := commits[i].Hash.String()
		prs, err := r.pub.API.PullRequestsOfCommit(ctx, sha)
		if err != nil {
			r.logf("push: could not ask which pull request brought %s (%v): it counts as a direct push", abbrev(sha), err)
			continue
		}
		lists[i] = map[int]bool{}
		for _, pr := range prs {
			if pr.Merged {
				lists[i][pr.Number] = true
				if pr.MergeCommitSHA == sha {
					owner[i] = pr.Number
					mergeOf[sha] = pr.Number
				}
			}
		}
	}
	for i := len(commits) - 2; i >= 0; i-- { // a rebase merge's earlier commits
		if n := owner[i+1]; owner[i] == 0 && n != 0 && lists[i][n] {
			owner[i] = n
		}
	}
	var segs []segment
	from := base
	for i, c := range commits {
		if i+1 < len(commits) && owner[i+1] == owner[i] {
			continue
		}
		segs = append(segs, segment{pr: owner[i], from: from, to: c.Hash.String()})
		from = c.Hash.String()
	}
	return segs
}

// attribute compares each segment alone, with the run's configuration, and records the change
// IDs it brings: per pull request in its Brings, of no known pull request in Unattributed. One
// segment needs no comparison of its own: it brings everything.
func (r *run) attribute(repo *source.Repo, opts check.GitOptions, cfg *policy.Config, segs []segment, pc *policy.Context) error {
	if len(segs) == 1 && segs[0].pr != 0 {
		return nil // one pull request brought it all: no attribution needed
	}
	pc.Attributed = true
	pc.Unattributed = map[string]bool{}
	brings := map[int]map[string]bool{}
	for _, s := range segs {
		o := check.GitOptions{Base: s.from, Head: s.to, Direct: true, Filter: opts.Filter, Samples: opts.Samples, KubernetesVersion: opts.KubernetesVersion, OLM: opts.OLM}
		res, err := check.Git(repo, o)
		if err != nil {
			return fmt.Errorf("comparing the commits %s..%s of %s alone: %w", abbrev(s.from), abbrev(s.to), whose(s.pr), err)
		}
		out := cfg.Apply(res.Findings)
		ids := pc.Unattributed
		if s.pr != 0 {
			if brings[s.pr] == nil {
				brings[s.pr] = map[string]bool{}
			}
			ids = brings[s.pr]
		}
		for _, f := range out.Findings {
			ids[f.Change] = true
		}
		for _, a := range out.Acknowledged {
			ids[a.Finding.Change] = true
		}
		r.logf("%s..%s (%s): %d findings", abbrev(s.from), abbrev(s.to), whose(s.pr), len(out.Findings))
	}
	for i := range pc.PullRequests {
		pc.PullRequests[i].Brings = brings[pc.PullRequests[i].Number]
	}
	return nil
}

func whose(pr int) string {
	if pr == 0 {
		return "no pull request"
	}
	return "#" + strconv.Itoa(pr)
}
