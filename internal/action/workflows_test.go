package action

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/report"
)

const ackLabel = "crd-breaking-change-approved"

// calls are the requests the fake answered from index since on: method, path below the
// repository, and status.
func calls(srv *fakegithub.Server, since int) []string {
	var out []string
	for _, r := range srv.Requests()[since:] {
		out = append(out, r.Method+" "+strings.TrimPrefix(r.Path, "/repos/octo/widgets/")+" "+itoa(r.Status))
	}
	return out
}

// as runs the action for event on the commits base..head of pull request number, with the
// fake's diff set to that pull request's; it returns the exit code, the log and the requests.
func (pr *pullRequest) as(event string, number int, base, head string) (int, string, []string) {
	pr.t.Helper()
	pr.env["GITHUB_EVENT_NAME"], pr.number, pr.base, pr.head = event, number, base, head
	pr.env["GITHUB_SHA"] = head
	if event == "workflow_run" {
		pr.env["GITHUB_SHA"] = base // a workflow_run runs on the default branch
	}
	if strings.Trim(base, "0") != "" { // a new branch's push has no before
		diff, err := exec.Command("git", "-C", pr.repo.Dir, "diff", "-U3", base, head).Output()
		if err != nil {
			pr.t.Fatal(err)
		}
		pr.srv.Files = fakegithub.FilesFromUnifiedDiff(string(diff))
	}
	pr.srv.Commits[base], pr.srv.Commits[head] = true, true
	since := len(pr.srv.Requests())
	code, out := pr.run()
	return code, out, calls(pr.srv, since)
}

// ownComment is crdguard's comment on a rule's change, on pull request number.
func ownComment(t *testing.T, srv *fakegithub.Server, number int, rule string) int64 {
	t.Helper()
	for _, c := range srv.Comments {
		if c.PR == number && c.InReplyTo == 0 && c.User.Login == srv.Login && strings.Contains(c.Body, "`"+rule+"`") {
			return c.ID
		}
	}
	t.Fatalf("no crdguard comment on %s in #%d", rule, number)
	return 0
}

func expectCalls(t *testing.T, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// acknowledgedSection is the summary's list of acknowledged changes ("" when there is none).
func acknowledgedSection(summary string) string {
	_, after, ok := strings.Cut(summary, "**Acknowledged** (not counted):\n")
	if !ok {
		return ""
	}
	list, _, _ := strings.Cut(after, "\n\n")
	return list
}

// annotated lists a check run's annotations as rule titles.
func annotated(cr *fakegithub.CheckRun) []string {
	var out []string
	for _, a := range cr.Annotations {
		out = append(out, a.AnnotationLevel+" "+a.Title)
	}
	return out
}

// A MEMBER's reply acknowledges the change of the comment it answers, and only it: the other
// change still fails the pull request. The check run's summary says who acknowledged what, and
// why. A re-run keeps the acknowledgement; a CONTRIBUTOR's reply and a reply without a reason
// acknowledge nothing (the CONTRIBUTOR gets one answer, the reply without reason none); a change
// pushed later is not covered.
func TestReplyAcknowledgesOneChange(t *testing.T) {
	pr := newPullRequest(t)
	base, head := pr.base, pr.head
	if code, out, _ := pr.as("pull_request", 42, base, head); code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	removed, lowered := ownComment(t, pr.srv, 42, "field-removed"), ownComment(t, pr.srv, 42, "max-decreased")
	pr.srv.ReplyAs(removed, "maria", "MEMBER", "/crdguard acknowledge name moved to .spec.displayName in v2; announced in v1.4\n\nSee the migration guide.")

	// The reply triggers the workflow (pull_request_review_comment), whose payload carries the
	// pull request as pull_request does.
	rerun := func(wantCalls []string) *fakegithub.CheckRun {
		t.Helper()
		code, out, got := pr.as("pull_request_review_comment", 42, base, head)
		if code != ExitFindings {
			t.Fatalf("exit %d\n%s", code, out)
		}
		expectCalls(t, got, wantCalls)
		cr := pr.completed(head)
		if cr.Conclusion != "failure" || !reflect.DeepEqual(annotated(cr), []string{"failure max-decreased: widgets.example.com v1 .spec.size"}) {
			t.Fatalf("check run %s with %q", cr.Conclusion, annotated(cr))
		}
		return cr
	}
	// The first run after the reply marks the thread: crdguard answers that it acknowledged.
	cr := rerun([]string{"POST check-runs 201", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200",
		"POST pulls/42/comments 201", "GET pulls/42/comments 200", "GET pulls/42/reviews 200", "PATCH check-runs/1006 200"})
	if answer := pr.srv.Comments[len(pr.srv.Comments)-1]; answer.InReplyTo != removed || answer.Body != "**crdguard**: Acknowledged: change `"+changeOf(t, pr.srv, removed)+
		"` no longer fails the check, on this pull request, in the merge queue and on the push of its merge. A change pushed later is not covered. The check run's summary lists it with the reason.\n<!-- crdguard:answered=1005 -->" {
		t.Fatalf("answer %+v", answer)
	}
	wantAck := "\n- error `field-removed` widgets.example.com v1 .spec.name (change `" + changeOf(t, pr.srv, removed) + "`): by @\u200bmaria (MEMBER) on #\u200b42 — name moved to .spec.displayName in v2; announced in v1.4"
	if got := acknowledgedSection(cr.Summary); got != wantAck {
		t.Fatalf("acknowledged section:\n%q\nwant\n%q", got, wantAck)
	}

	// A CONTRIBUTOR may not; crdguard answers once. A MEMBER's reply without reason does nothing.
	contributor := pr.srv.ReplyAs(lowered, "octocat", "CONTRIBUTOR", "/crdguard acknowledge nobody uses more than 5")
	pr.srv.ReplyAs(lowered, "maria", "MEMBER", "/crdguard acknowledge")
	cr = rerun([]string{"POST check-runs 201", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200",
		"POST pulls/42/comments 201", "GET pulls/42/comments 200", "GET pulls/42/reviews 200", "PATCH check-runs/1010 200"})
	if got := acknowledgedSection(cr.Summary); got != wantAck {
		t.Fatalf("acknowledged section after the refused replies:\n%q", got)
	}
	answer := pr.srv.Comments[len(pr.srv.Comments)-1]
	if answer.InReplyTo != lowered || answer.Body != "**crdguard**: This reply acknowledges nothing: only people with write access to the repository (owners, members, collaborators) may acknowledge a change, and GitHub lists its author as CONTRIBUTOR. Ask a maintainer to reply `/crdguard acknowledge <reason>`.\n<!-- crdguard:answered="+itoa(int(contributor))+" -->" {
		t.Fatalf("answer %+v", answer)
	}
	rerun([]string{"POST check-runs 201", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200",
		"GET pulls/42/comments 200", "GET pulls/42/reviews 200", "PATCH check-runs/1012 200"})

	// A later push removes another field: a new change, which the reply does not cover.
	pr.repo.Checkout(mustHash(t, head))
	pr.repo.Write("config/crd/widgets.yaml", []byte(strings.Replace(readFile(t, pr.repo.Dir+"/config/crd/widgets.yaml"),
		"                color:\n                  type: string\n                  description: Colour of the widget.\n", "", 1)))
	later := pr.repo.Commit("drop color too").String()
	code, out, _ := pr.as("pull_request", 42, base, later)
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	cr = pr.completed(later)
	if got := annotated(cr); !reflect.DeepEqual(got, []string{"failure max-decreased: widgets.example.com v1 .spec.size", "failure field-removed: widgets.example.com v1 .spec.color"}) {
		t.Fatalf("annotations after the later push: %q\n%s", got, out)
	}
	if got := acknowledgedSection(cr.Summary); got != wantAck {
		t.Fatalf("acknowledged section after the later push:\n%q", got)
	}
}

// changeOf is the change ID a crdguard comment carries.
func changeOf(t *testing.T, srv *fakegithub.Server, id int64) string {
	t.Helper()
	for _, c := range srv.Comments {
		if c.ID == id {
			_, after, ok := strings.Cut(c.Body, "<!-- crdguard:change=")
			if ok && len(after) >= 12 {
				return after[:12]
			}
		}
	}
	t.Fatalf("comment %d carries no change", id)
	return ""
}

// queue builds a merge group of two pull requests on the example's base, merged by rebase (the
// commits carry no pull request number): #41 removes .spec.name, #42 lowers the maximum of
// .spec.size. It returns the two commits; the queue's branch of #41 ends at the first, #42's
// (the group's own) at the second.
func queue(t *testing.T, pr *pullRequest) (first, second string) {
	t.Helper()
	pr.repo.Checkout(mustHash(t, pr.base))
	crd := readFile(t, pr.repo.Dir+"/config/crd/widgets.yaml")
	pr.repo.Write("config/crd/widgets.yaml", []byte(strings.Replace(crd,
		"                name:\n                  type: string\n                  description: Display name.\n", "", 1)))
	first = pr.repo.Commit("Drop .spec.name").String()
	pr.repo.Copy("config/crd/widgets.yaml", "../../testdata/action/pr/head.yaml")
	second = pr.repo.Commit("Lower the size limit").String()
	return first, second
}

// queueBranches are the merge queue's branches GitHub lists for a group of #41 (up to first)
// and #42 (up to head), on base.
func queueBranches(base, first, head string) map[string]string {
	return map[string]string{
		"refs/heads/gh-readonly-queue/main/pr-41-" + base:  first,
		"refs/heads/gh-readonly-queue/main/pr-42-" + base:  head,
		"refs/heads/gh-readonly-queue/main-2/pr-7-" + base: base, // another branch's queue
	}
}

// A merge group applies the acknowledgements of the pull requests in it, read from GitHub as
// the pull request run reads them: the label of a group of one, replies by change. In a group
// of several (found from the queue's branches, merged by rebase: no commit names its pull
// request), each change is acknowledged by the pull request that brought it, by reply or label:
// the label of one pull request does not cover another's change.
func TestMergeGroup(t *testing.T) {
	type reply struct {
		pr   int
		rule string
	}
	several := []string{"POST check-runs 201", "GET git/matching-refs/heads/gh-readonly-queue/main 200", "GET issues/41/labels 200", "GET /user 403", "GET pulls/41/comments 200",
		"GET issues/42/labels 200", "GET pulls/42/comments 200", "PATCH check-runs/1001 200"}
	for _, tc := range []struct {
		name    string
		several bool
		// gone drops the queue branch of #41 (merged meanwhile): its commits join #42's.
		gone bool
		// refsStatus is the answer to listing the queue's branches instead of the list.
		refsStatus int
		labels     map[int][]string
		replies    []reply
		code       int
		conclusion string
		title      string
		calls      []string
		acked      []string
		// brought are the summary's lines saying who brings each change still counted (rule: who).
		brought []string
	}{
		{name: "one pull request, labelled", labels: map[int][]string{42: {"area/api", ackLabel}}, code: ExitOK, conclusion: "neutral",
			title: "Breaking CRD changes acknowledged (2 breaking changes, 0 warnings)",
			calls: []string{"POST check-runs 201", "GET git/matching-refs/heads/gh-readonly-queue/main 200", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200", "PATCH check-runs/1001 200"}},
		{name: "one pull request, not acknowledged", labels: map[int][]string{42: {"area/api"}}, code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 2 breaking changes, 0 warnings",
			calls: []string{"POST check-runs 201", "GET git/matching-refs/heads/gh-readonly-queue/main 200", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200", "PATCH check-runs/1001 200"}},
		{name: "several, every pull request labelled", several: true, labels: map[int][]string{41: {ackLabel}, 42: {ackLabel}}, code: ExitOK, conclusion: "neutral",
			title: "Breaking CRD changes acknowledged (2 breaking changes, 0 warnings)", calls: several,
			brought: []string{"field-removed: \\#\u200b41 (its label acknowledges it)", "max-decreased: \\#\u200b42 (its label acknowledges it)"}},
		{name: "several, only the first labelled", several: true, labels: map[int][]string{41: {ackLabel}}, code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 2 breaking changes, 0 warnings", calls: several,
			brought: []string{"field-removed: \\#\u200b41 (its label acknowledges it)", "max-decreased: \\#\u200b42 (not acknowledged)"}},
		// The group's own pull request (head_ref) does not cover the change the other one brought.
		{name: "several, only the group's own pull request labelled", several: true, labels: map[int][]string{42: {ackLabel}}, code: ExitFindings, conclusion: "failure",
			title: "Breaking CRD changes: 2 breaking changes, 0 warnings", calls: several,
			brought: []string{"field-removed: \\#\u200b41 (not acknowledged)", "max-decreased: \\#\u200b42 (its label acknowledges it)"}},
		{name: "several, one labelled, the other's change acknowledged by reply", several: true, labels: map[int][]string{41: {ackLabel}}, replies: []reply{{42, "max-decreased"}},
			code: ExitOK, conclusion: "neutral", title: "Breaking CRD changes acknowledged (1 breaking change, 0 warnings)",
			calls: append(append([]string{}, several[:len(several)-1]...), "PATCH check-runs/1008 200"), acked: []string{"max-decreased on #\u200b42"},
			brought: []string{"field-removed: \\#\u200b41 (its label acknowledges it)"}},
		{name: "several, each change acknowledged by reply on its pull request", several: true, replies: []reply{{41, "field-removed"}, {42, "max-decreased"}},
			code: ExitOK, conclusion: "success", title: "No breaking CRD changes (1 CRD compared; 2 changes acknowledged)",
			calls: append(append([]string{}, several[:len(several)-1]...), "PATCH check-runs/1009 200"),
			acked: []string{"field-removed on #\u200b41", "max-decreased on #\u200b42"}},
		{name: "several, one change acknowledged by reply", several: true, replies: []reply{{42, "max-decreased"}},
			code: ExitFindings, conclusion: "failure", title: "Breaking CRD changes: 1 breaking change, 0 warnings (1 acknowledged)",
			calls: append(append([]string{}, several[:len(several)-1]...), "PATCH check-runs/1008 200"),
			acked: []string{"max-decreased on #\u200b42"}, brought: []string{"field-removed: \\#\u200b41 (not acknowledged)"}},
		{name: "the first's queue branch gone: the group's pull request must cover both", several: true, gone: true, labels: map[int][]string{41: {ackLabel}},
			code: ExitFindings, conclusion: "failure", title: "Breaking CRD changes: 2 breaking changes, 0 warnings",
			calls: []string{"POST check-runs 201", "GET git/matching-refs/heads/gh-readonly-queue/main 200", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200", "PATCH check-runs/1001 200"}},
		{name: "the queue's branches cannot be read: nothing but the configuration acknowledges", several: true, refsStatus: 403,
			labels: map[int][]string{41: {ackLabel}, 42: {ackLabel}}, code: ExitFindings, conclusion: "failure", title: "Breaking CRD changes: 2 breaking changes, 0 warnings",
			calls: []string{"POST check-runs 201", "GET git/matching-refs/heads/gh-readonly-queue/main 403", "PATCH check-runs/1001 200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			pr.srv.RefsStatus = tc.refsStatus
			base, head := pr.base, pr.head
			first := ""
			if tc.several {
				first, head = queue(t, pr)
			}
			pr.srv.Refs = queueBranches(base, first, head)
			if !tc.several || tc.gone {
				delete(pr.srv.Refs, "refs/heads/gh-readonly-queue/main/pr-41-"+base)
			}
			if len(tc.replies) > 0 {
				// Each pull request ran crdguard first, which commented on its own change.
				for _, n := range []int{41, 42} {
					from, to := base, first
					if n == 42 {
						from, to = first, head
					}
					if code, out, _ := pr.as("pull_request", n, from, to); code != ExitFindings {
						t.Fatalf("#%d: exit %d\n%s", n, code, out)
					}
				}
				for _, r := range tc.replies {
					pr.srv.ReplyAs(ownComment(t, pr.srv, r.pr, r.rule), "maria", "MEMBER", "/crdguard acknowledge planned in #"+itoa(r.pr))
				}
			}
			pr.srv.PRLabels = tc.labels
			code, out, got := pr.as("merge_group", 42, base, head)
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, out)
			}
			expectCalls(t, got, tc.calls)
			cr := pr.completed(head)
			if cr.Conclusion != tc.conclusion || cr.Title != tc.title {
				t.Fatalf("check run %s %q\n%s", cr.Conclusion, cr.Title, out)
			}
			var acked []string
			for _, l := range strings.Split(acknowledgedSection(cr.Summary), "\n") {
				if rule, _, ok := strings.Cut(strings.TrimPrefix(l, "- error `"), "`"); ok {
					_, on, _ := strings.Cut(l, " (MEMBER) ")
					on, _, _ = strings.Cut(on, " — ")
					acked = append(acked, rule+" "+on)
				}
			}
			if !reflect.DeepEqual(acked, tc.acked) {
				t.Fatalf("acknowledged %q, want %q\n%s", acked, tc.acked, cr.Summary)
			}
			var brought []string
			if _, after, ok := strings.Cut(cr.Summary, "**Which pull request brings what**:\n"); ok {
				list, _, _ := strings.Cut(after, "\n\n")
				for _, l := range strings.Split(strings.TrimPrefix(list, "\n"), "\n") {
					rule, _, _ := strings.Cut(strings.TrimPrefix(l, "- error `"), "`")
					_, who, _ := strings.Cut(l, "`): ")
					brought = append(brought, rule+": "+who)
				}
			}
			if !reflect.DeepEqual(brought, tc.brought) {
				t.Fatalf("brought %q, want %q\n%s", brought, tc.brought, cr.Summary)
			}
		})
	}
}

// A push is judged with the acknowledgements of the pull request it merged (GET
// …/commits/{sha}/pulls: merged, with that merge commit); a direct push by the configuration
// alone. The check run and its annotations go on the pushed commit.
func TestPush(t *testing.T) {
	for _, tc := range []struct {
		name   string
		merged bool
		// mergedElsewhere: GitHub lists the pull request for the commit, but its merge commit is another.
		mergedElsewhere bool
		labels          []string
		code            int
		conclusion      string
		calls           []string
	}{
		{name: "merge of an acknowledged pull request", merged: true, labels: []string{ackLabel}, code: ExitOK, conclusion: "neutral",
			calls: []string{"POST check-runs 201", "GET commits/HEAD/pulls 200", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200", "PATCH check-runs/1001 200"}},
		{name: "merge of a pull request without acknowledgement", merged: true, code: ExitFindings, conclusion: "failure",
			calls: []string{"POST check-runs 201", "GET commits/HEAD/pulls 200", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200", "PATCH check-runs/1001 200"}},
		{name: "a pull request that contains the commit but did not merge it", merged: true, mergedElsewhere: true, labels: []string{ackLabel}, code: ExitFindings, conclusion: "failure",
			calls: []string{"POST check-runs 201", "GET commits/HEAD/pulls 200", "PATCH check-runs/1001 200"}},
		{name: "direct push", labels: []string{ackLabel}, code: ExitFindings, conclusion: "failure",
			calls: []string{"POST check-runs 201", "GET commits/HEAD/pulls 200", "PATCH check-runs/1001 200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRequest(t)
			pr.srv.PRLabels = map[int][]string{42: tc.labels}
			if tc.merged {
				at := "2026-01-05T11:00:00Z"
				merge := pr.head
				if tc.mergedElsewhere {
					merge = "2222222222222222222222222222222222222222"
				}
				pr.srv.PullRequests = map[int]*fakegithub.PullRequest{42: {Number: 42, State: "closed", Merged: true, MergedAt: &at, MergeCommitSHA: merge,
					Head: fakegithub.Branch{Ref: "drop-name", SHA: "1111111111111111111111111111111111111111"}, Base: fakegithub.Branch{Ref: "main", SHA: pr.base}}}
				pr.srv.CommitPulls = map[string][]int{pr.head: {42}}
			}
			code, out, got := pr.as("push", 0, pr.base, pr.head)
			if code != tc.code {
				t.Fatalf("exit %d\n%s", code, out)
			}
			for i := range tc.calls {
				tc.calls[i] = strings.Replace(tc.calls[i], "HEAD", pr.head, 1)
			}
			expectCalls(t, got, tc.calls)
			cr := pr.completed(pr.head)
			if cr.Conclusion != tc.conclusion || len(cr.Annotations) != 2 || len(pr.srv.Reviews) != 0 {
				t.Fatalf("check run %s with %d annotations, %d reviews\n%s", cr.Conclusion, len(cr.Annotations), len(pr.srv.Reviews), out)
			}
		})
	}
}

// A fork's pull request: the pull_request run has a read-only token (403 on every write), still
// fails the job, writes the report with the pull request's number and commits, and says how to
// post (the workflow_run run that follows: TestWorkflowRunTrustsOnlyGitHub).
func TestForkTwoWorkflows(t *testing.T) {
	pr := newPullRequest(t)
	pr.fork = true
	pr.srv.ReadOnly = true
	code, out, got := pr.as("pull_request", 42, pr.base, pr.head)
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	expectCalls(t, got, []string{"POST check-runs 403", "GET issues/42/labels 200", "GET /user 403", "GET pulls/42/comments 200",
		"GET pulls/42/comments 200", "GET pulls/42/reviews 200", "POST pulls/42/reviews 403"})
	var rep struct {
		PullRequest map[string]any `json:"pullRequest"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(pr.repo.Dir, ReportFile))), &rep); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"number": float64(42), "base": pr.base, "head": pr.head}; !reflect.DeepEqual(rep.PullRequest, want) {
		t.Fatalf("report's pullRequest %v, want %v", rep.PullRequest, want)
	}
	hint := "crdguard: " + forkHint(42)
	if !slices.Contains(strings.Split(out, "\n"), hint) {
		t.Fatalf("the log does not say how to post:\n%s", out)
	}

}

// A build from the action's source has no version of its own: the action's tag (the runner's
// GITHUB_ACTION_REF) is the SARIF log's tool version; a branch ref is not a version, and the
// SARIF log then has none rather than "(devel)".
func TestVersionFromTheActionsRef(t *testing.T) {
	saved := report.Version
	t.Cleanup(func() { report.Version = saved })
	for _, tc := range []struct{ ref, want string }{{"main", ""}, {"v1.2.3", "v1.2.3"}} {
		report.Version = "(devel)"
		pr := newPullRequest(t)
		pr.env["GITHUB_ACTION_REF"], pr.env["INPUT_SARIF"], pr.env["INPUT_COMMENT"] = tc.ref, "crdguard.sarif", "off"
		if code, out := pr.run(); code != ExitFindings {
			t.Fatalf("exit %d\n%s", code, out)
		}
		pr.completed(pr.head)
		var log struct {
			Runs []struct {
				Tool struct {
					Driver map[string]any `json:"driver"`
				} `json:"tool"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(pr.repo.Dir, "crdguard.sarif"))), &log); err != nil {
			t.Fatal(err)
		}
		got, _ := log.Runs[0].Tool.Driver["version"].(string)
		if got != tc.want {
			t.Errorf("ref %q: SARIF tool version %q, want %q", tc.ref, got, tc.want)
		}
	}
}
