package fakegithub

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// created is when the fake's comments were posted; Edit moves updated_at past it.
const created = "2026-01-05T10:00:00Z"

// ReplyAs adds a reply to a comment by login with an author association (OWNER, MEMBER,
// COLLABORATOR, CONTRIBUTOR, NONE; a login ending in [bot] is a bot) and returns its ID.
func (s *Server) ReplyAs(to int64, login, association, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	u := User{Login: login, Type: "User"}
	if strings.HasSuffix(login, "[bot]") {
		u.Type = "Bot"
	}
	pr := 0
	if c := s.comment(to); c != nil {
		pr = c.PR
	}
	s.Comments = append(s.Comments, &Comment{ID: s.nextID, Body: body, InReplyTo: to, User: u, AuthorAssociation: association,
		PR: pr, CreatedAt: created, UpdatedAt: created})
	return s.nextID
}

// Edit changes a comment's body, as its author does in the web interface.
func (s *Server) Edit(id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.comment(id); c != nil {
		c.Body, c.UpdatedAt = body, "2026-01-05T10:07:00Z"
	}
}

// comment returns the stored comment with id, or nil; the caller holds mu.
func (s *Server) comment(id int64) *Comment {
	for _, c := range s.Comments {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// prNumber is the pull request number of a request's path ({n}), or 0.
func prNumber(r *http.Request) int {
	n, _ := strconv.Atoi(r.PathValue("n"))
	return n
}

// PullRequest is a stored pull request, as GET …/pulls/{n} answers it.
type PullRequest struct {
	Number         int        `json:"number"`
	State          string     `json:"state"`
	Merged         bool       `json:"merged"`
	MergedAt       *string    `json:"merged_at"`
	MergeCommitSHA string     `json:"merge_commit_sha,omitempty"`
	Head           Branch     `json:"head"`
	Base           Branch     `json:"base"`
	Labels         []LabelRef `json:"labels"`
}

// Branch is a pull request's head or base.
type Branch struct {
	Ref  string   `json:"ref"`
	SHA  string   `json:"sha"`
	Repo RepoFork `json:"repo"`
}

// RepoFork is the repository of a branch; Fork says it is a fork.
type RepoFork struct {
	FullName string `json:"full_name"`
	Fork     bool   `json:"fork"`
}

// LabelRef is a label as pull requests list it.
type LabelRef struct {
	Name string `json:"name"`
}

func (s *Server) getPullRequest(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, ok := s.PullRequests[prNumber(r)]
	if !ok {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	writeJSON(w, http.StatusOK, pr)
}

// listPullRequests answers GET …/pulls: the stored pull requests in state (open by default;
// closed, all), newest first as GitHub sorts them by default. head, in GitHub's user:ref-name
// form, keeps those whose head is that branch of that user's repository; a head without the
// user part filters nothing, as on GitHub (the conformance check refuses it: crdguard must never
// send it, since it would read every pull request as a candidate).
func (s *Server) listPullRequests(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", []string{"state must be open, closed or all"})
		return
	}
	owner, branch, byHead := strings.Cut(q.Get("head"), ":")
	s.mu.Lock()
	var numbers []int
	for n, pr := range s.PullRequests {
		headOwner, _, _ := strings.Cut(pr.Head.Repo.FullName, "/")
		if state != "all" && pr.State != state || byHead && (!strings.EqualFold(headOwner, owner) || pr.Head.Ref != branch) {
			continue
		}
		numbers = append(numbers, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(numbers)))
	items := []PullRequest{}
	for _, n := range numbers {
		items = append(items, *s.PullRequests[n])
	}
	s.mu.Unlock()
	paginate(w, r, items)
}

// commitPulls answers GET …/commits/{sha}/pulls; the SHA must be a full or abbreviated hex SHA.
func (s *Server) commitPulls(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	if !regexp.MustCompile(`^[0-9a-f]{7,40}$`).MatchString(sha) {
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha, nil)
		return
	}
	s.mu.Lock()
	items := []PullRequest{}
	for _, n := range s.CommitPulls[sha] {
		if pr, ok := s.PullRequests[n]; ok {
			items = append(items, *pr)
		}
	}
	s.mu.Unlock()
	paginate(w, r, items)
}

// matchingRefs answers GET …/git/matching-refs/{ref}: the stored references (Refs, full name →
// SHA) whose names start with refs/ + ref, sorted by name as GitHub lists them.
func (s *Server) matchingRefs(w http.ResponseWriter, r *http.Request) {
	prefix := "refs/" + r.PathValue("ref")
	if s.RefsStatus != 0 {
		writeError(w, s.RefsStatus, "Resource not accessible by integration", nil)
		return
	}
	s.mu.Lock()
	var names []string
	for name := range s.Refs {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	items := []gitRef{}
	for _, name := range names {
		items = append(items, gitRef{Ref: name, Object: gitObject{Type: "commit", SHA: s.Refs[name]}})
	}
	s.mu.Unlock()
	paginate(w, r, items)
}

// gitRef is a reference as GitHub's git API returns it.
type gitRef struct {
	Ref    string    `json:"ref"`
	Object gitObject `json:"object"`
}

type gitObject struct {
	Type string `json:"type"`
	SHA  string `json:"sha"`
}
