package github

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	gh "github.com/google/go-github/v60/github"

	"github.com/crdguard/crdguard/internal/policy"
)

// PullRequest is what crdguard reads of a pull request.
type PullRequest struct {
	Number int
	// State is open or closed; Merged says it was merged.
	State  string
	Merged bool
	// BaseSHA and HeadSHA are the commits it compares; BaseRef its target branch.
	BaseSHA, HeadSHA, BaseRef string
	// MergeCommitSHA is the commit its merge made (or, while open, GitHub's test merge).
	MergeCommitSHA string
	// Fork says the head is in another repository.
	Fork   bool
	Labels []string
}

func pullRequestOf(p *gh.PullRequest) PullRequest {
	out := PullRequest{Number: p.GetNumber(), State: p.GetState(), Merged: p.GetMerged() || p.MergedAt != nil,
		BaseSHA: p.GetBase().GetSHA(), HeadSHA: p.GetHead().GetSHA(), BaseRef: p.GetBase().GetRef(),
		MergeCommitSHA: p.GetMergeCommitSHA(), Fork: p.GetHead().GetRepo().GetFork()}
	for _, l := range p.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

// PullRequest reads one pull request (GET /repos/{owner}/{repo}/pulls/{pull_number}).
func (r *REST) PullRequest(ctx context.Context, number int) (PullRequest, error) {
	p, _, err := r.c.PullRequests.Get(ctx, r.owner, r.name, number)
	if err != nil {
		return PullRequest{}, fmt.Errorf("reading pull request #%d: %w", number, err)
	}
	return pullRequestOf(p), nil
}

// PullRequestsOfCommit reads every page of GET /repos/{owner}/{repo}/commits/{sha}/pulls: the
// pull request a commit on the default branch was merged by, or those whose head contains it.
func (r *REST) PullRequestsOfCommit(ctx context.Context, sha string) ([]PullRequest, error) {
	return listAll(r, "pull requests of commit "+sha, func(opts gh.ListOptions) ([]*gh.PullRequest, *gh.Response, error) {
		return r.c.PullRequests.ListPullRequestsWithCommit(ctx, r.owner, r.name, sha, &opts)
	}, pullRequestOf)
}

// OpenPullRequestsOfBranch reads every page of GET /repos/{owner}/{repo}/pulls?state=open&head=
// OWNER:BRANCH: the open pull requests of this repository whose head is that branch of OWNER's
// repository (a fork's owner, or this repository's). The owner is required: GitHub's
// description gives head as user:ref-name, and a bare branch name filters nothing.
func (r *REST) OpenPullRequestsOfBranch(ctx context.Context, owner, branch string) ([]PullRequest, error) {
	if owner == "" || branch == "" {
		return nil, fmt.Errorf("listing the open pull requests of a branch needs its owner and name (got %q:%q)", owner, branch)
	}
	head := owner + ":" + branch
	return listAll(r, "open pull requests of "+head, func(opts gh.ListOptions) ([]*gh.PullRequest, *gh.Response, error) {
		return r.c.PullRequests.List(ctx, r.owner, r.name, &gh.PullRequestListOptions{State: "open", Head: head, ListOptions: opts})
	}, pullRequestOf)
}

// Ref is a git reference as GitHub lists it: its full name and the commit it points at.
type Ref struct {
	Name, SHA string
}

// MatchingRefs reads GET /repos/{owner}/{repo}/git/matching-refs/{ref}: the references whose
// names start with prefix (e.g. heads/gh-readonly-queue/main), every page.
func (r *REST) MatchingRefs(ctx context.Context, prefix string) ([]Ref, error) {
	return listAll(r, "references "+prefix, func(opts gh.ListOptions) ([]*gh.Reference, *gh.Response, error) {
		return r.c.Git.ListMatchingRefs(ctx, r.owner, r.name, &gh.ReferenceListOptions{Ref: prefix, ListOptions: opts})
	}, func(ref *gh.Reference) Ref { return Ref{Name: ref.GetRef(), SHA: ref.GetObject().GetSHA()} })
}

// ReplyToComment answers a review comment in its thread (POST …/pulls/{n}/comments with
// in_reply_to); after a 5xx it looks for the reply before sending it again.
func (r *REST) ReplyToComment(ctx context.Context, pr int, to int64, body string) error {
	err := r.createOnce(ctx, func() error {
		_, _, err := r.c.PullRequests.CreateCommentInReplyTo(ctx, r.owner, r.name, pr, body, to)
		return err
	}, func() (bool, error) {
		comments, err := r.ListReviewComments(ctx, pr)
		for _, c := range comments {
			if c.InReplyTo == to && c.Body == body {
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("replying to review comment %d: %w", to, err)
	}
	return nil
}

// changeLabel starts the marker of the change a comment is about.
const changeLabel = "<!-- crdguard:change="

var changeMarkerRE = regexp.MustCompile(changeLabel + `([0-9a-f]{12}) -->`)

// changeMarker is the hidden marker of a comment's change, so that a reply to the comment
// names the change it acknowledges.
func changeMarker(change string) string {
	if change == "" {
		return ""
	}
	return "\n" + changeLabel + change + " -->"
}

// answeredLabel starts the marker of crdguard's answer to a reply, so it answers once.
const answeredLabel = "<!-- crdguard:answered="

var answeredRE = regexp.MustCompile(answeredLabel + `(\d+) -->`)

// Replies returns the replies to crdguard's comments on a pull request (any crdguard job's: a
// change ID means the same change to each), each with the change ID of the comment it answers
// (policy.Decide judges them). A reply to a comment that is not crdguard's (another author, or
// no change marker) has no change. It sets p.Identity when it had to ask for it.
func (p *Publisher) Replies(ctx context.Context, pr int) ([]policy.Reply, error) {
	if p.Identity == "" {
		me, err := p.API.Identity(ctx)
		if err != nil {
			return nil, err
		}
		p.Identity = me
	}
	comments, err := p.API.ListReviewComments(ctx, pr)
	if err != nil {
		return nil, err
	}
	changes := map[int64]string{}
	answered := map[int64]bool{}
	for _, c := range comments {
		if c.Author != p.Identity {
			continue
		}
		if m := answeredRE.FindStringSubmatch(c.Body); m != nil {
			id, _ := strconv.ParseInt(m[1], 10, 64)
			answered[id] = true
		}
		m := changeMarkerRE.FindStringSubmatch(c.Body)
		if c.InReplyTo == 0 && m != nil {
			changes[c.ID] = m[1]
		}
	}
	var out []policy.Reply
	for _, c := range comments {
		if c.InReplyTo == 0 || c.Author == p.Identity {
			continue
		}
		out = append(out, policy.Reply{ID: c.ID, To: c.InReplyTo, Change: changes[c.InReplyTo], Author: c.Author,
			Association: c.Association, Bot: c.Bot, Edited: c.Edited, Body: c.Body, Answered: answered[c.ID]})
	}
	return out, nil
}

// Answer replies, in its thread, to a reply that asked to acknowledge a change; the hidden
// marker keeps later runs from answering it again.
func (p *Publisher) Answer(ctx context.Context, pr int, a policy.Answer) error {
	body := "**crdguard**: " + a.Text + "\n" + answeredLabel + strconv.FormatInt(a.Reply.ID, 10) + " -->"
	return p.API.ReplyToComment(ctx, pr, a.Reply.To, body)
}
