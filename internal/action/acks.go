package action

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// acknowledgements reads from GitHub what policy.Decide judges: the current labels of the pull
// requests the run carries (a re-run replays the original event, so a label added since is only
// known to the API; the event's labels serve when the API cannot answer) and the replies to
// crdguard's comments on them. A pull request run carries its pull request; a merge group the
// pull requests queued in it; a push the pull request whose merge it is; anything else none.
func (r *run) acknowledgements(ctx context.Context, cfg *policy.Config, repo *source.Repo) policy.Context {
	pc := policy.Context{Run: r.target.kind, Label: cfg.AcknowledgeLabel}
	var numbers []int
	switch r.target.kind {
	case policy.PullRequestRun:
		numbers = []int{r.target.pr}
	case policy.MergeGroupRun:
		numbers = queued(r.target.queueRef, repo, r.target.base, r.target.head)
		if len(numbers) == 0 {
			r.logf("merge group %q names no pull request: only the configuration acknowledges changes", r.target.queueRef)
		} else {
			r.logf("merge group: %s", prList(numbers))
		}
	case policy.PushRun:
		numbers = r.mergedBy(ctx)
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
	return pc
}

// mergedBy asks GitHub which pull request a pushed commit is the merge of (GET …/commits/{sha}/pulls:
// merged, with that merge commit). A direct push has none, and only the configuration
// acknowledges its changes.
func (r *run) mergedBy(ctx context.Context) []int {
	if r.pub == nil {
		return nil
	}
	prs, err := r.pub.API.PullRequestsOfCommit(ctx, r.target.head)
	if err != nil {
		r.logf("could not ask which pull request %s came from (%v): only the configuration acknowledges changes", abbrev(r.target.head), err)
		return nil
	}
	var out []int
	for _, pr := range prs {
		if pr.Merged && pr.MergeCommitSHA == r.target.head {
			out = append(out, pr.Number)
		}
	}
	if len(out) == 0 {
		r.logf("push: %s is not the merge of a pull request (a direct push): only the configuration acknowledges changes", abbrev(r.target.head))
	} else {
		r.logf("push: %s merged %s", abbrev(r.target.head), prList(out))
	}
	return out
}

// queueRefRE is a merge queue's branch: gh-readonly-queue/<base branch>/pr-<number>-<base sha>.
var queueRefRE = regexp.MustCompile(`^(?:refs/heads/)?gh-readonly-queue/.+/pr-([0-9]+)-[0-9a-f]{40}$`)

// queuedSubjectRE finds the pull request a queued commit brings: the merge method's "Merge pull
// request #N from …", or the squash method's subject ending in "(#N)".
var queuedSubjectRE = regexp.MustCompile(`^Merge pull request #([0-9]+) from |\(#([0-9]+)\)$`)

// maxQueued bounds the commits of a merge group read for pull request numbers (GitHub's merge
// queue builds at most 100 pull requests into one group).
const maxQueued = 100

// queued lists the pull requests in a merge group: the one its branch names, and those the
// group's own commits (head's first parents back to base) name, in queue order.
func queued(queueRef string, repo *source.Repo, base, head string) []int {
	var out []int
	add := func(s string) {
		if n, err := strconv.Atoi(s); err == nil && n > 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if repo != nil {
		var found []string
		c, err := repo.Commit(head)
		for i := 0; err == nil && i < maxQueued && c.Hash.String() != base; i++ {
			subject, _, _ := strings.Cut(c.Message, "\n")
			if m := queuedSubjectRE.FindStringSubmatch(strings.TrimSpace(subject)); m != nil {
				found = append(found, m[1]+m[2])
			}
			if c.NumParents() == 0 {
				break
			}
			c, err = c.Parent(0)
		}
		slices.Reverse(found)
		for _, n := range found {
			add(n)
		}
	}
	if m := queueRefRE.FindStringSubmatch(queueRef); m != nil {
		add(m[1])
	}
	return out
}

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
