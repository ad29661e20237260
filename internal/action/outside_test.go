package action

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/report"
)

// Outside a GitHub Actions workflow the action says what is missing — the repository, the
// token, the event — and never that GitHub refused anything: no request was sent.
func TestOutsideGitHub(t *testing.T) {
	const noEvent = "::error::crdguard could not run: GITHUB_EVENT_NAME or GITHUB_EVENT_PATH is not set, so there is no event to say what to compare: crdguard action runs in a GitHub Actions workflow (pull_request, pull_request_target, merge_group or push); elsewhere give the base and head inputs (INPUT_BASE, INPUT_HEAD), or run crdguard check --base REF\n"
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"nothing set", nil,
			"crdguard: GITHUB_REPOSITORY is not set (crdguard action runs in a GitHub Actions workflow; locally, use crdguard check --base REF): nothing is posted to GitHub; findings are reported as workflow-command annotations and in the step summary\n" + noEvent},
		{"a repository, no token", map[string]string{"GITHUB_REPOSITORY": "octo/widgets"},
			"crdguard: the github-token input is empty: nothing is posted to GitHub; findings are reported as workflow-command annotations and in the step summary\n" + noEvent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			code := Run(context.Background(), Options{Getenv: func(k string) string { return tc.env[k] }, Stdout: &out})
			if code != ExitTool || out.String() != tc.want {
				t.Fatalf("exit %d\n%s\nwant\n%s", code, out.String(), tc.want)
			}
		})
	}
}

// A paths input that can never read a CRD fails the step and the check run, whatever fail-on
// says: a required check that compares nothing must not go green.
func TestPathsInputThatReadsNothing(t *testing.T) {
	pr := newPullRequest(t)
	pr.env["INPUT_PATHS"], pr.env["INPUT_FAIL-ON"] = "config/crds/**", "never"
	code, out := pr.run()
	const msg = `config: paths: "config/crds/**" matches no YAML or JSON file in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)`
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitTool || lines[len(lines)-1] != "::error::crdguard could not run: "+msg {
		t.Fatalf("exit %d\n%s", code, out)
	}
	cr := pr.completed(pr.head)
	if cr.Conclusion != "failure" || cr.Title != "crdguard could not run" || cr.Summary != "crdguard stopped before it could compare the commits:\n\n"+report.Escape(msg) {
		t.Fatalf("check run %+v", cr)
	}
}

// An issue_comment run is refused before anything is created or asked: no check run on the
// default branch's commit, no request, one error saying what to use instead.
func TestIssueCommentRefused(t *testing.T) {
	pr := newPullRequest(t)
	pr.env["GITHUB_EVENT_NAME"] = "issue_comment"
	pr.env["GITHUB_SHA"] = pr.base // the default branch's commit
	code, out := pr.run()
	if want := "::add-mask::" + token + "\n::error::" + issueCommentRefusal + "\n"; code != ExitTool || out != want {
		t.Fatalf("exit %d\n%q\nwant\n%q", code, out, want)
	}
	if got := pr.srv.Requests(); len(got) != 0 {
		t.Fatalf("requests %+v", got)
	}
}
