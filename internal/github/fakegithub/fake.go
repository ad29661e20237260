// Package fakegithub is an in-process GitHub REST server for tests. It enforces the rules of
// shared/GITHUB.md that bots trip over — an out-of-diff comment fails the whole review with 422,
// 50 annotations per request, 65,535-byte summaries, pagination, read-only tokens, secondary rate
// limits with Retry-After, plain 429s — and records every request body.
package fakegithub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Lines are the line numbers of one file that a pull request's diff shows, per side.
type Lines struct {
	Right map[int]bool // added and context lines of head
	Left  map[int]bool // removed and context lines of base
}

// Comment is a stored review comment.
type Comment struct {
	ID          int64  `json:"id"`
	Path        string `json:"path"`
	Line        int    `json:"line,omitempty"`
	Side        string `json:"side,omitempty"`
	Body        string `json:"body"`
	InReplyTo   int64  `json:"in_reply_to_id,omitempty"`
	SubjectType string `json:"subject_type,omitempty"`
	ReviewID    int64  `json:"pull_request_review_id,omitempty"`
	User        User   `json:"user"`
	// AuthorAssociation is the author's relation to the repository (OWNER, MEMBER, CONTRIBUTOR, …).
	AuthorAssociation string `json:"author_association,omitempty"`
	CreatedAt         string `json:"created_at,omitempty"`
	UpdatedAt         string `json:"updated_at,omitempty"`
	// PR is the pull request the comment is on; 0: every pull request (tests of one).
	PR int `json:"-"`
}

// User is the author of a comment or review.
type User struct {
	Login string `json:"login"`
	// Type is User or Bot.
	Type string `json:"type,omitempty"`
}

// Review is a stored review.
type Review struct {
	ID       int64  `json:"id"`
	Body     string `json:"body"`
	State    string `json:"state"`
	CommitID string `json:"commit_id"`
	User     User   `json:"user"`
	// PR is the pull request the review is on; 0: every pull request (tests of one).
	PR int `json:"-"`
}

// Annotation is a stored check run annotation.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	AnnotationLevel string `json:"annotation_level"`
	Title           string `json:"title"`
	Message         string `json:"message"`
	RawDetails      string `json:"raw_details,omitempty"`
}

// CheckRun is a stored check run.
type CheckRun struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	HeadSHA     string       `json:"head_sha"`
	Status      string       `json:"status"`
	Conclusion  string       `json:"conclusion,omitempty"`
	Title       string       `json:"-"`
	Summary     string       `json:"-"`
	Text        string       `json:"-"`
	Annotations []Annotation `json:"-"`
}

// Request is one recorded request.
type Request struct {
	Method, Path string
	// Query is the request's raw query string.
	Query  string
	Body   []byte
	Status int
}

// Failure is an answer injected instead of the next write; a zero Status lets that write through.
type Failure struct {
	Status int
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter string
	// Secondary marks a secondary rate limit (403 with its documentation_url).
	Secondary bool
	// Primary marks an exhausted primary rate limit: x-ratelimit-remaining 0 until ResetIn from
	// now, as GitHub sends it; go-github then refuses further calls on its own until that time.
	Primary bool
	// ResetIn is when the exhausted primary limit resets, in seconds from now.
	ResetIn int64
	// Applied lets the write through before answering Status: GitHub sometimes applies a request
	// and still answers 502, so a retry creates a duplicate unless the client looks first.
	Applied bool
}

// Server is the fake. Configure its fields before the first request.
type Server struct {
	*httptest.Server
	// Token is the only accepted token.
	Token string
	// ReadOnly makes every write answer 403 "Resource not accessible by integration", as a fork's
	// GITHUB_TOKEN does.
	ReadOnly bool
	// Files are the pull request's changed files and the lines its diff shows.
	Files map[string]*Lines
	// Inject is consumed, one entry per write request, before the write is handled.
	Inject []Failure
	// Commits, when set, are the SHAs the repository has: a check run's head_sha and a review's
	// commit_id must be one of them (422 otherwise).
	Commits map[string]bool
	// Now is the clock of the rate-limit headers; time.Now when nil.
	Now func() time.Time
	// Login is who the token posts as (GITHUB_TOKEN: github-actions[bot]); it may delete only
	// its own comments.
	Login string
	// PAT makes the token a personal one, which may ask GET /user (an installation token gets
	// 403) but may not create or update check runs (403: they belong to GitHub Apps).
	PAT bool
	// Labels are the pull request's current labels (GET …/issues/{n}/labels); they differ from
	// the event payload's when someone labelled the pull request after the event.
	Labels []string
	// LabelsStatus, when set, is the labels endpoint's answer instead.
	LabelsStatus int
	// PRLabels, when set for a number, are that pull request's labels instead of Labels.
	PRLabels map[int][]string
	// PullRequests are the repository's pull requests (GET …/pulls/{n}).
	PullRequests map[int]*PullRequest
	// CommitPulls lists, per commit SHA, the pull requests GET …/commits/{sha}/pulls returns.
	CommitPulls map[string][]int
	// Refs are the repository's references (full name → commit SHA) GET …/git/matching-refs lists.
	Refs map[string]string
	// RefsStatus, when set, is the matching-refs endpoint's answer instead.
	RefsStatus int

	mu        sync.Mutex
	nextID    int64
	Comments  []*Comment
	Reviews   []*Review
	CheckRuns []*CheckRun
	pending   bool

	// logMu guards requests alone: handlers answer while holding mu.
	logMu    sync.Mutex
	requests []Request
}

// New starts a fake server; it is closed when the test ends.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, Files: map[string]*Lines{}, nextID: 1000, Login: "github-actions[bot]"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /user", s.user)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/labels", s.listLabels)
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", s.listCheckRuns)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/comments", s.listComments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls/{n}/comments", s.createComment)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/reviews", s.listReviews)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls/{n}/reviews", s.createReview)
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/pulls/comments/{id}", s.deleteComment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/check-runs", s.createCheckRun)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", s.updateCheckRun)
	mux.HandleFunc("GET /repos/{owner}/{repo}/check-runs/{id}", s.getCheckRun)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", s.getPullRequest)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", s.listPullRequests)
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{sha}/pulls", s.commitPulls)
	mux.HandleFunc("GET /repos/{owner}/{repo}/git/matching-refs/{ref...}", s.matchingRefs)
	s.Server = httptest.NewServer(s.wrap(mux))
	t.Cleanup(s.Close)
	t.Cleanup(func() {
		// Every request crdguard sent must be one GitHub's REST description defines.
		for _, r := range s.Requests() {
			ok, err := described(r.Method, r.Path)
			if err != nil {
				t.Errorf("reading GitHub's REST operations: %v", err)
				return
			}
			if !ok {
				t.Errorf("%s %s is not an operation of GitHub's REST description (testdata/github/rest-operations.txt)", r.Method, r.Path)
			}
			problem, err := queryProblem(r.Method, r.Path, r.Query)
			if err != nil {
				t.Errorf("reading GitHub's REST query parameters: %v", err)
				return
			}
			if problem != "" {
				t.Errorf("%s %s?%s: %s (testdata/github/rest-query-parameters.txt)", r.Method, r.Path, r.Query, problem)
			}
		}
	})
	return s
}

// recorder logs a request with the status its handler wrote, before any byte of the answer
// leaves: a client that has its answer must find its request in the log.
type recorder struct {
	http.ResponseWriter
	log    func(status int)
	logged bool
}

// WriteHeader logs the request, then sends the status.
func (r *recorder) WriteHeader(code int) {
	if !r.logged {
		r.logged = true
		r.log(code)
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write sends an implicit 200 first, as net/http does.
func (r *recorder) Write(b []byte) (int, error) {
	if !r.logged {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

func (s *Server) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		rec := &recorder{ResponseWriter: w, log: func(status int) {
			s.logMu.Lock()
			s.requests = append(s.requests, Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Body: body, Status: status})
			s.logMu.Unlock()
		}}
		defer func() {
			if !rec.logged {
				rec.WriteHeader(http.StatusOK)
			}
		}()
		s.rateHeaders(rec.Header(), 4000)
		if req.Header.Get("Authorization") != "Bearer "+s.Token {
			writeError(rec, http.StatusUnauthorized, "Bad credentials", nil)
			return
		}
		if req.Method != http.MethodGet {
			s.mu.Lock()
			var inj *Failure
			if len(s.Inject) > 0 {
				inj = &s.Inject[0]
				s.Inject = s.Inject[1:]
			}
			s.mu.Unlock()
			if inj != nil && inj.Status != 0 && inj.Applied {
				// The write happens; the answer is lost.
				next.ServeHTTP(discard{header: http.Header{}}, req)
				writeError(rec, inj.Status, "Server Error", nil)
				return
			}
			if inj != nil && inj.Primary {
				rec.Header().Set("X-RateLimit-Remaining", "0")
				rec.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.now().Unix()+inj.ResetIn, 10))
				writeErrorDoc(rec, orStatus(inj.Status, http.StatusForbidden), "API rate limit exceeded for installation ID 1.",
					"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits")
				return
			}
			if inj != nil && inj.Status != 0 {
				if inj.RetryAfter != "" {
					rec.Header().Set("Retry-After", inj.RetryAfter)
				}
				msg, doc := "injected failure", ""
				if inj.Secondary {
					msg, doc = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
						"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
				}
				writeErrorDoc(rec, inj.Status, msg, doc)
				return
			}
			if s.ReadOnly {
				writeError(rec, http.StatusForbidden, "Resource not accessible by integration", nil)
				return
			}
		}
		next.ServeHTTP(rec, req)
	})
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// rateHeaders sets the headers GitHub sends on every REST response.
func (s *Server) rateHeaders(h http.Header, remaining int) {
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(5000-remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.now().Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

func orStatus(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// discard is a ResponseWriter whose answer nobody reads.
type discard struct{ header http.Header }

// Header returns a header nobody sends.
func (d discard) Header() http.Header { return d.header }

// Write drops the body.
func (d discard) Write(b []byte) (int, error) { return len(b), nil }

// WriteHeader drops the status.
func (d discard) WriteHeader(int) {}

func writeError(w http.ResponseWriter, status int, msg string, errs []string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": msg, "errors": errs, "documentation_url": "https://docs.github.com/rest"})
}

func writeErrorDoc(w http.ResponseWriter, status int, msg, doc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"message": msg, "documentation_url": doc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// paginate serves one page of items with GitHub's Link header (30 a page by default, 100 at most).
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	start := min((page-1)*per, len(items))
	end := min(start+per, len(items))
	last := max((len(items)+per-1)/per, 1)
	if page < last {
		u := *r.URL
		q := u.Query()
		q.Set("page", strconv.Itoa(page+1))
		q.Set("per_page", strconv.Itoa(per))
		u.RawQuery = q.Encode()
		next := "http://" + r.Host + u.String()
		q.Set("page", strconv.Itoa(last))
		u.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, next, "http://"+r.Host+u.String()))
	}
	writeJSON(w, http.StatusOK, items[start:end])
}

func (s *Server) user(w http.ResponseWriter, _ *http.Request) {
	if !s.PAT {
		writeError(w, http.StatusForbidden, "Resource not accessible by integration", nil)
		return
	}
	writeJSON(w, http.StatusOK, User{Login: s.Login})
}

func (s *Server) listLabels(w http.ResponseWriter, r *http.Request) {
	if s.LabelsStatus != 0 {
		writeError(w, s.LabelsStatus, "injected failure", nil)
		return
	}
	s.mu.Lock()
	items := []map[string]string{}
	labels := s.Labels
	if ls, ok := s.PRLabels[prNumber(r)]; ok {
		labels = ls
	}
	for _, l := range labels {
		items = append(items, map[string]string{"name": l})
	}
	s.mu.Unlock()
	paginate(w, r, items)
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	out := []CheckRun{}
	for _, cr := range s.CheckRuns {
		if cr.HeadSHA == r.PathValue("ref") && (q.Get("check_name") == "" || q.Get("check_name") == cr.Name) &&
			(q.Get("status") == "" || q.Get("status") == cr.Status) {
			out = append(out, *cr)
		}
	}
	s.mu.Unlock()
	// Newest first, as GitHub lists them.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(out), "check_runs": out})
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	items := []Comment{}
	for _, c := range s.Comments {
		if c.PR == 0 || c.PR == prNumber(r) {
			items = append(items, *c)
		}
	}
	s.mu.Unlock()
	paginate(w, r, items)
}

func (s *Server) listReviews(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	items := []Review{}
	for _, rv := range s.Reviews {
		if rv.PR == 0 || rv.PR == prNumber(r) {
			items = append(items, *rv)
		}
	}
	s.mu.Unlock()
	paginate(w, r, items)
}

const maxBody = 65536

// validComment checks a review comment against the diff, as GitHub does.
func (s *Server) validComment(path string, line int, side string) string {
	f, ok := s.Files[path]
	if !ok {
		return "Path could not be resolved"
	}
	lines := f.Right
	if side == "LEFT" {
		lines = f.Left
	} else if side != "RIGHT" {
		return "Side must be LEFT or RIGHT"
	}
	if !lines[line] {
		return "Pull request review thread line must be part of the diff"
	}
	return ""
}

func (s *Server) createReview(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CommitID string  `json:"commit_id"`
		Body     *string `json:"body"`
		Event    string  `json:"event"`
		Comments []struct {
			Path      string `json:"path"`
			Line      int    `json:"line"`
			Side      string `json:"side"`
			StartLine int    `json:"start_line"`
			Body      string `json:"body"`
		} `json:"comments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Commits != nil && !s.Commits[req.CommitID] {
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{"commit_id is not part of the pull request"})
		return
	}
	switch req.Event {
	case "APPROVE":
		writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{"GitHub Actions is not permitted to approve pull requests."})
		return
	case "":
		if s.pending {
			writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{"User can only have one pending review per pull request"})
			return
		}
	}
	body := ""
	if req.Body != nil {
		body = *req.Body
	}
	if utf8.RuneCountInString(body) > maxBody {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"body is too long (maximum is 65536 characters)"})
		return
	}
	// One bad comment fails the whole review, and the error does not say which.
	for _, c := range req.Comments {
		if msg := s.validComment(c.Path, c.Line, c.Side); msg != "" {
			writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{msg})
			return
		}
		if c.StartLine != 0 {
			writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{"multi-line comments are not expected from crdguard"})
			return
		}
		if utf8.RuneCountInString(c.Body) > maxBody {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"body is too long (maximum is 65536 characters)"})
			return
		}
	}
	s.nextID++
	rv := &Review{ID: s.nextID, Body: body, CommitID: req.CommitID, State: "COMMENTED", User: User{Login: s.Login}, PR: prNumber(r)}
	if req.Event == "" {
		rv.State, s.pending = "PENDING", true
	}
	s.Reviews = append(s.Reviews, rv)
	for _, c := range req.Comments {
		s.nextID++
		s.Comments = append(s.Comments, &Comment{ID: s.nextID, Path: c.Path, Line: c.Line, Side: c.Side, Body: c.Body, ReviewID: rv.ID, SubjectType: "line",
			User: User{Login: s.Login, Type: "Bot"}, PR: prNumber(r), CreatedAt: created, UpdatedAt: created})
	}
	writeJSON(w, http.StatusOK, rv)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Body        string `json:"body"`
		Path        string `json:"path"`
		CommitID    string `json:"commit_id"`
		SubjectType string `json:"subject_type"`
		Line        int    `json:"line"`
		Side        string `json:"side"`
		InReplyTo   int64  `json:"in_reply_to"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if utf8.RuneCountInString(req.Body) > maxBody {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"body is too long (maximum is 65536 characters)"})
		return
	}
	c := &Comment{Path: req.Path, Body: req.Body, InReplyTo: req.InReplyTo, User: User{Login: s.Login, Type: "Bot"}, PR: prNumber(r), CreatedAt: created, UpdatedAt: created}
	switch {
	case req.InReplyTo != 0:
		// GitHub ignores every other parameter of a reply; it answers a top-level comment of
		// the same pull request, and the body may not be empty.
		to := s.comment(req.InReplyTo)
		if to == nil || to.PR != 0 && to.PR != c.PR {
			writeError(w, http.StatusNotFound, "Not Found", nil)
			return
		}
		if to.InReplyTo != 0 || req.Body == "" {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"in_reply_to must name a top-level review comment, and body is required"})
			return
		}
		c.Path, c.Line, c.Side, c.SubjectType = to.Path, to.Line, to.Side, to.SubjectType
	case req.SubjectType == "file":
		if _, ok := s.Files[req.Path]; !ok {
			writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{"Path could not be resolved"})
			return
		}
		c.SubjectType = "file"
	default:
		if msg := s.validComment(req.Path, req.Line, req.Side); msg != "" {
			writeError(w, http.StatusUnprocessableEntity, "Unprocessable Entity", []string{msg})
			return
		}
		c.Line, c.Side, c.SubjectType = req.Line, req.Side, "line"
	}
	s.nextID++
	c.ID = s.nextID
	s.Comments = append(s.Comments, c)
	writeJSON(w, http.StatusCreated, c)
}

// AddComment stores a comment as if posted earlier; without an author, by the token's identity.
func (s *Server) AddComment(c Comment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.User.Login == "" {
		c.User.Login = s.Login
	}
	s.nextID++
	c.ID = s.nextID
	s.Comments = append(s.Comments, &c)
}

// Reply adds a human reply to a comment.
func (s *Server) Reply(to int64, body string) {
	s.ReplyAs(to, "octocat", "CONTRIBUTOR", body)
}

func (s *Server) deleteComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.Comments {
		if c.ID == id && c.User.Login != s.Login {
			writeError(w, http.StatusForbidden, "You can only delete your own comments", nil)
			return
		}
		if c.ID == id {
			s.Comments = append(s.Comments[:i], s.Comments[i+1:]...)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found", nil)
}

type checkOutput struct {
	Title       *string      `json:"title"`
	Summary     *string      `json:"summary"`
	Text        *string      `json:"text"`
	Annotations []Annotation `json:"annotations"`
}

var levels = regexp.MustCompile(`^(notice|warning|failure)$`)

// validOutput applies GitHub's limits to a check run output.
func validOutput(o *checkOutput) string {
	if o.Title == nil || o.Summary == nil {
		return "output.title and output.summary are required"
	}
	if len(*o.Title) > 255 {
		return "output.title is too long (maximum is 255 characters)"
	}
	if len(*o.Summary) > 65535 {
		return "output.summary is too long (maximum is 65535 characters)"
	}
	if o.Text != nil && len(*o.Text) > 65535 {
		return "output.text is too long (maximum is 65535 characters)"
	}
	if len(o.Annotations) > 50 {
		return fmt.Sprintf("No more than 50 items are allowed; %d were supplied.", len(o.Annotations))
	}
	for _, a := range o.Annotations {
		if !levels.MatchString(a.AnnotationLevel) || a.Path == "" || a.StartLine < 1 || a.EndLine < a.StartLine ||
			len(a.Message) > 65535 || len(a.RawDetails) > 65535 || len(a.Title) > 255 {
			return "invalid annotation"
		}
	}
	return ""
}

// appOnly answers 403 as GitHub does when a personal token writes a check run.
func (s *Server) appOnly(w http.ResponseWriter) bool {
	if s.PAT {
		writeErrorDoc(w, http.StatusForbidden, "You must authenticate via a GitHub App.", "https://docs.github.com/rest/checks/runs#create-a-check-run")
	}
	return s.PAT
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) {
	if s.appOnly(w) {
		return
	}
	var req struct {
		Name    string       `json:"name"`
		HeadSHA string       `json:"head_sha"`
		Status  string       `json:"status"`
		Output  *checkOutput `json:"output"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", nil)
		return
	}
	if req.Name == "" || len(req.HeadSHA) != 40 {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"name and head_sha are required"})
		return
	}
	if s.Commits != nil && !s.Commits[req.HeadSHA] {
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+req.HeadSHA, nil)
		return
	}
	if req.Output != nil {
		if msg := validOutput(req.Output); msg != "" {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{msg})
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	cr := &CheckRun{ID: s.nextID, Name: req.Name, HeadSHA: req.HeadSHA, Status: orDefault(req.Status, "queued")}
	s.CheckRuns = append(s.CheckRuns, cr)
	writeJSON(w, http.StatusCreated, cr)
}

func (s *Server) getCheckRun(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cr := range s.CheckRuns {
		if cr.ID == id {
			writeJSON(w, http.StatusOK, cr)
			return
		}
	}
	writeError(w, http.StatusNotFound, "Not Found", nil)
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	if s.appOnly(w) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var req struct {
		Name       *string      `json:"name"`
		Status     string       `json:"status"`
		Conclusion string       `json:"conclusion"`
		Output     *checkOutput `json:"output"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON", nil)
		return
	}
	if req.Output != nil {
		if msg := validOutput(req.Output); msg != "" {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{msg})
			return
		}
	}
	if req.Name != nil && *req.Name == "" {
		// go-github v60 always sends "name"; GitHub does not keep a check run without one.
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"name can't be blank"})
		return
	}
	if req.Status == "completed" && !regexp.MustCompile(`^(success|failure|neutral|cancelled|skipped|timed_out|action_required)$`).MatchString(req.Conclusion) {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"conclusion is required when status is completed"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cr := range s.CheckRuns {
		if cr.ID != id {
			continue
		}
		if cr.Status == "completed" && req.Status != "" && req.Status != "completed" {
			writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"a completed check run cannot be reopened"})
			return
		}
		if req.Name != nil {
			cr.Name = *req.Name // a PATCH renames the check run
		}
		if req.Status != "" {
			cr.Status, cr.Conclusion = req.Status, req.Conclusion
		}
		if req.Output != nil {
			cr.Title, cr.Summary = *req.Output.Title, *req.Output.Summary
			if req.Output.Text != nil {
				cr.Text = *req.Output.Text
			}
			cr.Annotations = append(cr.Annotations, req.Output.Annotations...)
		}
		writeJSON(w, http.StatusOK, cr)
		return
	}
	writeError(w, http.StatusNotFound, "Not Found", nil)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Completed fails the test unless there is a check run named name on sha and every such check
// run is completed; it returns the latest. Every action test ends with it: a check run left
// open, or renamed, blocks the pull request for good. (A re-run rightly creates a new check run
// of the same name; GitHub shows the latest.)
func (s *Server) Completed(t testing.TB, name, sha string) *CheckRun {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var latest *CheckRun
	for _, cr := range s.CheckRuns {
		if cr.HeadSHA != sha || cr.Name != name {
			continue
		}
		if cr.Status != "completed" {
			t.Fatalf("check run %q on %.12s is %s, not completed", name, sha, cr.Status)
		}
		latest = cr
	}
	if latest == nil {
		var all []string
		for _, cr := range s.CheckRuns {
			all = append(all, fmt.Sprintf("%q on %.12s: %s", cr.Name, cr.HeadSHA, cr.Status))
		}
		t.Fatalf("no check run %q on %.12s; there are %v", name, sha, all)
	}
	return latest
}

// Requests returns every request answered so far, in order.
func (s *Server) Requests() []Request {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return slices.Clone(s.requests)
}

// Writes returns the recorded requests other than GETs.
func (s *Server) Writes() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// FilesFromUnifiedDiff reads `git diff` output into the lines each file's diff shows: the fake's
// own view of the diff, independent of crdguard's.
func FilesFromUnifiedDiff(diff string) map[string]*Lines {
	files := map[string]*Lines{}
	var cur *Lines
	oldLine, newLine := 0, 0
	oldPath := ""
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur = nil
		case strings.HasPrefix(l, "--- "):
			oldPath = strings.TrimPrefix(strings.TrimPrefix(l, "--- "), "a/")
		case strings.HasPrefix(l, "+++ "):
			path := strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			if path == "/dev/null" {
				path = oldPath
			}
			cur = &Lines{Right: map[int]bool{}, Left: map[int]bool{}}
			files[path] = cur
		case hunkRE.MatchString(l) && cur != nil:
			m := hunkRE.FindStringSubmatch(l)
			oldLine, _ = strconv.Atoi(m[1])
			newLine, _ = strconv.Atoi(m[3])
		case cur == nil:
		case strings.HasPrefix(l, "+"):
			cur.Right[newLine] = true
			newLine++
		case strings.HasPrefix(l, "-"):
			cur.Left[oldLine] = true
			oldLine++
		case strings.HasPrefix(l, " "):
			cur.Right[newLine], cur.Left[oldLine] = true, true
			newLine++
			oldLine++
		}
	}
	return files
}
