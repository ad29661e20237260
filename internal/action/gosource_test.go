package action

import (
	"encoding/json"
	"fmt"
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
	pr.showDiff()
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
	const goFile, crd = `api/v1/widget\_types.go:`, `config/crd/bases/example.com\_widgets.yaml:`
	var got []string
	for _, c := range pr.srv.Comments {
		got = append(got, c.Path+":"+itoa(c.Line)+":"+c.Side+":"+ruleOf(c.Body))
		_, gen, _ := strings.Cut(c.Body, "**Go source:** ")
		gen, _, _ = strings.Cut(gen, "\n")
		got = append(got, "  "+gen)
	}
	want := []string{
		types + ":11:RIGHT:max-decreased", "  " + goFile + "11 · **generated CRD:** " + crd + "34",
		types + ":17:LEFT:field-removed", "  " + goFile + `17 (base) · **generated CRD:** ` + crd + `31 (base)`,
		types + ":22:RIGHT:min-added", "  " + goFile + "22 · **generated CRD:** " + crd + "42",
	}
	sortPairs(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("comments:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
	pr.completed(pr.head)

	// The JSON report carries every finding's Go line, info ones included.
	var rep struct {
		Findings []struct {
			Rule, Path string
			Source     *struct {
				File string
				Line int
				Side string
			}
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(pr.repo.Dir, ReportFile))), &rep); err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range rep.Findings {
		src := "-"
		if f.Source != nil {
			src = fmt.Sprintf("%s:%d:%s", f.Source.File, f.Source.Line, f.Source.Side)
		}
		sources = append(sources, f.Rule+" "+f.Path+" "+src)
	}
	wantSources := []string{
		"field-removed .spec.color " + types + ":17:base",
		"max-decreased .spec.size " + types + ":11:head",
		"min-added .spec.template.name " + types + ":22:head",
	}
	if strings.Join(sources, "\n") != strings.Join(wantSources, "\n") {
		t.Errorf("report sources:\n%s\nwant:\n%s", strings.Join(sources, "\n"), strings.Join(wantSources, "\n"))
	}

	comments := len(pr.srv.Comments)
	code, out = pr.run()
	if code != ExitFindings || len(pr.srv.Comments) != comments || !strings.Contains(out, "3 already posted") {
		t.Fatalf("second run: exit %d, %d comments\n%s", code, len(pr.srv.Comments), out)
	}
}

// showDiff gives the fake GitHub git's own diff of base and head, the commits it knows.
func (pr *pullRequest) showDiff() {
	pr.t.Helper()
	diff, err := exec.Command("git", "-C", pr.repo.Dir, "diff", "-U3", pr.base, pr.head).Output()
	if err != nil {
		pr.t.Fatal(err)
	}
	pr.srv.Files = fakegithub.FilesFromUnifiedDiff(string(diff))
	pr.srv.Commits = map[string]bool{pr.base: true, pr.head: true}
}

// A change to the generated YAML alone (the Go types untouched) is commented on the YAML: the
// Go line is not in the diff, so GitHub would refuse a comment there.
func TestYAMLOnlyChangeStaysOnYAML(t *testing.T) {
	pr := goPullRequest(t)
	pr.base = pr.head
	crd := "config/crd/bases/example.com_widgets.yaml"
	data := strings.Replace(readFile(t, filepath.Join(pr.repo.Dir, crd)), "maximum: 5", "maximum: 4", 1)
	pr.repo.Write(crd, []byte(data))
	pr.head = pr.repo.Commit("hand-edit the generated CRD").String()
	pr.showDiff()
	if code, out := pr.run(); code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var got []string
	for _, c := range pr.srv.Comments {
		got = append(got, c.Path+":"+itoa(c.Line)+":"+c.Side+":"+ruleOf(c.Body))
	}
	if want := crd + ":34:RIGHT:max-decreased"; strings.Join(got, " ") != want {
		t.Fatalf("comments %v, want %s", got, want)
	}
	// The comment still names the Go line that generates the node.
	if !strings.Contains(pr.srv.Comments[0].Body, `**Go source:** api/v1/widget\_types.go:11 · **generated CRD:** `) {
		t.Errorf("comment does not name the Go line:\n%s", pr.srv.Comments[0].Body)
	}
	pr.completed(pr.head)
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
