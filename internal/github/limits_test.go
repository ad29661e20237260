package github

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// release60 is a release with 60 changed CRDs: each changes an embedded pod template at three
// paths (one breaking change across the 60 CRDs, DESIGN §7), ten fields' map types (warnings,
// long messages) and adds twenty fields; the last CRD also gains an immutability rule on its selector, the most serious change
// of the release, which a report cut in name order loses.
func release60() []finding.Finding {
	var fs []finding.Finding
	for c := 0; c < 60; c++ {
		crd := fmt.Sprintf("crd%02d.example.com", c)
		file := fmt.Sprintf("config/crd/crd%02d.yaml", c)
		line := 10
		add := func(rule string, sev finding.Severity, path, msg string, before, after any) {
			fs = append(fs, finding.Finding{Rule: rule, Severity: sev, CRD: crd, Version: "v1", Path: path, Message: msg,
				Before: finding.Value(before), After: finding.Value(after), Location: finding.Location{File: file, Line: line, Side: finding.Head}})
			line += 10
		}
		for _, at := range []string{"containers", "initContainers", "ephemeralContainers"} {
			path := ".spec.template.spec." + at + "[*].image"
			add("max-decreased", finding.Error, path, "maxLength of "+path+" lowered from 256 to 128: "+
				strings.Repeat("stored objects with longer values can no longer be updated; ", 6), 256, 128)
			fs[len(fs)-1].Builtin = "Container.image"
		}
		for w := 0; w < 10; w++ {
			path := fmt.Sprintf(".spec.labels%02d", w)
			add("map-type-changed", finding.Warning, path, "map type of "+path+" changed from granular to atomic: "+
				strings.Repeat("server-side apply now merges this object differently; ", 10), "granular", "atomic")
		}
		for i := 0; i < 20; i++ {
			path := fmt.Sprintf(".spec.extra%02d", i)
			add("field-added", finding.Info, path, path+" was added: "+strings.Repeat("optional, ", 10), nil, "string")
		}
		if c == 59 {
			add("validation-rule-added", finding.Error, ".spec.selector", `.spec.selector has a new validation rule "self == oldSelf": the selector can no longer be changed`, nil, "self == oldSelf")
		}
	}
	change.Assign(fs)
	finding.Sort(fs)
	return fs
}

// TestSummaryKeepsWhatMatters: the check run's summary of a release with 60 changed CRDs stays
// within GitHub's limit, names every CRD with its counts and every breaking change (the last
// CRD's immutability rule too), and counts the details it left out, saying where they are; the
// step summary has room for all of it; the review body lists every breaking change.
func TestSummaryKeepsWhatMatters(t *testing.T) {
	fs := release60()
	r := report.Report{Findings: fs, CRDs: 60}
	sum, text := Summary(r, "")
	if len(sum) > MaxSummaryBytes {
		t.Fatalf("summary is %d bytes", len(sum))
	}
	var wantIndex, wantBreaking []string
	index, breaking := overviewLines(sum)
	for c := 0; c < 60; c++ {
		crd := fmt.Sprintf("crd%02d.example.com", c)
		errs := "1 at 3 places"
		if c == 59 {
			errs = "2 at 4 places"
		}
		wantIndex = append(wantIndex, fmt.Sprintf("| %s | %s | 10 | 20 |", crd, errs))
	}
	wantBreaking = []string{"- crd59.example.com `validation-rule-added` v1 .spec.selector: has a new validation rule \"self == oldSelf\"",
		"- 60 CRDs (crd00.example.com, …) `max-decreased` v1 .spec.template.spec.containers\\[\\*\\].image (180 places): maxLength of .spec.template.spec.containers\\[\\*\\].image lowered from 256 to 128"}
	if !slices.Equal(index, wantIndex) {
		t.Errorf("CRDs listed:\n%s\nwant:\n%s", strings.Join(index, "\n"), strings.Join(wantIndex, "\n"))
	}
	if !slices.Equal(breaking, wantBreaking) {
		t.Errorf("breaking changes listed:\n%s\nwant:\n%s", strings.Join(breaking, "\n"), strings.Join(wantBreaking, "\n"))
	}
	// The details: every breaking change's row, then the warnings that fit; the rest is counted.
	rows := func(sev string) int { return strings.Count(sum, "\n| "+sev+" | `") }
	if got := rows("❌ error"); got != 2 {
		t.Errorf("%d rows of breaking changes, want 2", got)
	}
	warnings, infos := rows("⚠️ warning"), rows("ℹ️ info")
	if warnings == 0 || warnings == 600 || infos != 0 {
		t.Errorf("%d warnings' rows and %d safe changes' rows: the summary should cut warnings, and before them every safe change", warnings, infos)
	}
	// The text continues with the warnings' rows the summary had no room for, in the same order,
	// and no safe change while a warning is cut. The pod template change lists its places in a
	// block, if it fits.
	if len(text) > MaxSummaryBytes || !strings.HasPrefix(text, "### crdguard: continued from the summary\n\n#### ") {
		t.Fatalf("text of %d bytes:\n%.500s", len(text), text)
	}
	inSummary, inText := warningRows(sum), warningRows(text)
	var rest []string
	for c := 0; c < 60; c++ {
		for w := 0; w < 10; w++ {
			if row := fmt.Sprintf("crd%02d.example.com .spec.labels%02d", c, w); !slices.Contains(inSummary, row) {
				rest = append(rest, row)
			}
		}
	}
	if len(inText) == 0 || !slices.Equal(inText, rest[:len(inText)]) {
		t.Errorf("the text's warnings are not the next %d the summary left out:\n%v", len(inText), inText)
	}
	if n := strings.Count(text, "\n| ❌ error | `") + strings.Count(text, "\n| ℹ️ info | `"); n != 0 {
		t.Errorf("the text has %d rows of breaking or safe changes", n)
	}
	blocks := strings.Count(sum+text, "\n<details><summary><code>max-decreased</code> .spec.template.spec.containers\\[\\*\\].image: 180 places;")
	foot := fmt.Sprintf("\nContinued below the summary (GitHub's limit of 65535 characters): the details of %d warnings.\n"+
		"Not shown here or below (GitHub's limits of 65535 characters for the summary and 65535 for the text below it): the details of %d warnings, 1200 safe changes; "+
		"the places or full values of %s. Read them in full: %s.\n\n**Verdict: fail**",
		len(inText), 600-warnings-len(inText), report.Count(1-blocks, "change"), summaryElsewhere)
	if !strings.Contains(sum, foot) {
		t.Errorf("no line %q in the summary's end:\n%s", foot, sum[len(sum)-800:])
	}

	// --format markdown: one field of 65,536 bytes, cut the same way.
	var md bytes.Buffer
	if err := report.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	mdWarnings := warningRows(md.String())
	mdIndex, mdBreaking := overviewLines(md.String())
	if got := append(mdIndex, mdBreaking...); len(md.String()) > report.MaxMarkdown || !slices.Equal(got, append(slices.Clone(wantIndex), wantBreaking...)) ||
		strings.Count(md.String(), "\n| ❌ error | `") != 2 || strings.Count(md.String(), "\n| ℹ️ info | `") != 0 {
		t.Errorf("markdown report: %d bytes, CRDs and breaking changes:\n%s", md.Len(), strings.Join(got, "\n"))
	}
	mdFoot := fmt.Sprintf("\nNot shown here (GitHub's limit of 65536 characters): the details of %d warnings, 1200 safe changes; the places or full values of 1 change. Read them in full: %s.\n\n**Verdict: fail**",
		600-len(mdWarnings), report.CLIElsewhere)
	if !strings.Contains(md.String(), mdFoot) || len(mdWarnings) == 0 {
		t.Errorf("no line %q in the markdown report's end:\n%s", mdFoot, md.String()[md.Len()-800:])
	}

	step := StepSummary(r, "")
	if len(step) > MaxStepSummaryBytes || strings.Contains(step, "Not shown here") {
		t.Errorf("step summary: %d bytes, or cut", len(step))
	}
	for sev, want := range map[string]int{"❌ error": 2, "⚠️ warning": 600, "ℹ️ info": 1200} {
		if got := strings.Count(step, "\n| "+sev+" | `"); got != want {
			t.Errorf("step summary: %d rows of %s, want %d", got, sev, want)
		}
	}

	// The review of a pull request whose diff shows none of these lines: all in its body.
	srv, pub := reviewFixture(t, "unrelated.go", source.Hunk{NewStart: 1, NewLines: 1})
	res, err := pub.Review(context.Background(), PR{Number: 1, HeadSHA: strings.Repeat("a", 40)}, fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.InBody != 661 || len(srv.Reviews) != 1 {
		t.Fatalf("%+v, %d reviews", res, len(srv.Reviews))
	}
	body := srv.Reviews[0].Body
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		t.Fatalf("review body of %d characters", n)
	}
	for i := range fs {
		f := &fs[i]
		if f.Severity == finding.Error && !strings.Contains(body, "`"+f.Rule+"` "+f.CRD+" v1 "+report.Escape(f.Path)) && !strings.Contains(body, report.Escape(report.PlaceLine(f))) {
			t.Errorf("the review body lacks %s %s %s", f.CRD, f.Rule, f.Path)
		}
	}
}

// overviewLines are the rows of a summary's table of CRDs and its lines of breaking changes.
func overviewLines(md string) (index, breaking []string) {
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "| crd"):
			index = append(index, l)
		case strings.HasPrefix(l, "- crd"), strings.HasPrefix(l, "- 60 CRDs"):
			breaking = append(breaking, l)
		}
	}
	return index, breaking
}

// warningRows are the warnings' rows of a Markdown report as "CRD path", in order.
func warningRows(md string) []string {
	var out []string
	crd := ""
	for _, l := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(l, "#### "); ok {
			crd, _, _ = strings.Cut(h, ":")
		}
		if r, ok := strings.CutPrefix(l, "| ⚠️ warning | `map-type-changed` | v1 | "); ok {
			path, _, _ := strings.Cut(r, " |")
			out = append(out, crd+" "+path)
		}
	}
	return out
}

// TestEveryErrorFindingReachesTheReview: whatever the review does with them — inline, on the
// file, in its body past the caps, one comment for the places of a change, one for the values of
// a rule at one place — every error finding of the check run is named in a comment or the body.
func TestEveryErrorFindingReachesTheReview(t *testing.T) {
	h := source.Hunk{OldStart: 1, OldLines: 50, NewStart: 1, NewLines: 50}
	srv, pub := reviewFixture(t, "crd.yaml", h)
	diff := diffOf("crd.yaml", h)
	enum := func(value string) finding.Finding {
		f := mk("enum-value-removed", finding.Error, ".spec.color", "crd.yaml", 12, finding.Base)
		f.Message, f.Before = fmt.Sprintf("enum value %q of .spec.color was removed", value), finding.Value(value)
		return f
	}
	fs := []finding.Finding{enum("red"), enum("green")}
	for i, at := range []string{"a", "b", "c"} {
		f := mk("max-decreased", finding.Error, ".spec."+at+"[*].image", "crd.yaml", 20+2*i, finding.Head)
		f.Message, f.Before, f.After = "maxLength of "+f.Path+" lowered", finding.Value(256), finding.Value(128)
		fs = append(fs, f)
	}
	for i := 0; i < 35; i++ { // outside the hunk: file comments, past their cap the body
		fs = append(fs, mk("field-removed", finding.Error, fmt.Sprintf(".spec.gone%02d", i), "crd.yaml", 100+i, finding.Head))
	}
	fs = append(fs, mk("field-removed", finding.Error, ".spec.elsewhere", "other.yaml", 3, finding.Head),
		mk("map-type-changed", finding.Warning, ".spec.labels", "crd.yaml", 30, finding.Head))
	change.Assign(fs)
	finding.Sort(fs)
	res, err := pub.Review(context.Background(), PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}, fs, diff)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ReviewResult{Inline: 3, FileLevel: 10, InBody: 26}); res != want {
		t.Fatalf("%+v, want %+v", res, want)
	}
	var bodies []string
	for _, c := range srv.Comments {
		bodies = append(bodies, c.Body)
	}
	for _, r := range srv.Reviews {
		bodies = append(bodies, r.Body)
	}
	all := strings.Join(bodies, "\n")
	for i := range fs {
		f := &fs[i]
		if f.Severity == finding.Error && !strings.Contains(all, report.Escape(f.Message)) && !strings.Contains(all, report.Escape(report.PlaceLine(f))) {
			t.Errorf("no comment and not the review body names %s %s %s", f.Rule, f.Path, f.Before)
		}
	}
	// The two values removed at one place are one comment naming both.
	var enumComment string
	for _, c := range srv.Comments {
		if c.Line == 12 {
			enumComment = c.Body
		}
	}
	want := "**crdguard** error `enum-value-removed` · widgets.example.com v1 .spec.color\n\nenum value \"green\" of .spec.color was removed\n\n" +
		"**Before → after:** \"green\" → null\n\n**1 more finding of `enum-value-removed` here:**\n\n- enum value \"red\" of .spec.color was removed (\"red\" → null)\n\n" +
		"[About enum-value-removed](" + DefaultDocsURL + "#enum-value-removed) · a maintainer may acknowledge this change by replying `/crdguard acknowledge <reason>`\n" +
		marker(Fingerprint(&fs[0], "")) + changeMarker(fs[0].Change)
	if enumComment != want {
		t.Errorf("comment on line 12:\n%s\nwant:\n%s", enumComment, want)
	}
}
