package policy

import (
	"fmt"
	"time"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
)

// RatchetNote is appended to findings that ratcheting lowered to a warning: the message says
// already which updates of stored objects still pass (rules.Ratchet).
const RatchetNote = " (a warning with ratcheting: true, since " + rules.RatchetValue + " keeps stored objects updating; creates must conform)"

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
	// Notices say which ignore entries expired and which name a change that is not there.
	Notices []string
}

// Apply runs the policy steps in order: fail mode, ratcheting, per-rule severities (off drops),
// the stability cap, then each finding gets its change's ID (change.ID, before warn mode so
// that the ID an ignore entry names does not depend on the mode), ignores, then warn mode; last,
// the findings are put in the one order every report starts from (finding.Order: what the API
// server refuses outright first, Refused set from the registry). The input is not modified.
func (c *Config) Apply(in []finding.Finding) Outcome {
	out := Outcome{Findings: make([]finding.Finding, 0, len(in))}
	today := c.today()
	used := make([]bool, len(c.Ignore))
	lapsed := make([]bool, len(c.Ignore))
	for _, f := range in {
		f.Refused = rules.Refused(f.Rule)
		// A reading failure is not a rule (Finding.Unread): no severity, off, ratcheting,
		// stability cap or warn mode hides the input crdguard could not read. An ignore entry,
		// with its reason, still acknowledges it; a file paths excludes is never read at all.
		if !f.Unread {
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
			c.capStability(&f)
		}
		f.Change = change.ID(&f)
		if i := c.ignored(&f, today, lapsed); i >= 0 {
			used[i] = true
			out.Ignored++
			out.Acknowledged = append(out.Acknowledged, Acknowledged{Finding: f, Reason: c.Ignore[i].Reason, By: c.entryName(i)})
			continue
		}
		if c.Mode == "warn" && f.Severity == finding.Error && !f.Unread {
			f.Severity = finding.Warning
		}
		f.Message = finding.Cut(f.Message, finding.MaxMessage)
		out.Findings = append(out.Findings, f)
	}
	finding.Order(out.Findings)
	for i, ig := range c.Ignore {
		switch {
		case lapsed[i]:
			out.Notices = append(out.Notices, fmt.Sprintf("%s expired on %s: the findings it acknowledged (%q) count again; renew it with a later expires, or fix them", c.entryName(i), ig.Expires, ig.Reason))
		case ig.Change != "" && !used[i] && c.expired(i, today):
			out.Notices = append(out.Notices, fmt.Sprintf("%s expired on %s and matches no finding any more: remove it", c.entryName(i), ig.Expires))
		case ig.Change != "" && !used[i]:
			out.Notices = append(out.Notices, fmt.Sprintf("%s matches no finding: no change has that ID (fixed, or changed since the ID was copied); remove the entry or copy the current ID from the report", c.entryName(i)))
		}
	}
	return out
}

// Acknowledged is a finding an ignore entry (or a reply on the pull request) dropped, with the
// reason given and who gave it.
type Acknowledged struct {
	Finding finding.Finding
	Reason  string
	// By names the acknowledgement: an ignore entry ("ignore[0] (line 12)") or a reply
	// ("@alice (MEMBER) on #42").
	By string
}

// ignored returns the index of the first ignore entry in force that matches f, or -1; entries
// that would match but expired are marked in lapsed.
func (c *Config) ignored(f *finding.Finding, today time.Time, lapsed []bool) int {
	for i, ig := range c.Ignore {
		if match(ig.CRD, f.CRD) && match(ig.Version, f.Version) && match(ig.Path, f.Path) && match(ig.Rule, f.Rule) && match(ig.Change, f.Change) {
			if c.expired(i, today) {
				lapsed[i] = true
				continue
			}
			return i
		}
	}
	return -1
}

func match(pattern, value string) bool { return pattern == "" || pattern == value }
