package action

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crdguard/crdguard/internal/github"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
)

// workflowRun is what crdguard reads of a workflow_run event: the run that finished, on which
// commit and branch of which repository, for which event. GitHub writes all of it; nothing the
// run produced (artifacts, outputs), which a fork's copy of the workflow controls, decides
// anything here. Its pull_requests are empty for forks.
type workflowRun struct {
	HeadSHA        string `json:"head_sha"`
	HeadBranch     string `json:"head_branch"`
	Event          string `json:"event"`
	HeadRepository struct {
		FullName string `json:"full_name"`
		Owner    struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"head_repository"`
}

// workflowRunTarget is a workflow_run run's target before its pull request is known: the run's
// head commit, where the check run goes.
func workflowRunTarget(wr *workflowRun) (target, error) {
	if wr == nil || !fullSHA.MatchString(wr.HeadSHA) {
		return target{}, fmt.Errorf("workflow_run event without workflow_run.head_sha")
	}
	return target{head: wr.HeadSHA, run: wr, kind: policy.PullRequestRun}, nil
}

// notAPullRequestRun says why crdguard refuses a workflow_run run that followed a run of
// another event ("" for a pull request's): a push or merge queue run posted its own verdict on
// its commit with a write token, and a second verdict there (no pull request has that head)
// would replace it.
func notAPullRequestRun(wr *workflowRun) string {
	if wr == nil || strings.HasPrefix(wr.Event, "pull_request") {
		return ""
	}
	return fmt.Sprintf("this workflow_run run follows a %q run, not a pull request's: that run posted its own check run with a write token, and crdguard posts nothing here; run the workflow_run workflow only for pull requests from forks (docs/action.md, \"Pull requests from forks\": `if: github.event.workflow_run.event == 'pull_request' && github.event.workflow_run.head_repository.full_name != github.repository`)", wr.Event)
}

// forkHint is what a run that may not post says about posting from a second workflow.
func forkHint(pr int) string {
	return fmt.Sprintf("to post this verdict on pull request #%d (check run and review), upload its number as an artifact and run crdguard with `pull-request` from a workflow_run workflow with a write token: docs/action.md, \"Pull requests from forks\"", pr)
}

// pullRequestOfRun finds the pull request a workflow_run run posts for, trusting only what GitHub
// wrote: the run's head commit is the truth, and the pull-request input (the number the first
// workflow uploaded, which a fork's copy of that workflow controls) is a hint. The candidates are
// the hinted pull request when it is open with the run's head as its head, and the open pull
// requests of the run's head branch (GET …/pulls?state=open&head=OWNER:BRANCH) with that head;
// when neither gives one, GET …/commits/{sha}/pulls (which, by GitHub's description, lists the
// open pull requests of a commit not on the default branch; public reports say not those of a
// commit only in a fork, hence second). One candidate is the pull request; none or several is no
// verdict, and noVerdict says why and what to do.
func (r *run) pullRequestOfRun(ctx context.Context) (noVerdict string, err error) {
	wr := r.target.run
	if r.pub == nil {
		return "", fmt.Errorf("a workflow_run run needs a github-token that can read the pull request")
	}
	head := wr.HeadSHA
	var found []github.PullRequest
	add := func(prs ...github.PullRequest) {
		for _, pr := range prs {
			if pr.State == "open" && pr.HeadSHA == head && !slices.ContainsFunc(found, func(f github.PullRequest) bool { return f.Number == pr.Number }) {
				found = append(found, pr)
			}
		}
	}
	var looked []string
	hint := strings.TrimSpace(r.in.pullRequest)
	if hint != "" {
		looked = append(looked, "the pull-request input")
		n, err := strconv.Atoi(hint)
		var pr github.PullRequest
		if err == nil && n > 0 {
			if pr, err = r.pub.API.PullRequest(ctx, n); err != nil && !github.IsForbidden(err) {
				return "", err
			}
		}
		switch {
		case err != nil || n <= 0:
			r.gha.Warningf("the pull-request input %q names no pull request of this repository; ignored: crdguard finds the pull request by the workflow run's head commit %s", hint, abbrev(head))
		case pr.HeadSHA != head || pr.State != "open":
			r.gha.Warningf("the pull-request input names #%d, whose head is %s (%s), not the workflow run's head commit %s; ignored: crdguard finds the pull request by that commit", n, abbrev(pr.HeadSHA), pr.State, abbrev(head))
		default:
			add(pr)
		}
	}
	owner := wr.HeadRepository.Owner.Login
	if owner == "" {
		owner, _, _ = strings.Cut(wr.HeadRepository.FullName, "/")
	}
	if owner != "" && wr.HeadBranch != "" {
		prs, err := r.pub.API.OpenPullRequestsOfBranch(ctx, owner, wr.HeadBranch)
		if err != nil {
			return "", err
		}
		add(prs...)
		looked = append(looked, fmt.Sprintf("the open pull requests of %s:%s", owner, wr.HeadBranch))
	}
	if len(found) == 0 {
		prs, err := r.pub.API.PullRequestsOfCommit(ctx, head)
		if err != nil {
			return "", err
		}
		add(prs...)
		looked = append(looked, "the pull requests GitHub lists for the commit")
	}
	switch len(found) {
	case 0:
		return fmt.Sprintf("no open pull request has the workflow run's head commit %s as its head (looked at %s), so crdguard cannot tell which pull request this commit is for and fails its check rather than pass it unchecked. If the pull request is open, its head moved on: the run for its new head posts there. Otherwise re-run the pull request's crdguard workflow, and check that it uploads the pull request's number (docs/action.md, \"Pull requests from forks\")", abbrev(head), strings.Join(looked, ", ")), nil
	case 1:
	default:
		var numbers []string
		for _, pr := range found {
			numbers = append(numbers, "#"+strconv.Itoa(pr.Number))
		}
		return fmt.Sprintf("the open pull requests %s all have the workflow run's head commit %s as their head: they share this commit's check run, and their bases differ in what a change breaks, so crdguard gives none of them a pass. Push a commit of its own to each (or close the ones not meant to merge), and the runs for the new heads post there", strings.Join(numbers, ", "), abbrev(head)), nil
	}
	pr := found[0]
	r.target.pr, r.target.base, r.target.head, r.target.fork, r.target.labels = pr.Number, pr.BaseSHA, pr.HeadSHA, pr.Fork, pr.Labels
	r.logf("posting for pull request #%d (head %s, base %s%s), read from the API; its commits are read as data", pr.Number, abbrev(pr.HeadSHA), abbrev(pr.BaseSHA), map[bool]string{true: ", from a fork", false: ""}[pr.Fork])
	return "", nil
}

func abbrev(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// noVerdict completes the check run as failure, saying why there is no verdict and what to do:
// the commit may be an open pull request's head, and a required check passes on neutral,
// success or skipped, so anything else would let that pull request merge unchecked.
func (r *run) noVerdict(ctx context.Context, why string) int {
	r.gha.Errorf("crdguard gives no verdict: %s", why)
	r.finish(ctx, github.Failure, github.CheckOutput{Title: "No verdict: the pull request is not known", Summary: "crdguard gives no verdict: " + report.Escape(why) + "."})
	return ExitTool
}
