package github

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
)

// GitHub's limits on text (GITHUB.md): check run summary and text 65,535 bytes, titles 255,
// comment and review bodies 65,536 characters. Bodies are kept well inside them.
const (
	MaxSummaryBytes  = 65535
	MaxTitleBytes    = 255
	MaxBodyChars     = 65536
	maxMessageBytes  = 4096
	maxValueRunes    = 200
	bodyReserve      = 1000 // for what follows the list of a body: the doc link, the markers
	DefaultDocsURL   = "https://github.com/crdguard/crdguard/blob/main/docs/rules.md"
	fingerprintLabel = "crdguard:fp="
)

// reviewLabel starts the marker that identifies one review request.
const reviewLabel = "<!-- crdguard:review="

var reviewMarkerRE = regexp.MustCompile(reviewLabel + `[0-9a-f]{16} -->`)

// A fingerprint is 16 hex digits, then the instance's tag (older comments have none).
var fingerprintRE = regexp.MustCompile(`<!-- ` + fingerprintLabel + `([0-9a-f]{16}(?: in=[0-9a-f]{8})?) -->`)

func marker(fp string) string { return "<!-- " + fingerprintLabel + fp + " -->" }

// fingerprints returns every fingerprint marker in a body.
func fingerprints(body string) []string {
	var out []string
	for _, m := range fingerprintRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// Fingerprint identifies a finding's comment across runs: the finding's fingerprint (rule, CRD,
// version, path, baseline), its file (two sample files failing on one field are two comments) and
// the crdguard instance (the check name), so that several crdguard jobs on one pull request keep
// their own comments.
func Fingerprint(f *finding.Finding, instance string) string {
	sum := sha256.Sum256([]byte(f.Fingerprint() + "\x00" + f.Location.File))
	return hex.EncodeToString(sum[:8]) + instanceTag(instance)
}

// instanceTag ends the fingerprints of one crdguard instance, so that it recognises its own.
func instanceTag(instance string) string {
	sum := sha256.Sum256([]byte(instance))
	return " in=" + hex.EncodeToString(sum[:4])
}

// CommentBody is one finding as a review comment: rule, what changed, why it breaks and what to
// do (the message), before → after, a link to the rule's doc, the hidden fingerprint fp, and the
// hidden change ID that a reply `/crdguard acknowledge <reason>` acknowledges.
func CommentBody(f *finding.Finding, fp, docsURL string) string {
	return commentBody(&planned{f: f, fp: fp}, docsURL)
}

// commentBody is CommentBody for a planned comment, which also names the findings of pl.same
// (the rule at the same place with other values, each with its message and values, so that none
// is hidden behind the first) and lists in a collapsed block every place of the change in the
// file (pl.places besides pl.f).
func commentBody(pl *planned, docsURL string) string {
	f, same, fp := pl.f, pl.same, pl.fp
	var b strings.Builder
	fmt.Fprintf(&b, "**crdguard** %s `%s`", f.Severity, f.Rule)
	if where := location(f); where != "" {
		fmt.Fprintf(&b, " · %s", where)
	}
	b.WriteString("\n\n")
	b.WriteString(report.Escape(truncate(f.Message, maxMessageBytes)))
	if ba := report.BeforeAfter(f, maxValueRunes, report.Escape); ba != "" {
		fmt.Fprintf(&b, "\n\n**Before → after:** %s", ba)
	}
	if f.Source != nil {
		fmt.Fprintf(&b, "\n\n**Go source:** %s · **generated CRD:** %s", report.Escape(where(*f.Source)), report.Escape(where(f.Location)))
	}
	if also := report.AlsoIn(*f); also != "" {
		fmt.Fprintf(&b, "\n\n**Also in:** %s", report.Escape(also))
	}
	if len(same) > 0 {
		fmt.Fprintf(&b, "\n\n**%s of `%s` here:**\n", report.Count(len(same), "more finding"), f.Rule)
		for i, o := range same {
			line := "\n- " + report.Escape(truncate(o.Message, maxMessageBytes))
			if ba := report.BeforeAfter(o, maxValueRunes, report.Escape); ba != "" {
				line += " (" + ba + ")"
			}
			if len(line)+b.Len() > MaxBodyChars-bodyReserve {
				fmt.Fprintf(&b, "\n- … and %d more: the check run lists them", len(same)-i)
				break
			}
			b.WriteString(line)
		}
	}
	if len(pl.places) > 0 {
		all := append([]*finding.Finding{f}, pl.places...)
		fmt.Fprintf(&b, "\n\n<details><summary>%s of this change in this file</summary>\n\n", change.Places(len(all)))
		for i, o := range all {
			line := "- " + report.Escape(report.PlaceLine(o)) + "\n"
			if len(line)+b.Len() > MaxBodyChars-bodyReserve {
				fmt.Fprintf(&b, "- … and %d more: the check run lists them\n", len(all)-i)
				break
			}
			b.WriteString(line)
		}
		b.WriteString("\n</details>")
	}
	fmt.Fprintf(&b, "\n\n[About %s](%s#%s)", f.Rule, docsURL, f.Rule)
	if f.Change != "" && f.Severity == finding.Error {
		fmt.Fprintf(&b, " · a maintainer may acknowledge this change by replying `%s <reason>`", policy.Command)
	}
	fmt.Fprintf(&b, "\n%s%s", marker(fp), changeMarker(f.Change))
	return b.String()
}

// where is file:line, with "(base)" for a line only the base commit has.
func where(l finding.Location) string {
	s := fmt.Sprintf("%s:%d", l.File, l.Line)
	if l.Side == finding.Base {
		s += " (base)"
	}
	return s
}

// location is "CRD version path", escaped.
func location(f *finding.Finding) string {
	parts := []string{}
	for _, p := range []string{f.CRD, f.Version, f.Path} {
		if p != "" {
			parts = append(parts, report.Escape(p))
		}
	}
	return strings.Join(parts, " ")
}

// MaxStepSummaryBytes keeps the step summary within GitHub's 1 MiB per step, with room for
// what other steps of the job append.
const MaxStepSummaryBytes = 1000 << 10

// Where the check run's summary and the step summary send readers for what they cut.
const (
	summaryElsewhere = "the job's step summary (up to 1 MiB) and the action's `report` output, crdguard-report.json, which has every finding"
	stepElsewhere    = "the action's `report` output, crdguard-report.json, which has every finding"
)

// Summary is the check run's Markdown: the grouped report (each change once, its places
// counted) with headline under the title — every CRD and every breaking change first, then
// details by severity — in its summary and, what the summary has no room for, its text, each
// within MaxSummaryBytes; what neither holds is counted and pointed to.
func Summary(r report.Report, headline string) (summary, text string) {
	return report.MarkdownSplit(r, MaxSummaryBytes, MaxSummaryBytes, headline, summaryElsewhere)
}

// StepSummary is the same report for the job's step summary, within MaxStepSummaryBytes.
func StepSummary(r report.Report, headline string) string {
	return report.MarkdownWithin(r, MaxStepSummaryBytes, headline, stepElsewhere)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut (finding.Cut).
func truncate(s string, n int) string { return finding.Cut(s, n) }
