// Package gotypes maps findings back to the Go types that controller-gen generated the CRD
// from (DESIGN §6, "Go sources"): the field, or the marker that sets the changed keyword. The
// repository's Go files are read as text with go/parser; nothing is built, run or downloaded,
// so a type from another module (metav1.ObjectMeta, corev1.PodSpec) ends the walk at the field
// that uses it.
package gotypes

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Tree is one side's files by slash path from the repository root: a directory, a commit, or
// a commit with the working tree laid over it.
type Tree interface {
	// Names lists every file, sorted.
	Names() []string
	// Read returns a file's content.
	Read(name string) ([]byte, error)
}

// index is what one side's Go sources hold, read lazily: packages are parsed when a walk first
// needs them.
type index struct {
	tree    Tree
	fset    *token.FileSet
	modules []module            // longest path first, so the innermost module wins
	dirs    map[string][]string // folder → its Go files (no tests, no generated code)
	pkgs    map[string]*pkg     // folder → parsed package (nil: unreadable)
	apis    []*pkg              // packages with a +groupName marker
}

// module is one go.mod: its module path and the folder it sits in ("" at the root).
type module struct{ path, dir string }

// pkg is one parsed Go package.
type pkg struct {
	dir   string
	group string
	// versions are those of the package's schema.GroupVersion variables (GroupVersion, and
	// others such as cluster-api's TestGroupVersion for test kinds of another version), else
	// the folder's name; the kind's name tells the package's kinds apart.
	versions []string
	types    map[string]*decl
	// consts are the package's string constants, for k8s.io/api's +default=ref(Name) markers.
	consts map[string]string
}

// file is one parsed Go file: its name and its imports (local name → import path).
type file struct {
	name    string
	imports map[string]string
	pkg     *pkg
	idx     *index
}

// decl is one type declaration with its markers.
type decl struct {
	name    string
	spec    *ast.TypeSpec
	file    *file
	line    int
	markers []marker
	doc     *ast.CommentGroup // the type's doc comment, as controller-gen reads it
}

// versionDir is how API packages are named: v1, v1beta2, v1alpha1.
var versionDir = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// newIndex lists the Go files and go.mod files of a tree and finds the API packages: those
// whose files carry a +groupName marker. Only candidate files are read here.
func newIndex(t Tree) *index {
	idx := &index{tree: t, fset: token.NewFileSet(), dirs: map[string][]string{}, pkgs: map[string]*pkg{}}
	for _, name := range t.Names() {
		if skipped(name) {
			continue
		}
		dir := path.Dir(name)
		if dir == "." {
			dir = ""
		}
		switch base := path.Base(name); {
		case base == "go.mod":
			if data, err := t.Read(name); err == nil {
				if mp := modulePath(data); mp != "" {
					idx.modules = append(idx.modules, module{path: mp, dir: dir})
				}
			}
		case strings.HasSuffix(base, ".go") && !strings.HasSuffix(base, "_test.go") && !strings.HasPrefix(base, "zz_generated"):
			idx.dirs[dir] = append(idx.dirs[dir], name)
		}
	}
	sort.SliceStable(idx.modules, func(i, j int) bool { return len(idx.modules[i].path) > len(idx.modules[j].path) })
	dirs := make([]string, 0, len(idx.dirs))
	for dir := range idx.dirs {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if !idx.mayBeAPI(dir) {
			continue
		}
		if p := idx.load(dir); p != nil && p.group != "" {
			idx.apis = append(idx.apis, p)
		}
	}
	return idx
}

// skipped are files controller-gen never reads for a module's types: vendored copies,
// fixtures, hidden folders.
func skipped(name string) bool {
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "vendor" || part == "testdata" || strings.HasPrefix(part, ".") && part != "." || strings.HasPrefix(part, "_") {
			return true
		}
	}
	return false
}

// mayBeAPI says whether a folder can hold an API package, cheaply: a version-named folder, or
// one whose registration files mention +groupName. Reading every Go file of a large repository
// costs more than the mapping is worth.
func (idx *index) mayBeAPI(dir string) bool {
	if versionDir.MatchString(path.Base(dir)) {
		return true
	}
	for _, name := range idx.dirs[dir] {
		switch path.Base(name) {
		case "doc.go", "groupversion_info.go", "register.go":
			if data, err := idx.tree.Read(name); err == nil && bytes.Contains(data, []byte("+groupName")) {
				return true
			}
		}
	}
	return false
}

// modulePath reads the module line of a go.mod.
func modulePath(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "module"); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\t")) {
			rest = strings.TrimSpace(rest)
			if i := strings.Index(rest, "//"); i >= 0 {
				rest = strings.TrimSpace(rest[:i])
			}
			if u, err := strconv.Unquote(rest); err == nil {
				return u
			}
			return rest
		}
	}
	return ""
}

// dirOf is the folder of an import path inside this repository, or false for another module's.
func (idx *index) dirOf(importPath string) (string, bool) {
	for _, m := range idx.modules {
		if importPath == m.path || strings.HasPrefix(importPath, m.path+"/") {
			return strings.TrimPrefix(path.Join(m.dir, strings.TrimPrefix(importPath, m.path)), "/"), true
		}
	}
	return "", false
}

// load parses a folder's package once; nil when it has no readable Go file.
func (idx *index) load(dir string) *pkg {
	if p, ok := idx.pkgs[dir]; ok {
		return p
	}
	var p *pkg
	for _, name := range idx.dirs[dir] {
		data, err := idx.tree.Read(name)
		if err != nil {
			continue
		}
		af, err := parser.ParseFile(idx.fset, name, data, parser.ParseComments|parser.SkipObjectResolution)
		if af == nil || err != nil && af.Name == nil {
			continue // a file go/parser cannot read at all contributes nothing
		}
		if p == nil {
			p = &pkg{dir: dir, types: map[string]*decl{}, consts: map[string]string{}}
		}
		idx.addFile(p, name, af)
	}
	if p != nil && len(p.versions) == 0 && versionDir.MatchString(path.Base(dir)) {
		p.versions = []string{path.Base(dir)}
	}
	idx.pkgs[dir] = p
	return p
}

// addFile records a file's type declarations, its +groupName and its GroupVersion.
func (idx *index) addFile(p *pkg, name string, af *ast.File) {
	f := &file{name: name, imports: map[string]string{}, pkg: p, idx: idx}
	for _, im := range af.Imports {
		ip, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		local := path.Base(ip) // a package is named after its folder in every API module seen
		if im.Name != nil {
			local = im.Name.Name
		}
		f.imports[local] = ip
	}
	for _, cg := range af.Comments {
		for _, m := range markersOf(idx.fset, cg) {
			if v, ok := m.value("groupName"); ok && p.group == "" {
				p.group = v
			}
		}
	}
	groups := commentGroups(af)
	for _, d := range af.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		switch gd.Tok {
		case token.TYPE:
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				at := ts.Pos()
				if len(gd.Specs) == 1 {
					at = gd.Pos() // the group above `type X …` is the one above the keyword
				}
				if doc != nil {
					at = doc.Pos()
				}
				ms := append(markersOf(idx.fset, doc), markersOf(idx.fset, groups.before(idx.fset, at))...)
				if _, dup := p.types[ts.Name.Name]; !dup {
					p.types[ts.Name.Name] = &decl{name: ts.Name.Name, spec: ts, file: f, line: idx.fset.Position(ts.Pos()).Line, markers: ms, doc: doc}
				}
			}
		case token.VAR:
			if v := groupVersion(gd); v != "" && !slices.Contains(p.versions, v) {
				p.versions = append(p.versions, v)
			}
		case token.CONST:
			stringConsts(gd, p.consts)
		}
	}
}

// groupVersion reads the version of a `schema.GroupVersion{Group: …, Version: "v1"}` variable.
func groupVersion(gd *ast.GenDecl) string {
	for _, s := range gd.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok {
			continue
		}
		for _, value := range vs.Values {
			cl, ok := value.(*ast.CompositeLit)
			if !ok {
				continue
			}
			if sel, ok := cl.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "GroupVersion" {
				continue
			}
			for _, e := range cl.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Version" {
					if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						return v
					}
				}
			}
		}
	}
	return ""
}

// root finds the Go type of a CRD version: the type named kind, marked
// +kubebuilder:object:root=true, in the package of that group and version; without such a
// marker, the type named kind that embeds metav1.TypeMeta and metav1.ObjectMeta, which is how
// controller-gen itself finds kinds (argo-workflows' Workflow has no root marker). Several
// candidates (two packages claim the same group and version) give none: a guess would point a
// reviewer at the wrong code.
func (idx *index) root(group, version, kind string) *decl {
	var marked, embedding []*decl
	for _, p := range idx.apis {
		if p.group != group || !slices.Contains(p.versions, version) {
			continue
		}
		if d := p.types[kind]; d != nil {
			if _, ok := find(d.markers, "kubebuilder:object:root"); ok {
				marked = append(marked, d)
			} else if embedsObjectMeta(d) {
				embedding = append(embedding, d)
			}
		}
	}
	found := marked
	if len(found) == 0 {
		found = embedding
	}
	if len(found) != 1 {
		return nil
	}
	return found[0]
}

// embedsObjectMeta reports a struct type that embeds metav1.TypeMeta and metav1.ObjectMeta (a
// Kubernetes object, as controller-gen's FindKubeKinds tells one).
func embedsObjectMeta(d *decl) bool {
	st, ok := d.spec.Type.(*ast.StructType)
	if !ok {
		return false
	}
	has := map[string]bool{}
	for _, f := range st.Fields.List {
		if len(f.Names) > 0 {
			continue
		}
		sel, ok := deref(f.Type).(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if id, ok := sel.X.(*ast.Ident); ok && d.file.imports[id.Name] == "k8s.io/apimachinery/pkg/apis/meta/v1" {
			has[sel.Sel.Name] = true
		}
	}
	return has["TypeMeta"] && has["ObjectMeta"]
}

// stringConsts records the constants of a declaration whose value is a string literal.
func stringConsts(gd *ast.GenDecl, into map[string]string) {
	for _, s := range gd.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok || len(vs.Names) != len(vs.Values) {
			continue
		}
		for i, value := range vs.Values {
			if lit, ok := value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil {
					into[vs.Names[i].Name] = v
				}
			}
		}
	}
}
