package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestCheckCommand: a PR that moves a CRD to a new file and removes a field reports exactly one
// field-removed on the removed line of the old file, and exits 1.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(files map[string]string, remove ...string) plumbing.Hash {
		t.Helper()
		for name, src := range files {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			full := filepath.Join(dir, name)
			_ = os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range remove {
			_ = os.Remove(filepath.Join(dir, name))
		}
		if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		when = when.Add(time.Minute)
		sig := &object.Signature{Name: "t", Email: "t@example.com", When: when}
		h, err := wt.Commit("c", &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	cases := "../../testdata/rules/field-removed/leaf/"
	base := commit(map[string]string{"config/crd/widgets.yaml": cases + "old.yaml"})
	if err := r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), base)); err != nil {
		t.Fatal(err)
	}
	commit(map[string]string{"deploy/widgets.yaml": cases + "new.yaml"}, "config/crd/widgets.yaml")

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
	if code, stdout, _ := runCLI(t, "check", "--base", "main", "--repo", dir); code != 0 || !strings.Contains(stdout, "warning field-removed") {
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
