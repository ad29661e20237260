package check

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// testRepo builds real git repositories with go-git.
type testRepo struct {
	t   *testing.T
	dir string
	r   *git.Repository
	wt  *git.Worktree
	now time.Time
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &testRepo{t: t, dir: dir, r: r, wt: wt, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (tr *testRepo) write(path string, data []byte) {
	tr.t.Helper()
	full := filepath.Join(tr.dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) remove(path string) {
	tr.t.Helper()
	if err := os.Remove(filepath.Join(tr.dir, path)); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) commit(msg string) plumbing.Hash {
	tr.t.Helper()
	if err := tr.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		tr.t.Fatal(err)
	}
	tr.now = tr.now.Add(time.Minute)
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: tr.now}
	h, err := tr.wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		tr.t.Fatal(err)
	}
	return h
}

func (tr *testRepo) ref(name plumbing.ReferenceName, h plumbing.Hash) {
	tr.t.Helper()
	if err := tr.r.Storer.SetReference(plumbing.NewHashReference(name, h)); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) branch(name string, h plumbing.Hash) {
	tr.ref(plumbing.NewBranchReferenceName(name), h)
}

func (tr *testRepo) checkout(h plumbing.Hash) {
	tr.t.Helper()
	if err := tr.wt.Checkout(&git.CheckoutOptions{Hash: h, Force: true}); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr *testRepo) check(o GitOptions) *GitResult {
	tr.t.Helper()
	repo, err := source.OpenRepo(tr.dir)
	if err != nil {
		tr.t.Fatal(err)
	}
	res, err := Git(repo, o)
	if err != nil {
		tr.t.Fatal(err)
	}
	return res
}

func caseFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(casesDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// located renders findings at warning or above with their exact location.
func located(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Severity > finding.Info {
			b.WriteString(f.Rule + " " + f.CRD + " " + f.Version + " " + f.Path + " " + f.Location.File + ":" + itoa(f.Location.Line) + " " + string(f.Location.Side))
			if f.Baseline != "" {
				b.WriteString(" baseline=" + f.Baseline)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func assertFindings(t *testing.T, res *GitResult, want string) {
	t.Helper()
	if got := located(res.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s\nnotices: %v", got, want, res.Notices)
	}
}

// The "done means": a PR moves a CRD to a new file and removes a field; exactly one
// field-removed, on the removed line of the old file.
func TestGitMoveAndRemoveField(t *testing.T) {
	tr := newTestRepo(t)
	tr.write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	tr.write("README.md", []byte("hello\n"))
	main := tr.commit("base")
	tr.branch("main", main)
	tr.remove("config/crd/widgets.yaml")
	tr.write("deploy/crds/widget-crd.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	tr.commit("move and remove a field")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n")
	if !res.Diff.Contains("config/crd/widgets.yaml", 32, false) {
		t.Error("the removed line is not inside a hunk of the diff")
	}
}

func TestGitMultiDocumentSplit(t *testing.T) {
	tr := newTestRepo(t)
	widgetsOld := caseFile(t, "enum-value-removed/basic/old.yaml")
	widgetsNew := caseFile(t, "enum-value-removed/basic/new.yaml")
	gadgets := bytes.ReplaceAll(bytes.ReplaceAll(caseFile(t, "field-added/basic/old.yaml"), []byte("widget"), []byte("gadget")), []byte("Widget"), []byte("Gadget"))
	tr.write("crds.yaml", append(append(append([]byte{}, widgetsOld...), "---\n"...), gadgets...))
	tr.branch("main", tr.commit("both CRDs in one file"))
	tr.remove("crds.yaml")
	tr.write("crds/widgets.yaml", widgetsNew)
	tr.write("crds/gadgets.yaml", gadgets)
	tr.commit("split")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "enum-value-removed widgets.example.com v1 .spec.name crds.yaml:36 base\n")
	if res.CRDs != 2 {
		t.Errorf("compared %d CRDs, want 2", res.CRDs)
	}
}

func TestGitDeletedCRDAndOddFiles(t *testing.T) {
	tr := newTestRepo(t)
	tr.write("crds/widgets.yaml", caseFile(t, "crd-removed/basic/old.yaml"))
	tr.write("vendor/other/crd.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	tr.branch("main", tr.commit("base"))
	tr.remove("crds/widgets.yaml")
	// A Helm template of a CRD, a binary file named .yaml and a broken vendored CRD: none of
	// them may produce a finding (the vendored folder is excluded by config).
	tr.write("chart/templates/crd.yaml", []byte("{{- if .Values.installCRDs }}\n"+string(caseFile(t, "field-added/basic/new.yaml"))+"{{- end }}\n"))
	tr.write("assets/logo.yaml", []byte("\x89PNG\x00\x00CustomResourceDefinition"))
	tr.write("vendor/other/crd.yaml", []byte("kind: CustomResourceDefinition\nmetadata: [broken\n"))
	tr.commit("delete the CRD")
	res := tr.check(GitOptions{Base: "main", Filter: source.Filter{Exclude: []string{"vendor/**"}}})
	assertFindings(t, res, "crd-removed widgets.example.com   crds/widgets.yaml:4 base\n")
	if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "chart/templates/crd.yaml:1: skipped, looks like a Helm or Go template") {
		t.Errorf("notices %q", res.Notices)
	}
}

func TestGitMalformedAndOversized(t *testing.T) {
	tr := newTestRepo(t)
	tr.write("crds/widgets.yaml", caseFile(t, "invalid-crd/malformed-yaml/old.yaml"))
	tr.branch("main", tr.commit("base"))
	tr.write("crds/widgets.yaml", caseFile(t, "invalid-crd/malformed-yaml/new.yaml"))
	big := append([]byte("kind: CustomResourceDefinition\n# "), bytes.Repeat([]byte("x"), source.MaxFileSize)...)
	tr.write("crds/huge.yaml", big)
	tr.commit("break it")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "invalid-crd    crds/huge.yaml:1 head\ninvalid-crd widgets.example.com   crds/widgets.yaml:7 head\n")
}

// A changed file that defines a CRD some unchanged file defines too is a duplicate.
func TestGitDuplicateInUnchangedFile(t *testing.T) {
	tr := newTestRepo(t)
	tr.write("config/crd/widgets.yaml", caseFile(t, "field-added/basic/old.yaml"))
	tr.branch("main", tr.commit("base"))
	tr.write("charts/crds/widgets.yaml", caseFile(t, "field-added/basic/new.yaml"))
	tr.commit("copy the CRD into a chart")
	res := tr.check(GitOptions{Base: "main"})
	// The finding sits on the copy the change adds, and names the file that had it already.
	assertFindings(t, res, "duplicate-crd widgets.example.com   charts/crds/widgets.yaml:4 head\n")
	for _, f := range res.Findings {
		if f.Rule == "duplicate-crd" && !strings.Contains(f.Message, "defined at config/crd/widgets.yaml:4 and again at charts/crds/widgets.yaml:4") {
			t.Errorf("message does not name both files: %s", f.Message)
		}
	}
}

// The base branch moved on after the PR branched off: its later change is not the PR's.
func TestGitComparesWithMergeBase(t *testing.T) {
	tr := newTestRepo(t)
	tr.write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	fork := tr.commit("base")
	tr.write("crds/widgets.yaml", caseFile(t, "field-added/basic/new.yaml")) // main adds .spec.color
	tr.branch("main", tr.commit("main moves on"))
	tr.checkout(fork)
	tr.write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	tr.branch("pr", tr.commit("pr removes .spec.name"))
	res := tr.check(GitOptions{Base: "main", Head: "pr"})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.name crds/widgets.yaml:32 base\n")
	if res.MergeBase != fork.String() {
		t.Errorf("merge base %s, want %s", res.MergeBase, fork)
	}
}

// Two baselines: a version that was the storage version at an old release counts as stored.
func TestGitBaselines(t *testing.T) {
	tr := newTestRepo(t)
	v1 := caseFile(t, "stored-version-removed/storage-version/old.yaml") // v1beta1 stored
	tr.write("crds/widgets.yaml", v1)
	tr.ref(plumbing.NewTagReferenceName("v1.0.0"), tr.commit("release 1"))
	v2 := caseFile(t, "storage-version-changed/basic/new.yaml") // v1 stored, v1beta1 served
	tr.write("crds/widgets.yaml", v2)
	tr.ref(plumbing.NewTagReferenceName("v2.0.0"), tr.commit("release 2"))
	tr.branch("main", tr.commit("main"))
	tr.write("crds/widgets.yaml", caseFile(t, "stored-version-removed/storage-version/new.yaml")) // v1beta1 gone
	tr.commit("drop v1beta1")
	res := tr.check(GitOptions{Base: "main", Baselines: []string{"v1.0.0", "v2.0.0"}})
	assertFindings(t, res, "stored-version-removed widgets.example.com v1beta1  crds/widgets.yaml:18 base\n"+
		"storage-version-changed widgets.example.com v1  crds/widgets.yaml:20 head baseline=v1.0.0\n")
	// Without baselines the same change is only a served version removal.
	res = tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "served-version-removed widgets.example.com v1beta1  crds/widgets.yaml:18 base\n")
}

func TestGitBaselineFindingsAreMarked(t *testing.T) {
	tr := newTestRepo(t)
	tr.write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	tr.ref(plumbing.NewTagReferenceName("v1.0.0"), tr.commit("release"))
	tr.write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml")) // already on main
	tr.branch("main", tr.commit("main removes .spec.name"))
	tr.write("crds/widgets.yaml", caseFile(t, "max-added/max-length/new.yaml")) // PR brings .spec.name back with a maxLength
	tr.commit("pr")
	res := tr.check(GitOptions{Base: "main", Baselines: []string{"v1.0.0"}})
	assertFindings(t, res, "max-added widgets.example.com v1 .spec.name crds/widgets.yaml:34 head baseline=v1.0.0\n")
}

// A shallow clone (as actions/checkout makes) lacks the base commit: it is fetched from origin.
func TestGitShallowCloneFetchesBase(t *testing.T) {
	if _, err := exec.LookPath("git-upload-pack"); err != nil {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("the file transport of go-git needs git-upload-pack")
		}
	}
	tr := newTestRepo(t)
	tr.write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	base := tr.commit("base")
	tr.branch("main", base)
	tr.write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	head := tr.commit("pr")
	tr.branch("pr", head)

	origin := filepath.Join(t.TempDir(), "origin.git")
	if _, err := git.PlainClone(origin, true, &git.CloneOptions{URL: tr.dir, Mirror: true}); err != nil {
		t.Fatal(err)
	}
	allowSHA(t, origin)
	clone := filepath.Join(t.TempDir(), "clone")
	_, err := git.PlainClone(clone, false, &git.CloneOptions{URL: "file://" + origin, ReferenceName: "refs/heads/pr", SingleBranch: true, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := source.OpenRepo(clone)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Git(repo, GitOptions{Base: base.String(), Head: head.String()})
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.name crds/widgets.yaml:32 base\n")
	if len(repo.Fetched) == 0 {
		t.Error("nothing was fetched: the test did not exercise the shallow path")
	}

	// A SHA the remote does not have: exit-2 material with the fetch-depth hint.
	repo2, _ := source.OpenRepo(clone)
	_, err = Git(repo2, GitOptions{Base: strings.Repeat("ab", 20), Head: head.String()})
	if err == nil || !strings.Contains(err.Error(), "fetch-depth: 0") {
		t.Fatalf("error %v, want the fetch-depth hint", err)
	}
}

// allowSHA lets clients fetch any commit by SHA from a bare repository, as GitHub does.
func allowSHA(t *testing.T, dir string) {
	t.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Raw.Section("uploadpack").SetOption("allowAnySHA1InWant", "true")
	if err := r.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
}
