package fakegithub

import (
	"bufio"
	"fmt"
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

var operations = sync.OnceValues(func() ([]operation, error) {
	_, self, _, _ := runtime.Caller(0)
	file := filepath.Join(filepath.Dir(self), "..", "..", "..", "testdata", "github", "rest-operations.txt")
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	param := regexp.MustCompile(`\{([a-z_]+)\}`)
	var ops []operation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		method, path, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q", file, line)
		}
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
		ops = append(ops, operation{method: method, path: regexp.MustCompile("^" + re.String() + "$")})
	}
	return ops, sc.Err()
})

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
