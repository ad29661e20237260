package check

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

const kubebuilder = "../../testdata/repos/kubebuilder"

// kubebuilderFiles reads one side of the kubebuilder-shaped project, by path in the project.
func kubebuilderFiles(t *testing.T, side string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	root := filepath.Join(kubebuilder, side)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// withoutPatch is the project's kustomization with the webhook patch commented out, as
// kubebuilder scaffolds it before a conversion webhook is enabled.
func withoutPatch(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		out[k] = v
	}
	k := "config/crd/kustomization.yaml"
	out[k] = []byte(strings.Replace(string(files[k]), "- path: patches/webhook_in_widgets.yaml", "#- path: patches/webhook_in_widgets.yaml", 1))
	return out
}

// withPlaceholders is the project with a webhook patch whose caBundle and namespace are
// placeholders that an install script fills in.
func withPlaceholders(files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		out[k] = v
	}
	p := "config/crd/patches/webhook_in_widgets.yaml"
	text := strings.Replace(string(files[p]), "      clientConfig:\n", "      clientConfig:\n        caBundle: {{caBundle}}\n", 1)
	out[p] = []byte(strings.Replace(text, "namespace: system", "namespace: ${WEBHOOK_NAMESPACE}", 1))
	return out
}

// The v1 field removed in bases is reported although a patch and an assertion of the same CRD
// sit next to it; the conversion webhook that the kustomization's patch adds makes the new v2
// with another schema safe, and without the patch it is conversion-missing.
func TestKubebuilderPatches(t *testing.T) {
	const removed = "field-removed widgets.example.com v1 .spec.color config/crd/bases/example.com_widgets.yaml:31 base\n" +
		"max-added widgets.example.com v1 .spec.size config/crd/bases/example.com_widgets.yaml:34 head\n"
	const missing = "conversion-missing widgets.example.com v2  config/crd/bases/example.com_widgets.yaml:44 head\n"
	// The samples set no namespace (one has a generateName): they fail only for what the
	// change does, so these are errors, and nothing about metadata.
	const samples = "sample-pruned widgets.example.com v1 .spec.color config/samples/example_v1_widget.yaml:9 head\n" +
		"sample-invalid widgets.example.com v1 .spec.size config/samples/generated.yaml:7 head\n"
	old, new := kubebuilderFiles(t, "old"), kubebuilderFiles(t, "new")
	for _, tc := range []struct {
		name     string
		old, new map[string][]byte
		want     string
	}{
		{"patched", old, new, removed + samples},
		{"patch not applied", withoutPatch(old), withoutPatch(new), removed + missing + samples},
		{"patch enabled by the change", withoutPatch(old), new, removed + samples},
		// Patches that carry values filled in at install time still set the strategy.
		{"patch with install-time placeholders", withPlaceholders(old), withPlaceholders(new), removed + samples},
	} {
		compareBothWays(t, tc.name, tc.old, tc.new, tc.want)
	}
}

// compareBothWays compares two sides of one project (files by path) as two folders with diff
// and as two commits in git mode, and checks the findings (at their lines), that one CRD is
// compared and that nothing is noticed.
func compareBothWays(t *testing.T, name string, old, new map[string][]byte, want string) {
	t.Helper()
	t.Run("diff/"+name, func(t *testing.T) {
		dirs := [2]string{t.TempDir(), t.TempDir()}
		for i, files := range []map[string][]byte{old, new} {
			for name, data := range files {
				writeFile(t, filepath.Join(dirs[i], name), data)
			}
		}
		oldTree, err := source.ReadPath(dirs[0], false)
		if err != nil {
			t.Fatal(err)
		}
		newTree, err := source.ReadPath(dirs[1], true)
		if err != nil {
			t.Fatal(err)
		}
		res := Trees(oldTree, newTree, rules.Options{})
		got := strings.ReplaceAll(strings.ReplaceAll(located(res.Findings), dirs[0]+"/", ""), dirs[1]+"/", "")
		if got != want || res.CRDs != 1 || len(res.Notices) != 0 {
			t.Errorf("findings:\n%s\nwant:\n%s\nCRDs %d, notices %v", got, want, res.CRDs, res.Notices)
		}
	})
	t.Run("git/"+name, func(t *testing.T) {
		tr := newTestRepo(t)
		for name, data := range old {
			tr.Write(name, data)
		}
		tr.Branch("main", tr.Commit("base"))
		for name, data := range new {
			tr.Write(name, data)
		}
		tr.Commit("head")
		res := tr.check(GitOptions{Base: "main"})
		assertFindings(t, res, want)
		if res.CRDs != 1 || len(res.Notices) != 0 {
			t.Errorf("CRDs %d, notices %v", res.CRDs, res.Notices)
		}
	})
}

// A change to the patch alone changes what is installed: the unchanged definition is read and
// compared with the patch applied on each side.
func TestGitPatchOnlyChange(t *testing.T) {
	tr := newTestRepo(t)
	files := kubebuilderFiles(t, "new")
	for name, data := range files {
		tr.Write(name, data)
	}
	tr.Branch("main", tr.Commit("base"))
	p := "config/crd/patches/webhook_in_widgets.yaml"
	tr.Write(p, []byte(strings.Replace(string(files[p]), "strategy: Webhook", "strategy: None", 1)[:strings.Index(string(files[p]), "    webhook:")]))
	tr.Commit("drop the conversion webhook")
	res := tr.check(GitOptions{Base: "main"})
	// conversion-missing stays quiet: v2 is not new, and the removal is the finding. The sample
	// above the maximum was already invalid, with the same error: a notice.
	assertFindings(t, res, "conversion-webhook-removed widgets.example.com   config/crd/bases/example.com_widgets.yaml:8 head\n")
	if want := []string{"1 sample problem(s) were not reported: the base schema already refused those samples with the same errors"}; !slices.Equal(res.Notices, want) {
		t.Errorf("notices %q, want %q", res.Notices, want)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every copy of a CRD is compared with its counterpart by path: Gateway API's two channels
// differ, and only the standard channel loses a field; an install bundle repeats the change
// after a Namespace document, so it is compared once and the finding names both copies, each at
// its own line.
func TestCopiesPairByPath(t *testing.T) {
	old, new := caseFile(t, "field-removed/leaf/old.yaml"), caseFile(t, "field-removed/leaf/new.yaml")
	experimental := caseFile(t, "field-added/basic/new.yaml")
	namespace := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: widgets\n---\n")
	bundle := func(crd []byte) []byte { return append(append([]byte{}, namespace...), crd...) }
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, files := range []map[string][]byte{
		{"config/crd/experimental/w.yaml": experimental, "config/crd/standard/w.yaml": old, "deploy/bundle.yaml": bundle(old)},
		{"config/crd/experimental/w.yaml": experimental, "config/crd/standard/w.yaml": new, "deploy/bundle.yaml": bundle(new)},
	} {
		for name, data := range files {
			writeFile(t, filepath.Join(dirs[i], name), data)
		}
	}
	res := Trees(readTree(t, dirs[0]), readTree(t, dirs[1]), rules.Options{})
	got := strings.ReplaceAll(located(res.Findings), dirs[0]+"/", "")
	want := "field-removed widgets.example.com v1 .spec.name config/crd/standard/w.yaml:32 base\n"
	if got != want || res.CRDs != 1 { // three copies of one CRD name
		t.Errorf("findings:\n%s\nwant:\n%s\nCRDs %d", got, want, res.CRDs)
	}
	var locs []string
	for _, l := range res.Findings[0].Locations {
		locs = append(locs, fmt.Sprintf("%s:%d %s", strings.TrimPrefix(l.File, dirs[0]+"/"), l.Line, l.Side))
	}
	if got, want := strings.Join(locs, ", "), "config/crd/standard/w.yaml:32 base, deploy/bundle.yaml:37 base"; got != want {
		t.Errorf("locations: %s, want %s", got, want)
	}
}

// Two different definitions of one name are duplicates when one kustomization applies both
// (only one of them reaches the cluster), and not when they sit in separate folders that are
// applied separately.
func TestDuplicateInOneKustomization(t *testing.T) {
	a, b := caseFile(t, "field-removed/leaf/old.yaml"), caseFile(t, "field-removed/leaf/new.yaml")
	kustomization := []byte("resources:\n- bases/a.yaml\n- bases/b.yaml\n")
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"one kustomization", map[string][]byte{"config/crd/bases/a.yaml": a, "config/crd/bases/b.yaml": b, "config/crd/kustomization.yaml": kustomization},
			"duplicate-crd widgets.example.com   config/crd/bases/b.yaml:4 head\n"},
		{"no kustomization", map[string][]byte{"config/crd/bases/a.yaml": a, "config/crd/bases/b.yaml": b}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{t.TempDir(), t.TempDir()}
			for i, files := range []map[string][]byte{{"config/crd/bases/a.yaml": a}, tc.files} {
				for name, data := range files {
					writeFile(t, filepath.Join(dirs[i], name), data)
				}
			}
			res := Trees(readTree(t, dirs[0]), readTree(t, dirs[1]), rules.Options{})
			var dups []finding.Finding
			for _, f := range res.Findings {
				if f.Rule == "duplicate-crd" {
					dups = append(dups, f)
				}
			}
			if got := strings.ReplaceAll(located(dups), dirs[1]+"/", ""); got != tc.want {
				t.Errorf("duplicate-crd:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// A kustomization that patches several CRDs, of which the change touches one: git mode reads
// only that one's definition, so the other CRD's patch has nothing to patch. kustomize refuses
// such a kustomization ("no resource matches strategic merge patch"); the patches of CRDs not
// compared are left out instead, and the changed CRD keeps its conversion webhook.
func TestGitPatchesOfOtherCRDs(t *testing.T) {
	gadget := func(files map[string][]byte) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range files {
			out[k] = v
		}
		base := strings.ReplaceAll(strings.ReplaceAll(string(files["config/crd/bases/example.com_widgets.yaml"]), "widget", "gadget"), "Widget", "Gadget")
		out["config/crd/bases/example.com_gadgets.yaml"] = []byte(base)
		patch := strings.ReplaceAll(string(files["config/crd/patches/webhook_in_widgets.yaml"]), "widgets", "gadgets")
		out["config/crd/patches/webhook_in_gadgets.yaml"] = []byte(patch)
		k := string(files["config/crd/kustomization.yaml"])
		k = strings.Replace(k, "- bases/example.com_widgets.yaml\n", "- bases/example.com_widgets.yaml\n- bases/example.com_gadgets.yaml\n", 1)
		k = strings.Replace(k, "- path: patches/webhook_in_widgets.yaml\n", "- path: patches/webhook_in_widgets.yaml\n- path: patches/webhook_in_gadgets.yaml\n", 1)
		out["config/crd/kustomization.yaml"] = []byte(k)
		return out
	}
	old, new := gadget(kubebuilderFiles(t, "old")), gadget(kubebuilderFiles(t, "new"))
	new["config/crd/bases/example.com_gadgets.yaml"] = old["config/crd/bases/example.com_gadgets.yaml"] // only widgets change
	tr := newTestRepo(t)
	for name, data := range old {
		tr.Write(name, data)
	}
	tr.Branch("main", tr.Commit("base"))
	for name, data := range new {
		tr.Write(name, data)
	}
	tr.Commit("head")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.color config/crd/bases/example.com_widgets.yaml:31 base\n"+
		"max-added widgets.example.com v1 .spec.size config/crd/bases/example.com_widgets.yaml:34 head\n"+
		"sample-pruned widgets.example.com v1 .spec.color config/samples/example_v1_widget.yaml:9 head\n"+
		"sample-invalid widgets.example.com v1 .spec.size config/samples/generated.yaml:7 head\n")
	if len(res.Notices) != 0 {
		t.Errorf("notices %q", res.Notices)
	}
}
