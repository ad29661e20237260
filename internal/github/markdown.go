package github

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
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

// Summary is the check run's (and the step summary's) Markdown: the grouped report (each
// change once, its places counted) within MaxSummaryBytes, with headline under the title; what
// does not fit is counted in a last line that points at the full report.
func Summary(r report.Report, headline string) string {
	return report.MarkdownWithin(r, MaxSummaryBytes, headline)
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
