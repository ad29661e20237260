package action

import (
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
)

// GitHub sometimes applies a create request and still answers 502: the check run and the review
// are looked for before being sent again, so there is one of each.
func TestAppliedThen502MakesNoDuplicates(t *testing.T) {
	pr := newPullRequest(t)
	pr.srv.Inject = []fakegithub.Failure{
		{Status: 502, Applied: true}, // the check run is created, the answer lost
		{Status: 502, Applied: true}, // the review too
	}
	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if len(pr.srv.CheckRuns) != 1 || len(pr.srv.Reviews) != 1 || len(pr.srv.Comments) != 2 {
		t.Fatalf("%d check runs, %d reviews, %d comments\n%s", len(pr.srv.CheckRuns), len(pr.srv.Reviews), len(pr.srv.Comments), out)
	}
	if cr := pr.completed(pr.head); cr.Conclusion != "failure" || len(cr.Annotations) != 2 {
		t.Fatalf("check run %+v", cr)
	}
}

// Two crdguard jobs on one pull request (distinct check names, e.g. two CRD folders) keep their
// own comments: fixing what one reports deletes its comments only, and a person's comment that
// quotes a crdguard comment (marker included) is not deleted.
func TestInstancesKeepTheirOwnComments(t *testing.T) {
	pr := newPullRequest(t)
	run := func(name, paths string, wantCode int) {
		t.Helper()
		pr.env["INPUT_CHECK-NAME"], pr.env["INPUT_PATHS"] = name, paths
		code, out := pr.run()
		if code != wantCode {
			t.Fatalf("%s: exit %d\n%s", name, code, out)
		}
		pr.completed(pr.head)
	}
	run("crdguard (operator)", "", ExitFindings)
	// Someone quotes the first comment in their own, marker and all.
	pr.srv.AddComment(fakegithub.Comment{Path: "config/crd/widgets.yaml", Line: 29, Side: "RIGHT", SubjectType: "line",
		Body: "> " + pr.srv.Comments[0].Body, User: fakegithub.User{Login: "octocat"}})
	run("crdguard (charts)", "", ExitFindings)
	if got := commentsBy(pr.srv); got != "github-actions[bot]:4 octocat:1" {
		t.Fatalf("after both instances: %s", got)
	}
	// The operator instance no longer sees the CRD: its two comments go, the others stay.
	run("crdguard (operator)", "docs/**", ExitOK)
	if got := commentsBy(pr.srv); got != "github-actions[bot]:2 octocat:1" {
		t.Fatalf("after the operator instance's fix: %s", got)
	}
}

func commentsBy(srv *fakegithub.Server) string {
	n := map[string]int{}
	for _, c := range srv.Comments {
		n[c.User.Login]++
	}
	var out []string
	for who, k := range n {
		out = append(out, who+":"+itoa(k))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// A personal access token: GitHub lets it post the review (under the person's name) but not write
// check runs, which belong to GitHub Apps. The review is still posted, the findings also become
// ::error lines, the job fails, and the log says which token to use. When the findings are fixed,
// the run deletes the person's crdguard comments, never another identity's.
func TestPersonalAccessToken(t *testing.T) {
	pr := newPullRequest(t)
	pr.srv.PAT, pr.srv.Login = true, "alice"
	// Another setup (the default token) commented on this pull request earlier.
	pr.srv.AddComment(fakegithub.Comment{Path: "config/crd/widgets.yaml", Line: 29, Side: "RIGHT", SubjectType: "line",
		Body: "old <!-- crdguard:fp=0123456789abcdef -->", User: fakegithub.User{Login: "github-actions[bot]"}})

	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if len(pr.srv.CheckRuns) != 0 || !strings.Contains(out, "not a personal access token") {
		t.Fatalf("%d check runs; log:\n%s", len(pr.srv.CheckRuns), out)
	}
	if n := strings.Count(out, "\n::error "); n != 2 {
		t.Errorf("%d ::error lines, want 2:\n%s", n, out)
	}
	if got := commentsBy(pr.srv); got != "alice:2 github-actions[bot]:1" {
		t.Fatalf("comments %s", got)
	}
	pr.env["INPUT_PATHS"] = "docs/**" // the findings are gone
	if code, out := pr.run(); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if got := commentsBy(pr.srv); got != "github-actions[bot]:1" {
		t.Fatalf("after the fix: %s", got)
	}
}
