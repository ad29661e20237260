package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// ordered is findings as a run hands them to the reports: sorted as the checks sort them, then
// through the policy (which orders them, finding.Order) and the change grouping.
func ordered(t *testing.T, fs []finding.Finding) []finding.Finding {
	t.Helper()
	finding.Sort(fs)
	out := policy.Default().Apply(fs).Findings
	change.Assign(out)
	return out
}

// ruleWords are the rule IDs a channel's text names, in the order it names them.
var ruleWords = regexp.MustCompile(`scope-changed|field-removed|type-changed`)

// Every channel lists what the API server refuses outright (scope-changed) before the other
// errors, though it comes last in file and name order: the grouped ones (text, Markdown, the
// check run's summary and text, the changelog) put its CRD first, the ones in finding order
// (JSON, SARIF, rdjson, workflow commands, annotations) put it first and keep file order for
// the rest. On the old code every channel listed it last.
func TestEveryChannelListsRefusalsFirst(t *testing.T) {
	at := func(rule string, sev finding.Severity, crd, version, path, file string, line int) finding.Finding {
		return finding.Finding{Rule: rule, Severity: sev, CRD: crd, Version: version, Path: path, Message: "m",
			Location: finding.Location{File: file, Line: line, Side: finding.Head}}
	}
	fs := ordered(t, []finding.Finding{
		at("field-removed", finding.Error, "a.example.com", "v1", ".spec.f1", "a.yaml", 3),
		at("field-removed", finding.Error, "a.example.com", "v1", ".spec.f2", "a.yaml", 4),
		at("type-changed", finding.Warning, "a.example.com", "v1", ".spec.w", "a.yaml", 5),
		at("field-removed", finding.Error, "b.example.com", "v1", ".spec.g", "b.yaml", 2),
		at("scope-changed", finding.Error, "b.example.com", "", "", "b.yaml", 9),
	})
	r := report.Report{Findings: fs, CRDs: 2}
	const (
		sc = "scope-changed"
		fr = "field-removed"
		tc = "type-changed"
	)
	inFindingOrder := []string{sc, fr, fr, tc, fr}           // b.yaml:9, then a.yaml:3, 4, 5, b.yaml:2
	grouped := []string{sc, fr, fr, fr, tc}                  // b (scope-changed, .spec.g), then a
	markdown := append([]string{sc, fr, fr, fr}, grouped...) // the breaking changes' lines, then the tables
	summary, text := Summary(r, "")
	channels := map[string]struct {
		got  []string
		want []string
	}{
		"text":         {ruleWords.FindAllString(render(t, "text", r), -1), grouped},
		"markdown":     {ruleWords.FindAllString(render(t, "markdown", r), -1), markdown},
		"check run":    {ruleWords.FindAllString(summary+text, -1), markdown},
		"step summary": {ruleWords.FindAllString(StepSummary(r, ""), -1), markdown},
		"changelog":    {ruleWords.FindAllString(render(t, "changelog", r), -1), []string{sc, fr, fr, fr, tc}},
		"workflow":     {ruleWords.FindAllString(render(t, "github", r), -1), inFindingOrder},
		"json":         {jsonRules(t, render(t, "json", r), "findings", "rule"), inFindingOrder},
		"rdjson":       {jsonRules(t, render(t, "rdjson", r), "diagnostics", "code"), inFindingOrder},
		"sarif":        {sarifRules(t, render(t, "sarif", r)), inFindingOrder},
		"annotations":  {annotationRules(Annotations(fs)), inFindingOrder},
	}
	for name, c := range channels {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s lists %v, want %v", name, c.got, c.want)
		}
	}
	// The tightening twin: lowered to a warning by the configuration, scope-changed is one
	// warning among the others, in file order.
	cfg, err := policy.Parse([]byte("rules: {scope-changed: warning}\n"))
	if err != nil {
		t.Fatal(err)
	}
	again := slices.Clone(fs)
	finding.Sort(again)
	lowered := cfg.Apply(again).Findings
	var got []string
	for _, f := range lowered {
		got = append(got, f.Rule)
	}
	if want := []string{fr, fr, tc, fr, sc}; !slices.Equal(got, want) {
		t.Errorf("lowered to a warning, the findings are %v, want %v", got, want)
	}
}

// The review's inline comments go to an outright refusal before other errors: with 30 field
// removals before a scope change in file order, the scope change is commented inline and the
// last removal goes to the body.
func TestInlineCommentsRefusalFirst(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 40, NewStart: 1, NewLines: 40}
	srv, pub := reviewFixture(t, "crd.yaml", h)
	var in []finding.Finding
	for i := 1; i <= 30; i++ {
		in = append(in, mk("field-removed", finding.Error, fmt.Sprintf(".spec.f%02d", i), "crd.yaml", i, finding.Head))
	}
	sc := mk("scope-changed", finding.Error, "", "crd.yaml", 31, finding.Head)
	sc.Version = ""
	fs := ordered(t, append(in, sc))
	res, err := pub.Review(context.Background(), PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}, fs, diffOf("crd.yaml", h))
	if err != nil {
		t.Fatal(err)
	}
	if want := (ReviewResult{Inline: 30, InBody: 1}); res != want {
		t.Fatalf("%+v, want %+v", res, want)
	}
	var lines []int
	for _, c := range onlyReview(t, srv.Requests()).Comments {
		lines = append(lines, c.Line)
	}
	want := []int{31} // in the order of the findings (finding.Order)
	for i := 1; i <= 29; i++ {
		want = append(want, i)
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("inline comments on lines %v, want %v", lines, want)
	}
}

func render(t *testing.T, format string, r report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, format, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// jsonRules reads the rule of each element of the array under key, in order.
func jsonRules(t *testing.T, doc, key, field string) []string {
	t.Helper()
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(d[key], &items); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		var v any
		if err := json.Unmarshal(it[field], &v); err != nil {
			t.Fatal(err)
		}
		if m, ok := v.(map[string]any); ok { // rdjson's code is {"value": …}
			v = m["value"]
		}
		out = append(out, fmt.Sprint(v))
	}
	return out
}

func sarifRules(t *testing.T, doc string) []string {
	t.Helper()
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(doc), &log); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range log.Runs[0].Results {
		out = append(out, r.RuleID)
	}
	return out
}

func annotationRules(as []Annotation) []string {
	var out []string
	for _, a := range as {
		rule, _, _ := strings.Cut(a.Title, ":")
		out = append(out, rule)
	}
	return out
}
