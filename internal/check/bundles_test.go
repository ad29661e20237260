package check

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/rules"
)

// A CRD that leaves an install bundle while another file still ships it is
// crd-removed-from-bundle; with no shipped copy left it stays crd-removed; a file of one CRD,
// a deleted bundle and a test copy are no reason for it.
func TestGitBundles(t *testing.T) {
	const (
		ns       = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: argocd\n---\n"
		role     = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: argocd-server\n"
		nsBundle = "manifests/namespace-install.yaml"
	)
	apps, projects := string(stubCRD("applications")), string(stubCRD("appprojects"))
	bundle := func(crds ...string) string { return ns + strings.Join(crds, "---\n") + role }
	gone := func(name string, line int) string {
		return "crd-removed-from-bundle " + name + ".example.com   " + nsBundle + ":" + itoa(line) + " base\n"
	}
	// list is a kind: List of the documents given, each an item as kubectl applies it.
	list := func(docs ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
		for _, d := range docs {
			b.WriteString("- " + strings.ReplaceAll(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(d, "---\n"), "---\n"), "\n"), "\n", "\n  ") + "\n")
		}
		return b.String()
	}
	jsonList := `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}},
  {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "applications.example.com"},
   "spec": {"group": "example.com", "names": {"kind": "Stub", "plural": "applications"}, "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}]}`
	for _, tc := range []struct {
		name          string
		before, after map[string]string // path → content; "" deletes
		want, message string
	}{
		{
			name:    "namespace-install drops every CRD",
			before:  map[string]string{nsBundle: bundle(apps, projects), "manifests/crds/application-crd.yaml": apps, "manifests/crds/appproject-crd.yaml": projects},
			after:   map[string]string{nsBundle: ns + "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: argocd-server\n" + role},
			want:    gone("applications", 9) + gone("appprojects", 24),
			message: "CRD applications.example.com leaves manifests/namespace-install.yaml, which shipped it with other objects in base, while manifests/crds/application-crd.yaml still ships it: whoever applies manifests/namespace-install.yaml with pruning (kubectl apply --prune, Argo CD, Flux) deletes the CRD and every Stub object; keep the CRD in the bundle, or tell the users who apply it to install the CRD from its other copy and to stop pruning CRDs",
		},
		{
			name:    "two other files still ship it",
			before:  map[string]string{nsBundle: bundle(apps, projects), "manifests/crds/application-crd.yaml": apps, "manifests/install.yaml": bundle(apps)},
			after:   map[string]string{nsBundle: bundle(projects)},
			want:    gone("applications", 9),
			message: "CRD applications.example.com leaves manifests/namespace-install.yaml, which shipped it with other objects in base, while manifests/crds/application-crd.yaml, manifests/install.yaml still ship it: whoever applies manifests/namespace-install.yaml with pruning (kubectl apply --prune, Argo CD, Flux) deletes the CRD and every Stub object; keep the CRD in the bundle, or tell the users who apply it to install the CRD from its other copy and to stop pruning CRDs",
		},
		{
			name:   "moved out of the bundle into a file of its own",
			before: map[string]string{nsBundle: bundle(apps, projects)},
			after:  map[string]string{nsBundle: bundle(projects), "manifests/crds/application-crd.yaml": apps},
			want:   gone("applications", 9),
		},
		{
			// The head bundle does not parse: its invalid-crd says so, it may still hold the CRD.
			name:   "bundle broken",
			before: map[string]string{nsBundle: bundle(apps, projects), "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{nsBundle: "<<<<<<< HEAD\n" + bundle(projects)},
			want:   "invalid-crd    " + nsBundle + ":2 head\n",
		},
		{
			name:   "bundle changes, keeps its CRDs",
			before: map[string]string{nsBundle: bundle(apps, projects), "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{nsBundle: bundle(apps, projects) + "  namespace: argocd\n"},
		},
		{
			// Twins: no shipped copy is left.
			name:   "last copy",
			before: map[string]string{nsBundle: bundle(apps, projects)},
			after:  map[string]string{nsBundle: bundle(projects)},
			want:   "crd-removed applications.example.com   " + nsBundle + ":9 base\n",
		},
		{
			name:   "only a test copy left",
			before: map[string]string{nsBundle: bundle(apps, projects), "test/e2e/crds/application-crd.yaml": apps},
			after:  map[string]string{nsBundle: bundle(projects)},
			want:   "crd-removed applications.example.com   " + nsBundle + ":9 base\n",
		},
		{
			// A List is applied item by item: a bundle like any other.
			name:   "List bundle drops a CRD",
			before: map[string]string{nsBundle: list(ns, apps, projects), "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{nsBundle: list(ns, projects)},
			want:   gone("applications", 11),
		},
		{
			name:   "JSON List bundle drops its CRD",
			before: map[string]string{"manifests/install.json": jsonList, "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{"manifests/install.json": `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}]}`},
			want:   "crd-removed-from-bundle applications.example.com   manifests/install.json:3 base\n",
		},
		{
			// Twin: a List of one CRD is a file of one CRD, not a bundle.
			name:   "List of one CRD moved",
			before: map[string]string{"config/crd/all.yaml": list(apps), "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{"config/crd/all.yaml": list()},
		},
		{
			name:   "bundle deleted",
			before: map[string]string{nsBundle: bundle(apps, projects), "manifests/crds/application-crd.yaml": apps, "manifests/crds/appproject-crd.yaml": projects},
			after:  map[string]string{nsBundle: ""},
		},
		{
			name:   "file of one CRD moved",
			before: map[string]string{"config/crd/application-crd.yaml": apps, "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{"config/crd/application-crd.yaml": "", "config/crd/bases/applications.yaml": "# moved\n" + apps},
		},
		{
			name:   "bundle unchanged beside a changed copy",
			before: map[string]string{nsBundle: bundle(apps, projects), "manifests/crds/application-crd.yaml": apps},
			after:  map[string]string{"manifests/crds/application-crd.yaml": "# a comment\n" + apps},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkChange(t, tc.before, tc.after)
			assertFindings(t, res, tc.want)
			if tc.message != "" && res.Findings[0].Message != tc.message {
				t.Errorf("message\n%s\nwant\n%s", res.Findings[0].Message, tc.message)
			}
		})
	}
}

// A kustomization that stops listing a CRD file takes the CRD out of what kubectl apply -k
// installs: crd-removed-from-bundle at the entry's line, although the file did not change.
func TestGitKustomizationUnlists(t *testing.T) {
	const k = "config/crd/kustomization.yaml"
	listing := func(files ...string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(files, "\n- ") + "\n"
	}
	apps, projects := string(stubCRD("applications")), string(stubCRD("appprojects"))
	for _, tc := range []struct {
		name          string
		before, after map[string]string // path → content; "" deletes
		want, message string
	}{
		{
			name:    "stops listing a file that stays",
			before:  map[string]string{k: listing("bases/applications.yaml", "bases/appprojects.yaml"), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects},
			after:   map[string]string{k: listing("bases/applications.yaml")},
			want:    "crd-removed-from-bundle appprojects.example.com   " + k + ":5 base\n",
			message: "CRD appprojects.example.com is no longer installed by config/crd/kustomization.yaml, which listed config/crd/bases/appprojects.yaml in base, while config/crd/bases/appprojects.yaml still ships it: whoever applies config/crd/kustomization.yaml with pruning (kubectl apply --prune, Argo CD, Flux) deletes the CRD and every Stub object; keep the CRD in the bundle, or tell the users who apply it to install the CRD from its other copy and to stop pruning CRDs",
		},
		{
			name:   "stops listing a file deleted while a chart ships the CRD",
			before: map[string]string{k: listing("bases/applications.yaml", "bases/appprojects.yaml"), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects, "charts/argo/crds/appprojects.yaml": projects},
			after:  map[string]string{k: listing("bases/applications.yaml"), "config/crd/bases/appprojects.yaml": ""},
			want:   "crd-removed-from-bundle appprojects.example.com   " + k + ":5 base\n",
		},
		{
			// Twins: the file and the CRD go; the kustomization changes but lists the same, or
			// does not parse in head (the CRD file changes too, so it is read).
			name:   "file and CRD removed",
			before: map[string]string{k: listing("bases/applications.yaml", "bases/appprojects.yaml"), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects},
			after:  map[string]string{k: listing("bases/applications.yaml"), "config/crd/bases/appprojects.yaml": ""},
			want:   "crd-removed appprojects.example.com   config/crd/bases/appprojects.yaml:4 base\n",
		},
		{
			name:   "same resources",
			before: map[string]string{k: listing("bases/applications.yaml", "bases/appprojects.yaml"), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects},
			after:  map[string]string{k: listing("bases/applications.yaml", "bases/appprojects.yaml") + "commonLabels: {app: argo}\n", "config/crd/bases/appprojects.yaml": "# touched\n" + projects},
		},
		{
			name:   "kustomization that does not parse in head",
			before: map[string]string{k: listing("bases/applications.yaml", "bases/appprojects.yaml"), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects},
			after:  map[string]string{k: listing("bases/applications.yaml") + "resources: [\n", "config/crd/bases/appprojects.yaml": "# touched\n" + projects},
			// kubectl apply -k refuses it: what it installs is not known, and that fails closed.
			want:    "kustomization-not-built    " + k + ":1 head\n",
			message: "kustomize cannot build this kustomization, so what kubectl apply -k installs from it is not known: invalid Kustomization: yaml: line 5: did not find expected node content; fix it so that kustomize build accepts it, or leave it out with exclude in .crdguard.yaml",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkChange(t, tc.before, tc.after)
			assertFindings(t, res, tc.want)
			if tc.message != "" && res.Findings[0].Message != tc.message {
				t.Errorf("message\n%s\nwant\n%s", res.Findings[0].Message, tc.message)
			}
		})
	}
}

// checkChange commits the files of before, then changes them as after says ("" deletes), and
// checks the change with the default configuration.
func checkChange(t *testing.T, before, after map[string]string) *GitResult {
	t.Helper()
	tr := newTestRepo(t)
	tr.Write("README.md", []byte("x\n"))
	for p, data := range before {
		tr.Write(p, []byte(data))
	}
	tr.Branch("main", tr.Commit("base"))
	for p, data := range after {
		if data == "" {
			tr.Remove(p)
		} else {
			tr.Write(p, []byte(data))
		}
	}
	tr.Commit("head")
	return tr.check(GitOptions{Base: "main", Filter: policy.Default().Filter()})
}

// Two folders compared with diff: kustomizations and their resources pair by path under each
// folder, so only the CRD whose entry went is reported.
func TestKustomizationUnlistsInFolders(t *testing.T) {
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, listed := range []string{"- bases/applications.yaml\n- bases/appprojects.yaml\n", "- bases/applications.yaml\n"} {
		writeFile(t, filepath.Join(dirs[i], "config/crd/kustomization.yaml"), []byte("resources:\n"+listed))
		writeFile(t, filepath.Join(dirs[i], "config/crd/bases/applications.yaml"), stubCRD("applications"))
		writeFile(t, filepath.Join(dirs[i], "config/crd/bases/appprojects.yaml"), stubCRD("appprojects"))
	}
	res := Trees(readTree(t, dirs[0]), readTree(t, dirs[1]), rules.Options{})
	got := strings.Join(summary(res.Findings), "\n")
	if want := "crd-removed-from-bundle   kustomization.yaml:3 base"; got != want { // summary shows base names
		t.Errorf("findings %q, want %q", got, want)
	}
}
