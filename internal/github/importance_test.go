package github

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/source"
)

// reviewRequest is the body of the one POST …/reviews a test expects.
type reviewRequest struct {
	Body     string `json:"body"`
	Comments []struct {
		Path string `json:"path"`
		Line int    `json:"line"`
		Body string `json:"body"`
	} `json:"comments"`
}

func onlyReview(t *testing.T, reqs []fakegithub.Request) reviewRequest {
	t.Helper()
	var got []reviewRequest
	for _, r := range reqs {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/reviews") {
			var rr reviewRequest
			if err := json.Unmarshal(r.Body, &rr); err != nil {
				t.Fatal(err)
			}
			got = append(got, rr)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d review requests, want 1", len(got))
	}
	return got[0]
}

// Inline comments go to the most important findings first: with 40 warnings before one error in
// file order, the error is among the 30 inline comments and 11 warnings are in the body, which
// counts changes by severity — what it holds, what is inline, what is listed below.
func TestInlineCommentsByImportance(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 60, NewStart: 1, NewLines: 60}
	srv, pub := reviewFixture(t, "crd.yaml", h)
	var fs []finding.Finding
	for i := 1; i <= 40; i++ {
		fs = append(fs, mk("type-changed", finding.Warning, fmt.Sprintf(".spec.w%02d", i), "crd.yaml", i, finding.Head))
	}
	fs = append(fs, mk("field-removed", finding.Error, ".spec.name", "crd.yaml", 41, finding.Head))
	change.Assign(fs)
	finding.Sort(fs)
	res, err := pub.Review(context.Background(), PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}, fs, diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if want := (ReviewResult{Inline: 30, InBody: 11}); res != want {
		t.Fatalf("%+v, want %+v", res, want)
	}
	rr := onlyReview(t, srv.Requests())
	var lines []int
	for _, c := range rr.Comments {
		lines = append(lines, c.Line)
	}
	want := []int{}
	for i := 1; i <= 29; i++ {
		want = append(want, i)
	}
	if want = append(want, 41); !slices.Equal(lines, want) {
		t.Fatalf("inline comments on lines %v, want %v", lines, want)
	}
	head, list, _ := strings.Cut(rr.Body, "\n")
	if want := "**crdguard** found CRD changes that can break stored objects or clients: 1 breaking change, 40 warnings. Commented inline: 1 breaking change, 29 warnings. Listed below: 11 warnings. The check run has the full report."; head != want {
		t.Fatalf("review body starts\n%s\nwant\n%s", head, want)
	}
	var listed []string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, "- ") {
			f := strings.Fields(l)
			listed = append(listed, f[1]+" "+f[2]+" "+f[5])
		}
	}
	var wantListed []string
	for i := 30; i <= 40; i++ {
		wantListed = append(wantListed, fmt.Sprintf("**warning** `type-changed` .spec.w%02d", i))
	}
	if !slices.Equal(listed, wantListed) {
		t.Fatalf("the body lists\n%s\nwant\n%s", strings.Join(listed, "\n"), strings.Join(wantListed, "\n"))
	}
}

// The body counts changes, not comments: one change in two files is two inline comments and one
// breaking change at two places.
func TestReviewBodyCountsChanges(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 20, NewStart: 1, NewLines: 20}
	srv, pub := reviewFixture(t, "a.yaml", h)
	srv.Files["b.yaml"] = linesOf(h)
	diff := diffOf("a.yaml", h)
	diff.Add(source.FileDiff{From: "b.yaml", To: "b.yaml", Hunks: []source.Hunk{h}, Changes: []source.Hunk{h}})
	fs := []finding.Finding{mk("field-removed", finding.Error, ".spec.name", "a.yaml", 5, finding.Head),
		mk("field-removed", finding.Error, ".spec.name", "b.yaml", 5, finding.Head)}
	change.Assign(fs)
	if fs[0].Change != fs[1].Change {
		t.Fatalf("the two copies are two changes: %s, %s", fs[0].Change, fs[1].Change)
	}
	if _, err := pub.Review(context.Background(), PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}, fs, diff); err != nil {
		t.Fatal(err)
	}
	rr := onlyReview(t, srv.Requests())
	if len(rr.Comments) != 2 {
		t.Fatalf("%d inline comments, want 2", len(rr.Comments))
	}
	want := "**crdguard** found CRD changes that can break stored objects or clients: 1 breaking change at 2 places in 2 copies. Commented inline: 1 breaking change at 2 places in 2 copies. The check run has the full report."
	if body, _, _ := strings.Cut(rr.Body, "<!--"); strings.TrimSpace(body) != want {
		t.Fatalf("review body\n%s\nwant\n%s", rr.Body, want)
	}
}
