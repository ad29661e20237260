package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/report"
)

// mdTableHead is the head of a CRD's table of changes in the Markdown reports.
const mdTableHead = "| Severity | Rule | Version | Path | Before → after | Location | Places | What it means |\n|---|---|---|---|---|---|---|---|\n"

const verdictFail = "\n**Verdict: fail** — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n"

// TestCheckRunBatchesAndLimits: 1200 breaking changes are more than a check run's summary
// holds. The summary lists what fits of them; its text lists the rest, then the rows that fit;
// the summary says what the text continues with and counts only what neither holds. Every
// update repeats title, summary and text, carries at most 50 annotations, and its body is
// exactly what GitHub's API describes.
func TestCheckRunBatchesAndLimits(t *testing.T) {
	srv := fakegithub.New(t, token)
	pub := newPublisher(t, srv, &sleeps{})
	var fs []finding.Finding
	path := func(i int) string { return fmt.Sprintf(".spec.%s%04d", strings.Repeat("x", 40), i) }
	for i := 0; i < 1200; i++ {
		f := mk("field-removed", finding.Error, path(i), "crd.yaml", i+1, finding.Head)
		f.Message = strings.Repeat("long message ", 20)
		fs = append(fs, f)
	}
	summary, text := Summary(report.Report{Findings: fs, CRDs: 1}, "")
	if len(summary) > MaxSummaryBytes || len(text) > MaxSummaryBytes {
		t.Fatalf("summary of %d bytes, text of %d", len(summary), len(text))
	}
	// Every breaking change is listed once, in order: first in the summary, then in the text.
	line := func(i int) string { return "- widgets.example.com `field-removed` v1 " + path(i) + "\n" }
	listed := strings.Count(summary, "\n- widgets.example.com ")
	inText := strings.Count(text, "\n- widgets.example.com ")
	rows := strings.Count(text, "\n| ❌ error | ")
	if listed < 500 || listed+inText != 1200 || rows == 0 || strings.Contains(summary, "\n| ❌ error | ") {
		t.Fatalf("%d changes listed in the summary, %d in the text, %d rows in the text", listed, inText, rows)
	}
	var wantSummary, wantText strings.Builder
	wantSummary.WriteString("### crdguard: 1200 breaking changes, 0 warnings (1 CRD compared)\n\n| CRD | Breaking changes | Warnings | Safe changes |\n|---|---|---|---|\n" +
		"| widgets.example.com | 1200 | 0 | 0 |\n\n**1200 breaking changes:**\n\n")
	for i := 0; i < listed; i++ {
		wantSummary.WriteString(line(i))
	}
	fmt.Fprintf(&wantSummary, "\nContinued below the summary (GitHub's limit of 65535 characters): %d more breaking changes; the details of %d breaking changes.\n"+
		"Not shown here or below (GitHub's limits of 65535 characters for the summary and 65535 for the text below it): the details of %d breaking changes. Read them in full: %s.\n"+verdictFail,
		inText, rows, 1200-rows, summaryElsewhere)
	fmt.Fprintf(&wantText, "### crdguard: continued from the summary\n\n**%d more breaking changes:**\n\n", inText)
	for i := listed; i < 1200; i++ {
		wantText.WriteString(line(i))
	}
	wantText.WriteString("\n#### widgets.example.com: 1200 breaking changes\n\n" + mdTableHead)
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&wantText, "| ❌ error | `field-removed` | v1 | %s | \"x\" → null | crd.yaml:%d | 1 | %s |\n", report.Escape(path(i)), i+1, f0msg(fs))
	}
	if summary != wantSummary.String() {
		t.Errorf("summary:\n%s\nwant:\n%s", tail(summary), tail(wantSummary.String()))
	}
	if text != wantText.String() {
		t.Errorf("text:\n%s\nwant:\n%s", tail(text), tail(wantText.String()))
	}

	id, err := pub.API.CreateCheckRun(context.Background(), "crdguard", strings.Repeat("f", 40))
	if err != nil {
		t.Fatal(err)
	}
	anns := Annotations(fs[:120])
	if err := pub.FinishCheck(context.Background(), Check{ID: id, Name: "crdguard"}, Failure,
		CheckOutput{Title: "Breaking CRD changes", Summary: summary, Text: text, Annotations: anns}); err != nil {
		t.Fatal(err)
	}
	cr := srv.CheckRuns[0]
	if cr.Status != "completed" || cr.Conclusion != "failure" || len(cr.Annotations) != 120 || cr.Summary != summary || cr.Text != text {
		t.Fatalf("check run %+v with %d annotations", cr, len(cr.Annotations))
	}
	var patches []any
	for _, r := range srv.Writes() {
		if r.Method == http.MethodPatch {
			var body any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			patches = append(patches, body)
		}
	}
	var want []any
	for _, batch := range [][]Annotation{anns[:50], anns[50:100], anns[100:]} {
		var wire []any
		for _, a := range batch {
			wire = append(wire, map[string]any{"path": a.Path, "start_line": float64(a.StartLine), "end_line": float64(a.EndLine),
				"annotation_level": "failure", "title": a.Title, "message": a.Message})
		}
		body := map[string]any{"name": "crdguard", "output": map[string]any{"title": "Breaking CRD changes", "summary": summary, "text": text, "annotations": wire}}
		if len(batch) == 20 {
			body["status"], body["conclusion"] = "completed", "failure"
		}
		want = append(want, body)
	}
	if !reflect.DeepEqual(patches, want) {
		got, _ := json.MarshalIndent(patches, "", " ")
		t.Errorf("updates (50+50+20 annotations, each with title, summary and text):\n%.3000s", got)
	}
}

// f0msg is the message of the findings of TestCheckRunBatchesAndLimits, as a cell.
func f0msg(fs []finding.Finding) string { return report.Escape(fs[0].Message) }

// tail is the end of a long report, where it differs.
func tail(s string) string {
	if len(s) > 1500 {
		return "…" + s[len(s)-1500:]
	}
	return s
}
