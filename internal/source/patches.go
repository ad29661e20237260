package source

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/crd"
)

// kustomizationNames are the file names kustomize looks for in a folder, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// ApplyPatches applies to the tree's definitions the CRD patches that a kustomization in one of
// their folders, or above, applies to them (kubebuilder's config/crd/kustomization.yaml and its
// patches/webhook_in_<kind>.yaml), so that what is compared is what the project installs. Only
// CRD patches and the definitions they patch are rendered, through kustomize itself; the rest of
// a kustomization (name prefixes, labels, other kinds) is left out. read returns a file of the
// same side by its name in the tree. A kustomization kustomize refuses is a notice.
func (t *Tree) ApplyPatches(read func(name string) ([]byte, bool)) {
	index := map[string][]int{} // file → indexes into t.CRDs
	var dirs []string
	seen := map[string]bool{}
	for i, c := range t.CRDs {
		index[c.File] = append(index[c.File], i)
		for d := path.Dir(c.File); !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
			if d == "." || d == "/" {
				break
			}
		}
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		for _, k := range kustomizationNames {
			if data, ok := read(path.Join(d, k)); ok {
				t.applyKustomization(d, path.Join(d, k), data, index, read)
				break
			}
		}
	}
}

// applyKustomization renders one kustomization's CRD patches over its CRD resources and puts
// the results in place of the definitions (as copies: git mode shares unchanged definitions
// between the sides).
func (t *Tree) applyKustomization(dir, file string, data []byte, index map[string][]int, read func(string) ([]byte, bool)) {
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Notices = append(t.Notices, fmt.Sprintf("%s: not read, its CRD patches were not applied: %v", file, err))
		return
	}
	k.FixKustomization() // bases and other deprecated spellings, as kustomize reads them
	t.recordListing(dir, file, data, k.Resources, read)
	files := map[string][]byte{}
	var resources []string
	present := map[string]bool{} // the CRDs the rendered resources define
	unread := false              // a resource left out may define what a patch targets
	for _, r := range k.Resources {
		name := path.Join(dir, r)
		if len(index[name]) == 0 {
			unread = true
			continue // not a file with a definition this tree compares
		}
		if body, ok := read(name); ok {
			files[name] = body
			resources = append(resources, r)
			for _, i := range index[name] {
				present[t.CRDs[i].Name] = true
			}
		}
	}
	if len(resources) == 0 {
		return
	}
	for name := range files {
		if _, ok := t.kustomizedBy[name]; !ok {
			if t.kustomizedBy == nil {
				t.kustomizedBy = map[string]string{}
			}
			t.kustomizedBy[name] = file
		}
	}
	// patchesStrategicMerge and patchesJson6902 are patches with and without a target.
	all := append([]types.Patch{}, k.Patches...)
	//lint:ignore SA1019 still what kubebuilder v3 scaffolds
	for _, p := range k.PatchesStrategicMerge {
		if IsManifest(string(p)) && !strings.Contains(string(p), "\n") {
			all = append(all, types.Patch{Path: string(p)})
		} else {
			all = append(all, types.Patch{Patch: string(p)})
		}
	}
	//lint:ignore SA1019 still found in older projects
	all = append(all, k.PatchesJson6902...)
	var patches []types.Patch
	for _, p := range all {
		body := []byte(p.Patch)
		if p.Path != "" {
			name := path.Join(dir, p.Path)
			b, ok := read(name)
			if !ok {
				continue
			}
			body = plainPatch(b)
			files[name] = body
		} else {
			body = plainPatch(body)
			p.Patch = string(body)
		}
		if (p.Target != nil && p.Target.Kind == crd.Kind) || (p.Target == nil || p.Target.Kind == "") && crd.MentionsCRD(body) {
			// Git mode reads only the definitions a change concerns: a patch of another CRD
			// (in a resource left out) has nothing to patch here, and kustomize would refuse
			// the whole kustomization. A target no resource defines stays kustomize's error.
			if target := patchTarget(p, body); unread && target != "" && !present[target] {
				continue
			}
			patches = append(patches, p)
		}
	}
	if len(patches) == 0 {
		return
	}
	fs := filesys.MakeFsInMemory()
	for name, body := range files {
		if err := fs.WriteFile(fsPath(name), body); err != nil {
			t.Notices = append(t.Notices, fmt.Sprintf("%s: CRD patches not applied: %v", file, err))
			return
		}
	}
	only := types.Kustomization{TypeMeta: types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind}, Resources: resources, Patches: patches}
	body, err := yaml.Marshal(only)
	if err == nil {
		err = fs.WriteFile(path.Join(fsPath(dir), "kustomization.yaml"), body)
	}
	if err != nil {
		t.Notices = append(t.Notices, fmt.Sprintf("%s: CRD patches not applied: %v", file, err))
		return
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone // patches/../bases is the usual layout
	out, err := krusty.MakeKustomizer(opts).Run(fs, fsPath(dir))
	if err != nil {
		t.Notices = append(t.Notices, fmt.Sprintf("%s: CRD patches not applied, kustomize says: %v", file, err))
		return
	}
	for _, res := range out.Resources() {
		if res.GetKind() != crd.Kind {
			continue
		}
		y, err := res.AsYAML()
		if err != nil {
			continue
		}
		docs, _ := crd.Parse(file, y)
		for _, patched := range docs {
			if patched.Patch {
				continue
			}
			for _, r := range resources {
				for _, i := range index[path.Join(dir, r)] {
					if c := t.CRDs[i]; c.Name == patched.Name {
						cp := *c
						cp.Object = patched.Object
						cp.PatchedBy = file
						t.CRDs[i] = &cp
					}
				}
			}
		}
	}
}

// fsPath is a tree name as a path of the in-memory file system kustomize reads.
func fsPath(name string) string { return path.Clean("/" + name) }

// caBundlePlaceholder is the placeholder a templated caBundle gets: the field holds base64, and
// any other text would make the patched CRD fail to decode.
const caBundlePlaceholder = "Y3JkZ3VhcmQtdGVtcGxhdGVk" // base64 of "crdguard-templated"

// plainPatch turns a patch with install-time placeholders (caBundle: {{caBundle}}, ${CA}) into
// plain YAML, as templates are read: the values are unknown, but the rest of the patch (a
// conversion strategy above all) is what the project installs.
func plainPatch(body []byte) []byte {
	if !hasTemplate(body) {
		return body
	}
	clean, _ := detemplate(body)
	lines := strings.Split(string(clean), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "caBundle: "+placeholder {
			lines[i] = strings.Replace(l, placeholder, caBundlePlaceholder, 1)
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// plainName is a CRD name that is no wider a regular expression than itself.
var plainName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)

// patchTarget is the name of the CRD a patch applies to, when it names one: its target's name,
// or the metadata.name of a strategic merge patch.
func patchTarget(p types.Patch, body []byte) string {
	if p.Target != nil {
		if !plainName.MatchString(p.Target.Name) {
			return "" // a regular expression may match any CRD
		}
		return p.Target.Name
	}
	docs, _ := crd.Parse("patch", body)
	if len(docs) == 1 {
		return docs[0].Name
	}
	return ""
}
