package github

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/source"
)

// Base-side findings on context lines go on the RIGHT at the line's head number, removed lines
// on the LEFT; the fake checks every comment against git's own diff of the same files.
func TestReviewContextLinesOnTheRight(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed for GitHub's view of the diff")
	}
	var old, new strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&old, "line %d\n", i)
		if i != 10 {
			fmt.Fprintf(&new, "line %d\n", i)
		}
	}
	dir := t.TempDir()
	for name, data := range map[string]string{"a/crd.yaml": old.String(), "b/crd.yaml": new.String()} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "diff", "--no-index", "--no-prefix", "-U3", "a/crd.yaml", "b/crd.yaml") // paths read as a/ and b/ of crd.yaml
	cmd.Dir = dir
	out, _ := cmd.Output() // exit 1: the files differ
	srv := fakegithub.New(t, token)
	srv.Files = fakegithub.FilesFromUnifiedDiff(string(out))
	if srv.Files["crd.yaml"] == nil {
		t.Fatalf("git diff not understood:\n%s", out)
	}
	d := &source.Diff{}
	d.Add(source.NewFileDiff("crd.yaml", "crd.yaml", []byte(old.String()), []byte(new.String())))
	fs := []finding.Finding{
		mk("field-removed", finding.Error, ".spec.a", "crd.yaml", 8, finding.Base),  // context before: RIGHT 8
		mk("field-removed", finding.Error, ".spec.b", "crd.yaml", 10, finding.Base), // removed: LEFT 10
		mk("field-removed", finding.Error, ".spec.c", "crd.yaml", 12, finding.Base), // context after: RIGHT 11
	}
	source.Place(fs, map[string]*source.Diff{"": d})
	res, err := newPublisher(t, srv, &sleeps{}).Review(context.Background(), PR{Number: 7, HeadSHA: strings.Repeat("a", 40)}, fs, d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inline != 3 || res.InBody != 0 {
		t.Fatalf("result %+v", res)
	}
	var got []string
	for _, c := range srv.Comments {
		got = append(got, fmt.Sprintf("%d:%s", c.Line, c.Side))
	}
	if strings.Join(got, " ") != "8:RIGHT 10:LEFT 11:RIGHT" {
		t.Fatalf("comments %v", got)
	}
}
