package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/source"
)

// storedAt is the stored-version-removed message for v1alpha2 found stored at a release and file.
func storedAt(where string) string {
	return "error stored-version-removed v1alpha2: version v1alpha2 was removed but objects may be stored in it: it was the storage version at " + where + ", and clusters installed from there still list it in status.storedVersions: the API server refuses the update while objects may still be stored in this version; migrate stored objects, drop the version from status.storedVersions, then remove it (or keep it with served: false)\n"
}

// Issue 43: the history of a CRD is the history of every file that held it, by metadata.name.
// A project ships its CRD in an install bundle since its first release and, from a later
// release on, in a second bundle; when a version is dropped from both, each copy's finding says
// the version was stored (by the older bundle), whichever file sorts first. Before, the younger
// file's history alone was read for one of the name orders (served-version-removed there).
func TestGitHistoryByIdentity(t *testing.T) {
	old, both := versionsCRD(ver{"v1alpha2", true, true, false}), versionsCRD(ver{"v1alpha2", true, false, false}, ver{"v1beta1", true, true, false})
	only := versionsCRD(ver{"v1beta1", true, true, false})
	for _, tc := range []struct {
		name          string
		first, second string                      // the first release's file, the file a later release adds
		later         func(tr *testRepo) []string // instead: the files that then hold the CRD
		want          string                      // findings before stored-version-removed
	}{
		{"older copy sorts first", "deploy/a-install.yaml", "deploy/z-platform.yaml", nil, ""},
		{"older copy sorts last", "deploy/z-install.yaml", "deploy/a-platform.yaml", nil, ""},
		{"a rename", "config/crd/gateways.yaml", "", func(tr *testRepo) []string {
			tr.Remove("config/crd/gateways.yaml")
			tr.Write("config/crd/bases/example.com_gateways.yaml", both)
			return []string{"config/crd/bases/example.com_gateways.yaml"}
		}, ""},
		{"a move into a chart", "config/crd/gateways.yaml", "", func(tr *testRepo) []string {
			tr.Remove("config/crd/gateways.yaml")
			tr.Write("charts/gateway/Chart.yaml", []byte("apiVersion: v2\nname: gateway\nversion: 1.0.0\n"))
			tr.Write("charts/gateway/crds/gateway-crds.yaml", both)
			return []string{"charts/gateway/crds/gateway-crds.yaml"}
		}, "warning helm-crd-not-upgraded : CRD gateways.example.com changed or new in charts/gateway/crds: helm upgrade never applies a chart's crds/ folder, so existing releases keep the old definitions; users must run kubectl apply --server-side -f charts/gateway/crds/ before helm upgrade: document the step for users, or move the CRDs to templates/ with helm.sh/resource-policy: keep, or to a CRD sub-chart that is upgraded\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write(tc.first, old)
			tr.Tag("v0.1.0", tr.Commit("v0.1.0: v1alpha2 stored"))
			files := []string{tc.first, tc.second}
			if tc.later == nil {
				tr.Write(tc.first, both)
				tr.Write(tc.second, both)
			} else {
				files = tc.later(tr)
			}
			tr.Tag("v0.2.0", tr.Commit("v0.2.0: v1beta1 stored"))
			tr.Branch("main", tr.Commit("main"))
			for _, f := range files {
				tr.Write(f, only)
			}
			tr.Commit("remove v1alpha2")
			res := tr.check(GitOptions{Base: "main"})
			var want string
			if tc.later == nil {
				want = storedAt("v0.1.0 (" + tc.first + ")") // identical copies: one finding, both places
			} else {
				want = tc.want + storedAt("v0.1.0 (config/crd/gateways.yaml)")
			}
			if got := findingsOf(res.Findings); got != want {
				t.Errorf("findings:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// A version stored only in a past release of one copy counts for every copy; a version no copy
// ever stored is info; a test fixture's copy that stored it never says what clusters store.
func TestGitHistoryStoredInOneCopyOnly(t *testing.T) {
	for _, tc := range []struct {
		name, where, want string
	}{
		{"a past release of the other copy", "install/bundle.yaml", storedAt("v0.1.0 (install/bundle.yaml)")},
		{"a test fixture only", "test/e2e/gateways.yaml", "info version-removed v1alpha2: version v1alpha2 (not served, not stored) was removed; no earlier release or commit stored it\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1beta1", true, true, false}))
			tr.Write(tc.where, versionsCRD(ver{"v1alpha2", false, true, false}, ver{"v1beta1", true, false, false}))
			tr.Tag("v0.1.0", tr.Commit("v0.1.0"))
			tr.Remove(tc.where)
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", false, false, false}, ver{"v1beta1", true, true, false}))
			tr.Branch("main", tr.Commit("main"))
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1beta1", true, true, false}))
			tr.Commit("remove v1alpha2")
			res := tr.check(GitOptions{Base: "main"})
			if got := findingsOf(res.Findings); got != tc.want {
				t.Errorf("findings:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A walk cut by the commit cap says it is a cap (not a shallow clone), and keeps the fail-closed
// answer; a question the release tags answer needs no commit, and says nothing of a cut.
func TestGitHistoryCutWalk(t *testing.T) {
	defer func(n int) { source.MaxHistoryCommits = n }(source.MaxHistoryCommits)
	source.MaxHistoryCommits = 3
	for _, tc := range []struct {
		name      string
		tag       bool
		want      string
		cutNotice bool
	}{
		{"cut", false, "warning version-removed v1alpha2: version v1alpha2 (not served, not stored in base) was removed: clusters that installed an older release may still list it in status.storedVersions, and the API server then refuses the update; check that no release stored it, or run crdguard in git mode, which reads the history\n", true},
		{"answered by a release", true, storedAt("v0.1.0 (config/crd/gateways.yaml)"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", false, true, false}, ver{"v1beta1", true, false, false}))
			first := tr.Commit("v1alpha2 stored")
			if tc.tag {
				tr.Tag("v0.1.0", first)
			}
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", false, false, false}, ver{"v1beta1", true, true, false}))
			for i := range 4 {
				tr.Write("README.md", []byte(strings.Repeat("x", i+1)))
				tr.Commit("unrelated")
			}
			tr.Branch("main", tr.Commit("main"))
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1beta1", true, true, false}))
			tr.Commit("remove v1alpha2")
			res := tr.check(GitOptions{Base: "main"})
			if got := findingsOf(res.Findings); got != tc.want {
				t.Errorf("findings:\n%s\nwant:\n%s", got, tc.want)
			}
			cut := "the storage history stopped at its cap of 3 commits before it showed whether a removed version of gateways.example.com was ever stored, so such a version stays a warning"
			if got := slices.Contains(res.Notices, cut); got != tc.cutNotice {
				t.Errorf("cut notice %v, want %v: %q", got, tc.cutNotice, res.Notices)
			}
			for _, n := range res.Notices {
				if strings.Contains(n, "shallow") {
					t.Errorf("a full clone's notice speaks of a shallow clone: %s", n)
				}
			}
		})
	}
}
