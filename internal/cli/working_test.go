package cli

import (
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// "Before you push": a CRD edited but not committed is compared, and the report says so; with
// an explicit --head only commits are compared.
func TestCheckComparesUncommittedEdits(t *testing.T) {
	repo := gittest.New(t)
	cases := "../../testdata/rules/field-removed/leaf/"
	repo.Copy("config/crd/widgets.yaml", cases+"old.yaml")
	main := repo.Commit("base")
	repo.Branch("main", main)
	repo.Copy("config/crd/widgets.yaml", cases+"new.yaml") // not committed

	code, stdout, stderr := runCLI(t, "check", "--repo", repo.Dir, "--base", "main")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if want := "compared the working tree (HEAD " + main.String()[:12] + " with uncommitted changes) with main " + main.String()[:12] + " (the merge base)"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if !strings.Contains(stdout, "  error   v1 field-removed .spec.name  config/crd/widgets.yaml:32 (removed; was line 32)") ||
		!strings.Contains(stdout, "notice: compared the working tree: 1 manifest differs from HEAD (uncommitted): config/crd/widgets.yaml\n") {
		t.Errorf("output:\n%s", stdout)
	}
	_, stdout, _ = runCLI(t, "check", "--repo", repo.Dir, "--base", "main", "--format", "json")
	if !strings.Contains(stdout, `"workingTree": true`) {
		t.Errorf("json does not say the working tree was compared:\n%s", stdout)
	}

	code, stdout, _ = runCLI(t, "check", "--repo", repo.Dir, "--base", "main", "--head", "HEAD")
	if code != 0 || strings.Contains(stdout, "working tree") || !strings.Contains(stdout, "0 CRDs compared") {
		t.Errorf("--head HEAD: exit %d\n%s", code, stdout)
	}
}
