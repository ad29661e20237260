package check

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/source"
)

// Issue 43, item 3: the shallow-clone notice only when the clone is shallow and the answer needed
// the history it lacks. A shallow clone whose history ends before the commit that stored the
// removed version says so and keeps the warning; a full clone of the same repository finds the
// version stored and says nothing of a shallow clone.
func TestGitHistoryShallowClone(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", false, true, false}, ver{"v1beta1", true, false, false}))
	first := tr.Commit("v1alpha2 stored")
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", false, false, false}, ver{"v1beta1", true, true, false}))
	for i := range 4 {
		tr.Write("README.md", []byte(strings.Repeat("x", i+1)))
		tr.Commit("unrelated")
	}
	tr.Branch("main", tr.Commit("main"))
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1beta1", true, true, false}))
	tr.Branch("pr", tr.Commit("remove v1alpha2"))
	for _, tc := range []struct {
		name   string
		depth  []string
		want   string
		notice string
	}{
		{"shallow", []string{"--depth", "3"}, "warning version-removed v1alpha2: version v1alpha2 (not served, not stored in base) was removed: clusters that installed an older release may still list it in status.storedVersions, and the API server then refuses the update; check that no release stored it, or run crdguard in git mode, which reads the history\n",
			"the clone is shallow: its history ends before it showed whether a removed version of gateways.example.com was ever stored, so such a version stays a warning (fetch the whole history: fetch-depth: 0)"},
		{"full", nil, storedAt(first.String()[:12] + " (config/crd/gateways.yaml)"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clone := filepath.Join(t.TempDir(), "clone")
			gitRun(t, "", append(append([]string{"clone", "-q", "--no-single-branch", "--branch", "pr"}, tc.depth...), "file://"+tr.Dir, clone)...)
			repo, err := source.OpenRepo(clone)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { repo.Close() })
			res, err := Git(repo, GitOptions{Base: "origin/main", Head: "HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			if got := findingsOf(res.Findings); got != tc.want {
				t.Errorf("findings:\n%s\nwant:\n%s", got, tc.want)
			}
			shallow := slices.ContainsFunc(res.Notices, func(n string) bool { return strings.Contains(n, "shallow") })
			if got := slices.Contains(res.Notices, tc.notice); got != (tc.notice != "") || shallow != (tc.notice != "") {
				t.Errorf("notices %q, want the shallow notice: %v", res.Notices, tc.notice != "")
			}
		})
	}
}
