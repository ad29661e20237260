package gotypes

import (
	"go/ast"
	"strings"
	"sync"
)

// builtinModules are the import paths whose types k8stypes describes, each with the part its
// keys drop (k8s.io/api/core/v1.LocalObjectReference is core/v1.LocalObjectReference).
var builtinModules = []string{"k8s.io/api/", "k8s.io/apimachinery/pkg/apis/"}

// Types is one side's Go sources as a fact for the rules (crd.GoTypes): the built-in type a
// schema node's Go field is declared with. The sources are opened and indexed on the first
// question only (most comparisons never ask one), and answers are remembered; it is safe for
// concurrent use, as CRDs are compared in parallel.
type Types struct {
	open func() (Tree, error)

	mu      sync.Mutex
	tree    Tree
	err     error
	idx     *index
	opened  bool
	answers map[[4]string]string
}

// NewTypes is the Go sources open gives, read when first asked; a nil tree or an error means
// the side has none.
func NewTypes(open func() (Tree, error)) *Types {
	return &Types{open: open, answers: map[[4]string]string{}}
}

// Builtin is the k8stypes key of the k8s.io/api (or apimachinery meta) type that declares the
// node at path of the kind's version (see crd.GoTypes), "" when the sources do not say so.
func (t *Types) Builtin(group, version, kind, path string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := [4]string{group, version, kind, path}
	if a, ok := t.answers[q]; ok {
		return a
	}
	t.openLocked()
	a := ""
	if t.idx != nil {
		a = builtinAt(t.idx, group, version, kind, path)
	}
	t.answers[q] = a
	return a
}

// Sources are the side's Go files, read once for the rules' questions and the placement of
// findings alike (nil when the side has none), and the error reading them gave.
func (t *Types) Sources() (Tree, error) {
	if t == nil {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.openLocked()
	return t.tree, t.err
}

// index is the sources' index (nil when the side has none), built once. The walks of Map use it
// after the comparisons are done, so without t.mu.
func (t *Types) index() *index {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.openLocked()
	return t.idx
}

// openLocked reads and indexes the sources the first time it is called; t.mu is held.
func (t *Types) openLocked() {
	if t.opened {
		return
	}
	t.opened = true
	if t.tree, t.err = t.open(); t.err == nil && t.tree != nil {
		t.idx = newIndex(t.tree)
	}
}

// builtinAt walks a kind's Go types along a schema path to the field (or items, or values)
// that generates the node, and names the built-in type it is declared with. A path that goes
// on inside another module's type (.spec.template.spec of a PodTemplateSpec) has no field of
// the repository behind it: the place of such a node is its recognised parent's to give.
func builtinAt(idx *index, group, version, kind, path string) string {
	root := idx.root(group, version, kind)
	segs, ok := splitPath(path)
	if root == nil || !ok || len(segs) == 0 {
		return ""
	}
	n, end := walk(root, segs)
	if end != whole {
		return ""
	}
	return builtinKey(n.expr, n.in)
}

// builtinKey follows a type expression through the repository's own named types (a defined
// type or an alias of a built-in type has the built-in type's schema) to another module's
// type, and gives its key when k8stypes describes that module; "" for anything else (a
// project's own struct, a scalar, a list, a type of another module such as fluxcd's
// meta.LocalObjectReference).
func builtinKey(expr ast.Expr, in *file) string {
	for range 32 { // named types can refer to each other; a cycle ends here
		switch e := deref(expr).(type) {
		case *ast.Ident:
			d := in.pkg.types[e.Name]
			if d == nil {
				return ""
			}
			expr, in = d.spec.Type, d.file
		case *ast.SelectorExpr:
			if d := in.lookup(e); d != nil {
				expr, in = d.spec.Type, d.file
				continue
			}
			id, ok := e.X.(*ast.Ident)
			if !ok {
				return ""
			}
			for _, prefix := range builtinModules {
				if rest, ok := strings.CutPrefix(in.imports[id.Name], prefix); ok {
					return rest + "." + e.Sel.Name
				}
			}
			return ""
		default:
			return ""
		}
	}
	return ""
}
