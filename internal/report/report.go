// Package report renders findings for people and programs: text for terminals, JSON (the
// stable contract of DESIGN §3) and Markdown for pull requests.
package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
)

// Report is everything a renderer needs; Findings are sorted and already through the policy.
type Report struct {
	Findings []finding.Finding
	// CRDs is the number of CRD names compared.
	CRDs int
	// Ignored counts findings dropped by ignore entries.
	Ignored int
	// Notices say what was skipped, fetched or assumed.
	Notices []string
	// Compared says which commits a git-mode run compared; nil outside git mode.
	Compared *Compared
	// Verdict is what the run concluded; nil: errors fail.
	Verdict *Verdict
	// ShowInfo lists safe changes (info) in the text report too.
	ShowInfo bool
	// Verbose lists every place of a change and values in full in the text report.
	Verbose bool
	// Acknowledged are the findings the configuration's ignore entries dropped, with their
	// reasons, for the changelog.
	Acknowledged []policy.Acknowledged
	// PullRequest is the pull request an Action run compared, when there is one.
	PullRequest *PullRequest
	// Root is the absolute folder that relative file paths are relative to (SARIF's %SRCROOT%):
	// the working directory of a diff, the repository of a check; "" when unknown.
	Root string
}

// PullRequest names the pull request a run compared (DESIGN §7): its number and the base and
// head commits of its event, so that a second workflow knows what the first one judged.
type PullRequest struct {
	Number int    `json:"number"`
	Base   string `json:"base"`
	Head   string `json:"head"`
}

// Compared is what a git-mode run compared (DESIGN §3): head against the merge base of base
// and head, each a full SHA.
type Compared struct {
	Base      string `json:"base"`
	Head      string `json:"head"`
	MergeBase string `json:"mergeBase"`
	// WorkingTree says uncommitted manifests of the working tree were laid over head.
	WorkingTree bool `json:"workingTree,omitempty"`
	// Release says base and head are releases (base a tag, head not a branch), compared as they
	// are, not through the merge base: upgrading replaces the one's CRDs with the other's.
	Release bool `json:"release,omitempty"`
	// Forced says a forced push replaced base with head: they are compared as they are, not
	// through their merge base, so what the dropped commits brought counts as undone.
	Forced bool `json:"forced,omitempty"`
	// BaseRef and HeadRef are the refs as the user gave them, for people.
	BaseRef string `json:"-"`
	HeadRef string `json:"-"`
}

// Line says in one line what was compared: "compared HEAD 3f2a1b4c5d6e with the merge base
// 1f9d8a2b3c4d of v1.5.0 9e8d7c6b5a4f".
func (c *Compared) Line() string {
	head := abbrev(c.Head)
	if c.HeadRef != "" && c.HeadRef != c.Head {
		head = c.HeadRef + " " + head
	}
	if c.WorkingTree {
		head = "the working tree (" + head + " with uncommitted changes)"
	}
	base := abbrev(c.Base)
	if c.BaseRef != "" && c.BaseRef != c.Base {
		base = c.BaseRef + " " + base
	}
	if c.Release {
		return "compared " + head + " with the release " + base
	}
	if c.Forced {
		return "compared " + head + " with " + base + " directly (a forced push replaced it)"
	}
	if c.MergeBase == c.Base {
		return "compared " + head + " with " + base + " (the merge base)"
	}
	return "compared " + head + " with the merge base " + abbrev(c.MergeBase) + " of " + base
}

// abbrev shortens a SHA to 12 characters, as the notices do.
func abbrev(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Formats lists the output formats Write accepts.
var Formats = []string{"text", "json", "markdown", "github", "sarif", "rdjson", "changelog"}

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
	case "rdjson":
		return RDJSON(w, r)
	case "changelog":
		return Changelog(w, r)
	}
	return fmt.Errorf("unknown format %q (allowed: %s)", format, strings.Join(Formats, ", "))
}

// Summary counts findings by severity: Error, Warning and Info count findings (one per place,
// and per copy compared apart); the …Changes and …Places fields count as the text and Markdown
// reports do, each change once and the places it is at.
type Summary struct {
	CRDs    int `json:"crds"`
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
	Ignored int `json:"ignored"`
	// ErrorChanges, WarningChanges and InfoChanges count each change once (the findings that
	// share a change ID are one), as the text and Markdown reports do.
	ErrorChanges   int `json:"errorChanges"`
	WarningChanges int `json:"warningChanges"`
	InfoChanges    int `json:"infoChanges"`
	// ErrorPlaces, WarningPlaces and InfoPlaces count the places of those changes: each finding,
	// and each further copy of its CRD that it was compared once for.
	ErrorPlaces   int `json:"errorPlaces"`
	WarningPlaces int `json:"warningPlaces"`
	InfoPlaces    int `json:"infoPlaces"`
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
	for _, g := range byCRD(r.Findings, finding.Info).All {
		switch g.First().Severity {
		case finding.Error:
			s.ErrorChanges++
			s.ErrorPlaces += g.Count()
		case finding.Warning:
			s.WarningChanges++
			s.WarningPlaces += g.Count()
		default:
			s.InfoChanges++
			s.InfoPlaces += g.Count()
		}
	}
	return s
}
