package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// ver is one version of a generated test CRD.
type ver struct {
	name                        string
	served, storage, deprecated bool
}

// versionsCRD is a small CRD with the given versions, each with the same schema.
func versionsCRD(vs ...ver) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gateways.example.com\nspec:\n  group: example.com\n  names:\n    kind: Gateway\n    listKind: GatewayList\n    plural: gateways\n    singular: gateway\n  scope: Namespaced\n  versions:\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "  - name: %s\n    served: %t\n    storage: %t\n", v.name, v.served, v.storage)
		if v.deprecated {
			b.WriteString("    deprecated: true\n")
		}
		b.WriteString("    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n")
	}
	return []byte(b.String())
}

// findingsOf renders every finding with its severity and message.
func findingsOf(fs []finding.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s %s: %s\n", f.Severity, f.Rule, f.Version, f.Message)
	}
	return b.String()
}

// The Gateway API v0.8 → v1.0 shape: v1alpha2 was the storage version up to v0.5, is marked
// nowhere in the current file, and its removal broke real clusters (gateway-api#2671).
func TestGitHistoryFindsOldStorageVersion(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", true, true, false}))
	tr.Tag("v0.5.0", tr.Commit("v0.5.0"))
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", true, false, true}, ver{"v1beta1", true, true, false}))
	tr.Tag("v0.6.0", tr.Commit("v0.6.0: v1beta1 stored, v1alpha2 deprecated"))
	tr.Write("README.md", []byte("unrelated\n"))
	tr.Branch("main", tr.Commit("main"))
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1beta1", true, true, false}))
	tr.Commit("remove v1alpha2")
	res := tr.check(GitOptions{Base: "main"})
	want := "error stored-version-removed v1alpha2: version v1alpha2 was removed but objects may be stored in it: it was the storage version at v0.5.0 (config/crd/gateways.yaml), and clusters installed from there still list it in status.storedVersions: the API server refuses the update while objects may still be stored in this version; migrate stored objects, drop the version from status.storedVersions, then remove it (or keep it with served: false)\n"
	if got := findingsOf(res.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
	if !slices.Equal(res.Notices, []string{"read the storage history of gateways.example.com (every file that held it, by metadata.name): 2 release tags and no commit were read to learn which of its versions were ever stored"}) {
		t.Errorf("notices: %q", res.Notices)
	}
}

// Without release tags the file's commits are the history; a version none of them stored is
// safe to remove (info), and a deprecated one says since when.
func TestGitHistoryFromCommits(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}))
	tr.Commit("v1 only")
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}, ver{"v2alpha1", false, false, false}, ver{"v1beta9", true, false, false}))
	tr.Commit("add v2alpha1 (never served or stored) and v1beta9")
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}, ver{"v2alpha1", false, false, false}, ver{"v1beta9", true, false, true}))
	deprecated := tr.Commit("deprecate v1beta9")
	tr.Branch("main", deprecated)
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}))
	tr.Commit("remove v2alpha1 and v1beta9")
	res := tr.check(GitOptions{Base: "main"})
	want := "info version-removed v2alpha1: version v2alpha1 (not served, not stored) was removed; no earlier release or commit stored it\n" +
		"error served-version-removed v1beta9: version v1beta9 was removed (deprecated since " + deprecated.String()[:12] + " (config/crd/gateways.yaml)): manifests and clients that still use it break all the same; when the removal is planned, acknowledge it (acknowledgeLabel)\n"
	if got := findingsOf(res.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
}

// A change that removes no version reads no history.
func TestGitHistoryOnlyWhenAVersionGoes(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}))
	tr.Branch("main", tr.Commit("v1"))
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}, ver{"v2", true, false, false}))
	tr.Commit("add v2")
	res := tr.check(GitOptions{Base: "main"})
	for _, n := range res.Notices {
		if strings.Contains(n, "history") {
			t.Errorf("history read for a change that removes no version: %s", n)
		}
	}
}

// A CRD file generated into another folder in an earlier release is still its history there,
// when it is the only file of that name in the release; two of that name tell nothing. The
// release tags share the folder that did not change, which the search reads once.
func TestGitHistoryFollowsMovedFile(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ambiguous bool
		want      string
	}{
		{"the only file of that name", false, "error stored-version-removed v1alpha2: version v1alpha2 was removed but objects may be stored in it: it was the storage version at v0.4.0 (config/crd/bases/gateways.yaml), and clusters installed from there still list it in status.storedVersions: the API server refuses the update while objects may still be stored in this version; migrate stored objects, drop the version from status.storedVersions, then remove it (or keep it with served: false)\n"},
		// The history is the CRD's, by metadata.name: another file of the same name is no
		// longer a reason not to read it (before: served-version-removed, "deprecated since").
		{"two files of that name", true, "error stored-version-removed v1alpha2: version v1alpha2 was removed but objects may be stored in it: it was the storage version at v0.4.0 (config/crd/bases/gateways.yaml), and clusters installed from there still list it in status.storedVersions: the API server refuses the update while objects may still be stored in this version; migrate stored objects, drop the version from status.storedVersions, then remove it (or keep it with served: false)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("docs/README.md", []byte("shared by every tag\n"))
			tr.Write("config/crd/bases/gateways.yaml", versionsCRD(ver{"v1alpha2", true, true, false}))
			if tc.ambiguous {
				tr.Write("deploy/gateways.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gateways\n"))
			}
			tr.Tag("v0.4.0", tr.Commit("v0.4.0"))
			tr.Write("docs/other.md", []byte("a change beside the CRD\n"))
			tr.Tag("v0.5.0", tr.Commit("v0.5.0"))
			tr.Remove("config/crd/bases/gateways.yaml")
			if tc.ambiguous {
				tr.Remove("deploy/gateways.yaml")
			}
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1alpha2", true, false, true}, ver{"v1beta1", true, true, false}))
			moved := tr.Commit("move the CRD, store v1beta1")
			tr.Branch("main", moved)
			tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1beta1", true, true, false}))
			tr.Commit("remove v1alpha2")
			res := tr.check(GitOptions{Base: "main"})
			if want := strings.Replace(tc.want, "MOVED", moved.String()[:12], 1); findingsOf(res.Findings) != want {
				t.Errorf("findings:\n%s\nwant:\n%s", findingsOf(res.Findings), want)
			}
		})
	}
}

// The history that says what clusters stored is the shipped copy's: a test fixture of the same
// CRD (Strimzi keeps one under api/src/test/resources) sorts first by path but was never
// installed (Strimzi 0.51.0 → 1.0.0, found by trying the build on the release).
func TestGitHistoryOfTheShippedCopy(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("install/crds/gateways.yaml", versionsCRD(ver{"v1alpha2", true, true, false}))
	tr.Tag("v0.5.0", tr.Commit("v0.5.0"))
	both := versionsCRD(ver{"v1alpha2", true, false, false}, ver{"v1beta1", true, true, false})
	tr.Write("install/crds/gateways.yaml", both)
	tr.Write("api/src/test/resources/io/example/gateway-crd.yaml", both)
	tr.Branch("main", tr.Commit("v1beta1 stored; a test fixture"))
	only := versionsCRD(ver{"v1beta1", true, true, false})
	tr.Write("install/crds/gateways.yaml", only)
	tr.Write("api/src/test/resources/io/example/gateway-crd.yaml", only)
	tr.Commit("remove v1alpha2")
	res := tr.check(GitOptions{Base: "main"})
	want := "error stored-version-removed v1alpha2: version v1alpha2 was removed but objects may be stored in it: it was the storage version at v0.5.0 (install/crds/gateways.yaml), and clusters installed from there still list it in status.storedVersions: the API server refuses the update while objects may still be stored in this version; migrate stored objects, drop the version from status.storedVersions, then remove it (or keep it with served: false)\n"
	if got := findingsOf(res.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
}

// A revision of the file that a partial clone lacks leaves its versions unknown: the history
// is not taken as complete, so a removed version it does not show stored is not called safe.
func TestGitHistoryWithAMissingRevision(t *testing.T) {
	tr := newTestRepo(t)
	first := versionsCRD(ver{"v1", true, true, false}, ver{"v2alpha1", false, true, false})
	tr.Write("config/crd/gateways.yaml", first)
	tr.Commit("v2alpha1 stored")
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}, ver{"v2alpha1", false, false, false}))
	tr.Branch("main", tr.Commit("v1 stored"))
	tr.Write("config/crd/gateways.yaml", versionsCRD(ver{"v1", true, true, false}))
	tr.Commit("remove v2alpha1")
	tr.dropBlob(first)
	res := tr.check(GitOptions{Base: "main"})
	want := "warning version-removed v2alpha1: version v2alpha1 (not served, not stored in base) was removed: clusters that installed an older release may still list it in status.storedVersions, and the API server then refuses the update; check that no release stored it, or run crdguard in git mode, which reads the history\n"
	if got := findingsOf(res.Findings); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
	notes := []string{
		"read the storage history of gateways.example.com (every file that held it, by metadata.name): no release tag and 2 commits were read to learn which of its versions were ever stored",
		"1 object of the history is missing from the clone (a partial clone), so a removed version of gateways.example.com that the history does not show stored stays a warning",
	}
	if !slices.Equal(res.Notices, notes) {
		t.Errorf("notices %q, want only %q", res.Notices, notes)
	}
}
