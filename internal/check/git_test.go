package check

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/source"
)

// testRepo is a gittest repository that can run the git-mode comparison.
type testRepo struct {
	*gittest.Repo
	t *testing.T
}

func newTestRepo(t *testing.T) *testRepo { return &testRepo{gittest.New(t), t} }

func (tr *testRepo) check(o GitOptions) *GitResult {
	tr.t.Helper()
	repo, err := source.OpenRepo(tr.Dir)
	if err != nil {
		tr.t.Fatal(err)
	}
	res, err := Git(repo, o)
	if err != nil {
		tr.t.Fatal(err)
	}
	return res
}

// dropBlob deletes the object of content from the repository, as a partial clone lacks it.
func (tr *testRepo) dropBlob(content []byte) {
	tr.t.Helper()
	blob := plumbing.ComputeHash(plumbing.BlobObject, content).String()
	if err := os.Remove(filepath.Join(tr.Dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		tr.t.Fatal(err)
	}
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
	tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	tr.Write("README.md", []byte("hello\n"))
	main := tr.Commit("base")
	tr.Branch("main", main)
	tr.Remove("config/crd/widgets.yaml")
	tr.Write("deploy/crds/widget-crd.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	tr.Commit("move and remove a field")
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
	tr.Write("crds.yaml", append(append(append([]byte{}, widgetsOld...), "---\n"...), gadgets...))
	tr.Branch("main", tr.Commit("both CRDs in one file"))
	tr.Remove("crds.yaml")
	tr.Write("crds/widgets.yaml", widgetsNew)
	tr.Write("crds/gadgets.yaml", gadgets)
	tr.Commit("split")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "enum-value-removed widgets.example.com v1 .spec.name crds.yaml:36 base\n")
	if res.CRDs != 2 {
		t.Errorf("compared %d CRDs, want 2", res.CRDs)
	}
}

func TestGitDeletedCRDAndOddFiles(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("crds/widgets.yaml", caseFile(t, "crd-removed/basic/old.yaml"))
	tr.Write("vendor/other/crd.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	tr.Branch("main", tr.Commit("base"))
	tr.Remove("crds/widgets.yaml")
	// A Helm template of another CRD in a folder with no Chart.yaml (a template outside any
	// chart: chart-not-rendered), a binary file named .yaml and a broken vendored CRD: only the
	// template may produce a finding at warning or above (the vendored folder is excluded by
	// config).
	tr.Write("chart/templates/crd.yaml", []byte("{{- if .Values.installCRDs }}\n"+strings.ReplaceAll(string(caseFile(t, "field-added/basic/new.yaml")), "widget", "gadget")+"{{- end }}\n"))
	tr.Write("assets/logo.yaml", []byte("\x89PNG\x00\x00CustomResourceDefinition"))
	tr.Write("vendor/other/crd.yaml", []byte("kind: CustomResourceDefinition\nmetadata: [broken\n"))
	tr.Commit("delete the CRD")
	res := tr.check(GitOptions{Base: "main", Filter: source.Filter{Exclude: []string{"vendor/**"}}})
	assertFindings(t, res, "chart-not-rendered gadgets.example.com   chart/templates/crd.yaml:1 head\ncrd-removed widgets.example.com   crds/widgets.yaml:4 base\n")
	if len(res.Notices) != 0 || res.CRDs != 1 {
		t.Errorf("CRDs %d, notices %q", res.CRDs, res.Notices)
	}
}

func TestGitMalformedAndOversized(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("crds/widgets.yaml", caseFile(t, "invalid-crd/malformed-yaml/old.yaml"))
	tr.Branch("main", tr.Commit("base"))
	tr.Write("crds/widgets.yaml", caseFile(t, "invalid-crd/malformed-yaml/new.yaml"))
	big := append([]byte("kind: CustomResourceDefinition\n# "), bytes.Repeat([]byte("x"), source.MaxFileSize)...)
	tr.Write("crds/huge.yaml", big)
	tr.Commit("break it")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "invalid-crd    crds/huge.yaml:1 head\ninvalid-crd widgets.example.com   crds/widgets.yaml:7 head\n")
}

// A copy of a CRD in another file is not a duplicate: the unchanged definition stays paired with
// itself, and the copy is new there (whoever installs from the chart had no CRD from it
// before), not a change to the definition it copies.
func TestGitCopyInAnotherFile(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/widgets.yaml", caseFile(t, "field-added/basic/old.yaml"))
	tr.Branch("main", tr.Commit("base"))
	tr.Write("charts/crds/widgets.yaml", caseFile(t, "field-added/basic/new.yaml"))
	tr.Commit("copy the CRD into a chart")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "")
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Rule+" "+f.Path+" "+f.Location.File)
	}
	if want := "[crd-added  charts/crds/widgets.yaml]"; fmt.Sprint(got) != want {
		t.Errorf("findings %v, want %s", got, want)
	}
	const msg = "a new copy of CRD widgets.example.com, which the base defines at config/crd/widgets.yaml:4: a copy at a new path is new there (a second bundle, a chart, a release file) and is compared with nothing; its other copies are compared with their own counterparts"
	if len(res.Findings) != 1 || res.Findings[0].Message != msg {
		t.Errorf("messages %v, want %q", res.Findings, msg)
	}
}

// The base branch moved on after the PR branched off: its later change is not the PR's.
func TestGitComparesWithMergeBase(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	fork := tr.Commit("base")
	tr.Write("crds/widgets.yaml", caseFile(t, "field-added/basic/new.yaml")) // main adds .spec.color
	tr.Branch("main", tr.Commit("main moves on"))
	tr.Checkout(fork)
	tr.Write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	tr.Branch("pr", tr.Commit("pr removes .spec.name"))
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
	tr.Write("crds/widgets.yaml", v1)
	tr.Tag("v1.0.0", tr.Commit("release 1"))
	v2 := caseFile(t, "storage-version-changed/basic/new.yaml") // v1 stored, v1beta1 served
	tr.Write("crds/widgets.yaml", v2)
	tr.Tag("v2.0.0", tr.Commit("release 2"))
	tr.Branch("main", tr.Commit("main"))
	tr.Write("crds/widgets.yaml", caseFile(t, "stored-version-removed/storage-version/new.yaml")) // v1beta1 gone
	tr.Commit("drop v1beta1")
	res := tr.check(GitOptions{Base: "main", Baselines: []string{"v1.0.0", "v2.0.0"}})
	assertFindings(t, res, "stored-version-removed widgets.example.com v1beta1  crds/widgets.yaml:18 base\n"+
		"storage-version-changed widgets.example.com v1  crds/widgets.yaml:20 head baseline=v1.0.0\n")
	// Without baselines the history says it: v1.0.0 stored v1beta1.
	res = tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "stored-version-removed widgets.example.com v1beta1  crds/widgets.yaml:18 base\n")
}

func TestGitBaselineFindingsAreMarked(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	tr.Tag("v1.0.0", tr.Commit("release"))
	tr.Write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml")) // already on main
	tr.Branch("main", tr.Commit("main removes .spec.name"))
	tr.Write("crds/widgets.yaml", caseFile(t, "max-added/max-length/new.yaml")) // PR brings .spec.name back with a maxLength
	tr.Commit("pr")
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
	tr.Write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
	base := tr.Commit("base")
	tr.Branch("main", base)
	tr.Write("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	head := tr.Commit("pr")
	tr.Branch("pr", head)

	origin := filepath.Join(t.TempDir(), "origin.git")
	if _, err := git.PlainClone(origin, true, &git.CloneOptions{URL: tr.Dir, Mirror: true}); err != nil {
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
	t.Cleanup(func() { repo.Close() })
	res, err := Git(repo, GitOptions{Base: base.String(), Head: head.String()})
	if err != nil {
		t.Fatal(err)
	}
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.name crds/widgets.yaml:32 base\n")
	if len(repo.Fetched) == 0 {
		t.Error("nothing was fetched: the test did not exercise the shallow path")
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

// The "done means" for samples: a PR lowers a maximum below a value a sample uses.
func TestGitSampleBreaks(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/old.yaml"))
	tr.Write("config/samples/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/samples.yaml"))
	tr.Write("config/rbac/role.yaml", []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n"))
	tr.Branch("main", tr.Commit("base"))
	tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/new.yaml"))
	tr.Commit("lower the maximum")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n"+
		"sample-invalid widgets.example.com v1 .spec.size config/samples/widgets.yaml:15 head\n")
	for _, f := range res.Findings {
		if f.Rule == "sample-invalid" && !strings.Contains(f.Message, "spec.size: Invalid value: 8: spec.size in body should be less than or equal to 5") {
			t.Errorf("message is not the API server's: %s", f.Message)
		}
	}
	// With samples globs that do not cover the file, it is not read.
	res = tr.check(GitOptions{Base: "main", Samples: []string{"docs/**"}})
	assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n")
}

// Rename pairing reads only manifests: with every Go blob gone from the object store, the
// comparison of a dependency bump still succeeds.
func TestGitNeverReadsOtherBlobs(t *testing.T) {
	repo, base, head := bigPullRequest(t, 50)
	removed := 0
	for _, c := range []plumbing.Hash{base, head} {
		commit, err := repo.Git.CommitObject(c)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := commit.Tree()
		if err != nil {
			t.Fatal(err)
		}
		err = tree.Files().ForEach(func(f *object.File) error {
			if !strings.HasSuffix(f.Name, ".go") {
				return nil
			}
			h := f.Hash.String()
			err := os.Remove(filepath.Join(repo.Dir, ".git", "objects", h[:2], h[2:]))
			if err == nil {
				removed++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if removed != 100 {
		t.Fatalf("removed %d Go blobs, want 100", removed)
	}
	r, err := source.OpenRepo(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Git(r, GitOptions{Base: "main", Head: head.String()})
	if err != nil {
		t.Fatal(err)
	}
	if res.CRDs != 1 {
		t.Fatalf("compared %d CRDs, want 1", res.CRDs)
	}
}
