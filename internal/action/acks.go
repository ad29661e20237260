package action

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// acknowledgements reads from GitHub what policy.Decide judges: the current labels of the pull
// requests the run carries (a re-run replays the original event, so a label added since is only
// known to the API; the event's labels serve when the API cannot answer), the replies to
// crdguard's comments on them, and, when a merge group or push carries several pull requests or
// commits of none, which changes each brings (attribute.go). A pull request run carries its pull
// request; a merge group those queued in it; a push those that merged its commits.
func (r *run) acknowledgements(ctx context.Context, cfg *policy.Config, repo *source.Repo, opts check.GitOptions, res *check.GitResult) policy.Context {
	pc := policy.Context{Run: r.target.kind, Label: cfg.AcknowledgeLabel}
	var segs []segment
	switch r.target.kind {
	case policy.PullRequestRun:
		segs = []segment{{pr: r.target.pr}}
	case policy.MergeGroupRun, policy.PushRun:
		if r.pub == nil {
			r.logf("no GitHub API: only the configuration acknowledges changes")
			return pc
		}
		segs = r.segments(ctx, repo, res)
	}
	var numbers []int
	for _, s := range segs {
		if s.pr != 0 && !slices.Contains(numbers, s.pr) {
			numbers = append(numbers, s.pr)
		}
	}
	if r.target.kind != policy.PullRequestRun {
		if len(numbers) == 0 {
			r.logf("%s: no pull request brought these commits: only the configuration acknowledges changes", r.target.kind)
		} else {
			r.logf("%s: %s", r.target.kind, prList(numbers))
		}
	}
	for _, n := range numbers {
		pr := policy.PullRequest{Number: n}
		if n == r.target.pr {
			pr.Labels = r.target.labels
		}
		if r.pub == nil {
			pc.PullRequests = append(pc.PullRequests, pr)
			continue
		}
		if ls, err := r.pub.API.ListLabels(ctx, n); err != nil {
			r.logf("could not read the current labels of #%d (%v); using the event's", n, err)
		} else {
			pr.Labels = ls
		}
		if replies, err := r.pub.Replies(ctx, n); err != nil {
			r.logf("could not read the replies to crdguard's comments on #%d (%v): they acknowledge nothing in this run", n, err)
		} else {
			pr.Replies = replies
		}
		pc.PullRequests = append(pc.PullRequests, pr)
	}
	if len(numbers) > 0 {
		if err := r.attribute(repo, opts, cfg, segs, &pc); err != nil {
			r.logf("%v: only the configuration acknowledges changes", err)
			pc.PullRequests = nil
		}
	}
	return pc
}

// segments splits what a merge group or push compared (res) into the runs of commits each pull
// request brought; none when they cannot be told apart (then no pull request acknowledges
// anything). A forced push also dropped the commits between the merge base and before: undoing
// them is no pull request's.
func (r *run) segments(ctx context.Context, repo *source.Repo, res *check.GitResult) []segment {
	if r.target.kind == policy.MergeGroupRun {
		segs, ok := r.queueSegments(ctx, repo, res.MergeBase)
		if !ok {
			return nil
		}
		return segs
	}
	from := res.MergeBase
	var dropped []segment
	if r.target.forced {
		b, errB := repo.Commit(res.Base)
		h, errH := repo.Commit(res.Head)
		if errB != nil || errH != nil {
			r.logf("push: %v: only the configuration acknowledges changes", errors.Join(errB, errH))
			return nil
		}
		mb, err := repo.MergeBase(b, h)
		if err != nil {
			r.logf("push: the forced push's merge base: %v: only the configuration acknowledges changes", err)
			return nil
		}
		from = mb.Hash.String()
		if from != res.Base {
			dropped = []segment{{from: res.Base, to: from}}
		}
	}
	commits, ok := firstParents(repo, from, res.Head)
	if !ok {
		r.logf("push: %s is not on the first-parent line of %s within %d commits: only the configuration acknowledges changes", abbrev(from), abbrev(res.Head), maxChain)
		return nil
	}
	return append(dropped, r.pushSegments(ctx, commits, from)...)
}

// queueRefRE is a merge queue's branch: gh-readonly-queue/<base branch>/pr-<number>-<base sha>.
var queueRefRE = regexp.MustCompile(`^(?:refs/heads/)?gh-readonly-queue/.+/pr-([0-9]+)-[0-9a-f]{40}$`)

func prList(numbers []int) string {
	var parts []string
	for _, n := range numbers {
		parts = append(parts, "#"+strconv.Itoa(n))
	}
	return "pull request " + strings.Join(parts, ", ")
}

// answer replies once to each reply that asked to acknowledge: it did, or why it may not.
func (r *run) answer(ctx context.Context, answers []policy.Answer) {
	if r.pub == nil || r.target.kind != policy.PullRequestRun {
		return // the pull request's own run answers
	}
	for _, a := range answers {
		if err := r.pub.Answer(ctx, r.target.pr, a); err != nil {
			r.logf("could not answer reply %d: %v", a.Reply.ID, err)
		}
	}
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

// countChanges counts the distinct changes among acknowledged findings.
func countChanges(acks []policy.Acknowledged) int {
	seen := map[string]bool{}
	for _, a := range acks {
		seen[a.Finding.Change] = true
	}
	return len(seen)
}

// broughtList says, in the check run's summary of a run of several pull requests (a merge
// group, a push of merges), which pull request brings each change that still counts and whose
// label already covers it: who must acknowledge what for the run to pass. Each line is also
// logged.
func (r *run) broughtList(brought []policy.Brought) string {
	if len(brought) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n**Which pull request brings what**:\n")
	for i, br := range brought {
		f := br.Finding
		var by []string
		for _, n := range br.By {
			switch {
			case slices.Contains(br.Replied, n):
				by = append(by, fmt.Sprintf("#%d (acknowledged by reply)", n))
			case slices.Contains(br.Labelled, n):
				by = append(by, fmt.Sprintf("#%d (its label acknowledges it)", n))
			default:
				by = append(by, fmt.Sprintf("#%d (not acknowledged)", n))
			}
		}
		who := strings.Join(by, ", ")
		switch {
		case br.Unattributed && who != "":
			who += "; commits of no pull request bring it too: only an ignore entry in .crdguard.yaml acknowledges it"
		case br.Unattributed:
			who = "commits of no pull request: only an ignore entry in .crdguard.yaml acknowledges it"
		case who == "":
			who = "no pull request alone (the pull requests make it together): only an ignore entry in .crdguard.yaml acknowledges it"
		}
		where := strings.TrimSpace(strings.Join([]string{f.CRD, f.Version, f.Path}, " "))
		r.logf("change %s (%s %s): %s", f.Change, f.Rule, where, who)
		if i < maxAcknowledgedListed {
			fmt.Fprintf(&b, "\n- %s `%s` %s (change `%s`): %s", f.Severity, f.Rule, report.Escape(where), f.Change, report.Escape(who))
		}
	}
	if len(brought) > maxAcknowledgedListed {
		fmt.Fprintf(&b, "\n- and %d more (the job's log lists every one)", len(brought)-maxAcknowledgedListed)
	}
	return b.String()
}
