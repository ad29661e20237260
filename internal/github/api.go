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
	File      bool // subject_type: file
}

// Review is a submitted pull request review.
type Review struct {
	ID   int64
	Body string
}

// Annotation is a check run annotation.
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string // notice, warning or failure
	Title, Message     string
}

// CheckOutput is a check run's output; every update must repeat Title and Summary.
type CheckOutput struct {
	Title, Summary string
	Annotations    []Annotation
}

// API is everything crdguard asks of GitHub.
type API interface {
	ListReviewComments(ctx context.Context, pr int) ([]Comment, error)
	ListReviews(ctx context.Context, pr int) ([]Review, error)
	CreateReview(ctx context.Context, pr int, commitID, body string, comments []Comment) error
	CreateFileComment(ctx context.Context, pr int, commitID, path, body string) error
	DeleteReviewComment(ctx context.Context, id int64) error
	CreateCheckRun(ctx context.Context, name, headSHA string) (int64, error)
	// UpdateCheckRun sends the check's name on every update: go-github v60 always sends
	// "name", and an empty one renames the check or is refused.
	UpdateCheckRun(ctx context.Context, id int64, name, conclusion string, out CheckOutput) error
}

// REST is the API over GitHub's REST endpoints (github.com or Enterprise Server).
type REST struct {
	c            *gh.Client
	owner, name  string
	pageSize     int
	maxListPages int
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
	return &REST{c: c, owner: owner, name: name, pageSize: 100, maxListPages: 100}, nil
}

// ListReviewComments reads every page of a pull request's review comments.
func (r *REST) ListReviewComments(ctx context.Context, pr int) ([]Comment, error) {
	var out []Comment
	opts := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: r.pageSize}}
	for page := 0; page < r.maxListPages; page++ {
		cs, resp, err := r.c.PullRequests.ListComments(ctx, r.owner, r.name, pr, opts)
		if err != nil {
			return nil, fmt.Errorf("listing review comments: %w", err)
		}
		for _, c := range cs {
			out = append(out, Comment{ID: c.GetID(), Path: c.GetPath(), Line: c.GetLine(), Side: c.GetSide(),
				Body: c.GetBody(), InReplyTo: c.GetInReplyTo(), File: c.GetSubjectType() == "file"})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// ListReviews reads every page of a pull request's reviews.
func (r *REST) ListReviews(ctx context.Context, pr int) ([]Review, error) {
	var out []Review
	opts := &gh.ListOptions{PerPage: r.pageSize}
	for page := 0; page < r.maxListPages; page++ {
		rs, resp, err := r.c.PullRequests.ListReviews(ctx, r.owner, r.name, pr, opts)
		if err != nil {
			return nil, fmt.Errorf("listing reviews: %w", err)
		}
		for _, rv := range rs {
			out = append(out, Review{ID: rv.GetID(), Body: rv.GetBody()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// CreateReview submits one COMMENT review (never pending, never an approval).
func (r *REST) CreateReview(ctx context.Context, pr int, commitID, body string, comments []Comment) error {
	req := &gh.PullRequestReviewRequest{CommitID: gh.String(commitID), Body: gh.String(body), Event: gh.String("COMMENT")}
	for _, c := range comments {
		req.Comments = append(req.Comments, &gh.DraftReviewComment{
			Path: gh.String(c.Path), Line: gh.Int(c.Line), Side: gh.String(c.Side), Body: gh.String(c.Body),
		})
	}
	if _, _, err := r.c.PullRequests.CreateReview(ctx, r.owner, r.name, pr, req); err != nil {
		return fmt.Errorf("creating review: %w", err)
	}
	return nil
}

// CreateFileComment comments on a whole file of the pull request.
func (r *REST) CreateFileComment(ctx context.Context, pr int, commitID, path, body string) error {
	c := &gh.PullRequestComment{CommitID: gh.String(commitID), Path: gh.String(path), Body: gh.String(body), SubjectType: gh.String("file")}
	if _, _, err := r.c.PullRequests.CreateComment(ctx, r.owner, r.name, pr, c); err != nil {
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
	cr, _, err := r.c.Checks.CreateCheckRun(ctx, r.owner, r.name, gh.CreateCheckRunOptions{
		Name: name, HeadSHA: headSHA, Status: gh.String("in_progress"),
	})
	if err != nil {
		return 0, fmt.Errorf("creating check run: %w", err)
	}
	return cr.GetID(), nil
}

// UpdateCheckRun adds output (annotations are appended) and, with a conclusion, completes it.
func (r *REST) UpdateCheckRun(ctx context.Context, id int64, name, conclusion string, out CheckOutput) error {
	opts := gh.UpdateCheckRunOptions{Name: name, Output: &gh.CheckRunOutput{Title: gh.String(out.Title), Summary: gh.String(out.Summary)}}
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
