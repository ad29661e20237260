package crd

import (
	"bytes"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// Path addresses a node of a CRD document. Each segment is a mapping key (string), a sequence
// index (int), an Item (the sequence item equal to a JSON value) or an ItemWith (the sequence
// item whose mapping has Key: Value).
type Path []any

// Item selects the sequence item whose value encodes to this JSON.
type Item struct{ JSON []byte }

// StringItem selects the sequence item that is the string s.
func StringItem(s string) Item { return Item{JSON: appendJSONString(nil, s)} }

// ItemWith selects the sequence item that is a mapping with Key set to the string Value.
type ItemWith struct{ Key, Value string }

// Join returns a new path of p followed by segs; p itself is never changed.
func (p Path) Join(segs ...any) Path {
	out := make(Path, 0, len(p)+len(segs))
	return append(append(out, p...), segs...)
}

// LineOf returns the line of the node at p: for a mapping key, the key's own line. Where the path
// leaves the document (the key is not there), it returns the line of the deepest node that is,
// so every location names a real line.
func (c *CRD) LineOf(p Path) int {
	line, _ := lookup(c.tree(), c.Line, p)
	return line
}

// Has reports whether the whole path exists in the document.
func (c *CRD) Has(p Path) bool {
	_, ok := lookup(c.tree(), c.Line, p)
	return ok
}

// lookup follows p from root; line is the document's own line, returned when nothing matches.
func lookup(root *yaml.Node, line int, p Path) (int, bool) {
	if root == nil {
		return line, false
	}
	n := root
	for _, seg := range p {
		next, nextLine := step(resolveAlias(n), seg)
		if next == nil {
			return line, false
		}
		n, line = next, nextLine
	}
	return line, true
}

var segmentRE = regexp.MustCompile(`([^.\[\]]+)|\[([^\]]*)\]`)

// FieldPath turns an API server field path (spec.ports[0].name, properties[spec]) into a Path.
func FieldPath(s string) Path {
	var p Path
	for _, m := range segmentRE.FindAllStringSubmatch(s, -1) {
		if m[1] != "" {
			p = append(p, m[1])
			continue
		}
		if i, err := strconv.Atoi(m[2]); err == nil {
			p = append(p, i)
		} else {
			p = append(p, m[2])
		}
	}
	return p
}

// step follows one path segment from n, returning the node and the line that names it.
func step(n *yaml.Node, seg any) (*yaml.Node, int) {
	switch s := seg.(type) {
	case string:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s {
					return n.Content[i+1], n.Content[i].Line
				}
			}
		}
	case int:
		if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
			return n.Content[s], n.Content[s].Line
		}
	case Item:
		if n.Kind == yaml.SequenceNode {
			for _, it := range n.Content {
				if j, err := toJSON(it); err == nil && bytes.Equal(j, s.JSON) {
					return it, it.Line
				}
			}
		}
	case ItemWith:
		if n.Kind == yaml.SequenceNode {
			for _, it := range n.Content {
				if m := resolveAlias(it); m.Kind == yaml.MappingNode && scalarAt(m, s.Key) == s.Value {
					return it, it.Line
				}
			}
		}
	}
	return nil, 0
}

// VersionPath is the path of the spec.versions item named v. For a v1beta1 CRD with only
// spec.version it is that key.
func (c *CRD) VersionPath(v string) Path {
	if spec := child(c.tree(), "spec"); spec != nil && child(spec, "versions") == nil && scalarAt(spec, "version") != "" {
		return Path{"spec", "version"}
	}
	return Path{"spec", "versions", ItemWith{"name", v}}
}

// SchemaPath is the path of version v's openAPIV3Schema, which v1beta1 CRDs may also keep once
// for all versions under spec.validation.
func (c *CRD) SchemaPath(v string) Path {
	return c.perVersion(v, "schema", "openAPIV3Schema", "validation")
}

// SubresourcesPath is the path of version v's subresources (or v1beta1's spec.subresources).
func (c *CRD) SubresourcesPath(v string) Path {
	return c.perVersion(v, "subresources", "", "subresources")
}

func (c *CRD) perVersion(v, key, sub, topLevel string) Path {
	own := Path{"spec", "versions", ItemWith{"name", v}, key}
	if sub != "" {
		own = append(own, sub)
	}
	if c.APIVersion == GroupVersionV1beta1 && !c.Has(own[:4]) {
		if spec := child(c.tree(), "spec"); spec != nil && child(spec, topLevel) != nil {
			top := Path{"spec", topLevel}
			if sub != "" {
				top = append(top, sub)
			}
			return top
		}
	}
	return own
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolveAlias(n.Content[i+1])
		}
	}
	return nil
}

func scalarAt(n *yaml.Node, key string) string {
	if c := child(n, key); c != nil && c.Kind == yaml.ScalarNode {
		return c.Value
	}
	return ""
}

func keyLine(n *yaml.Node, key string, fallback int) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return fallback
}
