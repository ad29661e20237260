package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

const token = "ghs_test_token_never_printed"

// sleeps records waits instead of sleeping.
type sleeps struct{ got []time.Duration }

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.got = append(s.got, d)
	return nil
}

func newPublisher(t *testing.T, srv *fakegithub.Server, s *sleeps) *Publisher {
	t.Helper()
	api, err := NewREST(srv.URL, "octo/widgets", token, &http.Client{Transport: NewRetrying(nil, s.sleep)})
	if err != nil {
		t.Fatal(err)
	}
	api.Sleep = s.sleep
	return &Publisher{API: api, Logf: t.Logf}
}

func mk(rule string, sev finding.Severity, path, file string, line int, side finding.Side) finding.Finding {
	return finding.Finding{Rule: rule, Severity: sev, CRD: "widgets.example.com", Version: "v1", Path: path,
		Message: rule + " at " + path, Before: finding.Value("x"), Location: finding.Location{File: file, Line: line, Side: side}}
}

// diffOf builds a Diff where head file lines [from, to] and base lines [bfrom, bto] are shown.
func diffOf(path string, h source.Hunk) *source.Diff {
	d := &source.Diff{}
	d.Add(source.FileDiff{From: path, To: path, Hunks: []source.Hunk{h}, Changes: []source.Hunk{h}}) // every shown line changed
	return d
}

// reviewFixture is a fake GitHub whose pull request changes one file in one hunk, and a
// publisher talking to it.
func reviewFixture(t *testing.T, file string, h source.Hunk) (*fakegithub.Server, *Publisher) {
	t.Helper()
	srv := fakegithub.New(t, token)
	srv.Files[file] = linesOf(h)
	return srv, newPublisher(t, srv, &sleeps{})
}

func linesOf(h source.Hunk) *fakegithub.Lines {
	l := &fakegithub.Lines{Right: map[int]bool{}, Left: map[int]bool{}}
	for i := h.NewStart; i < h.NewStart+h.NewLines; i++ {
		l.Right[i] = true
	}
	for i := h.OldStart; i < h.OldStart+h.OldLines; i++ {
		l.Left[i] = true
	}
	return l
}

func TestReviewPlacesAndIsIdempotent(t *testing.T) {
	h := source.Hunk{OldStart: 10, OldLines: 7, NewStart: 10, NewLines: 8}
	srv, pub := reviewFixture(t, "crd.yaml", h)
	fs := []finding.Finding{
		mk("field-removed", finding.Error, ".spec.a", "crd.yaml", 12, finding.Base),      // inline LEFT
		mk("max-decreased", finding.Error, ".spec.b", "crd.yaml", 15, finding.Head),      // inline RIGHT
		mk("type-changed", finding.Error, ".spec.c", "crd.yaml", 40, finding.Head),       // outside the hunk: file comment
		mk("crd-removed", finding.Error, "", "other.yaml", 4, finding.Base),              // file not in the diff: body
		mk("field-added", finding.Info, ".spec.d", "crd.yaml", 11, finding.Head),         // info: never commented
		mk("map-type-changed", finding.Warning, ".spec.e", "crd.yaml", 13, finding.Head), // warning: inline
		mk("stored-version-removed", finding.Error, "", "crd.yaml", 12, finding.Base),    // from a baseline: body
	}
	fs[len(fs)-1].Baseline = "v1.0.0"
	pr := PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}
	res, err := pub.Review(context.Background(), pr, fs, diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if res.Inline != 3 || res.FileLevel != 1 || res.InBody != 2 {
		t.Fatalf("result %+v", res)
	}
	var inline []string
	for _, c := range srv.Comments {
		switch c.SubjectType {
		case "line":
			inline = append(inline, fmt.Sprintf("%s:%d:%s", c.Path, c.Line, c.Side))
		case "file":
			if c.Path != "crd.yaml" || !strings.Contains(c.Body, "`type-changed`") {
				t.Errorf("file comment %+v", c)
			}
		}
	}
	if got := strings.Join(inline, " "); got != "crd.yaml:12:LEFT crd.yaml:15:RIGHT crd.yaml:13:RIGHT" {
		t.Errorf("inline comments %s", got)
	}
	if len(srv.Reviews) != 1 || srv.Reviews[0].State != "COMMENTED" || !strings.Contains(srv.Reviews[0].Body, "crd-removed") {
		t.Fatalf("reviews %+v", srv.Reviews)
	}
	for _, c := range srv.Comments {
		if !strings.Contains(c.Body, "<!-- crdguard:fp=") || !strings.Contains(c.Body, DefaultDocsURL+"#") {
			t.Errorf("comment lacks fingerprint or doc link: %s", c.Body)
		}
	}

	// A second run with the same findings, moved by a line, posts nothing.
	writes := len(srv.Writes())
	fs[1].Location.Line = 16
	res, err = pub.Review(context.Background(), pr, fs, diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(srv.Writes()); got != writes || res.AlreadyPosted != 6 {
		t.Fatalf("second run wrote %d requests, already posted %d", got-writes, res.AlreadyPosted)
	}

	// Fixed findings: their comments go, except one somebody answered.
	var answered int64
	for _, c := range srv.Comments {
		if strings.Contains(c.Body, "max-decreased") {
			answered = c.ID
		}
	}
	srv.Reply(answered, "We migrate these objects first, see #12.")
	res, err = pub.Review(context.Background(), pr, fs[:1], diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 2 || res.KeptWithReplies != 1 {
		t.Fatalf("result %+v", res)
	}
}

// One comment outside the diff fails the whole review with 422: everything goes to the body.
func TestReviewSurvives422(t *testing.T) {
	srv := fakegithub.New(t, token)
	srv.Files["crd.yaml"] = &fakegithub.Lines{Right: map[int]bool{5: true}, Left: map[int]bool{}} // GitHub's diff is narrower
	pub := newPublisher(t, srv, &sleeps{})
	fs := []finding.Finding{
		mk("field-removed", finding.Error, ".spec.a", "crd.yaml", 5, finding.Head),
		mk("max-added", finding.Error, ".spec.b", "crd.yaml", 6, finding.Head),
	}
	h := source.Hunk{OldStart: 3, OldLines: 6, NewStart: 3, NewLines: 6} // crdguard thinks line 6 is shown
	res, err := pub.Review(context.Background(), PR{7, strings.Repeat("b", 40)}, fs, diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if res.InBody != 2 || len(srv.Reviews) != 1 || len(srv.Comments) != 0 {
		t.Fatalf("result %+v reviews %d comments %d", res, len(srv.Reviews), len(srv.Comments))
	}
	if b := srv.Reviews[0].Body; !strings.Contains(b, "field-removed") || !strings.Contains(b, "max-added") {
		t.Fatalf("body %s", b)
	}
	// And the next run knows both from the body's fingerprints.
	res, _ = pub.Review(context.Background(), PR{7, strings.Repeat("b", 40)}, fs, diffOf("crd.yaml", h))
	if res.AlreadyPosted != 2 || len(srv.Reviews) != 1 {
		t.Fatalf("re-run %+v, %d reviews", res, len(srv.Reviews))
	}
}

// Existing comments span several pages; all are read, so nothing is posted twice.
func TestReviewReadsEveryPage(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 300, NewStart: 1, NewLines: 300}
	srv, pub := reviewFixture(t, "crd.yaml", h)
	var fs []finding.Finding
	for i := 0; i < 250; i++ {
		fs = append(fs, mk("field-removed", finding.Error, fmt.Sprintf(".spec.f%03d", i), "crd.yaml", i+1, finding.Base))
	}
	for i := range 150 { // posted by an earlier run: two pages of 100
		srv.AddComment(fakegithub.Comment{Path: "crd.yaml", Line: i + 1, Side: "LEFT", SubjectType: "line", Body: CommentBody(&fs[i], Fingerprint(&fs[i], ""), DefaultDocsURL)})
	}
	res, err := pub.Review(context.Background(), PR{7, strings.Repeat("c", 40)}, fs, diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if res.AlreadyPosted != 150 || res.Inline != 30 || res.InBody != 70 {
		t.Fatalf("result %+v", res)
	}
	lists := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/comments") {
			lists++
		}
	}
	if lists != 2 {
		t.Errorf("%d list requests, want 2 pages", lists)
	}
}

func TestRetries(t *testing.T) {
	srv := fakegithub.New(t, token)
	s := &sleeps{}
	pub := newPublisher(t, srv, s)
	srv.Inject = []fakegithub.Failure{
		{Status: http.StatusForbidden, Secondary: true, RetryAfter: "3"},
		{Status: http.StatusTooManyRequests},
		{Status: http.StatusBadGateway},
		{Status: http.StatusForbidden, Secondary: true},
	}
	id, err := pub.API.CreateCheckRun(context.Background(), "crdguard", strings.Repeat("d", 40))
	if err != nil || id == 0 {
		t.Fatalf("check run %d, %v", id, err)
	}
	// The 502 is not retried blindly: the API looks for the check run first, then waits a second.
	want := []time.Duration{3 * time.Second, 60 * time.Second, time.Second, 60 * time.Second}
	if fmt.Sprint(s.got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", s.got, want)
	}
	// The request body was sent again each time.
	for _, r := range srv.Writes() {
		if !strings.Contains(string(r.Body), `"name":"crdguard"`) {
			t.Fatalf("retried request lost its body: %s", r.Body)
		}
	}
	// Waiting is bounded: a server that never stops limiting gets an error, not a hang.
	srv.Inject = make([]fakegithub.Failure, 10)
	for i := range srv.Inject {
		srv.Inject[i] = fakegithub.Failure{Status: http.StatusTooManyRequests, RetryAfter: "120"}
	}
	s.got = nil
	if _, err := pub.API.CreateCheckRun(context.Background(), "crdguard", strings.Repeat("d", 40)); err == nil {
		t.Fatal("expected an error after the wait budget")
	}
	var total time.Duration
	for _, d := range s.got {
		total += d
	}
	if total > MaxTotalWait {
		t.Fatalf("waited %v in total", total)
	}
}

func TestReadOnlyToken(t *testing.T) {
	srv := fakegithub.New(t, token)
	srv.ReadOnly = true
	pub := newPublisher(t, srv, &sleeps{})
	_, err := pub.API.CreateCheckRun(context.Background(), "crdguard", strings.Repeat("e", 40))
	if !IsForbidden(err) {
		t.Fatalf("error %v is not forbidden", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatal("the token leaked into an error")
	}
}

func TestCommentBodyIsInert(t *testing.T) {
	f := mk("enum-value-removed", finding.Error, ".spec[\"<img src=x onerror=alert(1)>\"]", "crd.yaml", 3, finding.Base)
	f.Message = "value @admin removed, see [here](https://evil.example)"
	f.Before = finding.Value("<b>@team</b>")
	body := CommentBody(&f, "0123456789abcdef", DefaultDocsURL)
	for _, bad := range []string{"<img", "@admin", "@team", "](https://evil", "<b>"} {
		if strings.Contains(body, bad) {
			t.Errorf("body contains %q:\n%s", bad, body)
		}
	}
}

// Severity and values, cut to maxValueRunes and escaped one by one, in the comment and in the
// summary table.
func TestBeforeAfterIsCutAndEscaped(t *testing.T) {
	f := mk("default-changed", finding.Warning, ".spec.owner", "crd.yaml", 3, finding.Head)
	f.Before = finding.Value("<b>@team</b>")
	f.After = finding.Value(strings.Repeat("x", 300))
	// finding.Value writes < and > as \u003c and \u003e; they are shown as < and >, which
	// Escape turns into entities.
	want := `"&lt;b>@` + "\u200b" + `team&lt;/b>" → "` + strings.Repeat("x", 198) + "…"
	body := CommentBody(&f, "0123456789abcdef", DefaultDocsURL)
	if !strings.HasPrefix(body, "**crdguard** warning `default-changed`") || !strings.Contains(body, "**Before → after:** "+want+"\n") {
		t.Errorf("comment body lacks the severity or %q:\n%s", want, body)
	}
	// The summary cuts values shorter, where they differ, with the full values in a details block.
	wantRow := `| ⚠️ warning | ` + "`default-changed`" + ` | v1 | .spec.owner | "&lt;b>@` + "\u200b" + `team&lt;/b>" → "` + strings.Repeat("x", 78) + "…"
	wantFull := `After: "` + strings.Repeat("x", 300) + `"`
	if sum, text := Summary(report.Report{Findings: []finding.Finding{f}, CRDs: 1}, ""); !strings.Contains(sum, wantRow) || !strings.Contains(sum, wantFull) || text != "" {
		t.Errorf("summary lacks %q or %q, or the text holds some of it (%q):\n%s", wantRow, wantFull, text, sum)
	}
}

// Volume: file-level comments cost a request each and are capped like inline ones (the rest is in
// the review body), and one field failing in two sample files is two comments, not one.
func TestReviewVolume(t *testing.T) {
	srv := fakegithub.New(t, token)
	h := source.Hunk{OldStart: 1, OldLines: 5, NewStart: 1, NewLines: 5}
	srv.Files["crd.yaml"] = linesOf(h)
	srv.Files["samples/a.yaml"] = linesOf(h)
	srv.Files["samples/b.yaml"] = linesOf(h)
	diff := diffOf("crd.yaml", h)
	diff.Add(source.FileDiff{From: "samples/a.yaml", To: "samples/a.yaml", Hunks: []source.Hunk{h}})
	diff.Add(source.FileDiff{From: "samples/b.yaml", To: "samples/b.yaml", Hunks: []source.Hunk{h}})
	pub := newPublisher(t, srv, &sleeps{})
	var fs []finding.Finding
	for i := 0; i < MaxFileComments+5; i++ {
		fs = append(fs, mk("type-changed", finding.Error, fmt.Sprintf(".spec.f%02d", i), "crd.yaml", 100+i, finding.Head))
	}
	fs = append(fs, mk("sample-invalid", finding.Error, ".spec.size", "samples/a.yaml", 3, finding.Head),
		mk("sample-invalid", finding.Error, ".spec.size", "samples/b.yaml", 3, finding.Head))
	res, err := pub.Review(context.Background(), PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}, fs, diff)
	if err != nil {
		t.Fatal(err)
	}
	if res.FileLevel != MaxFileComments || res.InBody != 5 || res.Inline != 2 {
		t.Fatalf("result %+v, want %d file comments, 5 in the body, 2 inline", res, MaxFileComments)
	}
	var inline []string
	for _, c := range srv.Comments {
		if c.SubjectType == "line" {
			inline = append(inline, c.Path)
		}
	}
	if strings.Join(inline, " ") != "samples/a.yaml samples/b.yaml" {
		t.Fatalf("inline comments on %v", inline)
	}
	if body := srv.Reviews[0].Body; strings.Count(body, "`type-changed`") != 5 {
		t.Fatalf("review body:\n%s", body)
	}
}

// As GitHub asks: a secondary limit without Retry-After waits a minute, then twice as long; writes
// go a second apart, on the clock the waits move.
func TestSecondaryBackoffAndWriteSpacing(t *testing.T) {
	srv := fakegithub.New(t, token)
	s := &sleeps{}
	clock := time.Now()
	tr := NewRetrying(nil, func(ctx context.Context, d time.Duration) error { clock = clock.Add(d); return s.sleep(ctx, d) })
	tr.Now, tr.Pacer = func() time.Time { return clock }, &Pacer{}
	api, err := NewREST(srv.URL, "octo/widgets", token, &http.Client{Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	srv.Inject = []fakegithub.Failure{{Status: http.StatusForbidden, Secondary: true}, {Status: http.StatusForbidden, Secondary: true}}
	id, err := api.CreateCheckRun(context.Background(), "crdguard", strings.Repeat("d", 40))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.UpdateCheckRun(context.Background(), id, "crdguard", "", CheckOutput{Title: "t", Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(3 * time.Second) // time spent comparing: no wait needed
	if err := api.UpdateCheckRun(context.Background(), id, "crdguard", Success, CheckOutput{Title: "t", Summary: "s"}); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{60 * time.Second, 120 * time.Second, time.Second}; fmt.Sprint(s.got) != fmt.Sprint(want) {
		t.Fatalf("waits %v, want %v", s.got, want)
	}
}

// Two samples in one file with the same problem (Tekton's optional-workspaces.yaml: two Tasks
// whose first step lacks a name) are two findings: both are posted, and a re-run knows both.
func TestSamplesInOneFileAreSeparateFindings(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 60, NewStart: 1, NewLines: 60}
	srv, pub := reviewFixture(t, "examples/run.yaml", h)
	var fs []finding.Finding
	for i, task := range []string{"Task/run-js", "Task/echo"} {
		fs = append(fs, rules.SampleFinding(false, finding.Error, "tasks.tekton.dev", "v1", ".spec.steps[0].name", task,
			"spec.steps[0].name: Required value", finding.Location{File: "examples/run.yaml", Line: 19 + 24*i, Side: finding.Head}))
	}
	if Fingerprint(&fs[0], "") == Fingerprint(&fs[1], "") {
		t.Fatal("two samples share one fingerprint")
	}
	res, err := pub.Review(context.Background(), PR{7, strings.Repeat("d", 40)}, fs, diffOf("examples/run.yaml", h))
	if err != nil || res.Inline != 2 {
		t.Fatalf("first run %+v, %v", res, err)
	}
	res, err = pub.Review(context.Background(), PR{7, strings.Repeat("d", 40)}, fs, diffOf("examples/run.yaml", h))
	if err != nil || res.AlreadyPosted != 2 || len(srv.Comments) != 2 {
		t.Fatalf("re-run %+v, %v, %d comments", res, err, len(srv.Comments))
	}
}
