package fakegithub

import "testing"

// The query check refuses what GitHub's description does not declare for an operation it lists
// in rest-query-parameters.txt, and leaves other operations' queries alone.
func TestQueryProblem(t *testing.T) {
	for _, tc := range []struct{ method, path, query, want string }{
		{"GET", "/repos/o/r/pulls", "head=someone%3Adrop-name&per_page=100&state=open", ""},
		{"GET", "/repos/o/r/pulls", "head=drop-name&state=open", `query parameter head="drop-name" is not allowed (^[^:]+:.+$)`},
		{"GET", "/repos/o/r/pulls", "state=merged", `query parameter state="merged" is not allowed (^(open|closed|all)$)`},
		{"GET", "/repos/o/r/pulls", "sha=abc", `query parameter "sha" is not one GitHub's description declares`},
		{"GET", "/repos/o/r/commits/abc123/pulls", "per_page=100&page=2", ""},
		{"GET", "/repos/o/r/commits/abc123/pulls", "state=open", `query parameter "state" is not one GitHub's description declares`},
		{"GET", "/repos/o/r/pulls/42", "anything=1", ""},
	} {
		got, err := queryProblem(tc.method, tc.path, tc.query)
		if err != nil || got != tc.want {
			t.Errorf("%s %s?%s: %q, %v; want %q", tc.method, tc.path, tc.query, got, err, tc.want)
		}
	}
}
