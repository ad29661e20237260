package policy

import (
	"github.com/crdguard/crdguard/internal/finding"
)

// RatchetNote is appended to findings that ratcheting lowered to a warning.
const RatchetNote = " (validation ratcheting: existing objects keep updating while they leave this field unchanged, but new objects must conform)"

// Outcome is the findings after the policy, and what it hid.
type Outcome struct {
	Findings []finding.Finding
	// Ignored counts findings dropped by ignore entries.
	Ignored int
	// Acknowledged are those findings, each with the reason of the entry that dropped it, for
	// the changelog's acknowledged breaking changes.
	Acknowledged []Acknowledged
	// Off counts findings of rules set to off.
	Off int
}

// Apply runs the policy steps in order: fail mode, ratcheting, per-rule severities (off drops),
// ignores, then warn mode. The input is not modified.
func (c *Config) Apply(in []finding.Finding) Outcome {
	out := Outcome{Findings: make([]finding.Finding, 0, len(in))}
	for _, f := range in {
		if f.Rule == "unknown-change" && c.FailMode == "open" && f.Severity == finding.Error {
			f.Severity = finding.Warning
		}
		if c.Ratcheting && f.Ratchetable && f.Severity == finding.Error {
			f.Severity = finding.Warning
			f.Message += RatchetNote
		}
		if o, ok := c.severities[f.Rule]; ok {
			if o.off {
				out.Off++
				continue
			}
			f.Severity = o.severity
		}
		if ig := c.ignored(&f); ig != nil {
			out.Ignored++
			out.Acknowledged = append(out.Acknowledged, Acknowledged{Finding: f, Reason: ig.Reason})
			continue
		}
		if c.Mode == "warn" && f.Severity == finding.Error {
			f.Severity = finding.Warning
		}
		out.Findings = append(out.Findings, f)
	}
	return out
}

// Acknowledged is a finding an ignore entry dropped, with the entry's reason.
type Acknowledged struct {
	Finding finding.Finding
	Reason  string
}

// ignored returns the first ignore entry that matches f, or nil.
func (c *Config) ignored(f *finding.Finding) *Ignore {
	for i, ig := range c.Ignore {
		if match(ig.CRD, f.CRD) && match(ig.Version, f.Version) && match(ig.Path, f.Path) && match(ig.Rule, f.Rule) {
			return &c.Ignore[i]
		}
	}
	return nil
}

func match(pattern, value string) bool { return pattern == "" || pattern == value }
