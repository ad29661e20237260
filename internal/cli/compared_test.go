package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/schematest"
)

// check --base v1.5.0 on a branch that forked before the release compares with the merge base,
// and says so: the SHAs in JSON, one line in text, and a notice that names the way to compare
// with the tag itself. A baseline-only comparison counts the CRDs it compared.
func TestCheckSaysWhatItCompared(t *testing.T) {
	repo := gittest.New(t)
	cases := "../../testdata/rules/field-removed/leaf/"
	repo.Copy("config/crd/widgets.yaml", cases+"old.yaml")
	fork := repo.Commit("v1.4")
	repo.Write("NEWS", []byte("1\n"))
	repo.Commit("release work 1")
	repo.Write("NEWS", []byte("2\n"))
	release := repo.Commit("release work 2")
	repo.Tag("v1.5.0", release)
	repo.Checkout(fork)
	repo.Write("README.md", []byte("feature\n"))
	head := repo.Commit("feature")
	repo.Branch("feature", head)

	code, stdout, stderr := runCLI(t, "check", "--repo", repo.Dir, "--base", "v1.5.0", "--head", "feature", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := schematest.Validate(schematest.Compile(t, "../../docs/report.schema.json"), []byte(stdout)); err != nil {
		t.Errorf("git-mode output does not match docs/report.schema.json: %v", err)
	}
	var doc struct {
		Notices  []string          `json:"notices"`
		Compared map[string]string `json:"compared"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"base": release.String(), "head": head.String(), "mergeBase": fork.String()}
	if len(doc.Compared) != 3 || doc.Compared["base"] != want["base"] || doc.Compared["head"] != want["head"] || doc.Compared["mergeBase"] != want["mergeBase"] {
		t.Errorf("compared %v, want %v", doc.Compared, want)
	}
	notice := "comparing with merge base " + fork.String()[:12] + ", 2 commits behind v1.5.0; --baseline v1.5.0 compares with v1.5.0 itself"
	if len(doc.Notices) != 1 || doc.Notices[0] != notice {
		t.Errorf("notices %q, want %q", doc.Notices, notice)
	}

	_, text, _ := runCLI(t, "check", "--repo", repo.Dir, "--base", "v1.5.0", "--head", "feature")
	line := "compared feature " + head.String()[:12] + " with the merge base " + fork.String()[:12] + " of v1.5.0 " + release.String()[:12]
	if first, _, _ := strings.Cut(text, "\n"); first != line {
		t.Errorf("first line %q, want %q", first, line)
	}

	// Base is an ancestor of head: no notice, and the line says base is the merge base.
	_, stdout, _ = runCLI(t, "check", "--repo", repo.Dir, "--base", fork.String(), "--head", "feature", "--format", "json")
	if strings.Contains(stdout, `"notices"`) {
		t.Errorf("a notice without reason:\n%s", stdout)
	}

	// Baseline only: base is head, the baseline changed the CRD.
	repo.Checkout(head)
	repo.Copy("config/crd/widgets.yaml", cases+"new.yaml")
	repo.Branch("feature", repo.Commit("remove a field"))
	code, stdout, _ = runCLI(t, "check", "--repo", repo.Dir, "--base", "feature", "--head", "feature", "--baseline", "v1.5.0", "--format", "json")
	if code != 1 || !strings.Contains(stdout, `"crds": 1,`) || !strings.Contains(stdout, `"baseline": "v1.5.0"`) {
		t.Errorf("baseline-only run: exit %d\n%s", code, stdout)
	}
}
