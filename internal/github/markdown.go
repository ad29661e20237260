package github

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
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
// do (the message), before → after, a link to the rule's doc, and the hidden fingerprint fp.
func CommentBody(f *finding.Finding, fp, docsURL string) string {
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
	if also := report.AlsoIn(*f); also != "" {
		fmt.Fprintf(&b, "\n\n**Also in:** %s", report.Escape(also))
	}
	fmt.Fprintf(&b, "\n\n[About %s](%s#%s)\n%s", f.Rule, docsURL, f.Rule, marker(fp))
	return b.String()
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

// Summary is the check run's (and the step summary's) Markdown: counts, one table per CRD, the
// messages in collapsible details, within MaxSummaryBytes; what does not fit is counted in a
// last line that points at the full report.
func Summary(fs []finding.Finding, crds int, headline string) string {
	s := report.Summarize(report.Report{Findings: fs, CRDs: crds})
	shown := make([]finding.Finding, 0, s.Error+s.Warning)
	for _, f := range fs {
		if f.Severity == finding.Error || f.Severity == finding.Warning {
			shown = append(shown, f)
		}
	}
	sort.SliceStable(shown, func(i, j int) bool {
		if shown[i].CRD != shown[j].CRD {
			return shown[i].CRD < shown[j].CRD
		}
		return finding.Less(&shown[i], &shown[j])
	})
	var b strings.Builder
	fmt.Fprintf(&b, "## crdguard: %s, %s, %s (%s compared)\n\n",
		report.Count(s.Error, "error"), report.Count(s.Warning, "warning"), report.Count(s.Info, "safe change"), report.Count(s.CRDs, "CRD"))
	if headline != "" {
		b.WriteString(headline + "\n\n")
	}
	if len(shown) == 0 {
		b.WriteString("No breaking CRD changes found.\n")
		return b.String()
	}
	const reserve = 200 // room for the "N more findings" line
	for start := 0; start < len(shown); {
		end := start
		for end < len(shown) && shown[end].CRD == shown[start].CRD {
			end++
		}
		head := fmt.Sprintf("\n### %s\n\n| Version | Path | Rule | Severity | Before → after | Location |\n|---|---|---|---|---|---|\n", orDash(report.Escape(shown[start].CRD)))
		const detailsOpen, detailsClose = "\n<details><summary>Why it breaks and what to do</summary>\n\n", "\n</details>\n"
		var rows, msgs strings.Builder
		n := start
		for ; n < end; n++ {
			f := &shown[n]
			row := fmt.Sprintf("| %s | %s | `%s` | %s | %s | %s |\n", orDash(report.Escape(f.Version)), orDash(report.Escape(f.Path)),
				f.Rule, f.Severity, orDash(report.BeforeAfter(f, maxValueRunes, report.Escape)), report.Escape(report.Where(f)))
			msg := fmt.Sprintf("- `%s` %s: %s\n", f.Rule, orDash(report.Escape(f.Path)), report.Escape(truncate(f.Message, maxMessageBytes)))
			if b.Len()+len(head)+rows.Len()+len(row)+len(detailsOpen)+msgs.Len()+len(msg)+len(detailsClose) > MaxSummaryBytes-reserve {
				break
			}
			rows.WriteString(row)
			msgs.WriteString(msg)
		}
		if n > start {
			b.WriteString(head + rows.String() + detailsOpen + msgs.String() + detailsClose)
		}
		if n < end {
			left := len(shown) - n
			fmt.Fprintf(&b, "\n**%s** not shown here (GitHub limits this summary to 65,535 bytes): see the JSON report and the job log.\n", report.Count(left, "more finding"))
			return b.String()
		}
		start = end
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
