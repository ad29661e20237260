package action

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crdguard/crdguard/internal/github"
	"github.com/crdguard/crdguard/internal/github/fakegithub"
)

// Whatever fails, the check run ends completed under its name, with the reason where it is
// visible; a required check left in_progress would block the pull request for good.
func TestCheckRunAlwaysCompletes(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup breaks something; writes are, in order: create the check run, the review, the
		// completing update.
		setup          func(pr *pullRequest)
		code           int
		conclusion     string
		title, summary string // fragments
		annotations    int
	}{{
		name: "config is invalid",
		setup: func(pr *pullRequest) {
			if err := os.WriteFile(filepath.Join(pr.repo.Dir, ".crdguard.yaml"), []byte("fail-on: [\n"), 0o644); err != nil {
				pr.t.Fatal(err)
			}
		},
		code: ExitTool, conclusion: "failure", title: "crdguard could not run", summary: "line 1: did not find expected node content",
	}, {
		name:  "base commit is missing",
		setup: func(pr *pullRequest) { pr.base = strings.Repeat("b", 40) },
		code:  ExitTool, conclusion: "failure", title: "crdguard could not run", summary: "bbbbbbbbbbbb",
	}, {
		name: "head commit is missing from the clone and the remote",
		setup: func(pr *pullRequest) {
			pr.head = strings.Repeat("c", 40)
			pr.srv.Commits[pr.head] = true // GitHub knows it
		},
		code: ExitTool, conclusion: "failure", title: "crdguard could not run", summary: "cccccccccccc",
	}, {
		name:  "annotations refused",
		setup: func(pr *pullRequest) { pr.srv.Inject = []fakegithub.Failure{{}, {}, {Status: 422}} },
		code:  ExitFindings, conclusion: "failure", title: "Breaking CRD changes", summary: "2 annotations could not be attached",
	}, {
		name: "primary rate limit exhausted for an hour",
		// go-github then refuses every request of its client locally until the reset: the
		// completing update goes through a client of its own.
		setup: func(pr *pullRequest) { pr.srv.Inject = []fakegithub.Failure{{}, {Primary: true, ResetIn: 3600}} },
		code:  ExitFindings, conclusion: "failure", title: "Breaking CRD changes", summary: "2 breaking changes", annotations: 2,
	}, {
		name: "secondary rate limit longer than the budget",
		setup: func(pr *pullRequest) {
			pr.srv.Inject = []fakegithub.Failure{{}, {Status: 403, Secondary: true, RetryAfter: "600"}}
		},
		code: ExitFindings, conclusion: "failure", title: "Breaking CRD changes", summary: "2 breaking changes", annotations: 2,
	}, {
		name: "waits spent the main budget",
		// Five minutes of waiting on the review; the completing update still has its own.
		setup: func(pr *pullRequest) {
			pr.srv.Inject = []fakegithub.Failure{{}, {Status: 429, RetryAfter: "150"}, {Status: 429, RetryAfter: "150"}, {Status: 429, RetryAfter: "150"}, {Status: 502}}
		},
		code: ExitFindings, conclusion: "failure", title: "Breaking CRD changes", summary: "2 breaking changes", annotations: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			tc.setup(pr)
			code, out := pr.run()
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, out)
			}
			cr := pr.completed(pr.head)
			if cr.Conclusion != tc.conclusion || !strings.Contains(cr.Title, tc.title) || !strings.Contains(cr.Summary, tc.summary) || len(cr.Annotations) != tc.annotations {
				t.Fatalf("check run %q %s: %q, %d annotations, summary:\n%s\nlog:\n%s", cr.Name, cr.Conclusion, cr.Title, len(cr.Annotations), cr.Summary, out)
			}
			var waited time.Duration
			for _, w := range pr.waits {
				waited += w
			}
			if waited > github.MaxTotalWait+github.CompletionBudget {
				t.Errorf("waited %v", waited)
			}
			// Every update named the check: go-github sends "name" on every PATCH.
			for _, w := range pr.srv.Writes() {
				if w.Method != http.MethodPatch {
					continue
				}
				var body struct{ Name string }
				if err := json.Unmarshal(w.Body, &body); err != nil || body.Name != DefaultCheckName {
					t.Errorf("update named %q: %s", body.Name, w.Body)
				}
			}
		})
	}
}

// The post step completes a check run the main step left open (a cancelled job), as cancelled
// under its name, and leaves a completed one alone.
func TestPostStepClosesAnOpenCheckRun(t *testing.T) {
	pr := newPullRequest(t)
	pr.env["GITHUB_STATE"] = filepath.Join(pr.t.TempDir(), "state")
	if code, out := pr.run(); code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	done := pr.completed(pr.head)
	state := readFile(t, pr.env["GITHUB_STATE"])
	if !strings.Contains(state, "\n"+itoa(int(done.ID))+" "+DefaultCheckName+"\n") {
		t.Fatalf("state:\n%s", state)
	}
	// After a completed main step the post step writes nothing.
	writes := len(pr.srv.Writes())
	pr.env["STATE_check-run"] = itoa(int(done.ID)) + " " + DefaultCheckName
	if code, out := pr.run(); code != ExitOK || len(pr.srv.Writes()) != writes {
		t.Fatalf("post after success: exit %d, %d writes\n%s", code, len(pr.srv.Writes())-writes, out)
	}
	// A main step that was cancelled after creating its check run.
	pr.srv.CheckRuns = append(pr.srv.CheckRuns, &fakegithub.CheckRun{ID: 4711, Name: DefaultCheckName, HeadSHA: pr.base, Status: "in_progress"})
	pr.env["STATE_check-run"] = "4711 " + DefaultCheckName
	code, out := pr.run()
	if code != ExitOK || !strings.Contains(out, "post step: completed the check run") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if cr := pr.completed(pr.base); cr.ID != 4711 || cr.Conclusion != "cancelled" || cr.Title != "crdguard did not finish" {
		t.Fatalf("check run %+v", cr)
	}
}
