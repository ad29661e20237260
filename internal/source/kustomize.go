package source

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// kustomizationNames are the file names kustomize looks for in a folder, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// originAnnotation is the annotation kustomize's originAnnotations build option puts on every
// object it builds: the file (and remote) the object was read from.
const originAnnotation = "config.kubernetes.io/origin"

// kustomizer builds one side's kustomizations, each once.
type kustomizer struct {
	fs     *kustFS
	builds map[string]*kustBuild
	// above are the kustomizations in and above each definition's folder (kustomizationsAbove).
	above map[string][]string
	// skip leaves out the kustomizations the user's exclude globs name: never built.
	skip func(name string) bool
}

// kustBuild is what kustomize built from one kustomization of a side.
type kustBuild struct {
	file string // the kustomization, by its name in the tree
	err  error
	// remotes are the remote resources it reaches, directly or through the folders it lists.
	remotes []Remote
	// read are the files kustomize read for it, kustomizations aside, by name in the tree.
	read []string
	// trace is every path kustomize asked to read, in order (in-memory paths): which entry
	// brought a file that an entry's folder's kustomization lists from elsewhere.
	trace []string
	// files are the files whose objects the build holds, in the order built; entries maps each
	// (by path under the root) to the line of the kustomization's entry that brings it.
	files   []string
	entries map[string]int
	crds    []builtCRD
	// listed are its local resource and component entries, by name in the tree; failed is the
	// problem a build kustomize refused gives, when it may install CRDs (judged once every CRD
	// of the side is read: mayInstallCRDs).
	listed []string
	failed *ChartProblem
}

// builtCRD is a CRD of a build: the file it was read from and its name there, and the object
// kustomize made of it (patches, replacements and transformers applied).
type builtCRD struct {
	file, name string
	object     *apiextv1.CustomResourceDefinition
}

// Kustomize lets the tree build its kustomizations with kustomize, reading files from src (a
// commit, a folder); skip names the kustomizations never built (nil: none).
func (t *Tree) kustomizeFrom(src kustSource, skip func(string) bool) {
	t.kz = &kustomizer{fs: newKustFS(src, t.Root), builds: map[string]*kustBuild{}, above: map[string][]string{}, skip: skip}
}

// build builds a kustomization (by its name in the tree) once, and records what it installs
// (Listing), the remote resources it reaches (Remotes, LeftTo) and, when kustomize refuses it,
// a problem at the kustomization: crdguard cannot tell what `kubectl apply -k` installs from it
// (fail closed). nil when the tree builds no kustomizations (or is done with them: kustomize),
// skips this one, or it is a component (built only into the kustomizations that list it).
func (t *Tree) build(file string) *kustBuild {
	if t.kz == nil || t.kz.skip != nil && t.kz.skip(t.rel(file)) {
		return nil
	}
	if b, ok := t.kz.builds[file]; ok {
		return b
	}
	k := t.kz.fs
	original, _ := k.src.read(file)
	var k8s types.Kustomization
	_ = yaml.Unmarshal(original, &k8s)
	if k8s.Kind == types.ComponentKind {
		return nil // a component is built into the kustomizations that list it, never alone
	}
	k8s.FixKustomization()
	b := &kustBuild{file: file, entries: map[string]int{}}
	for _, e := range append(slices.Clone(k8s.Resources), k8s.Components...) {
		if !strings.Contains(e, "://") && !strings.HasPrefix(e, "github.com/") {
			b.listed = append(b.listed, path.Join(path.Dir(file), e))
		}
	}
	t.kz.builds[file] = b
	k.build = b
	out, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(k, k.memPath(path.Dir(file)))
	k.build = nil
	for _, r := range b.remotes {
		t.addRemote(r.File, r.Line, r.Entry)
	}
	t.setRemoteVia(t.rel(file), b.remotes)
	if err != nil {
		b.err = err
		b.failed = &ChartProblem{File: file, Line: errorLine(original, err.Error()), Kustomization: true,
			Message: "kustomize cannot build this kustomization, so what kubectl apply -k installs from it is not known: " + finding.Cut(err.Error(), 600) +
				"; fix it so that kustomize build accepts it, or leave it out with exclude in .crdguard.yaml"}
		return b
	}
	entries := append(slices.Clone(k8s.Resources), k8s.Components...)
	dir := path.Dir(file)
	for _, res := range out.Resources() {
		o, err := res.GetOrigin()
		if err != nil || o == nil || o.Repo != "" || o.Path == "" {
			continue // generated, or from a remote (not fetched)
		}
		from := filepath.ToSlash(o.Path)
		name := path.Join(dir, from)
		if _, ok := b.entries[t.rel(name)]; !ok {
			b.files = append(b.files, name)
			b.entries[t.rel(name)] = b.entryOf(original, entries, from)
		}
		if res.GetKind() != crd.Kind {
			continue
		}
		y, err := res.AsYAML()
		if err != nil {
			continue
		}
		docs, _ := crd.Parse(name, y)
		for _, d := range docs {
			if d.Patch {
				continue
			}
			delete(d.Object.Annotations, originAnnotation)
			if len(d.Object.Annotations) == 0 {
				d.Object.Annotations = nil
			}
			t.subtrees.Share(d.Object) // mostly the definition the file holds: held once
			b.crds = append(b.crds, builtCRD{file: name, name: res.OrgId().Name, object: d.Object})
		}
	}
	if t.listing == nil {
		t.listing = map[string]map[string]int{}
	}
	t.listing[t.rel(file)] = b.entries
	return b
}

// entryOf is the line of the kustomization's resource or component entry that brings a file
// (by its path from the kustomization's folder): the entry that names it or a folder above it,
// else the last entry kustomize began to read before the file (../wrap, whose kustomization
// lists ../crds, brings ../crds/a.yaml).
func (b *kustBuild) entryOf(data []byte, entries []string, file string) int {
	for _, e := range entries {
		if c := path.Clean(e); c == file || strings.HasPrefix(file, c+"/") {
			return entryLine(data, e)
		}
	}
	dir := path.Clean("/" + path.Dir(b.file))
	at := slices.Index(b.trace, path.Join(dir, file))
	line, from := 1, -1
	for _, e := range entries {
		p := path.Join(dir, e)
		i := slices.IndexFunc(b.trace, func(r string) bool { return r == p || strings.HasPrefix(r, p+"/") })
		if i >= 0 && i <= at && i > from {
			line, from = entryLine(data, e), i
		}
	}
	return line
}

// entryLine is the line of a kustomization's entry for a resource, 1 when it cannot be found.
func entryLine(data []byte, r string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")) == r {
			return i + 1
		}
	}
	return 1
}

// errorLine is the line of the entry of a kustomization that kustomize's message names, 1 when
// it names none.
func errorLine(data []byte, msg string) int {
	var k types.Kustomization
	_ = yaml.Unmarshal(data, &k)
	k.FixKustomization()
	named := append(slices.Clone(k.Resources), k.Components...)
	for _, p := range k.Patches {
		named = append(named, p.Path)
	}
	for _, e := range named {
		if e != "" && strings.Contains(msg, e) {
			return entryLine(data, e)
		}
	}
	return 1
}

// under reports whether a path is a folder or lies below it ("." holds every path).
func under(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// holds reports whether a folder lies in what the tree reads: anywhere in a commit, the folder
// named or below it on disk.
func (t *Tree) holds(dir string) bool {
	return t.Root == "" || under(dir, t.Root)
}

// kustomizationIn is the kustomization kustomize finds in a folder of the tree, "" for none.
func (t *Tree) kustomizationIn(dir string) string {
	for _, k := range kustomizationNames {
		name := path.Join(dir, k)
		if _, ok := t.kz.fs.src.read(name); ok {
			return name
		}
	}
	return ""
}

// kustomizationsAbove are the kustomizations in a definition's folder and above it, outermost
// first (each folder looked up once).
func (t *Tree) kustomizationsAbove(d string) []string {
	if ks, ok := t.kz.above[d]; ok {
		return ks
	}
	var ks []string
	for dir := d; ; dir = path.Dir(dir) {
		if !t.holds(dir) {
			break // nothing above the folder named is read
		}
		if k := t.kustomizationIn(dir); k != "" {
			ks = append([]string{k}, ks...)
		}
		if dir == "." || dir == "/" || dir == t.Root {
			break
		}
	}
	t.kz.above[d] = ks
	return ks
}

// buildsDefinitions reports whether kustomize will build a kustomization above one of the
// tree's definitions.
func (t *Tree) buildsDefinitions() bool {
	return t.kz != nil && slices.ContainsFunc(t.CRDs, func(c *crd.CRD) bool { return len(t.kustomizationsAbove(path.Dir(c.File))) > 0 })
}

// Kustomize puts in place of each definition what the outermost kustomization in its folder or
// above that installs it builds from it (kubebuilder's config/crd/kustomization.yaml and its
// patches/webhook_in_<kind>.yaml, replacements, components, nested bases), as `kubectl apply -k`
// of that folder installs it; its lines stay those of its own file. The definitions of a
// kustomization's resources are recorded for duplicates (two definitions one kustomization
// applies).
func (t *Tree) kustomize() {
	if t.kz == nil {
		return
	}
	for i, c := range t.CRDs {
		for _, k := range t.kustomizationsAbove(path.Dir(c.File)) {
			b := t.build(k)
			if b == nil || b.err != nil {
				continue
			}
			at := slices.IndexFunc(b.crds, func(x builtCRD) bool { return x.file == c.File && x.name == c.Name })
			if at < 0 {
				continue
			}
			if built := b.crds[at].object; !equality.Semantic.DeepEqual(built.Spec, c.Object.Spec) {
				cp := *c
				cp.Object = built
				cp.PatchedBy = k
				t.CRDs[i] = &cp
			}
			break
		}
	}
	files := map[string]bool{}
	for _, c := range t.CRDs {
		files[c.File] = true
	}
	keys := make([]string, 0, len(t.kz.builds))
	for k := range t.kz.builds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b := t.kz.builds[k]
		var installed []string
		for _, c := range b.crds {
			installed = append(installed, c.file)
		}
		if b.err != nil {
			installed = b.read // what it read is what it would have installed
			t.judgeFailed(b)
		}
		for _, f := range installed {
			if _, ok := t.kustomizedBy[f]; !ok && files[f] {
				if t.kustomizedBy == nil {
					t.kustomizedBy = map[string]string{}
				}
				t.kustomizedBy[f] = k
			}
		}
	}
	// The tree's last build is done: what kustomize read and made (the other side's builds come
	// next, and argo-workflows' hold 40 MB of copied definitions) is let go.
	t.kz = nil
}

// judgeFailed makes a kustomization kustomize refused a kustomization-not-built problem when it
// may install CRDs, and a notice otherwise: projects keep kustomizations for their tooling
// (cluster-api's hack/observability builds Helm charts with --enable-helm and reads files above
// its folder) that install no CRD, and an error there would be a false alarm on every pull
// request that touches them. It may install CRDs when a file kustomize read for it or a file it
// lists holds a CRD document, or a CRD of the side lies in its folder or below, or below a
// folder it lists.
func (t *Tree) judgeFailed(b *kustBuild) {
	if b.failed == nil {
		return
	}
	p := *b.failed
	b.failed = nil
	if t.mayInstallCRDs(b) {
		t.NotRendered = append(t.NotRendered, p)
		return
	}
	t.Notices = append(t.Notices, fmt.Sprintf("%s:%d: kustomize cannot build this kustomization (%s); it lists no CRD and holds none, so nothing is compared from it", p.File, p.Line, finding.Cut(b.err.Error(), 300)))
}

func (t *Tree) mayInstallCRDs(b *kustBuild) bool {
	src := t.kz.fs.src
	for _, name := range append(slices.Clone(b.read), b.listed...) {
		if data, ok := src.read(name); ok && crd.MentionsCRD(data) {
			if docs, problems := crd.Parse(name, data); len(docs)+len(problems) > 0 {
				return true
			}
		}
	}
	folders := []string{path.Dir(b.file)}
	for _, name := range b.listed {
		if src.isDir(name) {
			folders = append(folders, name)
		}
	}
	var files []string
	for _, c := range t.CRDs {
		files = append(files, c.File)
	}
	for _, c := range t.Patches {
		files = append(files, c.File)
	}
	for _, ps := range [][]crd.Problem{t.Problems, t.Unread} {
		for _, p := range ps {
			files = append(files, p.File)
		}
	}
	for _, f := range files {
		for _, dir := range folders {
			if under(f, dir) {
				return true
			}
		}
	}
	return false
}

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

// installedBy builds a kustomization and returns the files it installs, false when it is not
// built (kustomize refuses it, or the user excludes it).
func (t *Tree) installedBy(file string) ([]string, bool) {
	b := t.build(file)
	if b == nil || b.err != nil {
		return nil, false
	}
	return b.files, true
}
