// Package github publishes findings on GitHub: one review with inline comments per run, a check
// run that gates the merge, and the bookkeeping that makes re-runs idempotent. It is the only
// package that imports go-github; everything else talks to GitHub through the small API
// interface below, which tests fake.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// Comment is a pull request review comment (inline or on a whole file).
type Comment struct {
	ID        int64
	Path      string
	Line      int
	Side      string // LEFT or RIGHT; empty for file comments
	Body      string
	InReplyTo int64
	File      bool   // subject_type: file
	Author    string // the login that posted it
	// Association is GitHub's author_association (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, …).
	Association string
	// Bot says the author is a bot account; Edited that the comment changed after it was posted.
	Bot, Edited bool
}

// Review is a submitted pull request review.
type Review struct {
	ID     int64
	Body   string
	Author string
}

// Annotation is a check run annotation.
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string // notice, warning or failure
	Title, Message     string
}

// CheckOutput is a check run's output; every update must repeat Title and Summary. Text is shown
// below the summary, with a limit of its own (MaxSummaryBytes).
type CheckOutput struct {
	Title, Summary, Text string
	Annotations          []Annotation
}

// API is everything crdguard asks of GitHub. Creating requests that GitHub may apply and still
// answer 5xx look for what they create before sending it again.
type API interface {
	// Identity is the login the token posts as.
	Identity(ctx context.Context) (string, error)
	// ListLabels reads the pull request's current labels (a re-run replays the event's).
	ListLabels(ctx context.Context, pr int) ([]string, error)
	ListReviewComments(ctx context.Context, pr int) ([]Comment, error)
	ListReviews(ctx context.Context, pr int) ([]Review, error)
	CreateReview(ctx context.Context, pr int, commitID, body string, comments []Comment) error
	CreateFileComment(ctx context.Context, pr int, commitID, path, body string) error
	DeleteReviewComment(ctx context.Context, id int64) error
	CreateCheckRun(ctx context.Context, name, headSHA string) (int64, error)
	// UpdateCheckRun sends the check's name on every update: go-github v60 always sends
	// "name", and an empty one renames the check or is refused.
	UpdateCheckRun(ctx context.Context, id int64, name, conclusion string, out CheckOutput) error
	// CheckRunStatus is queued, in_progress or completed.
	CheckRunStatus(ctx context.Context, id int64) (string, error)
	// PullRequest reads one pull request.
	PullRequest(ctx context.Context, number int) (PullRequest, error)
	// PullRequestsOfCommit lists the pull requests a commit belongs to (merged or open).
	PullRequestsOfCommit(ctx context.Context, sha string) ([]PullRequest, error)
	// OpenPullRequestsOfBranch lists the open pull requests whose head is branch of owner's
	// repository (this repository or a fork).
	OpenPullRequestsOfBranch(ctx context.Context, owner, branch string) ([]PullRequest, error)
	// ReplyToComment answers a review comment in its thread.
	ReplyToComment(ctx context.Context, pr int, to int64, body string) error
	// MatchingRefs lists the references whose names start with a prefix (heads/…).
	MatchingRefs(ctx context.Context, prefix string) ([]Ref, error)
}

// REST is the API over GitHub's REST endpoints (github.com or Enterprise Server).
type REST struct {
	c            *gh.Client
	owner, name  string
	pageSize     int
	maxListPages int
	// Sleep waits between create attempts (tests record instead).
	Sleep Sleeper
}

// NewREST returns a client for one repository ("owner/name") at apiURL (GITHUB_API_URL).
func NewREST(apiURL, repository, token string, hc *http.Client) (*REST, error) {
	owner, name, ok := strings.Cut(repository, "/")
	if !ok || owner == "" || name == "" {
		return nil, fmt.Errorf("repository %q is not owner/name", repository)
	}
	base, err := url.Parse(strings.TrimSuffix(apiURL, "/") + "/")
	if err != nil || base.Scheme == "" {
		return nil, fmt.Errorf("bad API URL %q", apiURL)
	}
	c := gh.NewClient(hc)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	c.BaseURL = base
	return &REST{c: c, owner: owner, name: name, pageSize: 100, maxListPages: 100, Sleep: RealSleep}, nil
}

// DefaultBotLogin is who GITHUB_TOKEN posts as; an installation token may not ask GET /user.
const DefaultBotLogin = "github-actions[bot]"

// Identity asks GitHub who the token is (a personal token); an installation token such as
// GITHUB_TOKEN may not ask (403) and posts as DefaultBotLogin.
func (r *REST) Identity(ctx context.Context) (string, error) {
	u, _, err := r.c.Users.Get(ctx, "")
	switch {
	case err == nil:
		return u.GetLogin(), nil
	case IsForbidden(err):
		return DefaultBotLogin, nil
	}
	return "", fmt.Errorf("asking who the token is: %w", err)
}

// listAll reads every page of a list (up to maxListPages), converting each item.
func listAll[T, U any](r *REST, what string, page func(opts gh.ListOptions) ([]T, *gh.Response, error), conv func(T) U) ([]U, error) {
	var out []U
	opts := gh.ListOptions{PerPage: r.pageSize}
	for n := 0; n < r.maxListPages; n++ {
		items, resp, err := page(opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", what, err)
		}
		for _, it := range items {
			out = append(out, conv(it))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// ListLabels reads every page of a pull request's labels.
func (r *REST) ListLabels(ctx context.Context, pr int) ([]string, error) {
	return listAll(r, "labels", func(opts gh.ListOptions) ([]*gh.Label, *gh.Response, error) {
		return r.c.Issues.ListLabelsByIssue(ctx, r.owner, r.name, pr, &opts)
	}, (*gh.Label).GetName)
}

// ListReviewComments reads every page of a pull request's review comments.
func (r *REST) ListReviewComments(ctx context.Context, pr int) ([]Comment, error) {
	return listAll(r, "review comments", func(opts gh.ListOptions) ([]*gh.PullRequestComment, *gh.Response, error) {
		return r.c.PullRequests.ListComments(ctx, r.owner, r.name, pr, &gh.PullRequestListCommentsOptions{ListOptions: opts})
	}, func(c *gh.PullRequestComment) Comment {
		return Comment{ID: c.GetID(), Path: c.GetPath(), Line: c.GetLine(), Side: c.GetSide(), Body: c.GetBody(),
			InReplyTo: c.GetInReplyTo(), File: c.GetSubjectType() == "file", Author: c.GetUser().GetLogin(),
			Association: c.GetAuthorAssociation(), Bot: c.GetUser().GetType() == "Bot",
			Edited: !c.GetUpdatedAt().Equal(c.GetCreatedAt())}
	})
}

// ListReviews reads every page of a pull request's reviews.
func (r *REST) ListReviews(ctx context.Context, pr int) ([]Review, error) {
	return listAll(r, "reviews", func(opts gh.ListOptions) ([]*gh.PullRequestReview, *gh.Response, error) {
		return r.c.PullRequests.ListReviews(ctx, r.owner, r.name, pr, &opts)
	}, func(rv *gh.PullRequestReview) Review {
		return Review{ID: rv.GetID(), Body: rv.GetBody(), Author: rv.GetUser().GetLogin()}
	})
}

// createAttempts is how often a create request GitHub answers with 5xx is sent at most.
const createAttempts = 4

// createOnce sends a create request; after a 5xx, which GitHub may answer to a request it
// applied, it looks for the created thing (exists) before sending again.
func (r *REST) createOnce(ctx context.Context, create func() error, exists func() (bool, error)) error {
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		err := create()
		if err == nil || status(err) < 500 || attempt == createAttempts {
			return err
		}
		if found, ferr := exists(); ferr == nil && found {
			return nil
		}
		if err := r.Sleep(ctx, backoff); err != nil {
			return err
		}
		backoff *= 2
	}
}

// CreateReview submits one COMMENT review (never pending, never an approval).
func (r *REST) CreateReview(ctx context.Context, pr int, commitID, body string, comments []Comment) error {
	req := &gh.PullRequestReviewRequest{CommitID: gh.String(commitID), Body: gh.String(body), Event: gh.String("COMMENT")}
	for _, c := range comments {
		req.Comments = append(req.Comments, &gh.DraftReviewComment{
			Path: gh.String(c.Path), Line: gh.Int(c.Line), Side: gh.String(c.Side), Body: gh.String(c.Body),
		})
	}
	marker := reviewMarkerRE.FindString(body)
	err := r.createOnce(ctx, func() error {
		_, _, err := r.c.PullRequests.CreateReview(ctx, r.owner, r.name, pr, req)
		return err
	}, func() (bool, error) {
		reviews, err := r.ListReviews(ctx, pr)
		for _, rv := range reviews {
			if marker != "" && strings.Contains(rv.Body, marker) {
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("creating review: %w", err)
	}
	return nil
}

// CreateFileComment comments on a whole file of the pull request.
func (r *REST) CreateFileComment(ctx context.Context, pr int, commitID, path, body string) error {
	c := &gh.PullRequestComment{CommitID: gh.String(commitID), Path: gh.String(path), Body: gh.String(body), SubjectType: gh.String("file")}
	err := r.createOnce(ctx, func() error {
		_, _, err := r.c.PullRequests.CreateComment(ctx, r.owner, r.name, pr, c)
		return err
	}, func() (bool, error) {
		comments, err := r.ListReviewComments(ctx, pr)
		for _, o := range comments {
			if o.File && o.Path == path && o.Body == body {
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("creating file comment on %s: %w", path, err)
	}
	return nil
}

// DeleteReviewComment deletes one of the action's own comments.
func (r *REST) DeleteReviewComment(ctx context.Context, id int64) error {
	if _, err := r.c.PullRequests.DeleteComment(ctx, r.owner, r.name, id); err != nil {
		return fmt.Errorf("deleting review comment %d: %w", id, err)
	}
	return nil
}

// CreateCheckRun starts an in-progress check run on a commit.
func (r *REST) CreateCheckRun(ctx context.Context, name, headSHA string) (int64, error) {
	var id int64
	err := r.createOnce(ctx, func() error {
		cr, _, err := r.c.Checks.CreateCheckRun(ctx, r.owner, r.name, gh.CreateCheckRunOptions{
			Name: name, HeadSHA: headSHA, Status: gh.String("in_progress"),
		})
		id = cr.GetID()
		return err
	}, func() (bool, error) {
		// An open check run of this name on the commit is the one just created.
		res, _, err := r.c.Checks.ListCheckRunsForRef(ctx, r.owner, r.name, headSHA, &gh.ListCheckRunsOptions{
			CheckName: gh.String(name), Status: gh.String("in_progress"), Filter: gh.String("latest"),
		})
		if err != nil || len(res.CheckRuns) == 0 {
			return false, err
		}
		id = res.CheckRuns[0].GetID()
		return true, nil
	})
	if err != nil {
		return 0, fmt.Errorf("creating check run: %w", err)
	}
	return id, nil
}

// UpdateCheckRun adds output (annotations are appended) and, with a conclusion, completes it.
func (r *REST) UpdateCheckRun(ctx context.Context, id int64, name, conclusion string, out CheckOutput) error {
	opts := gh.UpdateCheckRunOptions{Name: name, Output: &gh.CheckRunOutput{Title: gh.String(out.Title), Summary: gh.String(out.Summary)}}
	if out.Text != "" {
		opts.Output.Text = gh.String(out.Text)
	}
	if conclusion != "" {
		opts.Status, opts.Conclusion = gh.String("completed"), gh.String(conclusion)
	}
	for _, a := range out.Annotations {
		opts.Output.Annotations = append(opts.Output.Annotations, &gh.CheckRunAnnotation{
			Path: gh.String(a.Path), StartLine: gh.Int(a.StartLine), EndLine: gh.Int(a.EndLine),
			AnnotationLevel: gh.String(a.Level), Title: gh.String(a.Title), Message: gh.String(a.Message),
		})
	}
	if _, _, err := r.c.Checks.UpdateCheckRun(ctx, r.owner, r.name, id, opts); err != nil {
		return fmt.Errorf("updating check run: %w", err)
	}
	return nil
}

// CheckRunStatus reads a check run's status.
func (r *REST) CheckRunStatus(ctx context.Context, id int64) (string, error) {
	cr, _, err := r.c.Checks.GetCheckRun(ctx, r.owner, r.name, id)
	if err != nil {
		return "", fmt.Errorf("reading check run %d: %w", id, err)
	}
	return cr.GetStatus(), nil
}

// status returns the HTTP status of a GitHub error, or 0.
func status(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) && rl.Response != nil {
		return rl.Response.StatusCode
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) && ab.Response != nil {
		return ab.Response.StatusCode
	}
	return 0
}

// IsForbidden reports a token that may not do this: a fork's read-only token (403 "Resource not
// accessible by integration"), a PAT creating check runs, or a 404 for a private resource.
func IsForbidden(err error) bool {
	s := status(err)
	return s == http.StatusForbidden || s == http.StatusNotFound
}

// IsUnprocessable reports GitHub's 422: a comment outside the diff, a body too long, …
func IsUnprocessable(err error) bool { return status(err) == http.StatusUnprocessableEntity }
