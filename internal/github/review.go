package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

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
	f *finding.Finding
	// same are the other findings with f's fingerprint: one rule at one place with other values
	// (an enum losing red and green). The comment names every one of them.
	same []*finding.Finding
	// places are the other places of f's change in its file, which the comment lists.
	places []*finding.Finding
	fp     string
	where  placement
	path   string
	line   int
	side   string
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
	// One comment per change and file: the first place of a change in a file carries the others;
	// one per fingerprint: the first finding at a place carries those with other values there
	// (-1: that comment is already on the pull request).
	byChange := map[string]int{}
	byFingerprint := map[string]int{}
	var more [][]*finding.Finding
	for i := range fs {
		f := &fs[i]
		if f.Severity < finding.Warning {
			continue
		}
		fp := Fingerprint(f, p.Instance)
		if j, ok := byFingerprint[fp]; ok {
			if j >= 0 {
				plan[j].same = append(plan[j].same, f)
			}
			continue
		}
		current[fp] = true
		byFingerprint[fp] = -1
		key := f.Change + "\x00" + f.Location.File
		if j, ok := byChange[key]; ok && f.Change != "" {
			if j >= 0 {
				more[j] = append(more[j], f)
			}
			byFingerprint[fp] = j // its other values go to that comment too
			continue
		}
		byChange[key] = -1
		if posted[fp] {
			res.AlreadyPosted++
			continue
		}
		byChange[key] = len(plan)
		byFingerprint[fp] = len(plan)
		plan = append(plan, place(f, fp, diff))
		more = append(more, nil)
	}
	for i := range plan {
		plan[i].f, plan[i].places = withPlaces(plan[i].f, more[i]), more[i]
	}
	// The capped places go to the most important findings first (finding.Importance): a breaking
	// change after 40 warnings in file order is still commented inline. The comments themselves
	// keep the plan's (file) order.
	order := make([]int, len(plan))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return finding.Importance(plan[a].f, plan[b].f) })
	nInline, nFile := 0, 0
	for _, i := range order {
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
		if err := p.API.CreateFileComment(ctx, pr.Number, pr.HeadSHA, pl.path, commentBody(pl, p.docsURL())); err != nil {
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
			comments = append(comments, Comment{Path: pl.path, Line: pl.line, Side: pl.side, Body: commentBody(pl, p.docsURL())})
		case inBody:
			body = append(body, &plan[i])
		}
	}
	if len(comments) == 0 && len(body) == 0 {
		return nil
	}
	var commented []*planned
	for i := range plan {
		if plan[i].where == inline {
			commented = append(commented, &plan[i])
		}
	}
	err := p.API.CreateReview(ctx, pr.Number, pr.HeadSHA, reviewBody(body, commented, p.docsURL())+reviewMarker(pr, comments, body), comments)
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
	if err := p.API.CreateReview(ctx, pr.Number, pr.HeadSHA, reviewBody(body, nil, p.docsURL())+reviewMarker(pr, nil, body), nil); err != nil {
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

// place decides where a new finding goes. A finding with a Go source (DESIGN §6) goes on that
// line when the pull request's diff shows it, the way the author wrote the change (onGoLine).
// Otherwise: inline where its line is inside a hunk of the pull request's diff — a removed line
// on the LEFT at its base line, any other at the head line every channel uses (finding.Shown),
// on the RIGHT, as GitHub itself places comments on context lines — else on the file when the
// pull request changed it, else in the review body.
func place(f *finding.Finding, fp string, diff *source.Diff) planned {
	pl := planned{f: f, fp: fp, where: inBody}
	if diff == nil || f.Baseline != "" {
		return pl // a baseline's lines are not lines of this pull request's diff
	}
	if f.Source != nil {
		if src := onGoLine(pl, *f.Source, diff); src.where == inline {
			return src
		}
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

// onGoLine places a comment inline on a finding's Go line when the diff shows it: a removed
// line on the LEFT, an added or kept one on the RIGHT (a kept base line at its head number);
// otherwise pl comes back unchanged.
func onGoLine(pl planned, src finding.Location, diff *source.Diff) planned {
	head := src.Side != finding.Base
	fd, ok := diff.File(src.File, head)
	if !ok || !diff.Contains(src.File, src.Line, head) {
		return pl
	}
	pl.path = fd.To
	if pl.path == "" {
		pl.path = fd.From
	}
	pl.where, pl.line, pl.side = inline, src.Line, "RIGHT"
	if !head && diff.Removed(src.File, src.Line) {
		pl.side = "LEFT"
	} else if !head {
		_, pl.line, _, _ = diff.HeadPosition(src.File, src.Line)
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

// reviewBody introduces the review — the changes it holds counted by severity, those commented
// inline and those listed below — and lists the findings that have no inline comment, each with
// its fingerprint, within GitHub's body limit: most important first (finding.Importance), every
// one listed, their messages cut shorter rather than any finding left out; only when even the
// lines without a message do not fit are the last (least important) counted instead. It counts
// changes, not comments: a change in two files is two comments and one change.
func reviewBody(items, commented []*planned, docsURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**crdguard** found CRD changes that can break stored objects or clients: %s.", tally(append(slices.Clone(commented), items...)))
	if len(commented) > 0 {
		fmt.Fprintf(&b, " Commented inline: %s.", tally(commented))
	}
	if len(items) > 0 {
		fmt.Fprintf(&b, " Listed below: %s.", tally(items))
	}
	b.WriteString(" The check run has the full report.\n")
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b *planned) int { return finding.Importance(a.f, b.f) })
	room := MaxBodyChars - bodyReserve - utf8.RuneCountInString(b.String())
	// The longest message that lets every line fit: halved until they do, down to none.
	for _, most := range []int{maxMessageBytes, 2048, 1024, 512, 256, 128, 64, 0} {
		var lines []string
		total := 0
		for _, pl := range items {
			l := bodyLine(pl, most, docsURL)
			lines = append(lines, l)
			total += utf8.RuneCountInString(l)
		}
		if total <= room || most == 0 {
			return b.String() + fitLines(lines, room)
		}
	}
	return b.String()
}

// tally counts the changes of planned comments by severity ("1 breaking change, 40 warnings"):
// each comment's finding, its other places in the file and the other findings at its place, one
// change however many comments and places it has.
func tally(items []*planned) string {
	var fs []finding.Finding
	for _, pl := range items {
		fs = append(fs, *pl.f)
		for _, o := range append(slices.Clone(pl.places), pl.same...) {
			fs = append(fs, *o)
		}
	}
	return report.Tally(change.Groups(fs))
}

// fitLines joins lines within room runes, counting those that do not fit.
func fitLines(lines []string, room int) string {
	var b strings.Builder
	used := 0
	for i, l := range lines {
		if used+utf8.RuneCountInString(l) > room {
			fmt.Fprintf(&b, "\n\n%d more not listed here: see the check run.", len(lines)-i)
			break
		}
		used += utf8.RuneCountInString(l)
		b.WriteString(l)
	}
	return b.String()
}

// maxBodyPlaces bounds the places of a change the review body lists for one file.
const maxBodyPlaces = 20

// bodyLine is one finding of the review body, its message (and those of the findings at its
// place with other values) cut to n bytes, none when n is 0.
func bodyLine(pl *planned, n int, docsURL string) string {
	f := pl.f
	msg := ""
	if n > 0 {
		msg = ": " + report.Escape(truncate(f.Message, n))
		for _, o := range pl.same {
			msg += "; also: " + report.Escape(truncate(o.Message, n))
		}
	} else if len(pl.same) > 0 {
		msg = fmt.Sprintf(" (and %s at this place)", report.Count(len(pl.same), "more finding"))
	}
	if len(pl.places) > 0 { // short, and every place of the change in the file: always listed
		var ps []string
		for i, o := range append([]*finding.Finding{f}, pl.places...) {
			if i == maxBodyPlaces {
				ps = append(ps, fmt.Sprintf("and %d more", len(pl.places)+1-i))
				break
			}
			ps = append(ps, report.Escape(report.PlaceLine(o)))
		}
		msg += " — at " + strings.Join(ps, "; ")
	}
	return fmt.Sprintf("\n- **%s** `%s` %s (%s)%s [doc](%s#%s) %s", f.Severity, f.Rule, location(f),
		report.Escape(report.Where(f)), msg, docsURL, f.Rule, marker(pl.fp))
}
