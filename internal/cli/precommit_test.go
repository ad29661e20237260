package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// preCommitHook is one entry of .pre-commit-hooks.yaml.
type preCommitHook struct {
	ID            string `yaml:"id"`
	Name          string `yaml:"name"`
	Entry         string `yaml:"entry"`
	Language      string `yaml:"language"`
	Files         string `yaml:"files"`
	PassFilenames *bool  `yaml:"pass_filenames"`
}

// TestPreCommitHook runs each hook's entry as pre-commit would, in the root of a repository
// with a staged change: a breaking one fails the commit with the finding, a compatible one
// passes, and nothing staged compares nothing.
func TestPreCommitHook(t *testing.T) {
	var hooks []preCommitHook
	readYAML(t, "../../.pre-commit-hooks.yaml", &hooks)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// The binary each language gives the entry: pre-commit's golang language runs `go install
	// ./...` in this repository, which names each command after its folder (cmd/crdguard gives
	// crdguard); system means a crdguard on PATH.
	binary := map[string]string{"golang": "crdguard", "system": "crdguard"}
	if _, err := os.Stat("../../cmd/crdguard/main.go"); err != nil {
		t.Fatalf("the golang hook needs a command folder named crdguard: %v", err)
	}
	if len(hooks) != 2 || hooks[0].ID != "crdguard" {
		t.Fatalf("hooks %+v", hooks)
	}
	for _, hook := range hooks {
		t.Run(hook.ID, func(t *testing.T) {
			args := strings.Fields(hook.Entry)
			if len(args) == 0 || args[0] != binary[hook.Language] {
				t.Fatalf("entry %q: a %s hook runs %q", hook.Entry, hook.Language, binary[hook.Language])
			}
			if hook.Name == "" {
				t.Error("pre-commit requires a name")
			}
			if hook.PassFilenames == nil || *hook.PassFilenames || hook.Files != `\.(ya?ml|json)$` {
				t.Errorf("hook must not pass file names and must run for manifests: %+v", hook)
			}
			cases := filepath.Join(wd, "../../testdata/rules/field-removed/leaf") + "/" // absolute: the test moves into the repository
			repo := gittest.New(t)
			repo.Copy("config/crd/widgets.yaml", cases+"old.yaml")
			repo.Commit("base")
			t.Chdir(repo.Dir) // pre-commit runs hooks in the repository's root

			code, stdout, stderr := runCLI(t, args[1:]...)
			if code != 0 || !strings.Contains(stdout, "0 CRDs compared") {
				t.Errorf("nothing staged: exit %d\n%s%s", code, stdout, stderr)
			}

			repo.Copy("config/crd/widgets.yaml", cases+"new.yaml")
			stage(t, repo, "config/crd/widgets.yaml")
			const staged = "compared the working tree: 1 manifest differs from HEAD (uncommitted): config/crd/widgets.yaml"
			code, stdout, stderr = runCLI(t, args[1:]...)
			if code != 1 || !strings.Contains(stdout, "field-removed .spec.name  config/crd/widgets.yaml:32 (removed; was line 32)") || !strings.Contains(stdout, staged) {
				t.Errorf("staged breaking change: exit %d\n%s%s", code, stdout, stderr)
			}

			// The change made compatible again (a description edit) passes.
			old, err := os.ReadFile(cases + "old.yaml")
			if err != nil {
				t.Fatal(err)
			}
			compatible := strings.Replace(string(old), "              name:\n                type: string\n",
				"              name:\n                description: the widget's name\n                type: string\n", 1)
			if compatible == string(old) {
				t.Fatal("the test case has no name property to describe")
			}
			repo.Write("config/crd/widgets.yaml", []byte(compatible))
			stage(t, repo, "config/crd/widgets.yaml")
			code, stdout, stderr = runCLI(t, args[1:]...)
			if code != 0 || !strings.Contains(stdout, staged) || strings.Contains(stdout, "field-removed") {
				t.Errorf("staged compatible change: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}

// stage adds path to the index, as `git add` before a commit.
func stage(t *testing.T, repo *gittest.Repo, path string) {
	t.Helper()
	wt, err := repo.Git.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add(path); err != nil {
		t.Fatal(err)
	}
}
