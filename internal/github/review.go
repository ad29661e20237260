package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/report"
	"github.com/crdguard/crdguard/internal/source"
)

// MaxInlineComments keeps a review small: GitHub's secondary rate limits punish large bursts, and
// reviewers stop reading. The rest is listed in the review body.
const MaxInlineComments = 30

// MaxFileComments caps file-level comments, which cost one request each (GitHub allows about 80
// content-creating requests a minute); the rest is listed in the review body.
const MaxFileComments = 10

// PR is the pull request a run reviews.
type PR struct {
	Number  int
	HeadSHA string
}

// Publisher posts findings through the API.
type Publisher struct {
	API API
	// Instance scopes the fingerprints (the check name): several crdguard jobs on one pull
	// request each keep their own comments.
	Instance string
	// Identity is the login the action posts as; only its comments count as posted and only they
	// are deleted. Empty: asked of the API.
	Identity string
	// Completer, when set, sends the request that completes the check run: a client of its own
	// with a wait budget of its own, so that neither go-github's local block after a rate limit
	// nor the waits spent on other requests keep the check run open.
	Completer API
	DocsURL   string
	// Logf receives one line per thing done or given up; it never sees the token.
	Logf func(format string, args ...any)
}

func (p *Publisher) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}

func (p *Publisher) docsURL() string {
	if p.DocsURL == "" {
		return DefaultDocsURL
	}
	return p.DocsURL
}

// ReviewResult counts what a review run did.
type ReviewResult struct {
	Inline, FileLevel, InBody, AlreadyPosted, Deleted, KeptWithReplies int
}

type placement int

const (
	inline placement = iota
	fileLevel
	inBody
)

// planned is one new finding and where it goes.
type planned struct {
	f     *finding.Finding
	fp    string
	where placement
	path  string
	line  int
	side  string
}

// Review posts the findings at warning or above that are not posted yet: inline where their line
// is inside a hunk of the diff, on the file where the file changed, otherwise in the review body;
// and deletes the action's own earlier comments that no longer apply, unless someone replied.
// A review GitHub refuses (422) is sent again with every comment in its body, so no finding is
// lost.
func (p *Publisher) Review(ctx context.Context, pr PR, fs []finding.Finding, diff *source.Diff) (ReviewResult, error) {
	var res ReviewResult
	me := p.Identity
	if me == "" {
		var err error
		if me, err = p.API.Identity(ctx); err != nil {
			return res, err
		}
	}
	existing, err := p.API.ListReviewComments(ctx, pr.Number)
	if err != nil {
		return res, err
	}
	reviews, err := p.API.ListReviews(ctx, pr.Number)
	if err != nil {
		return res, err
	}
	// Any comment with this instance's marker means the finding is on the pull request (the
	// identity may be a GitHub App's, which the token cannot ask for); only comments written by
	// the identity are deleted: a person quoting one copies its marker.
	posted := map[string]bool{}
	ours := map[string][]Comment{}
	replied := map[int64]bool{}
	for _, c := range existing {
		if c.InReplyTo != 0 {
			replied[c.InReplyTo] = true
		}
		for _, fp := range p.own(fingerprints(c.Body)) {
			posted[fp] = true
			if c.Author == me {
				ours[fp] = append(ours[fp], c)
			}
		}
	}
	for _, r := range reviews {
		for _, fp := range p.own(fingerprints(r.Body)) {
			posted[fp] = true
		}
	}

	current := map[string]bool{}
	var plan []planned
	// One comment per change and file: the first place of a change in a file carries the others
	// (-1: that comment is already on the pull request).
	byChange := map[string]int{}
	var more [][]*finding.Finding
	for i := range fs {
		f := &fs[i]
		if f.Severity < finding.Warning {
			continue
		}
		fp := Fingerprint(f, p.Instance)
		if current[fp] {
			continue
		}
		current[fp] = true
		key := f.Change + "\x00" + f.Location.File
		if j, ok := byChange[key]; ok && f.Change != "" {
			if j >= 0 {
				more[j] = append(more[j], f)
			}
			continue
		}
		byChange[key] = -1
		if posted[fp] {
			res.AlreadyPosted++
			continue
		}
		byChange[key] = len(plan)
		plan = append(plan, place(f, fp, diff))
		more = append(more, nil)
	}
	for i := range plan {
		plan[i].f = withPlaces(plan[i].f, more[i])
	}
	nInline, nFile := 0, 0
	for i := range plan {
		switch plan[i].where {
		case inline:
			if nInline++; nInline > MaxInlineComments {
				plan[i].where = inBody
			}
		case fileLevel:
			if nFile++; nFile > MaxFileComments {
				plan[i].where = inBody
			}
		}
	}

	// File-level comments go one at a time (GitHub asks for serial writes); one GitHub refuses
	// moves to the review body.
	for i := range plan {
		pl := &plan[i]
		if pl.where != fileLevel {
			continue
		}
		if err := p.API.CreateFileComment(ctx, pr.Number, pr.HeadSHA, pl.path, CommentBody(pl.f, pl.fp, p.docsURL())); err != nil {
			if IsForbidden(err) {
				return res, err
			}
			p.logf("file comment on %s refused, listing it in the review body: %v", pl.path, err)
			pl.where = inBody
			continue
		}
		res.FileLevel++
	}
	if err := p.submit(ctx, pr, plan, &res); err != nil {
		return res, err
	}
	for fp, cs := range ours {
		if current[fp] {
			continue
		}
		for _, c := range cs {
			if replied[c.ID] {
				res.KeptWithReplies++
				continue
			}
			if err := p.API.DeleteReviewComment(ctx, c.ID); err != nil {
				p.logf("could not delete outdated comment %d: %v", c.ID, err)
				continue
			}
			res.Deleted++
		}
	}
	return res, nil
}

// own keeps the fingerprints of this instance: another crdguard job's comments are not its to
// count or delete.
func (p *Publisher) own(fps []string) []string {
	tag := instanceTag(p.Instance)
	var out []string
	for _, fp := range fps {
		if strings.HasSuffix(fp, tag) {
			out = append(out, fp)
		}
	}
	return out
}

// submit creates the review for the inline and body findings of the plan, if there are any.
func (p *Publisher) submit(ctx context.Context, pr PR, plan []planned, res *ReviewResult) error {
	var comments []Comment
	var body []*planned
	for i := range plan {
		switch plan[i].where {
		case inline:
			pl := &plan[i]
			comments = append(comments, Comment{Path: pl.path, Line: pl.line, Side: pl.side, Body: CommentBody(pl.f, pl.fp, p.docsURL())})
		case inBody:
			body = append(body, &plan[i])
		}
	}
	if len(comments) == 0 && len(body) == 0 {
		return nil
	}
	err := p.API.CreateReview(ctx, pr.Number, pr.HeadSHA, reviewBody(body, len(comments), p.docsURL())+reviewMarker(pr, comments, body), comments)
	if err == nil {
		res.Inline, res.InBody = len(comments), len(body)
		return nil
	}
	if !IsUnprocessable(err) {
		return err
	}
	// One comment GitHub does not accept fails the whole review: put them all in the body.
	p.logf("GitHub refused the review (%v); posting every finding in the review body instead", err)
	for i := range plan {
		if plan[i].where == inline {
			body = append(body, &plan[i])
		}
	}
	if err := p.API.CreateReview(ctx, pr.Number, pr.HeadSHA, reviewBody(body, 0, p.docsURL())+reviewMarker(pr, nil, body), nil); err != nil {
		return err
	}
	res.InBody = len(body)
	return nil
}

// withPlaces is f with a last sentence naming the other places of its change in its file, when
// there are any; f itself is left alone.
func withPlaces(f *finding.Finding, others []*finding.Finding) *finding.Finding {
	if len(others) == 0 {
		return f
	}
	g := change.Group{ID: f.Change, Places: append([]*finding.Finding{f}, others...)}
	c := *f
	c.Message += " (the same change, in this file: " + g.Where() + ")"
	return &c
}

// place decides where a new finding goes: inline where its line is inside a hunk of the
// pull request's diff — a removed line on the LEFT at its base line, any other at the head line
// every channel uses (finding.Shown), on the RIGHT, as GitHub itself places comments on context
// lines — else on the file when the pull request changed it, else in the review body.
func place(f *finding.Finding, fp string, diff *source.Diff) planned {
	pl := planned{f: f, fp: fp, where: inBody}
	if diff == nil || f.Baseline != "" {
		return pl // a baseline's lines are not lines of this pull request's diff
	}
	head := f.Location.Side != finding.Base
	fd, changed := diff.File(f.Location.File, head)
	if !changed {
		return pl
	}
	pl.path, pl.where = fd.To, fileLevel
	if pl.path == "" {
		pl.path = fd.From
	}
	shown, onHead := f.Shown()
	switch {
	case !head && diff.Removed(f.Location.File, f.Location.Line) && diff.Contains(f.Location.File, f.Location.Line, false):
		pl.where, pl.line, pl.side = inline, f.Location.Line, "LEFT"
	case onHead && shown.File == fd.To && !shown.Removed && diff.Contains(shown.File, shown.Line, true):
		pl.where, pl.line, pl.side = inline, shown.Line, "RIGHT"
	}
	return pl
}

// reviewMarker identifies one review request, so that a review GitHub created before answering
// 5xx is found instead of being posted twice.
func reviewMarker(pr PR, comments []Comment, body []*planned) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", pr.HeadSHA)
	for _, c := range comments {
		fmt.Fprintf(h, "%s\x00", c.Body)
	}
	for _, pl := range body {
		fmt.Fprintf(h, "%s\x00", pl.fp)
	}
	return "\n" + reviewLabel + hex.EncodeToString(h.Sum(nil)[:8]) + " -->"
}

// reviewBody introduces the review and lists the findings that have no inline comment, each
// with its fingerprint, within GitHub's body limit.
func reviewBody(items []*planned, inlineCount int, docsURL string) string {
	var b strings.Builder
	n := len(items) + inlineCount
	fmt.Fprintf(&b, "**crdguard** found %s that can break stored objects or clients.", report.Count(n, "CRD change"))
	if inlineCount > 0 {
		fmt.Fprintf(&b, " %d %s commented inline.", inlineCount, map[bool]string{true: "is", false: "are"}[inlineCount == 1])
	}
	b.WriteString(" The check run has the full report.\n")
	const reserve = 300
	for i, pl := range items {
		f := pl.f
		line := fmt.Sprintf("\n- **%s** `%s` %s (%s): %s [doc](%s#%s) %s", f.Severity, f.Rule, location(f),
			report.Escape(report.Where(f)), report.Escape(truncate(f.Message, maxMessageBytes)),
			docsURL, f.Rule, marker(pl.fp))
		if len([]rune(b.String()))+len([]rune(line)) > MaxBodyChars-reserve {
			fmt.Fprintf(&b, "\n\n%d more not listed here: see the check run.", len(items)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}
