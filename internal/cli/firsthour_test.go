package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/check"
	"github.com/crdguard/crdguard/internal/gittest"
)

// --help lists every flag the commands define (read from this package's sources, so a flag
// added later without a line in the usage fails), the cluster's among them, with the default
// --max-objects really has.
func TestHelpListsEveryFlag(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	defined := regexp.MustCompile(`\.(?:String|Bool|Int|Var|StringVar|BoolVar|IntVar)\([^"\n]*"([a-z][a-z-]*)"`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range defined.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	if len(names) < 15 {
		t.Fatalf("found %d flag definitions, fewer than the commands have: %v", len(names), names)
	}
	for _, n := range names {
		if !strings.Contains(out, "--"+n+" ") && !strings.Contains(out, "--"+n+"]") {
			t.Errorf("--help does not list --%s", n)
		}
	}
	if want := fmt.Sprintf("(default %d)", check.DefaultMaxObjects); !strings.Contains(out, "--max-objects N    stored objects read per changed CRD "+want) {
		t.Errorf("--help does not give --max-objects' default %s", want)
	}
}

// A mistyped flag is named as it was typed, with the nearest flag, and the usage is not
// printed; other flag errors name the flag with two dashes.
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--sho-info", "a", "b"}, "crdguard diff: unknown flag --sho-info: did you mean --show-info? (crdguard --help lists the flags)\n"},
		{[]string{"check", "-bse", "main"}, "crdguard check: unknown flag -bse: did you mean --base? (crdguard --help lists the flags)\n"},
		{[]string{"check", "--verbose=1", "--frobnicate=yes"}, "crdguard check: unknown flag --frobnicate (crdguard --help lists the flags)\n"},
		{[]string{"check", "--base"}, "crdguard check: --base needs a value (--base VALUE); crdguard --help lists the flags\n"},
		{[]string{"diff", "--max-objects", "many", "a", "b"}, "crdguard diff: invalid value \"many\" for flag --max-objects: parse error\n"},
	} {
		code, out, stderr := runCLI(t, tc.args...)
		if code != 2 || out != "" || stderr != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%q\nwant\n%q", tc.args, code, out, stderr, tc.want)
		}
	}
}

// In a clone without the base branch (shallow or single-branch, as actions/checkout makes by
// default) --base origin/main says how to fetch it, not go-git's bare "reference not found".
func TestBaseNotInClone(t *testing.T) {
	repo := gittest.New(t)
	repo.Copy("config/crd/widgets.yaml", "../../testdata/rules/field-removed/leaf/old.yaml")
	repo.Branch("main", repo.Commit("base"))
	code, _, stderr := runCLI(t, "check", "--repo", repo.Dir, "--base", "origin/main")
	want := "crdguard check: base: resolving \"origin/main\": the clone has no such branch, tag or commit (a shallow or single-branch clone has only what it checked out); run `git fetch origin main` (or clone with the whole history) and try again\n"
	if code != 2 || stderr != want {
		t.Fatalf("exit %d, stderr\n%s\nwant\n%s", code, stderr, want)
	}
}

// With no kubeconfig anywhere, the error says how to give one, not client-go's
// KUBERNETES_MASTER.
func TestNoKubeconfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_MASTER", "")
	code, _, stderr := runCLI(t, "diff", "kube://widgets.example.com", "../../testdata/rules/field-removed/leaf/new.yaml")
	want := "crdguard diff: reading kubeconfig: no cluster configured in KUBECONFIG, else ~/.kube/config: give one with --kubeconfig FILE (and --context NAME)\n"
	if code != 2 || stderr != want {
		t.Fatalf("exit %d, stderr\n%s\nwant\n%s", code, stderr, want)
	}
}
