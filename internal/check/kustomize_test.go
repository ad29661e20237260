package check

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/rules"
)

// A kustomization that lists a folder installs what the folder's kustomization lists: when it
// stops listing the folder, the CRDs it brought leave it (crd-removed-from-bundle at the folder's
// entry), as when it stops listing a file. A remote resource is not fetched: a notice names it.
func TestGitKustomizationFolders(t *testing.T) {
	const (
		ns     = "manifests/namespace-install/kustomization.yaml"
		crds   = "manifests/crds/kustomization.yaml"
		base   = "manifests/base/kustomization.yaml"
		wrap   = "manifests/wrap/kustomization.yaml"
		url    = "https://raw.githubusercontent.com/argoproj/argo-cd/v3.0.0/manifests/crds/application-crd.yaml"
		remNo  = "head: " + ns + ":4 lists the remote resource " + url + ", which crdguard does not fetch: the CRDs it installs are not checked"
		remNo5 = "head: " + ns + ":5 lists the remote resource " + url + ", which crdguard does not fetch: the CRDs it installs are not checked"
	)
	k := func(resources ...string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(resources, "\n- ") + "\n"
	}
	apps, projects := string(stubCRD("applications")), string(stubCRD("appprojects"))
	layout := map[string]string{
		crds: k("application-crd.yaml", "appproject-crd.yaml"), "manifests/crds/application-crd.yaml": apps, "manifests/crds/appproject-crd.yaml": projects,
		base: k("sa.yaml"), "manifests/base/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: argocd\n",
		ns: k("../crds", "../base"), "manifests/cluster-install/kustomization.yaml": k("../crds", "../base"),
	}
	gone := func(name string) string {
		return "crd-removed-from-bundle " + name + ".example.com   " + ns + ":4 base\n"
	}
	fromRemote := func(name string) string {
		return "crd-left-repository " + name + ".example.com   " + ns + ":4 head\n"
	}
	for _, tc := range []struct {
		name          string
		before, after map[string]string // path → content, over layout; "" deletes
		want          string
		notices       []string
	}{
		{"stops listing the CRD folder", nil, map[string]string{ns: k("../base")}, gone("applications") + gone("appprojects"), nil},
		{"stops listing a folder that lists the CRD folder", map[string]string{ns: k("../wrap", "../base"), wrap: k("../crds")}, map[string]string{ns: k("../base")},
			gone("applications") + gone("appprojects"), nil},
		// kubectl apply -k installs them from the remote now (issue 41, item 3): not removed,
		// not checked either. Twin: a remote listed in base already brought nothing new.
		{"the folder replaced by a remote file", nil, map[string]string{ns: k(url, "../base")}, fromRemote("applications") + fromRemote("appprojects"), []string{remNo}},
		{"a remote listed in base already", map[string]string{ns: k("../crds", "../base", url)}, map[string]string{ns: k("../base", url)}, gone("applications") + gone("appprojects"), []string{remNo5}},
		// Twins: the same files installed.
		{"still lists the folder", nil, map[string]string{ns: k("../crds", "../base") + "commonLabels: {app: argocd}\n"}, "", nil},
		// kubectl apply -k refuses files outside the kustomization's folder, and a cycle:
		// kustomize's error at the entry, what the kustomization installs unknown.
		{"the folder's files listed one by one", nil, map[string]string{ns: k("../crds/application-crd.yaml", "../crds/appproject-crd.yaml", "../base")}, "kustomization-not-built    " + ns + ":4 head\n", nil},
		{"the CRD folder through another folder", nil, map[string]string{ns: k("../wrap", "../base"), wrap: k("../crds")}, "", nil},
		{"a cycle", nil, map[string]string{ns: k("../crds", "../base", "../loop"), "manifests/loop/kustomization.yaml": k("../namespace-install")}, "kustomization-not-built    " + ns + ":6 head\n", nil},
		{"a local folder that looks like a host", nil, map[string]string{ns: k("../crds", "../base", "config.d/x"), "manifests/namespace-install/config.d/x/kustomization.yaml": k("cm.yaml"),
			"manifests/namespace-install/config.d/x/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := map[string]string{}
			for p, data := range layout {
				before[p] = data
			}
			for p, data := range tc.before {
				before[p] = data
			}
			res := checkChange(t, before, tc.after)
			assertFindings(t, res, tc.want)
			if want := "CRD applications.example.com is no longer installed by " + ns + " from manifests/crds/application-crd.yaml, which stays in the repository: it now lists the remote resource " + url + " (" + ns + ":4) instead, which crdguard does not fetch: " +
				"the CRD stays installed from there, but what this change does to it is not checked; run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand"; tc.name == "the folder replaced by a remote file" && res.Findings[0].Message != want {
				t.Errorf("message\n%s\nwant\n%s", res.Findings[0].Message, want)
			}
			var remote []string
			for _, n := range res.Notices {
				if strings.Contains(n, " lists the remote resource ") {
					remote = append(remote, n)
				}
			}
			if got, want := fmt.Sprintf("%q", remote), fmt.Sprintf("%q", tc.notices); got != want {
				t.Errorf("remote notices\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// Two folders compared with diff: every kustomization of each folder is built, so a
// kustomization that stops listing the CRD folder is reported at its entry; one that still lists
// it is not; one that lists a remote folder instead installs the CRDs from there
// (crd-left-repository), and the remote entry is a notice.
func TestKustomizationFoldersInFolders(t *testing.T) {
	k := func(resources ...string) string { return "resources:\n- " + strings.Join(resources, "\n- ") + "\n" }
	const remote = "github.com/argoproj/argo-cd//manifests/crds?ref=v3.0.0"
	for _, tc := range []struct {
		name, before, after, want string
		notices                   []string
	}{
		{"stops listing the CRD folder", k("../crds", "../base"), k("../base"),
			"crd-removed-from-bundle   kustomization.yaml:2 base\ncrd-removed-from-bundle   kustomization.yaml:2 base", nil},
		{"still lists it", k("../crds", "../base"), k("../base", "../crds"), "", nil},
		{"a remote folder instead", k("../crds", "../base"), k(remote, "../base"),
			"crd-left-repository   kustomization.yaml:2 head\ncrd-left-repository   kustomization.yaml:2 head",
			[]string{"head: NEW/manifests/namespace-install/kustomization.yaml:2 lists the remote resource " + remote + ", which crdguard does not fetch: the CRDs it installs are not checked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{t.TempDir(), t.TempDir()}
			for i, ns := range []string{tc.before, tc.after} {
				writeFile(t, filepath.Join(dirs[i], "manifests/namespace-install/kustomization.yaml"), []byte(ns))
				writeFile(t, filepath.Join(dirs[i], "manifests/crds/kustomization.yaml"), []byte(k("applications.yaml", "appprojects.yaml")))
				writeFile(t, filepath.Join(dirs[i], "manifests/crds/applications.yaml"), stubCRD("applications"))
				writeFile(t, filepath.Join(dirs[i], "manifests/crds/appprojects.yaml"), stubCRD("appprojects"))
				writeFile(t, filepath.Join(dirs[i], "manifests/base/kustomization.yaml"), []byte(k("sa.yaml")))
				writeFile(t, filepath.Join(dirs[i], "manifests/base/sa.yaml"), []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: argocd\n"))
			}
			res := Trees(readTree(t, dirs[0]), readTree(t, dirs[1]), rules.Options{})
			if got := strings.Join(summary(res.Findings), "\n"); got != tc.want {
				t.Errorf("findings\n%s\nwant\n%s", got, tc.want)
			}
			var remote []string
			for _, n := range res.Notices {
				if strings.Contains(n, " lists the remote resource ") {
					remote = append(remote, strings.ReplaceAll(n, filepath.ToSlash(dirs[1]), "NEW"))
				}
			}
			if got, want := fmt.Sprintf("%q", remote), fmt.Sprintf("%q", tc.notices); got != want {
				t.Errorf("remote notices\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// Issue 41: CRDs that leave the repository into a remote kustomize resource are still installed
// by the kustomization: one crd-left-repository warning per CRD at the remote entry, never
// crd-removed. A renamed CRD file that the kustomization lists under its new name is no change.
// Twins: the remote was listed in base already (it did not bring these CRDs, so their removal
// stays crd-removed), a remote in another kustomization, and a rename the kustomization does not
// follow (the kustomization stops installing the CRD).
func TestGitKustomizationLeavesRepository(t *testing.T) {
	const (
		k      = "config/crd/kustomization.yaml"
		other  = "config/other/kustomization.yaml"
		remote = "https://github.com/example/api/config/crd?ref=v1.4.0"
	)
	list := func(resources ...string) string {
		return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(resources, "\n- ") + "\n"
	}
	apps, projects := string(stubCRD("applications")), string(stubCRD("appprojects"))
	base := map[string]string{k: list("bases/applications.yaml", "bases/appprojects.yaml"), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects}
	left := func(name string) string {
		return "crd-left-repository " + name + ".example.com   " + k + ":4 head\n"
	}
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		want          string
	}{
		{"the CRD folder replaced by a remote", base, map[string]string{k: list(remote), "config/crd/bases/applications.yaml": "", "config/crd/bases/appprojects.yaml": ""},
			left("applications") + left("appprojects")},
		{"one CRD replaced by a remote", base, map[string]string{k: list(remote, "bases/applications.yaml"), "config/crd/bases/appprojects.yaml": ""},
			left("appprojects")},
		{"a folder that lists a remote", base, map[string]string{k: list("../remote"), "config/remote/kustomization.yaml": list(remote), "config/crd/bases/applications.yaml": "", "config/crd/bases/appprojects.yaml": ""},
			"crd-left-repository applications.example.com   config/remote/kustomization.yaml:4 head\ncrd-left-repository appprojects.example.com   config/remote/kustomization.yaml:4 head\n"},
		{"a renamed file listed under its new name", base, map[string]string{k: list("bases/applications.yaml", "bases/argoproj.io_appprojects.yaml"), "config/crd/bases/appprojects.yaml": "", "config/crd/bases/argoproj.io_appprojects.yaml": projects}, ""},
		// Twins.
		{"the remote was listed in base", map[string]string{k: list("bases/applications.yaml", "bases/appprojects.yaml", remote), "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects},
			map[string]string{k: list("bases/applications.yaml", remote), "config/crd/bases/appprojects.yaml": ""},
			"crd-removed appprojects.example.com   config/crd/bases/appprojects.yaml:4 base\n"},
		{"a remote in another kustomization", map[string]string{k: base[k], "config/crd/bases/applications.yaml": apps, "config/crd/bases/appprojects.yaml": projects, other: list("cm.yaml"), "config/other/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"},
			map[string]string{k: list("bases/applications.yaml"), other: list("cm.yaml", remote), "config/crd/bases/appprojects.yaml": ""},
			"crd-removed appprojects.example.com   config/crd/bases/appprojects.yaml:4 base\n"},
		{"a renamed file the kustomization does not list", base, map[string]string{k: list("bases/applications.yaml"), "config/crd/bases/appprojects.yaml": "", "config/crd/bases/argoproj.io_appprojects.yaml": projects},
			"crd-removed-from-bundle appprojects.example.com   " + k + ":5 base\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertFindings(t, checkChange(t, tc.before, tc.after), tc.want)
		})
	}
}

// The same departure between two folders compared with diff: the CRD files are gone from the
// new folder and its kustomization lists a remote instead.
func TestKustomizationLeavesFolder(t *testing.T) {
	const remote = "github.com/example/api//config/crd?ref=v1.4.0"
	for _, tc := range []struct{ name, after, want string }{
		{"a remote instead", "resources:\n- " + remote + "\n", "crd-left-repository   kustomization.yaml:2 head\ncrd-left-repository   kustomization.yaml:2 head"},
		{"nothing instead", "resources: []\n", "crd-removed   applications.yaml:4 base\ncrd-removed   appprojects.yaml:4 base"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{t.TempDir(), t.TempDir()}
			writeFile(t, filepath.Join(dirs[0], "config/crd/kustomization.yaml"), []byte("resources:\n- applications.yaml\n- appprojects.yaml\n"))
			writeFile(t, filepath.Join(dirs[0], "config/crd/applications.yaml"), stubCRD("applications"))
			writeFile(t, filepath.Join(dirs[0], "config/crd/appprojects.yaml"), stubCRD("appprojects"))
			writeFile(t, filepath.Join(dirs[1], "config/crd/kustomization.yaml"), []byte(tc.after))
			res := Trees(readTree(t, dirs[0]), readTree(t, dirs[1]), rules.Options{})
			if got := strings.Join(summary(res.Findings), "\n"); got != tc.want {
				t.Errorf("findings\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// Issue 41 item 5: kustomizations are built by kustomize, so the conversion webhook patch of
// kubebuilder's project counts however the kustomization brings it — through a component, onto a
// nested base, or from the kustomization above config/crd — as kubectl apply -k applies it. The
// findings stay at the lines of the definition's own file. Without the patch the new v2 is
// conversion-missing; each shape below lost the patch before (hand-made rendering of the
// kustomization in the definition's folder only).
func TestKustomizeBuildsAsKubectlApplies(t *testing.T) {
	const removed = "field-removed widgets.example.com v1 .spec.color config/crd/bases/example.com_widgets.yaml:31 base\n" +
		"max-added widgets.example.com v1 .spec.size config/crd/bases/example.com_widgets.yaml:34 head\n"
	const missing = "conversion-missing widgets.example.com v2  config/crd/bases/example.com_widgets.yaml:44 head\n"
	const samples = "sample-pruned widgets.example.com v1 .spec.color config/samples/example_v1_widget.yaml:9 head\n" +
		"sample-invalid widgets.example.com v1 .spec.size config/samples/generated.yaml:7 head\n"
	const crdK = "config/crd/kustomization.yaml"
	patch := "config/crd/patches/webhook_in_widgets.yaml"
	shape := func(files map[string][]byte, change map[string]string) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range files {
			out[k] = v
		}
		for k, v := range change {
			if v == "" {
				delete(out, k)
				continue
			}
			out[k] = []byte(v)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		change func(files map[string][]byte) map[string]string
		want   string
	}{
		{"patch from a component", func(files map[string][]byte) map[string]string {
			return map[string]string{
				crdK:                                     "resources:\n- bases/example.com_widgets.yaml\ncomponents:\n- ../webhook\n",
				"config/webhook/kustomization.yaml":      "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: webhook_in_widgets.yaml\n",
				"config/webhook/webhook_in_widgets.yaml": string(files[patch]), patch: "",
			}
		}, removed + samples},
		{"patch onto a nested base", func(files map[string][]byte) map[string]string {
			return map[string]string{
				crdK:                                  "resources:\n- bases\npatches:\n- path: patches/webhook_in_widgets.yaml\n",
				"config/crd/bases/kustomization.yaml": "resources:\n- example.com_widgets.yaml\n",
			}
		}, removed + samples},
		{"patch from the kustomization above", func(files map[string][]byte) map[string]string {
			return map[string]string{
				crdK:                        "resources:\n- bases/example.com_widgets.yaml\n",
				"config/kustomization.yaml": "resources:\n- crd\npatches:\n- path: crd/patches/webhook_in_widgets.yaml\n",
			}
		}, removed + samples},
		// Twin: the kustomization above lists the definitions without the patch.
		{"no patch above", func(files map[string][]byte) map[string]string {
			return map[string]string{
				crdK:                        "resources:\n- bases/example.com_widgets.yaml\n",
				"config/kustomization.yaml": "resources:\n- crd\n",
			}
		}, removed + missing + samples},
	} {
		old, new := kubebuilderFiles(t, "old"), kubebuilderFiles(t, "new")
		old, new = shape(old, tc.change(old)), shape(new, tc.change(new))
		compareBothWays(t, tc.name, old, new, tc.want)
	}
}
