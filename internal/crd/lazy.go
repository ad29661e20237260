package crd

import (
	"hash/maphash"
	"reflect"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// lazyFile is a file whose documents' YAML trees Shed dropped, read and parsed again, once, when
// a finding must be placed in one of them or its text compared with another copy's.
type lazyFile struct {
	once  sync.Once
	file  string
	load  func() ([]byte, error)
	roots map[lazyDoc]*yaml.Node
}

// lazyDoc is one document of a lazyFile, known by where it starts and its name.
type lazyDoc struct {
	line int
	name string
}

// lazyTree is what parses a dropped tree again.
type lazyTree struct {
	file *lazyFile
	doc  lazyDoc
}

// tree is the document's YAML tree, parsed again if Shed dropped it; nil if the file cannot be
// read again (its findings are then placed at the document's first line).
func (c *CRD) tree() *yaml.Node {
	if c.lazy == nil {
		return c.root
	}
	f := c.lazy.file
	f.once.Do(func() {
		f.roots = map[lazyDoc]*yaml.Node{}
		data, err := f.load()
		if err != nil {
			return
		}
		for _, d := range Read(f.file, data, false).CRDs {
			f.roots[lazyDoc{d.Line, d.Name}] = d.root
		}
	})
	return f.roots[c.lazy.doc]
}

// Shed drops the YAML trees of crds, documents of file, which load reads again (the same text)
// should a tree be needed. The definitions of files a change leaves alone are read to tell
// their copies of changed CRDs apart, and are compared with nothing: a release manifest's trees
// and text take several times the memory of its definitions, and a repository keeps dozens of
// them (cloudnative-pg: 44 files, 300 CRD documents). A copy of one of file's documents under
// another name that shares its tree (the same text in two files, parsed once) shares what
// comes back too. Documents moved (Relocate) or patched, and other files' own documents, keep
// their trees: the text is not what they hold.
func Shed(file string, load func() ([]byte, error), crds []*CRD) {
	f := &lazyFile{file: file, load: load}
	own := map[*yaml.Node]*lazyTree{}
	for _, c := range crds {
		if c.File == file && sheddable(c) {
			own[c.root] = &lazyTree{file: f, doc: lazyDoc{c.Line, c.Name}}
		}
	}
	for _, c := range crds {
		if l, ok := own[c.root]; ok && sheddable(c) && c.Line == l.doc.line {
			c.lazy, c.root = l, nil
		}
	}
}

// sheddable reports whether Shed may drop a document's tree: it holds one, of its own text.
func sheddable(c *CRD) bool {
	return c.root != nil && c.lazy == nil && c.PatchedBy == "" && !c.relocated
}

// shapeSeed keys the documents' shapes for one process; shapes are never stored.
var shapeSeed = maphash.MakeSeed()

// shapeOf hashes what sameNode compares of the tree under n, lines counted from start: equal
// trees hash equal, so two documents of different shapes are told apart without their trees.
func shapeOf(n *yaml.Node, start int) uint64 {
	var h maphash.Hash
	h.SetSeed(shapeSeed)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		var b [8 * 5]byte
		put := func(i, v int) {
			for k := range 8 {
				b[i*8+k] = byte(uint64(v) >> (8 * k))
			}
		}
		put(0, int(n.Kind))
		put(1, int(n.Style))
		put(2, n.Column)
		put(3, n.Line-start)
		put(4, len(n.Content))
		h.Write(b[:])
		for _, s := range [...]string{n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment} {
			h.WriteString(s)
			h.WriteByte(0)
		}
		// An alias is hashed as one, not through what it names: aliases of aliases would make
		// the walk as long as the text they expand to.
		if n.Alias != nil {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
		for _, k := range n.Content {
			walk(k)
		}
	}
	walk(n)
	return h.Sum64()
}

// ShareObject makes c hold d's Object when both documents decode to the same definition
// (release manifests repeat a CRD unchanged from one release to the next), so that one copy of
// it is kept; it reports whether they do. Documents of different shapes are not compared.
func (c *CRD) ShareObject(d *CRD) bool {
	if c.shape != d.shape || c.Object == nil || d.Object == nil || !reflect.DeepEqual(c.Object, d.Object) {
		return false
	}
	c.Object = d.Object
	return true
}
