package fakegithub

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
)

// operation is one operation of GitHub's REST description: a method and a path pattern.
type operation struct {
	method string
	path   *regexp.Regexp
}

// integerParams are the path parameters GitHub's description types as integers.
var integerParams = map[string]bool{"pull_number": true, "issue_number": true, "check_run_id": true, "comment_id": true,
	"review_id": true, "check_suite_id": true}

// testdata is a file of the repository's testdata/github.
func testdata(name string) string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "testdata", "github", name)
}

// lines reads a file's lines that are neither empty nor comments.
func lines(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}

var operations = sync.OnceValues(func() ([]operation, error) {
	file := testdata("rest-operations.txt")
	all, err := lines(file)
	if err != nil {
		return nil, err
	}
	var ops []operation
	for _, line := range all {
		method, path, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", file, line)
		}
		ops = append(ops, operation{method: method, path: pathPattern(path)})
	}
	return ops, nil
})

var param = regexp.MustCompile(`\{([a-z_]+)\}`)

// pathPattern is the regular expression of a described path: its parameters typed as GitHub's
// description types them.
func pathPattern(path string) *regexp.Regexp {
	var re strings.Builder
	last := 0
	for _, m := range param.FindAllStringSubmatchIndex(path, -1) {
		re.WriteString(regexp.QuoteMeta(path[last:m[0]]))
		switch name := path[m[2]:m[3]]; {
		case integerParams[name]:
			re.WriteString(`[0-9]+`)
		case name == "ref" && m[1] == len(path):
			// A git reference ends the path and has slashes (heads/main), as GitHub documents it.
			re.WriteString(`.+`)
		default:
			re.WriteString(`[^/]+`)
		}
		last = m[1]
	}
	re.WriteString(regexp.QuoteMeta(path[last:]))
	return regexp.MustCompile("^" + re.String() + "$")
}

// queryOperation is an operation whose query parameters the fake checks: each declared name with
// the pattern of its allowed values (nil: any).
type queryOperation struct {
	operation
	params map[string]*regexp.Regexp
}

var queryOperations = sync.OnceValues(func() ([]queryOperation, error) {
	file := testdata("rest-query-parameters.txt")
	all, err := lines(file)
	if err != nil {
		return nil, err
	}
	var ops []queryOperation
	for _, line := range all {
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: bad line %q", file, line)
		}
		op := queryOperation{operation: operation{method: f[0], path: pathPattern(f[1])}, params: map[string]*regexp.Regexp{}}
		for _, p := range f[2:] {
			name, values, ok := strings.Cut(p, "=")
			op.params[name] = nil
			if ok {
				if op.params[name], err = regexp.Compile(values); err != nil {
					return nil, fmt.Errorf("%s: parameter %s: %w", file, name, err)
				}
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
})

// queryProblem says what is wrong with a request's query for an operation whose parameters the
// description lists in rest-query-parameters.txt ("" when nothing is, or the operation is not
// listed there).
func queryProblem(method, path, rawQuery string) (string, error) {
	ops, err := queryOperations()
	if err != nil {
		return "", err
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return fmt.Sprintf("query %q does not parse: %v", rawQuery, err), nil
	}
	for _, op := range ops {
		if op.method != method || !op.path.MatchString(path) {
			continue
		}
		for name, values := range q {
			allowed, ok := op.params[name]
			if !ok {
				return fmt.Sprintf("query parameter %q is not one GitHub's description declares", name), nil
			}
			for _, v := range values {
				if allowed != nil && !allowed.MatchString(v) {
					return fmt.Sprintf("query parameter %s=%q is not allowed (%s)", name, v, allowed), nil
				}
			}
		}
		return "", nil
	}
	return "", nil
}

// described says whether GitHub's REST description has an operation for a request.
func described(method, path string) (bool, error) {
	ops, err := operations()
	if err != nil {
		return false, err
	}
	for _, op := range ops {
		if op.method == method && op.path.MatchString(path) {
			return true, nil
		}
	}
	return false, nil
}
