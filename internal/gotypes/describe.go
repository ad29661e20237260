package gotypes

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"slices"
	"sort"
	"strings"

	"github.com/crdguard/crdguard/internal/k8stypes"
)

// special are the types whose schema controller-gen writes by hand rather than from their Go
// structure, by import path and name.
var special = map[string]string{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   k8stypes.KindIntOrString,
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": k8stypes.KindIntOrString,
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       k8stypes.KindString,
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":  k8stypes.KindString,
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":   k8stypes.KindString,
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   k8stypes.KindAny,
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    k8stypes.KindAny,
	"k8s.io/apimachinery/pkg/types.UID":               k8stypes.KindString,
	"k8s.io/apimachinery/pkg/types.NodeName":          k8stypes.KindString,
	"k8s.io/apimachinery/pkg/apis/meta/v1.Fields":     k8stypes.KindAny,
}

// Describe reads the exported struct types of the packages in dirs (folders of the tree) and
// of every type they use, as the schema controller-gen writes for them. key names a package
// folder in type keys (core/v1 for k8s.io/api/core/v1). A +default= marker whose value is not
// JSON (nor ref(Const) of a string constant) is an error: the data would be wrong silently.
func Describe(t Tree, dirs []string, key func(dir string) string) ([]*k8stypes.Type, error) {
	d := &describer{idx: newIndex(t), key: key, types: map[string]*k8stypes.Type{}, refs: map[string]bool{}, inline: map[string]bool{}}
	for _, dir := range dirs {
		p := d.idx.load(dir)
		if p == nil {
			return nil, fmt.Errorf("no Go package in %s", dir)
		}
		names := make([]string, 0, len(p.types))
		for name, decl := range p.types {
			if _, ok := decl.spec.Type.(*ast.StructType); ok && ast.IsExported(name) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if _, err := d.describe(p.types[name]); err != nil {
				return nil, err
			}
		}
	}
	out := make([]*k8stypes.Type, 0, len(d.types))
	count := map[string]int{}
	for _, ty := range d.types {
		ty.Inline = d.inline[ty.Key] && !d.refs[ty.Key]
		ty.Root = hasField(ty, "apiVersion") && hasField(ty, "kind")
		out = append(out, ty)
		count[ty.Name]++
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	for _, ty := range out {
		if count[ty.Name] > 1 {
			ty.Name = ty.Key
		}
	}
	nameIn(out)
	return out, nil
}

// nameIn turns each inline field's declaring type into the name messages use: the type
// itself (Volume's configMap is VolumeSource.configMap), or, for an inline-only copy of another
// type (EphemeralContainerCommon is Container's fields), that type, so that one change of
// Container.image is one change in containers and ephemeralContainers alike.
func nameIn(types []*k8stypes.Type) {
	byKey := map[string]*k8stypes.Type{}
	sig := map[string]*k8stypes.Type{} // fields → the first non-inline type with them
	for _, ty := range types {
		byKey[ty.Key] = ty
		if !ty.Inline {
			k := signature(ty)
			if _, ok := sig[k]; !ok {
				sig[k] = ty
			}
		}
	}
	for _, ty := range types {
		for i := range ty.Fields {
			f := &ty.Fields[i]
			if f.In == "" {
				continue
			}
			in := byKey[f.In]
			if in == nil { // a type of a package read only for what it names (meta/v1.TypeMeta)
				f.In = f.In[strings.LastIndex(f.In, ".")+1:]
				continue
			}
			if same, ok := sig[signature(in)]; ok && in.Inline {
				in = same
			}
			f.In = in.Name
		}
	}
}

// signature is a type's fields as JSON, without where they are declared.
func signature(ty *k8stypes.Type) string {
	fs := make([]k8stypes.Field, len(ty.Fields))
	for i, f := range ty.Fields {
		f.In = ""
		fs[i] = f
	}
	b, _ := json.Marshal(fs)
	return string(b)
}

type describer struct {
	idx    *index
	key    func(dir string) string
	types  map[string]*k8stypes.Type
	refs   map[string]bool // types used as a field's (or item's) type
	inline map[string]bool // types embedded inline
}

func (d *describer) keyOf(dc *decl) string { return d.key(dc.file.pkg.dir) + "." + dc.name }

// describe records a struct type and, through its fields, the types it uses.
func (d *describer) describe(dc *decl) (*k8stypes.Type, error) {
	k := d.keyOf(dc)
	if ty, ok := d.types[k]; ok {
		return ty, nil
	}
	ty := &k8stypes.Type{Key: k, Name: dc.name}
	d.types[k] = ty
	st, ok := dc.spec.Type.(*ast.StructType)
	if !ok {
		return nil, fmt.Errorf("%s is not a struct", k)
	}
	fields, err := d.fields(st, dc.file, 0)
	if err != nil {
		return nil, err
	}
	ty.Fields = fields
	if m, ok := find(dc.markers, "structType"); ok && m.text == "structType=atomic" {
		ty.MapType = "atomic" // controller-gen writes x-kubernetes-map-type: atomic
	}
	if len(fields) >= k8stypes.MinStandalone {
		for i := range fields {
			fields[i].Doc = "" // the structure tells the type; its fields' docs are not needed
		}
	}
	if len(fields) < k8stypes.MinStandalone && dc.doc != nil {
		// Too few properties to tell the type by its structure: its doc comment, which
		// controller-gen copies into the description of the items of a list of it, is the
		// fingerprint that does.
		ty.Doc = k8stypes.NormalDoc(docText(dc.doc))
	}
	return ty, nil
}

// docText is a doc comment's text without its marker lines, as controller-gen reads it.
func docText(cg *ast.CommentGroup) string {
	var b strings.Builder
	for _, line := range strings.Split(cg.Text(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "+") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// fields lists a struct's properties, inline embedded structs flattened as encoding/json does.
func (d *describer) fields(st *ast.StructType, in *file, depth int) ([]k8stypes.Field, error) {
	if depth > 8 {
		return nil, fmt.Errorf("inline embedding deeper than 8 levels in %s", in.name)
	}
	var out []k8stypes.Field
	for _, f := range st.Fields.List {
		jsonName, skip, inlined := jsonField(f)
		if skip {
			continue
		}
		if inlined {
			dc := d.declOf(f.Type, in)
			if dc == nil {
				continue // another module's inline type the tree does not hold
			}
			d.inline[d.keyOf(dc)] = true
			inner, ok := dc.spec.Type.(*ast.StructType)
			if !ok {
				continue
			}
			more, err := d.fields(inner, dc.file, depth+1)
			if err != nil {
				return nil, err
			}
			for i := range more {
				more[i].In = cmpOr(more[i].In, d.keyOf(dc)) // the innermost type declares it
			}
			out = append(out, more...)
			continue
		}
		var props []string
		if len(f.Names) == 0 {
			props = []string{jsonName}
		}
		for _, id := range f.Names {
			if !id.IsExported() {
				continue
			}
			props = append(props, cmpOr(jsonName, id.Name))
		}
		if len(props) == 0 {
			continue
		}
		shape, err := d.shape(f.Type, in)
		if err != nil {
			return nil, err
		}
		base := k8stypes.Field{Shape: shape}
		if f.Doc != nil {
			base.Doc = k8stypes.NormalDoc(docText(f.Doc))
		}
		for _, m := range append(markersOf(in.idx.fset, f.Doc), markersOf(in.idx.fset, f.Comment)...) {
			if v, ok := m.value("default"); ok {
				raw, err := defaultValue(v, in.pkg)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", m.file, m.line, err)
				}
				base.Default = raw
			}
			// controller-tools honours +k8s:listType and +k8s:listMapKey as aliases since
			// d47d5fa (2026-05, after v0.21.0); k8s.io/api writes them beside the classic
			// markers, with the same values. A key given by both is one key.
			if v, ok := m.value("listType"); ok {
				base.ListType = v
			} else if v, ok := m.value("k8s:listType"); ok {
				base.ListType = v
			}
			if m.text == "mapType=atomic" {
				base.MapType = "atomic" // controller-gen writes x-kubernetes-map-type: atomic
			}
			if m.text == "k8s:immutable" {
				// controller-gen (v0.21.0 on) writes CEL rules for it; the gated
				// +k8s:alpha(since: …)=+k8s:immutable form is no marker of its.
				base.Immutable = true
			}
			v, ok := m.value("listMapKey")
			if !ok {
				v, ok = m.value("k8s:listMapKey")
			}
			if ok && !slices.Contains(base.ListMapKeys, v) {
				base.ListMapKeys = append(base.ListMapKeys, v)
			}
		}
		for _, p := range props {
			fd := base
			fd.JSON = p
			out = append(out, fd)
		}
	}
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// defaultValue reads a +default= value: JSON, or ref(Name) of one of the package's string
// constants.
func defaultValue(v string, p *pkg) (json.RawMessage, error) {
	if name, ok := strings.CutPrefix(v, "ref("); ok && strings.HasSuffix(name, ")") {
		name = strings.TrimSuffix(name, ")")
		c, ok := p.consts[name]
		if !ok {
			return nil, fmt.Errorf("+default=%s: no string constant %s in %s", v, name, p.dir)
		}
		b, _ := json.Marshal(c)
		return b, nil
	}
	if !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("+default=%s is not JSON", v)
	}
	var buf json.RawMessage
	_ = json.Unmarshal([]byte(v), &buf)
	b, _ := json.Marshal(buf) // compact
	return b, nil
}

// declOf finds the declaration a type expression names, through pointers.
func (d *describer) declOf(expr ast.Expr, in *file) *decl {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
			continue
		case *ast.Ident:
			return in.pkg.types[e.Name]
		case *ast.SelectorExpr:
			return in.lookup(e)
		}
		return nil
	}
}

// importPath is the Go import path of a package folder of the tree.
func (d *describer) importPath(p *pkg) string {
	for _, m := range d.idx.modules {
		if m.dir == "" || p.dir == m.dir || strings.HasPrefix(p.dir, m.dir+"/") {
			return strings.TrimSuffix(m.path+"/"+strings.TrimPrefix(strings.TrimPrefix(p.dir, m.dir), "/"), "/")
		}
	}
	return p.dir
}

// shape is the schema a type expression gives.
func (d *describer) shape(expr ast.Expr, in *file) (k8stypes.Shape, error) {
	for range 32 {
		switch e := deref(expr).(type) {
		case *ast.ArrayType:
			if id, ok := e.Elt.(*ast.Ident); ok && id.Name == "byte" {
				return k8stypes.Shape{Kind: k8stypes.KindString}, nil // base64
			}
			return d.container(k8stypes.KindArray, e.Elt, in)
		case *ast.MapType:
			return d.container(k8stypes.KindMap, e.Value, in)
		case *ast.Ident:
			if kind, ok := predeclared(e.Name); ok && in.pkg.types[e.Name] == nil {
				return k8stypes.Shape{Kind: kind}, nil
			}
			dc := in.pkg.types[e.Name]
			if dc == nil {
				return k8stypes.Shape{Kind: k8stypes.KindAny}, nil
			}
			if kind, ok := special[d.importPath(in.pkg)+"."+e.Name]; ok {
				return k8stypes.Shape{Kind: kind}, nil
			}
			if s, ok, err := d.named(dc); ok || err != nil {
				return s, err
			}
			expr, in = dc.spec.Type, dc.file
			continue
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				if kind, ok := special[in.imports[x.Name]+"."+e.Sel.Name]; ok {
					return k8stypes.Shape{Kind: kind}, nil
				}
			}
			dc := in.lookup(e)
			if dc == nil {
				return k8stypes.Shape{Kind: k8stypes.KindAny}, nil
			}
			if s, ok, err := d.named(dc); ok || err != nil {
				return s, err
			}
			expr, in = dc.spec.Type, dc.file
			continue
		}
		return k8stypes.Shape{Kind: k8stypes.KindAny}, nil // interfaces, anonymous structs
	}
	return k8stypes.Shape{Kind: k8stypes.KindAny}, nil
}

// named is the shape of a named struct type: an object of that type.
func (d *describer) named(dc *decl) (k8stypes.Shape, bool, error) {
	if _, ok := dc.spec.Type.(*ast.StructType); !ok {
		return k8stypes.Shape{}, false, nil
	}
	ty, err := d.describe(dc)
	if err != nil {
		return k8stypes.Shape{}, true, err
	}
	d.refs[ty.Key] = true
	return k8stypes.Shape{Kind: k8stypes.KindObject, Ref: ty.Key}, true, nil
}

func (d *describer) container(kind string, elem ast.Expr, in *file) (k8stypes.Shape, error) {
	e, err := d.shape(elem, in)
	if err != nil {
		return k8stypes.Shape{}, err
	}
	return k8stypes.Shape{Kind: kind, Elem: &e}, nil
}

// predeclared is the schema kind of a predeclared Go type.
func predeclared(name string) (string, bool) {
	switch name {
	case "string":
		return k8stypes.KindString, true
	case "bool":
		return k8stypes.KindBoolean, true
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "byte", "rune", "uintptr":
		return k8stypes.KindInteger, true
	case "float32", "float64":
		return k8stypes.KindNumber, true
	}
	return "", false
}

func hasField(t *k8stypes.Type, name string) bool {
	for _, f := range t.Fields {
		if f.JSON == name {
			return true
		}
	}
	return false
}
