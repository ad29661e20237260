package action

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/gittest"
)

const token = "ghs_e2e_secret_token"

// pullRequest is a repository with the example pull request of testdata/action/pr, a fake
// GitHub that knows its diff (from git itself), and the environment of an Actions runner.
type pullRequest struct {
	t          *testing.T
	repo       *gittest.Repo
	srv        *fakegithub.Server
	base, head string
	env        map[string]string
	labels     []string
	waits      []time.Duration
	// getenv, when set, replaces reading env (to watch what the action reads).
	getenv func(string) string
	// number is the pull request's number (42 when 0); queueRef a merge group's head_ref
	// (gh-readonly-queue/main/pr-<number>-<base> when empty); runHead a workflow_run's head_sha.
	number   int
	queueRef string
	runHead  string
	// runBranch and runEvent are a workflow_run's head_branch ("drop-name", in the fork
	// someone/widgets, when empty) and the event of the run it follows (pull_request when empty).
	runBranch, runEvent string
	// fork marks the pull request's head as a fork's.
	fork bool
	// forced and pushed are a push event's forced and its commits' IDs.
	forced bool
	pushed []string
}

func newPullRequest(t *testing.T) *pullRequest {
	t.Helper()
	return newPullRequestOf(t, []byte(readFile(t, "../../testdata/action/pr/base.yaml")), []byte(readFile(t, "../../testdata/action/pr/head.yaml")))
}

// newPullRequestOf is the pull request that changes config/crd/widgets.yaml from base to head.
func newPullRequestOf(t *testing.T, baseCRD, headCRD []byte) *pullRequest {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to compute GitHub's view of the diff independently of crdguard")
	}
	repo := gittest.New(t)
	repo.Write("config/crd/widgets.yaml", baseCRD)
	repo.Write("README.md", []byte("widgets operator\n"))
	// A CRD the change does not touch: paths: docs/** compares nothing, and is no typo.
	repo.Write("docs/gizmos.yaml", []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gizmos.example.com\nspec:\n  group: example.com\n  names: {kind: Gizmo, plural: gizmos}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n"))
	base := repo.Commit("base")
	repo.Branch("main", base)
	repo.Write("config/crd/widgets.yaml", headCRD)
	head := repo.Commit("remove .spec.name, lower the maximum of .spec.size")
	repo.Branch("pr", head)

	diff, err := exec.Command("git", "-C", repo.Dir, "diff", "-U3", base.String(), head.String()).Output()
	if err != nil {
		t.Fatal(err)
	}
	srv := fakegithub.New(t, token)
	srv.Files = fakegithub.FilesFromUnifiedDiff(string(diff))
	srv.Commits = map[string]bool{base.String(): true, head.String(): true}
	tmp := t.TempDir()
	pr := &pullRequest{t: t, repo: repo, srv: srv, base: base.String(), head: head.String()}
	pr.env = map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": filepath.Join(tmp, "event.json"),
		"GITHUB_REPOSITORY": "octo/widgets", "GITHUB_API_URL": srv.URL, "GITHUB_WORKSPACE": repo.Dir,
		"GITHUB_OUTPUT": filepath.Join(tmp, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary"),
		"INPUT_GITHUB-TOKEN": token, "GITHUB_SHA": head.String(),
	}
	return pr
}

// completed asserts what every action test ends with: exactly one check run under the check's
// name on the reported commit, and it is completed.
func (pr *pullRequest) completed(sha string) *fakegithub.CheckRun {
	pr.t.Helper()
	return pr.srv.Completed(pr.t, orDefault(pr.env["INPUT_CHECK-NAME"], DefaultCheckName), sha)
}

func (pr *pullRequest) run() (int, string) {
	pr.t.Helper()
	labels := []map[string]string{}
	for _, l := range pr.labels {
		labels = append(labels, map[string]string{"name": l})
	}
	number := pr.number
	if number == 0 {
		number = 42
	}
	ev, _ := json.Marshal(map[string]any{"pull_request": map[string]any{
		"number": number, "base": map[string]any{"sha": pr.base}, "labels": labels,
		"head": map[string]any{"sha": pr.head, "repo": map[string]any{"fork": pr.fork}},
	}})
	switch pr.env["GITHUB_EVENT_NAME"] {
	case "push":
		commits := []map[string]string{}
		for _, id := range pr.pushed {
			commits = append(commits, map[string]string{"id": id})
		}
		ev, _ = json.Marshal(map[string]any{"before": pr.base, "after": pr.head, "forced": pr.forced, "commits": commits})
	case "merge_group":
		ref := pr.queueRef
		if ref == "" {
			ref = "refs/heads/gh-readonly-queue/main/pr-" + itoa(number) + "-" + pr.base
		}
		ev, _ = json.Marshal(map[string]any{"action": "checks_requested", "merge_group": map[string]any{
			"head_sha": pr.head, "head_ref": ref, "base_sha": pr.base, "base_ref": "refs/heads/main",
		}})
	case "workflow_run":
		// A fork's run: GitHub lists no pull request, and the head is the fork's commit.
		ev, _ = json.Marshal(map[string]any{"action": "completed", "workflow_run": map[string]any{
			"head_sha": pr.runHead, "event": orDefault(pr.runEvent, "pull_request"), "pull_requests": []any{}, "conclusion": "failure",
			"head_branch":     orDefault(pr.runBranch, "drop-name"),
			"head_repository": map[string]any{"full_name": "someone/widgets", "owner": map[string]any{"login": "someone"}},
		}})
	}
	if err := os.WriteFile(pr.env["GITHUB_EVENT_PATH"], ev, 0o644); err != nil {
		pr.t.Fatal(err)
	}
	var out bytes.Buffer
	clock := time.Now()
	getenv := pr.getenv
	if getenv == nil {
		getenv = func(k string) string { return pr.env[k] }
	}
	code := Run(context.Background(), Options{
		Getenv: getenv,
		Stdout: &out,
		// Waiting moves the clock: the spacing of writes is exact.
		Sleep: func(_ context.Context, d time.Duration) error {
			pr.waits = append(pr.waits, d)
			clock = clock.Add(d)
			return nil
		},
		Now: func() time.Time { return clock },
	})
	// The token may only appear in the ::add-mask:: command that tells the runner to hide it.
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, token) && line != "::add-mask::"+token {
			pr.t.Fatalf("the token appeared in the output: %q", line)
		}
	}
	return code, out.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The "done means".
func TestPullRequestEndToEnd(t *testing.T) {
	pr := newPullRequest(t)
	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var inline []string
	for _, c := range pr.srv.Comments {
		inline = append(inline, c.Path+":"+itoa(c.Line)+":"+c.Side+":"+ruleOf(c.Body))
	}
	sort.Strings(inline)
	want := []string{"config/crd/widgets.yaml:26:LEFT:field-removed", "config/crd/widgets.yaml:29:RIGHT:max-decreased"}
	if strings.Join(inline, " ") != strings.Join(want, " ") {
		t.Fatalf("comments %v, want %v", inline, want)
	}
	for _, c := range pr.srv.Comments {
		for _, frag := range []string{"Before → after", "[About ", "<!-- crdguard:fp="} {
			if !strings.Contains(c.Body, frag) {
				t.Errorf("comment lacks %q:\n%s", frag, c.Body)
			}
		}
	}
	if len(pr.srv.Reviews) != 1 {
		t.Fatalf("%d reviews", len(pr.srv.Reviews))
	}
	cr := pr.completed(pr.head)
	if cr.Conclusion != "failure" || len(cr.Annotations) != 2 {
		t.Fatalf("check run %+v with %d annotations", cr, len(cr.Annotations))
	}
	if len(cr.Summary) > 65535 || !strings.Contains(cr.Summary, "### crdguard: 2 breaking changes, 0 warnings, 1 safe change (1 CRD compared)\n") {
		t.Fatalf("summary (%d bytes):\n%s", len(cr.Summary), cr.Summary)
	}
	// The removed line is annotated where it was in head.
	for _, a := range cr.Annotations {
		if a.Path != "config/crd/widgets.yaml" || a.AnnotationLevel != "failure" {
			t.Errorf("annotation %+v", a)
		}
	}
	outputs := readFile(t, pr.env["GITHUB_OUTPUT"])
	for _, frag := range []string{"result<<", "\nfail\n", "errors<<", "\n2\n", "warnings<<", "\n0\n", "report<<", ReportFile} {
		if !strings.Contains(outputs, frag) {
			t.Errorf("outputs lack %q:\n%s", frag, outputs)
		}
	}
	if !strings.Contains(readFile(t, pr.env["GITHUB_STEP_SUMMARY"]), "field-removed") {
		t.Error("step summary lacks the findings")
	}
	var rep struct {
		Findings []struct{ Rule string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(pr.repo.Dir, ReportFile))), &rep); err != nil || len(rep.Findings) != 3 {
		t.Fatalf("report: %v, %d findings", err, len(rep.Findings))
	}
	if strings.Contains(out, "::error") {
		t.Error("workflow-command annotations printed although the check run was posted")
	}

	// A second run posts nothing new: no review, no comment.
	reviews, comments := len(pr.srv.Reviews), len(pr.srv.Comments)
	code, out = pr.run()
	if code != ExitFindings || len(pr.srv.Reviews) != reviews || len(pr.srv.Comments) != comments {
		t.Fatalf("second run: exit %d, %d reviews, %d comments\n%s", code, len(pr.srv.Reviews), len(pr.srv.Comments), out)
	}
	if !strings.Contains(out, "2 already posted") {
		t.Errorf("log does not say the comments were already there:\n%s", out)
	}
	pr.completed(pr.head)
}

// A pull request from a fork gets a read-only token: the findings become ::error lines and the
// job still fails.
func TestReadOnlyTokenFallsBack(t *testing.T) {
	pr := newPullRequest(t)
	pr.srv.ReadOnly = true
	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var errs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "::error ") {
			errs = append(errs, l)
		}
	}
	if len(errs) != 2 {
		t.Fatalf("%d ::error lines:\n%s", len(errs), out)
	}
	if !strings.Contains(errs[0]+errs[1], "file=config/crd/widgets.yaml,line=26,title=field-removed%3A widgets.example.com v1 .spec.name::") ||
		!strings.Contains(errs[0]+errs[1], "file=config/crd/widgets.yaml,line=29,title=max-decreased%3A widgets.example.com v1 .spec.size::") {
		t.Fatalf("::error lines:\n%s", strings.Join(errs, "\n"))
	}
	if len(pr.srv.Comments) != 0 || len(pr.srv.CheckRuns) != 0 {
		t.Fatal("a read-only token created something")
	}
	if !strings.Contains(readFile(t, pr.env["GITHUB_OUTPUT"]), "\nfail\n") || !strings.Contains(readFile(t, pr.env["GITHUB_STEP_SUMMARY"]), "max-decreased") {
		t.Error("outputs or step summary missing")
	}
}

// Rate limits and a 422 on the way: the run waits as told, and no finding is lost.
func TestRateLimitsAndRefusedReview(t *testing.T) {
	pr := newPullRequest(t)
	pr.srv.Inject = []fakegithub.Failure{
		{Status: 403, Secondary: true, RetryAfter: "2"}, // check run creation
		{Status: 429}, // again
		{},            // created
		{Status: 422}, // the review
		{Status: 502}, // the review in its body-only form
	}
	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if cr := pr.completed(pr.head); len(pr.srv.CheckRuns) != 1 || len(cr.Annotations) != 2 {
		t.Fatalf("check runs %+v\n%s", pr.srv.CheckRuns, out)
	}
	if len(pr.srv.Reviews) != 1 || len(pr.srv.Comments) != 0 {
		t.Fatalf("%d reviews, %d comments", len(pr.srv.Reviews), len(pr.srv.Comments))
	}
	// Retry-After, a plain 429, a second before the review (writes are spaced), a second before
	// its body-only form, a second of backoff after the 502 (the review was looked for first; the
	// backoff already spaced the resend), a second before completing the check run.
	if want := []time.Duration{2 * time.Second, 60 * time.Second, time.Second, time.Second, time.Second, time.Second}; !slices.Equal(pr.waits, want) {
		t.Errorf("waited %v, want %v", pr.waits, want)
	}
	body := pr.srv.Reviews[0].Body
	if !strings.Contains(body, "field-removed") || !strings.Contains(body, "max-decreased") {
		t.Fatalf("review body lost findings:\n%s", body)
	}
}

// The acknowledgement label is read from the pull request as it is now: a re-run replays the
// original event, whose labels predate the one added to acknowledge. When the API cannot say, the
// event's labels serve.
func TestAcknowledgeLabel(t *testing.T) {
	const ack = "crd-breaking-change-approved"
	for _, tc := range []struct {
		name          string
		event, now    []string
		labelsStatus  int
		code          int
		conclusion    string
		wantInSummary string
	}{
		{name: "added after the event, then re-run", now: []string{"area/api", ack}, code: ExitOK, conclusion: "neutral", wantInSummary: "**crd-breaking-change-approved**"},
		{name: "removed after the event", event: []string{ack}, now: []string{"area/api"}, code: ExitFindings, conclusion: "failure"},
		{name: "API cannot say: the event's", event: []string{ack}, labelsStatus: 404, code: ExitOK, conclusion: "neutral"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			pr.labels, pr.srv.Labels, pr.srv.LabelsStatus = tc.event, tc.now, tc.labelsStatus
			code, out := pr.run()
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, out)
			}
			cr := pr.completed(pr.head)
			if cr.Conclusion != tc.conclusion || !strings.Contains(cr.Summary, tc.wantInSummary) {
				t.Fatalf("check run %+v\n%s", cr, cr.Summary)
			}
		})
	}
}

// Bad inputs and unsupported events exit 2, and the check run, created first, says why.
func TestBadInputsExit2(t *testing.T) {
	pr := newPullRequest(t)
	pr.env["INPUT_FAIL-ON"] = "sometimes"
	pr.env["INPUT_CHECK-NAME"] = "crdguard (widgets)"
	if code, out := pr.run(); code != ExitTool || !strings.Contains(out, "::error::crdguard could not run: input fail-on") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if cr := pr.completed(pr.head); cr.Conclusion != "failure" || cr.Title != "crdguard could not run" || !strings.Contains(cr.Summary, "input fail-on") {
		t.Fatalf("check run %+v", cr)
	}
	pr.env["INPUT_FAIL-ON"] = ""
	pr.env["GITHUB_EVENT_NAME"] = "issues"
	pr.env["GITHUB_SHA"] = pr.base // the event names no commit: the check goes where the workflow runs
	if code, out := pr.run(); code != ExitTool || !strings.Contains(out, `event "issues" is not supported`) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if cr := pr.completed(pr.base); cr.Conclusion != "failure" || !strings.Contains(cr.Summary, `event "issues" is not supported`) {
		t.Fatalf("check run %+v", cr)
	}
	// A workflow_dispatch run names no commits: the error says which inputs give them.
	pr.env["GITHUB_EVENT_NAME"] = "workflow_dispatch"
	const dispatch = "::error::crdguard could not run: event \"workflow_dispatch\" is not supported (use pull_request, pull_request_target, pull_request_review_comment, merge_group, push or workflow_run), and it names no commits to compare: on any event, give them with the action's base input (a ref or SHA) and head input (default HEAD), e.g. for workflow_dispatch with: {base: ${{ inputs.base }}, head: ${{ inputs.head }}}"
	if code, out := pr.run(); code != ExitTool || !strings.Contains(out, dispatch+"\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// Explicit refs (the example workflow) and annotations instead of a review; the SARIF log and
// the changelog go where their inputs say.
func TestExplicitRefsAndAnnotations(t *testing.T) {
	pr := newPullRequest(t)
	pr.env["INPUT_BASE"], pr.env["INPUT_HEAD"] = "main", "pr"
	pr.env["INPUT_COMMENT"], pr.env["INPUT_CHECK-RUN"] = "annotations", "false"
	pr.env["INPUT_SARIF"] = "reports/crdguard.sarif"
	pr.env["INPUT_CHANGELOG"] = "CHANGES.md"
	code, out := pr.run()
	if code != ExitFindings || strings.Count(out, "::error ") != 2 || len(pr.srv.Writes()) != 0 {
		t.Fatalf("exit %d, %d writes\n%s", code, len(pr.srv.Writes()), out)
	}
	if sarif := readFile(t, filepath.Join(pr.repo.Dir, "reports/crdguard.sarif")); strings.Count(sarif, `"ruleId"`) != 2 {
		t.Fatalf("SARIF log:\n%s", sarif)
	}
	_, after, _ := strings.Cut(readFile(t, filepath.Join(pr.repo.Dir, "CHANGES.md")), "(the merge base).\n\n")
	const want = "## widgets.example.com\n\n### v1\n\n#### Breaking changes\n\n" +
		"- `.spec.name` was removed (`field-removed`)\n" +
		"- maximum of `.spec.size` changed from 10 to 5 (`max-decreased`)\n"
	if after != want {
		t.Errorf("changelog after the compared line:\n%s\nwant:\n%s", after, want)
	}
}

func ruleOf(body string) string {
	i := strings.Index(body, "`")
	j := strings.Index(body[i+1:], "`")
	return body[i+1 : i+1+j]
}

func itoa(n int) string { return strconv.Itoa(n) }

// A push compares before..after, a merge queue's merge_group event base_sha..head_sha; both
// report through the check run on head only: they read the acknowledgements of the pull
// requests they carry (workflows_test.go has their exact requests), and review none.
func TestEventsWithoutReview(t *testing.T) {
	for _, event := range []string{"push", "merge_group"} {
		t.Run(event, func(t *testing.T) {
			pr := newPullRequest(t)
			pr.env["GITHUB_EVENT_NAME"] = event
			code, out := pr.run()
			if code != ExitFindings || len(pr.srv.Reviews) != 0 || len(pr.srv.Comments) != 0 {
				t.Fatalf("exit %d, %d reviews\n%s", code, len(pr.srv.Reviews), out)
			}
			for _, r := range pr.srv.Writes() {
				if !strings.Contains(r.Path, "/check-runs") {
					t.Errorf("a %s run wrote to a pull request: %s %s", event, r.Method, r.Path)
				}
			}
			if cr := pr.completed(pr.head); len(pr.srv.CheckRuns) != 1 || cr.Conclusion != "failure" || len(cr.Annotations) != 2 {
				t.Fatalf("check runs %+v", pr.srv.CheckRuns)
			}
		})
	}
}

// A new branch with no commit of its own has no "before": nothing to compare, so the job passes
// and no check run is posted on its head, a commit checked where it came from that may be an
// open pull request's head (a success there would replace that pull request's failure).
func TestPushOfNewBranch(t *testing.T) {
	pr := newPullRequest(t)
	pr.env["GITHUB_EVENT_NAME"] = "push"
	pr.base = strings.Repeat("0", 40)
	code, out := pr.run()
	if want := "crdguard: a new branch was pushed with no commit of its own: there is nothing new to compare; no check run is posted on " + pr.head[:12] + " (its own checks stand)"; code != ExitOK || !slices.Contains(strings.Split(out, "\n"), want) {
		t.Fatalf("new branch: exit %d\n%s", code, out)
	}
	if reqs := pr.srv.Requests(); len(reqs) != 0 {
		t.Fatalf("requests %+v", reqs)
	}
}

// A pull request that moves the CRD to another file and removes a field: the comment lands on
// the removed line (LEFT) of the file under its new path, as GitHub shows renames.
func TestMovedFile(t *testing.T) {
	pr := newPullRequest(t)
	pr.repo.Checkout(mustHash(t, pr.base))
	pr.repo.Remove("config/crd/widgets.yaml")
	pr.repo.Copy("deploy/crds/widgets.yaml", "../../testdata/action/pr/head.yaml")
	head := pr.repo.Commit("move and change")
	pr.head = head.String()
	diff, err := exec.Command("git", "-C", pr.repo.Dir, "diff", "-M", "-U3", pr.base, pr.head).Output()
	if err != nil {
		t.Fatal(err)
	}
	pr.srv.Files = fakegithub.FilesFromUnifiedDiff(string(diff))
	pr.srv.Commits[pr.head] = true
	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	pr.completed(pr.head)
	var got []string
	for _, c := range pr.srv.Comments {
		got = append(got, c.Path+":"+itoa(c.Line)+":"+c.Side+":"+ruleOf(c.Body))
	}
	sort.Strings(got)
	want := "deploy/crds/widgets.yaml:26:LEFT:field-removed deploy/crds/widgets.yaml:29:RIGHT:max-decreased"
	if strings.Join(got, " ") != want {
		t.Fatalf("comments %v, want %s\n%s", got, want, out)
	}
}

func mustHash(t *testing.T, s string) plumbing.Hash {
	t.Helper()
	if len(s) != 40 {
		t.Fatalf("not a SHA: %s", s)
	}
	return plumbing.NewHash(s)
}
