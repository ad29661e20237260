package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// TestCheckCommand: a PR that moves a CRD to a new file and removes a field reports exactly one
// field-removed on the removed line of the old file, and exits 1.
func TestCheckCommand(t *testing.T) {
	repo := gittest.New(t)
	dir := repo.Dir
	cases := "../../testdata/rules/field-removed/leaf/"
	repo.Copy("config/crd/widgets.yaml", cases+"old.yaml")
	repo.Branch("main", repo.Commit("base"))
	repo.Remove("config/crd/widgets.yaml")
	repo.Copy("deploy/widgets.yaml", cases+"new.yaml")
	repo.Commit("move the CRD and remove a field")

	code, stdout, stderr := runCLI(t, "check", "--base", "main", "--repo", filepath.Join(dir, "deploy"), "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Count(stdout, `"rule": "field-removed"`) != 1 || !strings.Contains(stdout, `"file": "config/crd/widgets.yaml",
        "line": 32,
        "side": "base"`) {
		t.Fatalf("output:\n%s", stdout)
	}
	if strings.Contains(stdout, "crd-removed") || strings.Contains(stdout, "crd-added") {
		t.Fatal("the move was reported")
	}

	// The configuration at the repository root applies.
	if err := os.WriteFile(filepath.Join(dir, ".crdguard.yaml"), []byte("mode: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := runCLI(t, "check", "--base", "main", "--repo", dir); code != 0 || !strings.Contains(stdout, "warning v1 field-removed") {
		t.Fatalf("with mode: warn: exit %d\n%s", code, stdout)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--repo", dir}, "--base is required"},
		{[]string{"check", "--repo", dir, "--base", "no-such-branch"}, `base: resolving "no-such-branch"`},
		{[]string{"check", "--repo", t.TempDir(), "--base", "main"}, "opening git repository"},
		{[]string{"check", "--repo", dir, "--base", "main", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
