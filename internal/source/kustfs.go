package source

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kustomizations are built by kustomize itself (krusty) over an in-memory file system that
// holds the compared side's files: in git mode the commit's objects (links followed inside the
// repository, the working tree's changes laid over them), in diff mode the folder named. Files
// are copied in when kustomize first asks for them, so a build reads what `kubectl apply -k`
// would read and nothing more. Remote resources are never fetched: kustFS takes them out of the
// kustomizations it serves and records them (Remote), so what they install is known to be
// unknown.

// kustSource is one side's files by their names in the tree, links followed.
type kustSource interface {
	read(name string) ([]byte, bool)
	isDir(name string) bool
}

func (g *gitFS) isDir(name string) bool {
	for w, data := range g.working {
		if data != nil && strings.HasPrefix(w, name+"/") {
			return true // a folder only uncommitted files make
		}
	}
	res, err := g.resolve(name)
	return err == nil && res.tree != nil
}

func (diskFS) isDir(name string) bool {
	info, err := os.Stat(filepath.FromSlash(name))
	return err == nil && info.IsDir()
}

// kustFS is the in-memory file system one side's kustomizations are built over.
type kustFS struct {
	filesys.FileSystem // what was copied in so far
	src                kustSource
	// root is the tree's root: "" for a commit, the folder named in diff mode (nothing above it
	// is read, as before).
	root string
	seen map[string]bool
	// kust are the kustomizations copied in, by in-memory path; patches the patch files they
	// name (their install-time placeholders are made plain, see plainPatch).
	kust    map[string]*kustFile
	patches map[string]bool
	// build is the build in progress, which records what it reads.
	build *kustBuild
}

// kustFile is what kustFS changed in one kustomization file, and why.
type kustFile struct {
	remotes []Remote
	// refused says why the kustomization cannot be built without fetching (a remote patch,
	// generator or transformer): the build fails with it.
	refused string
}

func newKustFS(src kustSource, root string) *kustFS {
	if root == "." {
		root = ""
	}
	return &kustFS{FileSystem: filesys.MakeFsInMemory(), src: src, root: strings.TrimSuffix(root, "/"), seen: map[string]bool{}, kust: map[string]*kustFile{}, patches: map[string]bool{}}
}

// memPath is a tree name as a path of the in-memory file system.
func (k *kustFS) memPath(name string) string { return path.Clean("/" + strings.TrimPrefix(name, "/")) }

// treeName is an in-memory path as a name in the tree.
func (k *kustFS) treeName(p string) string {
	if strings.HasPrefix(k.root, "/") {
		return p
	}
	return strings.TrimPrefix(p, "/")
}

// fault copies a path (and the folders above it) in from the source, once.
func (k *kustFS) fault(p string) {
	p = path.Clean("/" + strings.TrimPrefix(filepath.ToSlash(p), "/"))
	if p == "/" || k.seen[p] {
		return
	}
	k.fault(path.Dir(p))
	k.seen[p] = true
	if !k.FileSystem.IsDir(path.Dir(p)) {
		return // a file, or nothing, holds nothing
	}
	name := k.treeName(p)
	switch {
	case k.root != "" && (strings.HasPrefix(k.root, name+"/") || name == "" || strings.HasPrefix(k.root, "/") && name == "/"):
		_ = k.FileSystem.MkdirAll(p) // a folder above the one named
	case k.root != "" && name != k.root && !strings.HasPrefix(name, k.root+"/"):
		// Outside what the user named: not read.
	case k.src.isDir(name):
		_ = k.FileSystem.MkdirAll(p)
	default:
		if data, ok := k.src.read(name); ok {
			_ = k.FileSystem.WriteFile(p, k.rewrite(p, data))
		}
	}
}

func (k *kustFS) Exists(p string) bool { k.fault(p); return k.FileSystem.Exists(p) }
func (k *kustFS) IsDir(p string) bool  { k.fault(p); return k.FileSystem.IsDir(p) }

// ReadDir lists what was copied in: kustomize's builds never list folders.
func (k *kustFS) ReadDir(p string) ([]string, error) { k.fault(p); return k.FileSystem.ReadDir(p) }

func (k *kustFS) Open(p string) (filesys.File, error) { k.fault(p); return k.FileSystem.Open(p) }

func (k *kustFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	k.fault(p)
	return k.FileSystem.CleanedAbs(p)
}

// ReadFile serves a file, and records it in the build in progress: a kustomization's remotes,
// and any other file as read.
func (k *kustFS) ReadFile(p string) ([]byte, error) {
	k.fault(p)
	clean := path.Clean("/" + strings.TrimPrefix(filepath.ToSlash(p), "/"))
	if k.build != nil {
		k.build.trace = append(k.build.trace, clean)
	}
	if kf, ok := k.kust[clean]; ok {
		if kf.refused != "" {
			return nil, errors.New(kf.refused)
		}
		if b := k.build; b != nil {
			for _, r := range kf.remotes {
				if !slices.Contains(b.remotes, r) {
					b.remotes = append(b.remotes, r)
				}
			}
		}
	} else if b := k.build; b != nil && k.FileSystem.Exists(clean) && !k.FileSystem.IsDir(clean) {
		b.read = append(b.read, k.treeName(clean))
	}
	return k.FileSystem.ReadFile(p)
}

// rewrite is what a file read into the in-memory file system holds: a kustomization without its
// remote resources (recorded), asking for origin annotations; a patch file with its
// placeholders made plain; any other file as it is.
func (k *kustFS) rewrite(p string, data []byte) []byte {
	if k.patches[p] {
		return plainPatch(data)
	}
	if !slices.Contains(kustomizationNames, path.Base(p)) {
		return data
	}
	kf := &kustFile{}
	k.kust[p] = kf
	doc, err := kyaml.Parse(string(data))
	if err != nil || doc.YNode().Kind != kyaml.MappingNode {
		return data // kustomize says what is wrong with it
	}
	dir := path.Dir(p)
	file := k.treeName(p)
	local := func(entry string) bool { return k.Exists(path.Join(dir, entry)) }
	for _, field := range []string{"resources", "bases", "components"} {
		seq := mapValue(doc.YNode(), field)
		if seq == nil || seq.Kind != kyaml.SequenceNode {
			continue
		}
		kept := seq.Content[:0]
		for _, item := range seq.Content {
			// kustomize reads a local path first: only what the tree does not hold is fetched.
			if item.Kind == kyaml.ScalarNode && isRemote(item.Value) && !local(item.Value) {
				kf.remotes = append(kf.remotes, Remote{File: file, Line: item.Line, Entry: item.Value})
				continue
			}
			kept = append(kept, item)
		}
		seq.Content = kept
	}
	for _, r := range fetched(doc.YNode()) {
		if !local(r.Value) {
			kf.refused = fmt.Sprintf("%s:%d: %s is remote, and crdguard fetches nothing: it cannot build this kustomization as kubectl apply -k would", file, r.Line, r.Value)
		}
	}
	for _, n := range patchNodes(doc.YNode()) {
		if n.path {
			mp := path.Join(dir, n.node.Value)
			k.patches[mp] = true
			if k.seen[mp] { // read already, as something else
				if body, err := k.FileSystem.ReadFile(mp); err == nil {
					_ = k.FileSystem.WriteFile(mp, plainPatch(body))
				}
			}
			continue
		}
		n.node.Value = string(plainPatch([]byte(n.node.Value)))
	}
	meta := mapValue(doc.YNode(), "buildMetadata")
	switch {
	case meta == nil:
		doc.YNode().Content = append(doc.YNode().Content,
			&kyaml.Node{Kind: kyaml.ScalarNode, Value: "buildMetadata"},
			&kyaml.Node{Kind: kyaml.SequenceNode, Content: []*kyaml.Node{{Kind: kyaml.ScalarNode, Value: types.OriginAnnotations}}})
	case meta.Kind == kyaml.SequenceNode && !slices.ContainsFunc(meta.Content, func(n *kyaml.Node) bool { return n.Value == types.OriginAnnotations }):
		meta.Content = append(meta.Content, &kyaml.Node{Kind: kyaml.ScalarNode, Value: types.OriginAnnotations})
	}
	out, err := doc.String()
	if err != nil {
		return data
	}
	return []byte(out)
}

// mapValue is the value of a key of a mapping node, nil when absent.
func mapValue(m *kyaml.Node, key string) *kyaml.Node {
	if m == nil || m.Kind != kyaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// fetched are the entries of a kustomization other than resources that kustomize would fetch
// when remote: patch files, generators, transformers, validators, configurations, CRD schemas,
// the OpenAPI schema and the files of generated ConfigMaps and Secrets.
func fetched(k *kyaml.Node) []*kyaml.Node {
	var out []*kyaml.Node
	scalar := func(n *kyaml.Node) {
		if n != nil && n.Kind == kyaml.ScalarNode && isRemote(n.Value) && !strings.Contains(n.Value, "\n") {
			out = append(out, n)
		}
	}
	seq := func(n *kyaml.Node, each func(*kyaml.Node)) {
		if n != nil && n.Kind == kyaml.SequenceNode {
			for _, item := range n.Content {
				each(item)
			}
		}
	}
	for _, field := range []string{"generators", "transformers", "validators", "configurations", "crds", "patchesStrategicMerge"} {
		seq(mapValue(k, field), scalar)
	}
	for _, field := range []string{"patches", "patchesJson6902"} {
		seq(mapValue(k, field), func(p *kyaml.Node) { scalar(mapValue(p, "path")) })
	}
	scalar(mapValue(mapValue(k, "openapi"), "path"))
	for _, field := range []string{"configMapGenerator", "secretGenerator"} {
		seq(mapValue(k, field), func(g *kyaml.Node) {
			seq(mapValue(g, "files"), scalar)
			seq(mapValue(g, "envs"), scalar)
			scalar(mapValue(g, "env"))
		})
	}
	return out
}

// patchNode is a patch of a kustomization: a file it names (path) or the patch itself.
type patchNode struct {
	node *kyaml.Node
	path bool
}

// patchNodes are a kustomization's patches, in every spelling kustomize reads.
func patchNodes(k *kyaml.Node) []patchNode {
	var out []patchNode
	for _, field := range []string{"patches", "patchesJson6902"} {
		if s := mapValue(k, field); s != nil && s.Kind == kyaml.SequenceNode {
			for _, p := range s.Content {
				if n := mapValue(p, "path"); n != nil && n.Kind == kyaml.ScalarNode {
					out = append(out, patchNode{node: n, path: true})
				}
				if n := mapValue(p, "patch"); n != nil && n.Kind == kyaml.ScalarNode {
					out = append(out, patchNode{node: n})
				}
			}
		}
	}
	if s := mapValue(k, "patchesStrategicMerge"); s != nil && s.Kind == kyaml.SequenceNode {
		for _, p := range s.Content {
			if p.Kind == kyaml.ScalarNode {
				// A file when it is one line naming a manifest, as kustomize tells them apart.
				out = append(out, patchNode{node: p, path: IsManifest(p.Value) && !strings.Contains(p.Value, "\n")})
			}
		}
	}
	return out
}
