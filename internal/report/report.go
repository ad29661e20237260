// Package report renders findings for people and programs: text for terminals, JSON (the
// stable contract of DESIGN §3) and Markdown for pull requests.
package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/crdguard/crdguard/internal/finding"
)

// Report is everything a renderer needs; Findings are sorted and already through the policy.
type Report struct {
	Findings []finding.Finding
	// CRDs is the number of CRD names compared.
	CRDs int
	// Ignored counts findings dropped by ignore entries.
	Ignored int
	// Notices say what was skipped.
	Notices []string
}

// Formats lists the output formats Write accepts.
var Formats = []string{"text", "json", "markdown", "github", "sarif"}

// Write renders r in the named format.
func Write(w io.Writer, format string, r Report) error {
	switch format {
	case "text":
		return Text(w, r)
	case "json":
		return JSON(w, r)
	case "markdown":
		return Markdown(w, r)
	case "github":
		return Workflow(w, r)
	case "sarif":
		return SARIF(w, r)
	}
	return fmt.Errorf("unknown format %q (allowed: text, json, markdown, github, sarif)", format)
}

// Summary counts findings by severity.
type Summary struct {
	CRDs    int `json:"crds"`
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
	Ignored int `json:"ignored"`
}

// Count writes n and the noun, in the plural unless n is 1: "1 CRD", "4 errors".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Line is the one-line tally that heads the log and Markdown reports.
func (s Summary) Line() string {
	return fmt.Sprintf("crdguard: %s, %s, %d info (%s compared)", Count(s.Error, "error"), Count(s.Warning, "warning"), s.Info, Count(s.CRDs, "CRD"))
}

// Summarize counts r's findings.
func Summarize(r Report) Summary {
	s := Summary{CRDs: r.CRDs, Ignored: r.Ignored}
	for _, f := range r.Findings {
		switch f.Severity {
		case finding.Error:
			s.Error++
		case finding.Warning:
			s.Warning++
		default:
			s.Info++
		}
	}
	return s
}
