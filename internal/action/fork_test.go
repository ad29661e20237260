package action

import (
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
)

// The workflow_run run that posts for a fork's pull request trusts only what GitHub wrote: the
// run's head commit, branch and repository. The pull-request input, which the fork's copy of the
// first workflow uploads, is a hint checked against that head; the pull request is found by the
// run's head branch (GET …/pulls?state=open&head=someone:drop-name), then by its commit. One
// open pull request with that head gets its verdict (check run on the head, review on that pull
// request); none or several fail the check with the reason, never neutral. Requests are exact.
func TestWorkflowRunTrustsOnlyGitHub(t *testing.T) {
	fork := func(ref, sha, base string) *fakegithub.PullRequest {
		return &fakegithub.PullRequest{State: "open", Head: fakegithub.Branch{Ref: ref, SHA: sha, Repo: fakegithub.RepoFork{FullName: "someone/widgets", Fork: true}},
			Base: fakegithub.Branch{Ref: base, Repo: fakegithub.RepoFork{FullName: "octo/widgets"}}}
	}
	review := []string{"GET issues/42/labels?per_page=100 200", "GET /user 403", "GET pulls/42/comments?per_page=100 200",
		"GET pulls/42/comments?per_page=100 200", "GET pulls/42/reviews?per_page=100 200", "POST pulls/42/reviews 200"}
	list := "GET pulls?head=someone%3Adrop-name&per_page=100&state=open 200"
	for _, tc := range []struct {
		name, input, branch string
		prs                 map[int]*fakegithub.PullRequest // the real pull request's head is the run's when its SHA is "head"
		commitPulls         []int
		code                int
		calls               []string
		summary, warning    string // summary: only for no verdict
	}{{
		name: "a forged number: the real pull request is found by the run's head", input: "43", code: ExitFindings,
		prs:     map[int]*fakegithub.PullRequest{42: fork("drop-name", "head", "main"), 43: fork("other", "base", "main")},
		calls:   append(append([]string{"POST check-runs 201", "GET pulls/43 200", list}, review...), "PATCH check-runs/1001 200"),
		warning: "::warning::the pull-request input names #43, whose head is BASE (open), not the workflow run's head commit HEAD; ignored: crdguard finds the pull request by that commit",
	}, {
		name: "the true number", input: "42", code: ExitFindings,
		prs:   map[int]*fakegithub.PullRequest{42: fork("drop-name", "head", "main")},
		calls: append(append([]string{"POST check-runs 201", "GET pulls/42 200", list}, review...), "PATCH check-runs/1001 200"),
	}, {
		name: "no input", code: ExitFindings,
		prs:   map[int]*fakegithub.PullRequest{42: fork("drop-name", "head", "main")},
		calls: append(append([]string{"POST check-runs 201", list}, review...), "PATCH check-runs/1001 200"),
	}, {
		name: "no input, the branch renamed since: found by its commit", branch: "old-name", code: ExitFindings, commitPulls: []int{42},
		prs: map[int]*fakegithub.PullRequest{42: fork("drop-name", "head", "main")},
		calls: append(append([]string{"POST check-runs 201", "GET pulls?head=someone%3Aold-name&per_page=100&state=open 200", "GET commits/HEAD/pulls?per_page=100 200"},
			review...), "PATCH check-runs/1001 200"),
	}, {
		name: "a forged number and no open pull request with the run's head", input: "43", code: ExitTool,
		prs:     map[int]*fakegithub.PullRequest{42: fork("drop-name", "base", "main"), 43: fork("other", "base", "main")},
		calls:   []string{"POST check-runs 201", "GET pulls/43 200", list, "GET commits/HEAD/pulls?per_page=100 200", "PATCH check-runs/1001 200"},
		summary: "crdguard gives no verdict: no open pull request has the workflow run's head commit HEAD as its head (looked at the pull-request input, the open pull requests of someone:drop-name, the pull requests GitHub lists for the commit), so crdguard cannot tell which pull request this commit is for and fails its check rather than pass it unchecked. If the pull request is open, its head moved on: the run for its new head posts there. Otherwise re-run the pull request's crdguard workflow, and check that it uploads the pull request's number (docs/action.md, \"Pull requests from forks\").",
	}, {
		name: "two open pull requests with one head", input: "42", code: ExitTool,
		prs:     map[int]*fakegithub.PullRequest{42: fork("drop-name", "head", "main"), 44: fork("drop-name", "head", "release-1")},
		calls:   []string{"POST check-runs 201", "GET pulls/42 200", list, "PATCH check-runs/1001 200"},
		summary: "crdguard gives no verdict: the open pull requests #\u200b42, #\u200b44 all have the workflow run's head commit HEAD as their head: they share this commit's check run, and their bases differ in what a change breaks, so crdguard gives none of them a pass. Push a commit of its own to each (or close the ones not meant to merge), and the runs for the new heads post there.",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			sha := map[string]string{"head": pr.head, "base": pr.base}
			for n, p := range tc.prs {
				p.Number, p.Head.SHA, p.Base.SHA = n, sha[p.Head.SHA], pr.base
			}
			pr.srv.PullRequests = tc.prs
			pr.srv.CommitPulls = map[string][]int{pr.head: tc.commitPulls}
			pr.env["INPUT_PULL-REQUEST"], pr.runHead, pr.runBranch = tc.input, pr.head, tc.branch
			code, out, got := pr.as("workflow_run", 0, pr.base, pr.head)
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, out)
			}
			abbrev := strings.NewReplacer("HEAD", pr.head[:12], "BASE", pr.base[:12])
			for i := range tc.calls {
				tc.calls[i] = strings.ReplaceAll(tc.calls[i], "commits/HEAD/", "commits/"+pr.head+"/")
			}
			expectCalls(t, withQueries(pr.srv, got), tc.calls)
			if tc.warning != "" && !slices.Contains(strings.Split(out, "\n"), abbrev.Replace(tc.warning)) {
				t.Errorf("the log does not warn of the forged number:\n%s", out)
			}
			cr := pr.completed(pr.head)
			if cr.Conclusion != "failure" {
				t.Fatalf("check run %s:\n%s", cr.Conclusion, cr.Summary)
			}
			if tc.summary != "" {
				if want := abbrev.Replace(tc.summary); cr.Summary != want || cr.Title != "No verdict: the pull request is not known" || len(pr.srv.Reviews) != 0 {
					t.Fatalf("check run %q, %d reviews:\n%s\nwant\n%s", cr.Title, len(pr.srv.Reviews), cr.Summary, want)
				}
				return
			}
			if got := annotated(cr); !slices.Equal(got, []string{"failure field-removed: widgets.example.com v1 .spec.name", "failure max-decreased: widgets.example.com v1 .spec.size"}) {
				t.Errorf("annotations %q", got)
			}
			if len(pr.srv.Reviews) != 1 || pr.srv.Reviews[0].PR != 42 || len(pr.srv.Comments) != 2 || pr.srv.Comments[0].PR != 42 || pr.srv.Comments[1].PR != 42 {
				t.Fatalf("%d reviews, %d comments: not one review on #42 with its two comments", len(pr.srv.Reviews), len(pr.srv.Comments))
			}
		})
	}
}

// A workflow_run run that follows a push or merge queue run posts nothing and creates nothing:
// that run posted its own verdict on the commit, which a second check run of the same name
// would replace (no pull request has that head, so the old code concluded neutral there).
func TestWorkflowRunOfAPushRunIsRefused(t *testing.T) {
	pr := newPullRequest(t)
	pr.runHead, pr.runEvent = pr.head, "push"
	code, out, got := pr.as("workflow_run", 0, pr.base, pr.head)
	if code != ExitTool || len(got) != 0 {
		t.Fatalf("exit %d, requests %q\n%s", code, got, out)
	}
	want := "::error::" + notAPullRequestRun(&workflowRun{Event: "push"})
	if !slices.Contains(strings.Split(out, "\n"), want) {
		t.Fatalf("log lacks %q:\n%s", want, out)
	}
}

// withQueries adds each request's query to the calls' paths, from the fake's log: the last
// len(got) requests.
func withQueries(srv *fakegithub.Server, got []string) []string {
	reqs := srv.Requests()
	reqs = reqs[len(reqs)-len(got):]
	out := slices.Clone(got)
	for i, r := range reqs {
		if r.Query != "" {
			method, rest, _ := strings.Cut(out[i], " ")
			path, status, _ := strings.Cut(rest, " ")
			out[i] = method + " " + path + "?" + r.Query + " " + status
		}
	}
	return out
}
