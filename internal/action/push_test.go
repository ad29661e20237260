package action

import (
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
)

// pushed builds main after the example's base as a push brings it: #41 squash-merged (removes
// .spec.name), #42 rebase-merged in two commits (lowers the maximum of .spec.size, then edits
// the README; its merge commit is the second), and, with direct, a commit pushed without a pull
// request that removes .spec.color (GitHub lists it for the open #43, whose head contains it and
// whose merge_commit_sha, as if its test merge, names it).
// It returns the commits, oldest first.
func pushed(t *testing.T, pr *pullRequest, direct bool) []string {
	t.Helper()
	pr.repo.Checkout(mustHash(t, pr.base))
	crd := readFile(t, pr.repo.Dir+"/config/crd/widgets.yaml")
	crd = strings.Replace(crd, "                name:\n                  type: string\n                  description: Display name.\n", "", 1)
	pr.repo.Write("config/crd/widgets.yaml", []byte(crd))
	commits := []string{pr.repo.Commit("Drop .spec.name (#41)").String()}
	crd = strings.Replace(crd, "maximum: 10", "maximum: 5", 1)
	pr.repo.Write("config/crd/widgets.yaml", []byte(crd))
	commits = append(commits, pr.repo.Commit("Lower the size limit").String())
	pr.repo.Write("README.md", []byte("widgets operator, at most 5\n"))
	commits = append(commits, pr.repo.Commit("Say so in the README").String())
	if direct {
		pr.repo.Write("config/crd/widgets.yaml", []byte(strings.Replace(crd, "                color:\n                  type: string\n", "", 1)))
		commits = append(commits, pr.repo.Commit("hotfix").String())
	}
	at := "2026-01-05T11:00:00Z"
	merged := func(n int, merge string) *fakegithub.PullRequest {
		return &fakegithub.PullRequest{Number: n, State: "closed", Merged: true, MergedAt: &at, MergeCommitSHA: merge,
			Head: fakegithub.Branch{Ref: "topic-" + itoa(n), SHA: strings.Repeat(itoa(n%10), 40)}, Base: fakegithub.Branch{Ref: "main", SHA: pr.base}}
	}
	pr.srv.PullRequests = map[int]*fakegithub.PullRequest{41: merged(41, commits[0]), 42: merged(42, commits[2]),
		43: {Number: 43, State: "open", MergeCommitSHA: commits[len(commits)-1], Head: fakegithub.Branch{Ref: "hotfix", SHA: commits[len(commits)-1]}, Base: fakegithub.Branch{Ref: "main", SHA: pr.base}}}
	pr.srv.CommitPulls = map[string][]int{commits[0]: {41}, commits[1]: {42}, commits[2]: {42}}
	if direct {
		pr.srv.CommitPulls[commits[3]] = []int{43}
	}
	return commits
}

// A push of several commits: each change is acknowledged by the pull request whose commits
// brought it (GET …/commits/{sha}/pulls for each commit: a merged pull request whose merge commit
// it is, or a rebase merge's earlier commit before it); a change a directly pushed commit brings
// counts whatever the pull requests say (an open pull request that contains it lends nothing).
func TestPushOfSeveralCommits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		direct     bool
		labels     map[int][]string
		code       int
		conclusion string
		title      string
		annotated  []string
	}{
		{name: "both pull requests labelled", labels: map[int][]string{41: {ackLabel}, 42: {ackLabel}}, code: ExitOK, conclusion: "neutral",
			title: "Breaking CRD changes acknowledged (2 breaking changes, 0 warnings)"},
		{name: "only the squash-merged one labelled", labels: map[int][]string{41: {ackLabel}}, code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 2 breaking changes, 0 warnings"},
		{name: "only the rebase-merged one labelled", labels: map[int][]string{42: {ackLabel}}, code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 2 breaking changes, 0 warnings"},
		{name: "a direct commit among them", direct: true, labels: map[int][]string{41: {ackLabel}, 42: {ackLabel}, 43: {ackLabel}}, code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 3 breaking changes, 0 warnings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			commits := pushed(t, pr, tc.direct)
			pr.srv.PRLabels = tc.labels
			code, out, got := pr.as("push", 0, pr.base, commits[len(commits)-1])
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, out)
			}
			want := []string{"POST check-runs 201"}
			for _, c := range commits {
				want = append(want, "GET commits/"+c+"/pulls 200")
			}
			want = append(want, "GET issues/41/labels 200", "GET /user 403", "GET pulls/41/comments 200", "GET issues/42/labels 200", "GET pulls/42/comments 200", "PATCH check-runs/1001 200")
			expectCalls(t, got, want)
			cr := pr.completed(commits[len(commits)-1])
			if cr.Conclusion != tc.conclusion || cr.Title != tc.title {
				t.Fatalf("check run %s %q\n%s", cr.Conclusion, cr.Title, out)
			}
		})
	}
}

// A forced push is compared directly, before with after: the commits it dropped are undone,
// and undoing them is no pull request's. A new branch starts where the commits its push lists
// start (GitHub lists those no other branch has).
func TestForcedPushAndNewBranch(t *testing.T) {
	for _, tc := range []struct {
		name string
		// dropped is what the commit the forced push dropped did ("" for no forced push).
		dropped    string
		newBranch  bool
		code       int
		conclusion string
		title      string
		calls      []string
	}{
		{name: "forced, dropping an added field", dropped: "field", code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 2 breaking changes, 0 warnings",
			calls: []string{"POST check-runs 201", "GET commits/FIRST/pulls 200", "GET issues/41/labels 200", "GET /user 403", "GET pulls/41/comments 200", "PATCH check-runs/1001 200"}},
		{name: "forced, dropping a README edit", dropped: "readme", code: ExitOK, conclusion: "neutral",
			title: "Breaking CRD changes acknowledged (1 breaking change, 0 warnings)",
			calls: []string{"POST check-runs 201", "GET commits/FIRST/pulls 200", "GET issues/41/labels 200", "GET /user 403", "GET pulls/41/comments 200", "PATCH check-runs/1001 200"}},
		{name: "new branch with one commit of its own", newBranch: true, code: ExitOK, conclusion: "neutral",
			title: "Breaking CRD changes acknowledged (1 breaking change, 0 warnings)",
			calls: []string{"POST check-runs 201", "GET commits/FIRST/pulls 200", "GET issues/41/labels 200", "GET /user 403", "GET pulls/41/comments 200", "PATCH check-runs/1001 200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			first := pushed(t, pr, false)[0]
			pr.srv.PRLabels = map[int][]string{41: {ackLabel}}
			base := pr.base
			before := base
			switch tc.dropped {
			case "field":
				pr.repo.Checkout(mustHash(t, pr.base))
				pr.repo.Write("config/crd/widgets.yaml", []byte(strings.Replace(readFile(t, pr.repo.Dir+"/config/crd/widgets.yaml"),
					"                color:\n", "                shade:\n                  type: string\n                color:\n", 1)))
				before = pr.repo.Commit("add .spec.shade").String()
			case "readme":
				pr.repo.Checkout(mustHash(t, pr.base))
				pr.repo.Write("README.md", []byte("widgets\n"))
				before = pr.repo.Commit("README").String()
			}
			pr.forced = tc.dropped != ""
			if tc.newBranch {
				before, pr.pushed = strings.Repeat("0", 40), []string{first}
			}
			code, out, got := pr.as("push", 0, before, first)
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, out)
			}
			for i := range tc.calls {
				tc.calls[i] = strings.Replace(tc.calls[i], "FIRST", first, 1)
			}
			expectCalls(t, got, tc.calls)
			cr := pr.completed(first)
			if cr.Conclusion != tc.conclusion || cr.Title != tc.title {
				t.Fatalf("check run %s %q\n%s", cr.Conclusion, cr.Title, out)
			}
			want := "Compared " + first[:12] + " with " + before[:12] + " directly (a forced push replaced it)."
			if tc.newBranch {
				want = "Compared " + first[:12] + " with " + base[:12] + " (the merge base)."
			}
			if got := comparedLine(cr.Summary); got != want {
				t.Fatalf("summary says %q, want %q", got, want)
			}
		})
	}
}

// comparedLine is the summary's line saying what was compared.
func comparedLine(summary string) string {
	for _, l := range strings.Split(summary, "\n") {
		if strings.HasPrefix(l, "Compared ") {
			return l
		}
	}
	return ""
}
