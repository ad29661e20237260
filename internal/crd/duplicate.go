package crd

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// A key given twice in one mapping is read last-wins by the JSON decoder and first-wins by the
// line lookups, so a finding could judge one value and point at the other. kubectl apply (whose
// field validation is strict by default) and the API server's strict decoding refuse such a
// document ("key already set in map", "duplicate field"): it is invalid-crd, at the second key.

// duplicateKey finds the first key, in document order, that a mapping of the parsed (not yet
// merge-expanded) document already has. Merge keys (<<) are not compared: a key written next to
// a merge overrides the merged one, as YAML means it. Aliases are not followed: the node they
// name is checked where its anchor is.
func duplicateKey(doc *yaml.Node) *nodeError {
	type entry struct {
		n     *yaml.Node
		depth int
	}
	stack := []entry{{doc, 0}}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := e.n
		if n == nil || e.depth > MaxDepth {
			continue // decoding refuses what is too deep, with its own message
		}
		switch n.Kind {
		case yaml.MappingNode:
			if err := duplicateIn(n); err != nil {
				return err
			}
		case yaml.DocumentNode, yaml.SequenceNode:
		default:
			continue
		}
		// Pushed in reverse, so the document's first duplicate is the one reported.
		for i := len(n.Content) - 1; i >= 0; i-- {
			if c := n.Content[i]; c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode {
				stack = append(stack, entry{c, e.depth + 1})
			}
		}
	}
	return nil
}

// duplicateIn checks the keys of one mapping; small mappings (most of a schema) are compared
// pairwise, without a map.
func duplicateIn(m *yaml.Node) *nodeError {
	n := len(m.Content) / 2
	if n < 2 {
		return nil
	}
	key := func(i int) (*yaml.Node, bool) {
		k := resolveAlias(m.Content[2*i])
		return k, k.Kind == yaml.ScalarNode && !isMergeKey(k)
	}
	if n <= 16 {
		for i := 1; i < n; i++ {
			ki, ok := key(i)
			if !ok {
				continue
			}
			for j := range i {
				if kj, ok := key(j); ok && kj.Value == ki.Value {
					return duplicateError(ki, kj)
				}
			}
		}
		return nil
	}
	first := make(map[string]*yaml.Node, n)
	for i := range n {
		k, ok := key(i)
		if !ok {
			continue
		}
		if prev, seen := first[k.Value]; seen {
			return duplicateError(k, prev)
		}
		first[k.Value] = k
	}
	return nil
}

func duplicateError(again, first *yaml.Node) *nodeError {
	return &nodeError{again.Line, fmt.Sprintf("duplicate key %q in one mapping, first at line %d (kubectl apply: key %q already set in map)", again.Value, first.Line, again.Value)}
}
