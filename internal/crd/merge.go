package crd

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// expandMerges rewrites every mapping of a document that holds YAML merge keys (`<<: *anchor`,
// `<<: [*a, *b]`) into the plain mapping the API server receives. kubectl and the API server read
// YAML through sigs.k8s.io/yaml, that is go-yaml v2, which applies a mapping's entries in document
// order: a merge sets every key of the merged mapping (of a list of mappings, the earlier ones
// winning), a later key replaces an earlier one, and values are never merged deeper. The merged
// nodes are shared, not copied, so each keeps the line it was written on.
func expandMerges(doc *yaml.Node) *nodeError {
	e := merger{done: map[*yaml.Node]bool{}}
	return e.walk(doc, 0)
}

// hasMergeKeys reports whether a file may hold merge keys: each is written `<<`, so a file
// without one is left as parsed (expanding walks every node of the document).
func hasMergeKeys(data []byte) bool { return bytes.Contains(data, []byte("<<")) }

type merger struct {
	// done are the nodes already expanded: an anchored node is walked once, however often it is
	// aliased, so a document cannot make the expansion cost more than its size.
	done map[*yaml.Node]bool
}

func (m merger) walk(n *yaml.Node, depth int) *nodeError {
	if n == nil || m.done[n] {
		return nil
	}
	if depth > MaxDepth {
		return &nodeError{n.Line, fmt.Sprintf("nesting is deeper than %d levels", MaxDepth)}
	}
	m.done[n] = true
	switch n.Kind {
	case yaml.AliasNode:
		return m.walk(n.Alias, depth+1)
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := m.walk(c, depth+1); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for _, c := range n.Content {
			if err := m.walk(c, depth+1); err != nil {
				return err
			}
		}
		return m.expand(n)
	}
	return nil
}

// isMergeKey reports whether a key is YAML's merge key: go-yaml v2 takes a plain `<<` or one
// tagged !!merge.
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "!!merge" || k.Style == 0 && k.Tag == "")
}

// expand replaces n's content by the entries the merge keys stand for; n's children (and so the
// merged mappings) are already expanded.
func (m merger) expand(n *yaml.Node) *nodeError {
	has := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			has = true
			break
		}
	}
	if !has {
		return nil
	}
	var out mergedEntries
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			out.set(k, v)
			continue
		}
		v = resolveAlias(v)
		switch v.Kind {
		case yaml.MappingNode:
			out.setAll(v)
		case yaml.SequenceNode:
			// go-yaml v2 steps backwards through the list, so the earlier mappings win.
			for j := len(v.Content) - 1; j >= 0; j-- {
				item := v.Content[j]
				if item.Kind == yaml.AliasNode {
					item = resolveAlias(item)
				}
				if item.Kind != yaml.MappingNode {
					return &nodeError{item.Line, "map merge requires a mapping or a list of mappings after <<"}
				}
				out.setAll(item)
			}
		default:
			return &nodeError{k.Line, "map merge requires a mapping or a list of mappings after <<"}
		}
	}
	n.Content = out.content
	return nil
}

// mergedEntries is a mapping under construction: each key keeps its first position and its last
// value (with the key node that set it), as a Go map filled in document order would.
type mergedEntries struct {
	content []*yaml.Node
	at      map[string]int
}

func (e *mergedEntries) set(k, v *yaml.Node) {
	key := resolveAlias(k)
	if e.at == nil {
		e.at = map[string]int{}
	}
	// Keys that are not scalars are left for the encoder to refuse, in place.
	if key.Kind == yaml.ScalarNode {
		if i, ok := e.at[key.Value]; ok {
			e.content[i], e.content[i+1] = k, v // the key's line is where the value was set
			return
		}
		e.at[key.Value] = len(e.content)
	}
	e.content = append(e.content, k, v)
}

func (e *mergedEntries) setAll(mapping *yaml.Node) {
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		e.set(mapping.Content[i], mapping.Content[i+1])
	}
}

// guessName is the metadata.name a document states, read before it could be expanded, so a
// problem can still name the CRD it concerns.
func guessName(doc *yaml.Node) string {
	if len(doc.Content) == 0 {
		return ""
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return ""
	}
	if meta := child(root, "metadata"); meta != nil && meta.Kind == yaml.MappingNode { // child resolves aliases
		return scalarAt(meta, "name")
	}
	return ""
}
