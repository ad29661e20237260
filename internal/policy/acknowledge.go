package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// Runs crdguard decides acknowledgements for: the event's kind, which says whose
// acknowledgements apply and how the verdict's hint reads.
const (
	// PullRequestRun is a run on a pull request (pull_request, pull_request_target, or a
	// workflow_run posting for one): its label and replies apply.
	PullRequestRun = "pull_request"
	// MergeGroupRun is a merge queue's run: the acknowledgements of the pull requests in the group.
	MergeGroupRun = "merge_group"
	// PushRun is a push: the acknowledgements of the pull request the pushed commit came from.
	PushRun = "push"
)

// Context is what a run read from GitHub about the pull requests it carries; the action fills
// it in and Decide alone judges it, so that a pull request, its merge queue run and the push of
// its merge come to the same verdict.
type Context struct {
	// Run is PullRequestRun, MergeGroupRun, PushRun or "" (no pull request: two releases, a
	// local run).
	Run string
	// PullRequests are the pull requests the run carries: one for a pull request or the push of
	// a merged one, those in the group for a merge queue, none for a direct push.
	PullRequests []PullRequest
	// Label is the acknowledgement label (acknowledgeLabel).
	Label string
	// Attributed says which pull request brought which change is known: each pull request's
	// Brings, and Unattributed for the commits of none (a direct push among merges). Without it
	// every pull request is taken to bring every change (a run of one pull request).
	Attributed bool
	// Unattributed are the change IDs that commits of no known pull request bring: only the
	// configuration acknowledges them.
	Unattributed map[string]bool
}

// PullRequest is one pull request's acknowledgements as GitHub has them now.
type PullRequest struct {
	Number int
	// Labels are its current labels.
	Labels []string
	// Replies are the replies to crdguard's inline comments on it.
	Replies []Reply
	// Brings are the change IDs its own commits bring, compared alone (with Attributed).
	Brings map[string]bool
}

// Reply is a reply to a review comment of crdguard, as GitHub lists it.
type Reply struct {
	// ID is the reply's comment ID; To the comment it answers.
	ID, To int64
	// Change is the change ID of the comment it answers; "" when that comment is not
	// crdguard's (or carries no change).
	Change string
	Author string
	// Association is GitHub's author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, …
	Association string
	// Bot says the author is a bot account; Edited that the reply was edited after posting.
	Bot, Edited bool
	Body        string
	// Answered says crdguard already replied to this reply (it answers a refused one once).
	Answered bool
}

// Command starts the first line of a reply that acknowledges a change.
const Command = "/crdguard acknowledge"

// writeAccess are the author associations of people who may acknowledge: those who can push.
var writeAccess = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// Answer is crdguard's answer, posted once in the thread, to a reply that asked to acknowledge
// a change: that it did (the thread is marked), or why it may not.
type Answer struct {
	Reply Reply
	// Text is the answer.
	Text string
}

// Decision is what counts after the acknowledgements.
type Decision struct {
	// Findings are those still counting; the ones replies acknowledged are in Acknowledged.
	Findings []finding.Finding
	// Acknowledged are the findings replies acknowledged, with who and why.
	Acknowledged []Acknowledged
	// Fails says what still counts reaches fail-on.
	Fails bool
	// ByLabel says the label acknowledges the whole run: a failing run passes, neutral.
	ByLabel bool
	// Answers are what crdguard replies, once, to the replies that acknowledged a change and to
	// those from people who may not.
	Answers []Answer
	// Notes say, for the log, which replies acknowledge nothing and why.
	Notes []string
	// Brought says, in a run of several pull requests or of commits of no known one besides (a
	// merge group, a push of merges), which pull requests bring each change at fail-on or above
	// that no reply acknowledged, once per change, in the findings' order: who must acknowledge
	// what for the run to pass.
	Brought []Brought
}

// Brought is who brings one change that counts, in a run of several pull requests.
type Brought struct {
	// Finding is the change's first place.
	Finding finding.Finding
	// By are the pull requests whose own commits bring it (all of the run's when which one
	// brings what is not known); Replied those of them where a reply acknowledges it, Labelled
	// those whose label does.
	By, Replied, Labelled []int
	// Unattributed says commits of no known pull request bring it too: only the configuration
	// acknowledges it.
	Unattributed bool
}

// Decide applies the pull requests' acknowledgements to the findings after the configuration
// (Apply). A reply `/crdguard acknowledge <reason>` to crdguard's comment by an OWNER, MEMBER or
// COLLABORATOR acknowledges that comment's change ID on its pull request, and only it: a change
// pushed later has another ID. A change counts as acknowledged when every pull request that
// brings it acknowledges it (ctx.Attributed says which do; otherwise every pull request of the
// run), and no commit of an unknown pull request brings it too. Acknowledged by replies alone,
// the finding leaves the count; with a label among them (the label acknowledges every change of
// its pull request), the run passes as neutral (ByLabel) when what no label or reply covers
// would not fail it. A run with no pull request acknowledges nothing.
func Decide(fs []finding.Finding, failOn FailOn, ctx Context) Decision {
	var d Decision
	acks := map[int]map[string]Acknowledged{} // pull request → change → its first acknowledgement
	for _, pr := range ctx.PullRequests {
		acks[pr.Number] = map[string]Acknowledged{}
		for _, r := range pr.Replies {
			reason, ok := parseCommand(r.Body)
			switch {
			case !ok:
				continue
			case r.Bot:
				d.Notes = append(d.Notes, fmt.Sprintf("reply %d on #%d is by a bot (%s): it acknowledges nothing", r.ID, pr.Number, r.Author))
			case r.Edited:
				d.Notes = append(d.Notes, fmt.Sprintf("reply %d on #%d by %s was edited after it was posted: it acknowledges nothing (post a new reply)", r.ID, pr.Number, r.Author))
			case r.Change == "":
				d.Notes = append(d.Notes, fmt.Sprintf("reply %d on #%d by %s answers a comment that is not crdguard's: it acknowledges nothing", r.ID, pr.Number, r.Author))
			case reason == "":
				d.Notes = append(d.Notes, fmt.Sprintf("reply %d on #%d by %s gives no reason: it acknowledges nothing (write %s <reason>)", r.ID, pr.Number, r.Author, Command))
			case !slices.Contains(writeAccess, r.Association):
				d.Notes = append(d.Notes, fmt.Sprintf("reply %d on #%d by %s (%s) acknowledges nothing: only owners, members and collaborators may", r.ID, pr.Number, r.Author, orNone(r.Association)))
				if !r.Answered {
					d.Answers = append(d.Answers, Answer{Reply: r, Text: fmt.Sprintf(
						"This reply acknowledges nothing: only people with write access to the repository (owners, members, collaborators) may acknowledge a change, and GitHub lists its author as %s. Ask a maintainer to reply `%s <reason>`.",
						orNone(r.Association), Command)})
				}
			default:
				if _, seen := acks[pr.Number][r.Change]; !seen {
					acks[pr.Number][r.Change] = Acknowledged{Reason: reason, By: fmt.Sprintf("@%s (%s) on #%d", r.Author, r.Association, pr.Number)}
				}
				if !r.Answered {
					d.Answers = append(d.Answers, Answer{Reply: r, Text: fmt.Sprintf(
						"Acknowledged: change `%s` no longer fails the check, on this pull request, in the merge queue and on the push of its merge. A change pushed later is not covered. The check run's summary lists it with the reason.", r.Change)})
				}
			}
		}
	}
	var uncovered []finding.Finding // what neither a label nor a reply covers
	listed := map[string]bool{}
	for _, f := range fs {
		bringers := ctx.bringers(f.Change)
		var replied []Acknowledged
		var repliedBy, labelled []int
		for _, pr := range bringers {
			if a, ok := acks[pr.Number][f.Change]; ok {
				replied, repliedBy = append(replied, a), append(repliedBy, pr.Number)
			} else if ctx.Label != "" && slices.Contains(pr.Labels, ctx.Label) {
				labelled = append(labelled, pr.Number)
			}
		}
		switch {
		case f.Change != "" && len(bringers) > 0 && len(replied) == len(bringers):
			d.Acknowledged = append(d.Acknowledged, joined(f, replied))
			continue
		case f.Change == "" || len(bringers) == 0 || len(replied)+len(labelled) < len(bringers):
			uncovered = append(uncovered, f)
		}
		d.Findings = append(d.Findings, f)
		if (len(ctx.PullRequests) > 1 || ctx.Attributed) && f.Change != "" && !listed[f.Change] && failOn.Fails([]finding.Finding{f}) {
			listed[f.Change] = true
			b := Brought{Finding: f, Labelled: labelled, Replied: repliedBy, Unattributed: ctx.Attributed && ctx.Unattributed[f.Change]}
			for _, pr := range ctx.broughtBy(f.Change) {
				b.By = append(b.By, pr.Number)
			}
			d.Brought = append(d.Brought, b)
		}
	}
	d.Fails = failOn.Fails(d.Findings)
	d.ByLabel = d.Fails && !failOn.Fails(uncovered)
	return d
}

// bringers are the pull requests whose acknowledgements decide a change: those that bring it
// (broughtBy), none when a commit of no known pull request brings it too.
func (ctx Context) bringers(change string) []PullRequest {
	if ctx.Attributed && ctx.Unattributed[change] {
		return nil
	}
	return ctx.broughtBy(change)
}

// broughtBy are the pull requests that bring a change: those whose own commits bring it when
// the run knows, else all of them; none in a run with no pull request.
func (ctx Context) broughtBy(change string) []PullRequest {
	if ctx.Run == "" {
		return nil
	}
	if !ctx.Attributed {
		return ctx.PullRequests
	}
	var out []PullRequest
	for _, pr := range ctx.PullRequests {
		if pr.Brings[change] {
			out = append(out, pr)
		}
	}
	return out
}

// joined is one acknowledgement of a finding from the replies of every pull request that
// brings its change.
func joined(f finding.Finding, replied []Acknowledged) Acknowledged {
	a := Acknowledged{Finding: f}
	var by, reasons []string
	for _, r := range replied {
		by, reasons = append(by, r.By), append(reasons, r.Reason)
	}
	a.By, a.Reason = strings.Join(by, "; "), strings.Join(reasons, "; ")
	return a
}

// parseCommand reads a reply's first line: ok when it is the acknowledge command, with the
// reason that follows it ("" when there is none).
func parseCommand(body string) (reason string, ok bool) {
	first, _, _ := strings.Cut(strings.TrimLeft(body, " \t\r\n"), "\n")
	first = strings.TrimSpace(first)
	rest, found := strings.CutPrefix(first, Command)
	if !found || rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != ':' {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":")), true
}

func orNone(s string) string {
	if s == "" {
		return "NONE"
	}
	return s
}
