package github

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// A type embedded at three paths, in two versions and two copies is one change: one inline
// comment per file, naming the other places in that file; a re-run posts nothing new. The
// summary counts one change at 12 places.
func TestOneCommentPerChangeAndFile(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 100, NewStart: 1, NewLines: 100}
	srv, pub := reviewFixture(t, "config/crd/w.yaml", h)
	srv.Files["bundle/w.yaml"] = linesOf(h)
	diff := diffOf("config/crd/w.yaml", h)
	diff.Add(source.FileDiff{From: "bundle/w.yaml", To: "bundle/w.yaml", Hunks: []source.Hunk{h}, Changes: []source.Hunk{h}})
	var fs []finding.Finding
	for _, file := range []string{"bundle/w.yaml", "config/crd/w.yaml"} {
		line := 10
		for _, version := range []string{"v1", "v2"} {
			for _, at := range []string{"containers", "initContainers", "ephemeralContainers"} {
				path := ".spec.template.spec." + at + "[*].image"
				f := finding.Finding{Rule: "max-decreased", Severity: finding.Error, CRD: "w.example.com", Version: version, Path: path,
					Message: "maxLength of " + path + " lowered", Before: finding.Value(256), After: finding.Value(128),
					Location: finding.Location{File: file, Line: line, Side: finding.Head}}
				fs = append(fs, f)
				line += 10
			}
		}
	}
	change.Assign(fs)
	finding.Sort(fs)
	pr := PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}
	for run := 0; run < 2; run++ {
		res, err := pub.Review(context.Background(), pr, fs, diff)
		if err != nil {
			t.Fatal(err)
		}
		want := ReviewResult{Inline: 2}
		if run == 1 {
			want = ReviewResult{AlreadyPosted: 2}
		}
		if res != want {
			t.Fatalf("run %d: %+v, want %+v", run, res, want)
		}
	}
	var got []string
	for _, c := range srv.Comments {
		first, _, _ := strings.Cut(c.Body, "\n\n**Before")
		got = append(got, fmt.Sprintf("%s:%d %s", c.Path, c.Line, first))
	}
	const same = "maxLength of .spec.template.spec.containers\\[\\*\\].image lowered (the same change, in this file: 6 places; .spec.template.spec.…\\[\\*\\].image (3 paths); versions v1, v2)"
	want := []string{
		"bundle/w.yaml:10 **crdguard** error `max-decreased` · w.example.com v1 .spec.template.spec.containers\\[\\*\\].image\n\n" + same,
		"config/crd/w.yaml:10 **crdguard** error `max-decreased` · w.example.com v1 .spec.template.spec.containers\\[\\*\\].image\n\n" + same,
	}
	if strings.Join(got, "\n---\n") != strings.Join(want, "\n---\n") {
		t.Errorf("comments:\n%s\nwant:\n%s", strings.Join(got, "\n---\n"), strings.Join(want, "\n---\n"))
	}
	sum, text := Summary(report.Report{Findings: fs, CRDs: 1}, "")
	if text != "" {
		t.Errorf("the check run's text holds what its summary has room for:\n%s", text)
	}
	if title, _, _ := strings.Cut(sum, "\n"); title != "### crdguard: 1 breaking change at 12 places in 2 copies, 0 warnings (1 CRD compared)" {
		t.Errorf("summary title %q", title)
	}
	if rows := strings.Count(sum, "\n| ❌ error |"); rows != 1 {
		t.Errorf("summary has %d rows, want 1:\n%s", rows, sum)
	}
}
