package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/crdguard/crdguard/internal/github"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
)

// workflowRun is what crdguard reads of a workflow_run event: the run that finished, on which
// commit, for which event. Its pull_requests are empty for forks, and nothing the run produced
// (artifacts, outputs) decides anything here.
type workflowRun struct {
	HeadSHA      string `json:"head_sha"`
	Event        string `json:"event"`
	PullRequests []struct {
		Number int `json:"number"`
	} `json:"pull_requests"`
}

// workflowRunTarget is a workflow_run run's target before its pull request is known: the run's
// head commit, where the check run goes.
func workflowRunTarget(wr *workflowRun) (target, error) {
	if wr == nil || !fullSHA.MatchString(wr.HeadSHA) {
		return target{}, fmt.Errorf("workflow_run event without workflow_run.head_sha")
	}
	return target{head: wr.HeadSHA, run: wr, kind: policy.PullRequestRun}, nil
}

// forkHint is what a run that may not post says about posting from a second workflow.
func forkHint(pr int) string {
	return fmt.Sprintf("to post this verdict on pull request #%d (check run and review), upload its number as an artifact and run crdguard with `pull-request` from a workflow_run workflow with a write token: docs/action.md, \"Pull requests from forks\"", pr)
}

// pullRequestOfRun finds the pull request a workflow_run run posts for: the pull-request input
// (the number the first workflow uploaded, which a fork controls), else the run's own pull
// request, else the open pull request whose head is the run's head, asked of the API. Whatever
// the number's source, the pull request is read from the API and its head must be the run's
// head commit: otherwise there is no verdict, and noVerdict says why.
func (r *run) pullRequestOfRun(ctx context.Context) (noVerdict string, err error) {
	wr := r.target.run
	if r.pub == nil {
		return "", fmt.Errorf("a workflow_run run needs a github-token that can read the pull request")
	}
	number := 0
	switch {
	case r.in.pullRequest != "":
		n, err := strconv.Atoi(strings.TrimSpace(r.in.pullRequest))
		if err != nil || n <= 0 {
			return "", fmt.Errorf("input pull-request: %q is not a pull request number", r.in.pullRequest)
		}
		number = n
	case len(wr.PullRequests) == 1:
		number = wr.PullRequests[0].Number
	default:
		prs, err := r.pub.API.PullRequestsOfCommit(ctx, wr.HeadSHA)
		if err != nil {
			return "", err
		}
		var open []int
		for _, pr := range prs {
			if pr.State == "open" && pr.HeadSHA == wr.HeadSHA {
				open = append(open, pr.Number)
			}
		}
		if len(open) != 1 {
			return fmt.Sprintf("no single open pull request has the run's head commit %s as its head (found %d); pass the number with the pull-request input", wr.HeadSHA[:12], len(open)), nil
		}
		number = open[0]
	}
	pr, err := r.pub.API.PullRequest(ctx, number)
	if err != nil {
		return "", err
	}
	if pr.HeadSHA != wr.HeadSHA {
		return fmt.Sprintf("pull request #%d's head is %s, not the head %s of the workflow run that triggered this one: the number does not match the run, so crdguard gives no verdict for it", number, abbrev(pr.HeadSHA), wr.HeadSHA[:12]), nil
	}
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

// noVerdict completes the check run as neutral, saying why there is no verdict.
func (r *run) noVerdict(ctx context.Context, why string) int {
	r.gha.Errorf("crdguard gives no verdict: %s", why)
	r.finish(ctx, github.Neutral, github.CheckOutput{Title: "No verdict", Summary: "crdguard gives no verdict: " + report.Escape(why) + "."})
	return ExitTool
}
