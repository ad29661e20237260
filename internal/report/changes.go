package report

import (
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
)

// Verdict is what a run concluded, for the last line of the reports people read.
type Verdict struct {
	// Fails says findings are at or above the fail-on threshold.
	Fails bool
	// Acknowledged says the pull request carries Label, so a failing run passes.
	Acknowledged bool
	// Label is the acknowledgement label (acknowledgeLabel of the configuration).
	Label string
	// Run is the kind of run (policy.PullRequestRun, MergeGroupRun, PushRun; "" for the CLI),
	// which decides how a failing verdict says to acknowledge: a label only on pull requests.
	Run string
}

// verdict is r's verdict, or one derived from its findings (errors fail) when the caller gave none.
func (r *Report) verdict() Verdict {
	if r.Verdict != nil {
		return *r.Verdict
	}
	return Verdict{Fails: Summarize(*r).Error > 0}
}

// Line says what the run concluded and what to do about it.
func (v Verdict) Line(s Summary) string {
	word, advice := v.words(s, func(s string) string { return s })
	return "verdict: " + word + " — " + advice
}

// ignoreHint is how any run acknowledges one change: the configuration.
const ignoreHint = "an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason"

// words are the verdict, pass or fail, and what to do; esc is applied to the label, the only
// text from the configuration.
func (v Verdict) words(s Summary, esc func(string) string) (word, advice string) {
	label := "the acknowledgement label"
	if v.Label != "" {
		label = "the label " + esc(v.Label)
	}
	switch {
	case v.Acknowledged:
		return "pass", "the breaking changes are acknowledged by " + label
	case v.Fails:
		switch v.Run {
		case policy.PullRequestRun:
			return "fail", "fix the changes above, or acknowledge them: one change by a maintainer's reply `" + policy.Command + " <reason>` to its comment, or " + ignoreHint + "; all of them with " + label + " on the pull request"
		case policy.MergeGroupRun:
			return "fail", "fix the changes above, or acknowledge them on their pull request (a maintainer's reply `" + policy.Command + " <reason>`, or " + label + ") and queue it again, or with " + ignoreHint
		}
		return "fail", "fix the changes above, or acknowledge them with " + ignoreHint
	case s.Error+s.Warning > 0:
		return "pass", "review the changes above"
	}
	return "pass", "no breaking CRD changes"
}

// crdChanges is one CRD's changes, most serious first.
type crdChanges struct {
	CRD string
	// Groups are the changes of this CRD alone.
	Groups []change.Group
	// Shared are this CRD's places of the changes that span several CRDs (an embedded
	// built-in type's), which reports show once, apart.
	Shared []change.Group
	// several marks the section of a report that holds the shared changes themselves.
	several bool
}

// counted are the CRD's changes as its tally counts them: its own and its part of shared ones.
func (c *crdChanges) counted() []change.Group {
	return append(append([]change.Group{}, c.Groups...), c.Shared...)
}

// changeSet is the changes of a report, each once.
type changeSet struct {
	// CRDs are the CRDs with changes: those with errors first, then by name.
	CRDs []crdChanges
	// Shared are the changes that span several CRDs, most serious first.
	Shared []change.Group
	// All is every change once, for tallies.
	All []change.Group
}

// byCRD groups the findings at or above min by CRD and by change: the CRDs with the most
// important findings first (finding.Importance: an error the API server refuses outright before
// other errors, before warnings, before info), then by name; within a CRD by importance, then
// by version and place. A change in several CRDs (DESIGN §7) goes in Shared, whole, and in each
// CRD's Shared, that CRD's part of it.
func byCRD(fs []finding.Finding, min finding.Severity) changeSet {
	shown := make([]finding.Finding, 0, len(fs))
	worst := map[string]*finding.Finding{}
	for i, f := range fs {
		if f.Severity >= min {
			shown = append(shown, f)
			if w := worst[f.CRD]; w == nil || finding.Importance(&fs[i], w) < 0 {
				worst[f.CRD] = &fs[i]
			}
		}
	}
	sort.SliceStable(shown, func(i, j int) bool {
		a, b := &shown[i], &shown[j]
		if a.CRD != b.CRD {
			if c := finding.Importance(worst[a.CRD], worst[b.CRD]); c != 0 {
				return c < 0
			}
			return a.CRD < b.CRD
		}
		if c := finding.Importance(a, b); c != 0 {
			return c < 0
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return finding.Less(a, b)
	})
	var set changeSet
	set.All = change.Groups(shown)
	spans := map[string]bool{}
	for i := range set.All {
		if g := &set.All[i]; g.ID != "" && len(g.CRDs()) > 1 {
			spans[g.ID] = true
			set.Shared = append(set.Shared, *g)
		}
	}
	sort.SliceStable(set.Shared, func(i, j int) bool { return finding.Importance(set.Shared[i].First(), set.Shared[j].First()) < 0 })
	for start := 0; start < len(shown); {
		end := start + 1
		for end < len(shown) && shown[end].CRD == shown[start].CRD {
			end++
		}
		c := crdChanges{CRD: shown[start].CRD}
		for _, g := range change.Groups(shown[start:end]) {
			if spans[g.ID] {
				c.Shared = append(c.Shared, g)
			} else {
				c.Groups = append(c.Groups, g)
			}
		}
		set.CRDs = append(set.CRDs, c)
		start = end
	}
	return set
}

// severityNoun names the changes of a severity in tallies.
var severityNoun = map[finding.Severity]string{finding.Error: "breaking change", finding.Warning: "warning", finding.Info: "safe change"}

// Tally counts changes and places by severity, most serious first: "1 breaking change at 24
// places in 2 copies, 1 warning". Severities without changes are left out unless always says
// otherwise.
func Tally(gs []change.Group, always ...finding.Severity) string {
	var parts []string
	for _, sev := range []finding.Severity{finding.Error, finding.Warning, finding.Info} {
		// Copies are counted per change: a base file and a head file are one copy, the most
		// copies one change is in are the copies of the tally.
		n, places, copies := 0, 0, 0
		for i := range gs {
			if gs[i].First().Severity != sev {
				continue
			}
			n++
			places += gs[i].Count()
			copies = max(copies, copiesOf(&gs[i]))
		}
		if n == 0 && !contains(always, sev) {
			continue
		}
		s := Count(n, severityNoun[sev])
		if places > n {
			s += " at " + change.Places(places)
			if copies > 1 {
				s += " in " + change.Copies(copies)
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// copiesOf is how many copies of one CRD a change is in: the files of its places, counted per
// CRD (the files of two CRDs that share a change are not copies of each other).
func copiesOf(g *change.Group) int {
	files := map[string]map[string]bool{}
	n := 0
	for _, f := range g.Places {
		if files[f.CRD] == nil {
			files[f.CRD] = map[string]bool{}
		}
		for _, l := range append([]finding.Location{f.Location}, f.Locations...) {
			files[f.CRD][l.File] = true
		}
		n = max(n, len(files[f.CRD]))
	}
	return n
}

func contains(ss []finding.Severity, s finding.Severity) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Counts tallies r's breaking changes and warnings, with their places, for titles: "2 breaking
// changes at 24 places, 0 warnings".
func Counts(r Report) string {
	return Tally(byCRD(r.Findings, finding.Warning).All, finding.Error, finding.Warning)
}

// PlaceLine is one place of a change: version, path and file:line as every human format writes
// it (Where), with the other copies it is in.
func PlaceLine(f *finding.Finding) string {
	parts := []string{}
	for _, p := range []string{f.Version, f.Path} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	parts = append(parts, Where(f))
	if also := AlsoIn(*f); also != "" {
		parts = append(parts, "also "+also)
	}
	return strings.Join(parts, " ")
}
