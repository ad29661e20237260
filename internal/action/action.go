// Package action runs crdguard as a GitHub Action: it reads the event and the inputs, compares
// the pull request's commits in git mode, and reports through a review, a check run, workflow
// commands, the step summary and the outputs. Every finding reaches at least one of them even
// when GitHub refuses a request.
package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/github"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// DefaultCheckName is the check run's default name: distinctive, so that it is not confused with
// the job's own check (named after the job) when choosing the required check.
const DefaultCheckName = "CRD compatibility (crdguard)"

// ReportFile is the JSON report written into the workspace (the `report` output).
const ReportFile = "crdguard-report.json"

// Exit codes, as for the CLI.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitTool     = 2
)

// Options are the action's surroundings; tests replace them.
type Options struct {
	// Getenv reads the environment (GITHUB_*, INPUT_*).
	Getenv func(string) string
	// Stdout receives the log and workflow commands.
	Stdout io.Writer
	// Transport sends API requests (http.DefaultTransport when nil); retries wrap it.
	Transport http.RoundTripper
	// Sleep waits between retries (github.RealSleep when nil).
	Sleep github.Sleeper
	// Now is the clock retries and the spacing of writes read (time.Now when nil).
	Now func() time.Time
}

// inputs are the action.yml inputs.
type inputs struct {
	token, config, comment, checkName string
	failOn                            policy.FailOn
	base, head                        string // override the event's commits
	sarif                             string // also write a SARIF log here
	changelog                         string // also write the changelog (Markdown release notes) here
	pullRequest                       string // a workflow_run run posts for this pull request
	paths, baselines                  []string
	checkRun                          bool
	cluster                           clusterInputs
}

// readInputs reads the inputs. The token, check-name and check-run are read even when another
// input is wrong, so that the check run can still report the mistake.
func readInputs(gha *githubactions.Action) (inputs, error) {
	in := inputs{
		token: gha.GetInput("github-token"), config: gha.GetInput("config"),
		comment:   orDefault(gha.GetInput("comment"), "review"),
		checkName: orDefault(gha.GetInput("check-name"), DefaultCheckName),
		paths:     list(gha.GetInput("paths")), baselines: list(gha.GetInput("baselines")),
		base: gha.GetInput("base"), head: gha.GetInput("head"), sarif: gha.GetInput("sarif"), changelog: gha.GetInput("changelog"),
		pullRequest: gha.GetInput("pull-request"),
		checkRun:    true,
	}
	switch v := orDefault(gha.GetInput("check-run"), "true"); v {
	case "true":
	case "false":
		in.checkRun = false
	default:
		return in, fmt.Errorf("input check-run: %q is not allowed (allowed: true, false)", v)
	}
	var err error
	if in.cluster, err = readClusterInputs(gha); err != nil {
		return in, err
	}
	if in.failOn, err = policy.ParseFailOn(orDefault(gha.GetInput("fail-on"), "error")); err != nil {
		return in, fmt.Errorf("input fail-on: %w", err)
	}
	if !slices.Contains([]string{"review", "annotations", "off"}, in.comment) {
		return in, fmt.Errorf("input comment: %q is not allowed (allowed: review, annotations, off)", in.comment)
	}
	return in, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// list splits an input on newlines and commas.
func list(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == ',' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// run holds one run's state.
type run struct {
	o      Options
	gha    *githubactions.Action
	out    io.Writer
	in     inputs
	target target
	// fallback is set when GitHub refused the token: workflow commands carry the findings.
	fallback bool
	// pub is nil without a usable token; check is the open check run (ID 0: none).
	pub   *github.Publisher
	check github.Check
	// checkRefused says GitHub refused to create the check run.
	checkRefused bool
}

func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(r.out, "crdguard: "+format+"\n", args...)
}

// Run is the whole action; it returns the process exit code. The check run is created before
// anything that can fail, and completed on every path, panics included: a required check left
// open blocks the pull request.
func Run(ctx context.Context, o Options) (code int) {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	r := &run{o: o, out: o.Stdout}
	// `uses: owner/crdguard@v1.2.3` with `image: Dockerfile` builds the image from the action's
	// source, where the Go toolchain knows no version: the runner names the action's ref.
	if ref := o.Getenv("GITHUB_ACTION_REF"); !report.IsVersion(report.Version) && report.IsVersion(ref) {
		report.Version = ref
	}
	r.gha = githubactions.New(githubactions.WithGetenv(o.Getenv), githubactions.WithWriter(o.Stdout))
	in, inErr := readInputs(r.gha)
	r.in = in
	if in.token != "" {
		r.gha.AddMask(in.token)
	}
	if state := o.Getenv("STATE_" + checkRunState); state != "" {
		return r.post(ctx, state)
	}
	if o.Getenv("GITHUB_EVENT_NAME") == "issue_comment" && in.base == "" {
		// Refused before anything is created: an issue_comment run is on the default branch's
		// commit, where a check run would say nothing about the pull request.
		r.gha.Errorf("%s", issueCommentRefusal)
		return ExitTool
	}
	evErr := r.readTarget()
	if why := notAPullRequestRun(r.target.run); why != "" {
		// Refused before anything is created: a check run on that commit would replace the
		// verdict its own run posted.
		r.gha.Errorf("%s", why)
		return ExitTool
	}
	if r.target.nothingToCompare == "" {
		// A commit with nothing new to compare gets no check run: it was checked where it came
		// from, and may be an open pull request's head, whose verdict a success here would replace.
		r.startCheck(ctx, r.checkSHA())
	}
	defer func() {
		if p := recover(); p != nil {
			r.abort(ctx, fmt.Errorf("internal error: %v", p))
			code = ExitTool
		}
	}()
	code, err := r.run(ctx, errors.Join(inErr, evErr))
	if err != nil {
		r.abort(ctx, err)
		return ExitTool
	}
	return code
}

// readTarget reads what to compare from the inputs or the event.
func (r *run) readTarget() error {
	if r.in.base != "" {
		// Explicit refs: compare them and report by check run and annotations only.
		r.target = target{base: r.in.base, head: orDefault(r.in.head, "HEAD")}
		return nil
	}
	t, err := readEvent(r.o.Getenv("GITHUB_EVENT_NAME"), r.o.Getenv("GITHUB_EVENT_PATH"))
	r.target = t
	return err
}

// checkSHA is the commit the check run reports on: the event's head, else the commit the
// workflow runs on; "" when neither is known yet (explicit refs outside Actions).
func (r *run) checkSHA() string {
	if fullSHA.MatchString(r.target.head) {
		return r.target.head
	}
	return r.o.Getenv("GITHUB_SHA")
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// abort reports an error that stopped the run, in the log and in the check run.
func (r *run) abort(ctx context.Context, err error) {
	r.gha.Errorf("crdguard could not run: %s", err)
	r.finish(ctx, github.Failure, github.CheckOutput{Title: "crdguard could not run", Summary: "crdguard stopped before it could compare the commits:\n\n" + report.Escape(err.Error())})
}

func (r *run) run(ctx context.Context, setupErr error) (int, error) {
	getenv := r.o.Getenv
	in := r.in
	if setupErr != nil {
		return 0, setupErr
	}
	workspace := orDefault(getenv("GITHUB_WORKSPACE"), ".")
	cfg, err := loadConfig(workspace, in.config)
	if err != nil {
		return 0, err
	}
	if len(in.paths) > 0 {
		cfg.Paths = in.paths
	}
	filter := cfg.Filter()
	if err := filter.Validate(); err != nil {
		return 0, fmt.Errorf("paths: %w", err)
	}
	if r.target.run != nil && r.target.pr == 0 {
		why, err := r.pullRequestOfRun(ctx)
		if err != nil {
			return 0, err
		}
		if why != "" {
			return r.noVerdict(ctx, why), nil
		}
	}
	if r.target.nothingToCompare != "" {
		r.logf("%s; no check run is posted on %s (its own checks stand)", r.target.nothingToCompare, abbrev(r.target.head))
		r.outputs(workspace, nil, "pass")
		return ExitOK, nil
	}

	repo, err := source.OpenRepo(workspace)
	if err != nil {
		return 0, err
	}
	defer repo.Close()
	repo.Token, repo.InActions, repo.PullRequest = in.token, true, r.target.pr
	head, err := repo.Commit(r.target.head)
	if err != nil {
		return 0, fmt.Errorf("head: %w", err)
	}
	r.target.head = head.Hash.String()
	r.startCheck(ctx, r.target.head)
	if err := r.newBranchBase(head); err != nil {
		return 0, err
	}
	pub := r.pub
	opts := check.GitOptions{
		Base: r.target.base, Head: r.target.head, Filter: filter, Samples: cfg.Samples, KubernetesVersion: cfg.KubernetesMinor(), OLM: cfg.Delivery.OLM,
		Baselines: append(append([]string{}, cfg.Baselines...), in.baselines...), Direct: r.target.forced,
	}
	stop, err := in.cluster.apply(ctx, &opts)
	if err != nil {
		return 0, err
	}
	defer stop()
	res, err := check.Git(repo, opts)
	if err != nil {
		return 0, err
	}
	out := cfg.Apply(res.Findings)
	notices := check.Notices(res.Notices, out.Notices)
	for _, n := range notices {
		r.gha.Noticef("%s", n)
	}
	dec := policy.Decide(out.Findings, in.failOn, r.acknowledgements(ctx, cfg, repo, opts, res))
	for _, n := range dec.Notes {
		r.logf("%s", n)
	}
	r.answer(ctx, dec.Answers)
	findings := dec.Findings
	acks := append(append([]policy.Acknowledged{}, out.Acknowledged...), dec.Acknowledged...)
	rep := report.Report{Findings: findings, CRDs: res.CRDs, Ignored: out.Ignored, Notices: notices,
		Compared: &report.Compared{Base: res.Base, Head: res.Head, MergeBase: res.MergeBase, Forced: r.target.forced}, Acknowledged: acks, Root: absOr(workspace)}

	if r.target.pr != 0 {
		rep.PullRequest = &report.PullRequest{Number: r.target.pr, Base: r.target.base, Head: r.target.head}
	}
	fails, acknowledged := dec.Fails, dec.ByLabel
	rep.Verdict = &report.Verdict{Fails: fails, Acknowledged: acknowledged, Label: cfg.AcknowledgeLabel, Run: r.target.kind}
	conclusion, title, headline := verdict(rep, fails, acknowledged, cfg.AcknowledgeLabel, r.target.kind, countChanges(dec.Acknowledged))
	summary, text := github.Summary(rep, strings.TrimLeft(headline+acknowledgedList(acks)+r.broughtList(dec.Brought), "\n"))

	// A refused check run does not stop the review: a personal token may post reviews but not
	// check runs. A fork's read-only token is refused both, once each.
	if in.comment == "review" && r.target.pr != 0 && pub != nil {
		rr, err := pub.Review(ctx, github.PR{Number: r.target.pr, HeadSHA: r.target.head}, findings, res.Diff)
		switch {
		case github.IsForbidden(err):
			r.refused("posting the review", err)
		case err != nil:
			r.logf("the review could not be posted (%v); the findings are in the check run, the annotations and the step summary", err)
			r.fallback = true
		default:
			r.logf("review: %d inline, %d on files, %d in the body, %d already posted, %d outdated deleted, %d kept (replied to)",
				rr.Inline, rr.FileLevel, rr.InBody, rr.AlreadyPosted, rr.Deleted, rr.KeptWithReplies)
		}
	}
	r.finish(ctx, conclusion, github.CheckOutput{Title: title, Summary: summary, Text: text, Annotations: github.Annotations(findings)})
	if in.comment == "annotations" || r.fallback {
		if err := report.Workflow(r.out, report.Report{Findings: findings, CRDs: res.CRDs}); err != nil {
			return 0, err
		}
	}
	result := "pass"
	if fails && !acknowledged {
		result = "fail"
	}
	for _, file := range []struct{ path, format string }{{in.sarif, "sarif"}, {in.changelog, "changelog"}} {
		if file.path == "" {
			continue
		}
		if err := writeReport(workspace, file.path, file.format, rep); err != nil {
			r.logf("could not write the %s file %s: %v", file.format, file.path, err)
		}
	}
	if getenv("GITHUB_STEP_SUMMARY") != "" {
		r.gha.AddStepSummary(github.StepSummary(rep, headline))
	}
	r.outputs(workspace, &rep, result)
	if r.fallback && r.target.pr != 0 {
		r.logf("%s", forkHint(r.target.pr))
	}
	r.logf("%s", title)
	if result == "fail" {
		return ExitFindings, nil
	}
	return ExitOK, nil
}

// startCheck creates the API clients and the in-progress check run on sha, once; a token that
// may not (forks, PATs) switches the run to workflow-command annotations.
func (r *run) startCheck(ctx context.Context, sha string) {
	if r.pub == nil && !r.fallback {
		r.pub = r.newPublisher()
	}
	if r.pub == nil || !r.in.checkRun || r.check.ID != 0 || sha == "" || r.checkRefused {
		return
	}
	id, err := r.pub.API.CreateCheckRun(ctx, r.in.checkName, sha)
	if err != nil {
		r.checkRefused = true // once: a token that may not create it will not on the next try
		r.refused("creating the check run", err)
		return
	}
	r.check = github.Check{ID: id, Name: r.in.checkName}
	if r.o.Getenv("GITHUB_STATE") != "" { // go-githubactions panics without it
		r.gha.SaveState(checkRunState, fmt.Sprintf("%d %s", id, r.in.checkName))
	}
}

// checkRunState is the state the main step leaves for the post step: the check run's ID and name.
const checkRunState = "check-run"

// post is the post step (action.yml post-entrypoint): it completes the check run the main step
// left open — a cancelled job, a killed process — as cancelled, so that the required check says
// crdguard did not finish instead of waiting for ever.
func (r *run) post(ctx context.Context, state string) int {
	idText, name, _ := strings.Cut(state, " ")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || name == "" {
		r.logf("post step: unreadable state %q", state)
		return ExitOK
	}
	if r.pub = r.newPublisher(); r.pub == nil {
		return ExitOK
	}
	status, err := r.pub.Completer.CheckRunStatus(ctx, id)
	if err != nil || status == "completed" {
		if err != nil {
			r.logf("post step: %v", err)
		}
		return ExitOK
	}
	r.check = github.Check{ID: id, Name: name}
	r.finish(ctx, github.Cancelled, github.CheckOutput{Title: "crdguard did not finish",
		Summary: "The job was cancelled, or crdguard stopped, before it completed this check run. Re-run the job to check the commit."})
	r.logf("post step: completed the check run %q that the main step left open", name)
	return ExitOK
}

// newPublisher returns the GitHub client, or nil when there is no usable token. The completing
// request gets a client and a wait budget of its own.
func (r *run) newPublisher() *github.Publisher {
	getenv := r.o.Getenv
	apiURL := orDefault(getenv("GITHUB_API_URL"), "https://api.github.com")
	pacer := &github.Pacer{} // writes a second apart, whichever client sends them
	client := func(budget time.Duration) (*github.REST, error) {
		t := github.NewRetrying(r.o.Transport, r.o.Sleep)
		t.Budget, t.Pacer = budget, pacer
		if r.o.Now != nil {
			t.Now = r.o.Now
		}
		api, err := github.NewREST(apiURL, getenv("GITHUB_REPOSITORY"), r.in.token, &http.Client{Transport: t})
		if err == nil {
			api.Sleep = t.Sleep
		}
		return api, err
	}
	// Nothing GitHub said: what is missing here is this run's, and saying "GitHub refused"
	// would send the user looking in the wrong place.
	switch {
	case getenv("GITHUB_REPOSITORY") == "":
		r.fallback = true
		r.logf("GITHUB_REPOSITORY is not set (crdguard action runs in a GitHub Actions workflow; locally, use crdguard check --base REF): nothing is posted to GitHub; findings are reported as workflow-command annotations and in the step summary")
		return nil
	case r.in.token == "":
		r.fallback = true
		r.logf("the github-token input is empty: nothing is posted to GitHub; findings are reported as workflow-command annotations and in the step summary")
		return nil
	}
	api, err := client(github.MaxTotalWait)
	if err != nil {
		r.refused("using the GitHub API", err)
		return nil
	}
	completer, err := client(github.CompletionBudget)
	if err != nil {
		r.refused("using the GitHub API", err)
		return nil
	}
	return &github.Publisher{API: api, Completer: completer, Instance: r.in.checkName, Logf: r.logf}
}

// finish completes the open check run, once.
func (r *run) finish(ctx context.Context, conclusion string, out github.CheckOutput) {
	if r.check.ID == 0 {
		return
	}
	c := r.check
	r.check = github.Check{}
	if err := r.pub.FinishCheck(ctx, c, conclusion, out); err != nil {
		if github.IsForbidden(err) {
			r.refused("completing the check run", err)
		} else {
			r.gha.Errorf("the check run %q could not be completed: %s", c.Name, err)
			r.fallback = true
		}
	}
}

func (r *run) refused(what string, err error) {
	r.fallback = true
	hint := ""
	switch {
	case r.target.fork:
		hint = " (pull requests from forks get a read-only token)"
	case strings.Contains(err.Error(), "authenticate via a GitHub App"):
		hint = " (only GitHub Apps may write check runs: use the default GITHUB_TOKEN or a GitHub App's token, not a personal access token)"
	}
	r.logf("GitHub refused %s%s: %v; findings are reported as workflow-command annotations and in the step summary", what, hint, err)
}

// outputs writes the action outputs and the JSON report; without GITHUB_OUTPUT (local runs,
// tests) it only writes the report, since go-githubactions would panic.
func (r *run) outputs(workspace string, rep *report.Report, result string) {
	if rep == nil {
		rep = &report.Report{}
	}
	var buf bytes.Buffer
	if err := report.JSON(&buf, *rep); err == nil {
		if err := writeOwned(workspace, ReportFile, buf.Bytes()); err != nil {
			r.logf("could not write %s: %v", ReportFile, err)
		}
	}
	if r.o.Getenv("GITHUB_OUTPUT") == "" {
		return
	}
	s := report.Summarize(*rep)
	r.gha.SetOutput("result", result)
	r.gha.SetOutput("errors", fmt.Sprint(s.Error))
	r.gha.SetOutput("warnings", fmt.Sprint(s.Warning))
	// Relative to the workspace: later steps do not see the container's /github/workspace.
	r.gha.SetOutput("report", ReportFile)
}

func loadConfig(workspace, input string) (*policy.Config, error) {
	if input != "" && !filepath.IsAbs(input) {
		input = filepath.Join(workspace, input)
	}
	return policy.Find(input, workspace)
}

// verdict picks the check run's conclusion and title; acked counts the changes replies
// acknowledged, which the title mentions (ignore entries are counted in the report).
func verdict(rep report.Report, fails, acknowledged bool, label, kind string, acked int) (conclusion, title, headline string) {
	s := report.Summarize(rep)
	counts := report.Counts(rep)
	also := ""
	if acked > 0 {
		also = fmt.Sprintf(" (%d acknowledged)", acked)
	}
	switch {
	case acknowledged:
		who := "The pull request carries"
		if kind != policy.PullRequestRun {
			who = "Each pull request that brings these changes acknowledged them by reply or carries"
		}
		return github.Neutral, "Breaking CRD changes acknowledged (" + counts + ")",
			who + " the label **" + report.Escape(label) + "**, so these findings do not fail the check."
	case fails:
		return github.Failure, "Breaking CRD changes: " + counts + also, ""
	case s.Error+s.Warning > 0:
		return github.Neutral, "CRD changes to review: " + counts + also, ""
	}
	compared := report.Count(s.CRDs, "CRD") + " compared"
	if acked > 0 {
		compared += "; " + report.Count(acked, "change") + " acknowledged"
	}
	return github.Success, "No breaking CRD changes (" + compared + ")", ""
}

// absOr is path made absolute, or path itself when it cannot be.
func absOr(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// writeReport writes rep in a format to path, relative to the workspace.
func writeReport(workspace, path, format string, rep report.Report) error {
	var buf bytes.Buffer
	if err := report.Write(&buf, format, rep); err != nil {
		return err
	}
	return writeOwned(workspace, path, buf.Bytes())
}
