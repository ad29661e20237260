package gotypes

import (
	"go/ast"
	"reflect"
	"strconv"
	"strings"
)

// node is a schema node reached by a walk: the Go type expression it is generated from, the
// file that expression is written in, the declaration a finding about it points at when no
// marker fits (the field, or the root type), and the markers that apply to it (the field's,
// most specific first; the types' are added when the expression is resolved).
type node struct {
	expr    ast.Expr
	in      *file
	file    string
	line    int
	markers []marker
	// items are the field's kubebuilder:validation:items: markers, for its items' node.
	items []marker
}

// shape is what a type expression resolves to, through pointers, named types and aliases.
type shape struct {
	st          *ast.StructType
	elem        ast.Expr // slice items or map values
	isMap       bool
	in          *file // where st or elem is written
	foreign     bool  // a type of another module (or one the walk cannot read)
	markers     []marker
	itemMarkers []marker
}

const itemsPrefix = "kubebuilder:validation:items:"

// splitItems separates kubebuilder:validation:items: markers (which apply to a slice's items,
// rewritten to the marker they stand for) from the others.
func splitItems(ms []marker) (own, items []marker) {
	for _, m := range ms {
		if rest, ok := strings.CutPrefix(m.text, itemsPrefix); ok {
			m.text = "kubebuilder:validation:" + rest
			items = append(items, m)
			continue
		}
		own = append(own, m)
	}
	return own, items
}

// deref is the type a pointer or parenthesised type expression stands for: the schema of *T
// and (T) is T's.
func deref(expr ast.Expr) ast.Expr {
	for {
		switch e := expr.(type) {
		case *ast.ParenExpr:
			expr = e.X
		case *ast.StarExpr:
			expr = e.X
		default:
			return expr
		}
	}
}

// resolve follows a type expression to a struct, slice or map, collecting the markers of the
// named types on the way (controller-gen applies a type's markers wherever it is used).
func resolve(expr ast.Expr, in *file) shape {
	var s shape
	for range 32 { // named types can refer to each other; a cycle ends here
		switch e := deref(expr).(type) {
		case *ast.StructType:
			s.st, s.in = e, in
			return s
		case *ast.ArrayType:
			if id, ok := e.Elt.(*ast.Ident); ok && id.Name == "byte" {
				return s // []byte is a base64 string
			}
			s.elem, s.in = e.Elt, in
			return s
		case *ast.MapType:
			s.elem, s.isMap, s.in = e.Value, true, in
			return s
		case *ast.Ident:
			d := in.pkg.types[e.Name]
			if d == nil {
				return s // a predeclared type: a scalar
			}
			own, items := splitItems(d.markers)
			s.markers = append(s.markers, own...)
			s.itemMarkers = append(s.itemMarkers, items...)
			expr, in = d.spec.Type, d.file
			continue
		case *ast.SelectorExpr:
			d := in.lookup(e)
			if d == nil {
				s.foreign = true
				return s
			}
			own, items := splitItems(d.markers)
			s.markers = append(s.markers, own...)
			s.itemMarkers = append(s.itemMarkers, items...)
			expr, in = d.spec.Type, d.file
			continue
		}
		s.foreign = true // interfaces, generics, functions: nothing the walk can follow
		return s
	}
	s.foreign = true
	return s
}

// lookup finds a type named pkg.Name in another package of this repository's modules.
func (f *file) lookup(sel *ast.SelectorExpr) *decl {
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil
	}
	ip, ok := f.imports[id.Name]
	if !ok {
		return nil
	}
	dir, ok := f.idx.dirOf(ip)
	if !ok {
		return nil
	}
	p := f.idx.load(dir)
	if p == nil {
		return nil
	}
	return p.types[sel.Sel.Name]
}

// segment is one step of a finding's path: a property, the items of a list ([*]) or the values
// of a map (.*).
type segment struct {
	name          string
	items, values bool
}

// splitPath reads a finding's path (.spec.ports[*].name, .spec.labels.*, .spec["a.b"]).
func splitPath(p string) ([]segment, bool) {
	var out []segment
	for p != "" && p != "." {
		switch {
		case strings.HasPrefix(p, "[*]"):
			out, p = append(out, segment{items: true}), p[3:]
		case strings.HasPrefix(p, "["):
			q, err := strconv.QuotedPrefix(p[1:])
			if err != nil || !strings.HasPrefix(p[1+len(q):], "]") {
				return nil, false
			}
			name, _ := strconv.Unquote(q)
			out, p = append(out, segment{name: name}), p[2+len(q):]
		case strings.HasPrefix(p, ".*") && (len(p) == 2 || p[2] == '.' || p[2] == '['):
			out, p = append(out, segment{values: true}), p[2:]
		case strings.HasPrefix(p, "."):
			end := strings.IndexAny(p[1:], ".[")
			if end < 0 {
				end = len(p) - 1
			}
			out, p = append(out, segment{name: p[1 : 1+end]}), p[1+end:]
		default:
			return nil, false
		}
	}
	return out, true
}

// walkEnd says how a walk ended.
type walkEnd int

const (
	// whole: the path was followed to its end.
	whole walkEnd = iota
	// atForeign: the path goes on inside another module's type; the node is the field using it.
	atForeign
	// lost: the Go types do not have the path (generated from something else): no node.
	lost
)

// walk follows a path from a root type. It returns the node the path ends at, with the
// markers of its types added; a walk that meets another module's type stops at the field
// using it.
func walk(root *decl, path []segment) (node, walkEnd) {
	// The root type's own markers come in when its name is resolved, like any type's.
	n := node{expr: ast.NewIdent(root.name), in: root.file, file: root.file.name, line: root.line}
	for _, seg := range path {
		s := resolve(n.expr, n.in)
		if s.foreign {
			return n, atForeign
		}
		switch {
		case seg.items:
			if s.elem == nil || s.isMap {
				return n, lost
			}
			n = node{expr: s.elem, in: s.in, file: n.file, line: n.line, markers: append(append([]marker{}, n.items...), s.itemMarkers...)}
		case seg.values:
			if !s.isMap {
				return n, lost
			}
			n = node{expr: s.elem, in: s.in, file: n.file, line: n.line}
		default:
			if s.st == nil {
				return n, lost
			}
			next, ok := field(s.st, s.in, seg.name, 0)
			if !ok {
				return n, lost
			}
			n = next
		}
	}
	s := resolve(n.expr, n.in)
	n.markers = append(n.markers, s.markers...)
	return n, whole
}

// field finds the struct field that generates a property, through inline embedding (a
// `json:",inline"` tag, or an embedded struct without a json name, as encoding/json does).
func field(st *ast.StructType, in *file, name string, depth int) (node, bool) {
	if depth > 8 {
		return node{}, false
	}
	var inline []*ast.Field
	for _, f := range st.Fields.List {
		jsonName, skip, inlined := jsonField(f)
		if skip {
			continue
		}
		if inlined {
			inline = append(inline, f)
			continue
		}
		if len(f.Names) == 0 { // embedded with a json name: an ordinary property
			if jsonName == name {
				return fieldNode(f, in), true
			}
			continue
		}
		for _, id := range f.Names {
			prop := jsonName
			if prop == "" {
				prop = id.Name // no json name: encoding/json uses the field's
			}
			if prop == name && id.IsExported() {
				return fieldNode(f, in), true
			}
		}
	}
	var foreign []*ast.Field
	for _, f := range inline {
		s := resolve(f.Type, in)
		if s.foreign {
			foreign = append(foreign, f)
			continue
		}
		if s.st != nil {
			if n, ok := field(s.st, s.in, name, depth+1); ok {
				return n, true
			}
		}
	}
	if len(foreign) == 1 {
		// The property comes from another module's embedded type (metav1.TypeMeta's kind): the
		// embedding field is what the repository says about it.
		n := fieldNode(foreign[0], in)
		n.expr = &ast.InterfaceType{Methods: &ast.FieldList{}} // nothing further can be followed
		n.markers = nil
		return n, true
	}
	return node{}, false
}

// fieldNode is the node a struct field generates.
func fieldNode(f *ast.Field, in *file) node {
	pos := in.idx.fset.Position(f.Pos())
	if len(f.Names) > 0 {
		pos = in.idx.fset.Position(f.Names[0].Pos())
	}
	ms := append(markersOf(in.idx.fset, f.Doc), markersOf(in.idx.fset, f.Comment)...)
	own, items := splitItems(ms)
	return node{expr: f.Type, in: in, file: pos.Filename, line: pos.Line, markers: own, items: items}
}

// jsonField reads a struct field's json tag as encoding/json does: its property name, whether
// the field is left out (json:"-"), and whether it is embedded inline (a `json:",inline"` tag,
// or an embedded struct without a json name).
func jsonField(f *ast.Field) (name string, skip, inlined bool) {
	tag := ""
	if f.Tag != nil {
		if t, err := strconv.Unquote(f.Tag.Value); err == nil {
			tag = reflect.StructTag(t).Get("json")
		}
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "-" && opts == "" {
		return "", true, false
	}
	return name, false, name == "" && (len(f.Names) == 0 || strings.Contains(","+opts+",", ",inline,"))
}
