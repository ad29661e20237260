package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
)

// acknowledgements reads from GitHub what policy.Decide judges: the current labels of the pull
// request the run carries. A re-run replays the original event, so a label added since is only
// known to the API; the event's labels serve when the API cannot answer.
func (r *run) acknowledgements(ctx context.Context, cfg *policy.Config) policy.Context {
	pc := policy.Context{Label: cfg.AcknowledgeLabel}
	if r.target.pr == 0 {
		return pc
	}
	pc.Run = policy.PullRequestRun
	pr := policy.PullRequest{Number: r.target.pr, Labels: r.target.labels}
	if r.pub != nil {
		ls, err := r.pub.API.ListLabels(ctx, r.target.pr)
		if err != nil {
			r.logf("could not read the pull request's current labels (%v); using the event's", err)
		} else {
			pr.Labels = ls
		}
	}
	pc.PullRequests = append(pc.PullRequests, pr)
	return pc
}

// maxAcknowledgedListed bounds the list of acknowledged changes in the check run's summary; the
// changelog and the JSON report have every one.
const maxAcknowledgedListed = 30

// acknowledgedList is the Markdown list of the changes acknowledged (by ignore entries or
// replies), each once, with who acknowledged it and why; text from users is escaped.
func acknowledgedList(acks []policy.Acknowledged) string {
	if len(acks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n**Acknowledged** (not counted):\n")
	seen := map[string]bool{}
	n := 0
	for _, a := range acks {
		f := a.Finding
		key := f.Change + "\x00" + a.By
		if seen[key] {
			continue
		}
		seen[key] = true
		if n++; n > maxAcknowledgedListed {
			continue
		}
		where := strings.TrimSpace(strings.Join([]string{f.CRD, f.Version, f.Path}, " "))
		fmt.Fprintf(&b, "\n- %s `%s` %s (change `%s`): by %s — %s", f.Severity, f.Rule, report.Escape(where), f.Change, report.Escape(a.By), report.Escape(a.Reason))
	}
	if n > maxAcknowledgedListed {
		fmt.Fprintf(&b, "\n- and %d more (see the changelog or the JSON report)", n-maxAcknowledgedListed)
	}
	return b.String()
}
