package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
)

// copyTree writes every file under src into the pull request's working tree.
func copyTree(t *testing.T, pr *pullRequest, src string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		pr.repo.Copy(filepath.ToSlash(rel), p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goPullRequest is the kubebuilder project of testdata/repos/gotypes: base is old/, and the pull
// request lowers a Maximum marker, removes a field and adds a MinLength to a nested type, with
// the CRD regenerated in the same commit.
func goPullRequest(t *testing.T) *pullRequest {
	t.Helper()
	pr := newPullRequest(t)
	pr.repo.Remove("config/crd/widgets.yaml")
	copyTree(t, pr, "../../testdata/repos/gotypes/old")
	base := pr.repo.Commit("kubebuilder project")
	copyTree(t, pr, "../../testdata/repos/gotypes/new")
	pr.repo.Remove("api/v1/zz_generated.deepcopy.go")
	head := pr.repo.Commit("lower the maximum size, drop color, require a template name")
	pr.base, pr.head = base.String(), head.String()
	diff, err := exec.Command("git", "-C", pr.repo.Dir, "diff", "-U3", pr.base, pr.head).Output()
	if err != nil {
		t.Fatal(err)
	}
	pr.srv.Files = fakegithub.FilesFromUnifiedDiff(string(diff))
	pr.srv.Commits = map[string]bool{pr.base: true, pr.head: true}
	return pr
}

// The inline comments land on the Go lines the author edited: the lowered Maximum and the added
// MinLength markers (RIGHT) and the removed field (LEFT), each naming the generated YAML; the
// fake refuses any comment outside git's own diff, and a re-run posts nothing.
func TestCommentsOnGoTypes(t *testing.T) {
	pr := goPullRequest(t)
	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	const types = "api/v1/widget_types.go"
	// Markdown-escaped as all repository text in comments: GitHub shows widget_types.go:11.
	const goFile, crd = `api/v1/widget\_types\.go&#58;`, `config/crd/bases/example\.com\_widgets\.yaml&#58;`
	var got []string
	for _, c := range pr.srv.Comments {
		got = append(got, c.Path+":"+itoa(c.Line)+":"+c.Side+":"+ruleOf(c.Body))
		_, gen, _ := strings.Cut(c.Body, "**Go source:** ")
		gen, _, _ = strings.Cut(gen, "\n")
		got = append(got, "  "+gen)
	}
	want := []string{
		types + ":11:RIGHT:max-decreased", "  " + goFile + "11 · **generated CRD:** " + crd + "34",
		types + ":17:LEFT:field-removed", "  " + goFile + `17 \(base\) · **generated CRD:** ` + crd + `31 \(base\)`,
		types + ":22:RIGHT:min-added", "  " + goFile + "22 · **generated CRD:** " + crd + "42",
	}
	sortPairs(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("comments:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
	pr.completed(pr.head)

	comments := len(pr.srv.Comments)
	code, out = pr.run()
	if code != ExitFindings || len(pr.srv.Comments) != comments || !strings.Contains(out, "3 already posted") {
		t.Fatalf("second run: exit %d, %d comments\n%s", code, len(pr.srv.Comments), out)
	}
}

// sortPairs sorts a list of (comment, detail) line pairs by the comment line.
func sortPairs(lines []string) {
	type pair struct{ a, b string }
	ps := make([]pair, 0, len(lines)/2)
	for i := 0; i+1 < len(lines); i += 2 {
		ps = append(ps, pair{lines[i], lines[i+1]})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].a < ps[j].a })
	for i, p := range ps {
		lines[2*i], lines[2*i+1] = p.a, p.b
	}
}
