package crd

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// maxListDepth bounds how deep lists inside lists are opened: kubectl flattens nested lists, and
// no real file nests them more than once.
const maxListDepth = 8

// flattenLists returns the documents kubectl applies for the parsed documents of a file: each
// document as it is, except a list, which stands for its items. apimachinery's unstructured
// decoder takes every object with an items key for a list, whatever its kind (List,
// CustomResourceDefinitionList, …), and kubectl apply, create and the server-side apply send
// each item, never the list. An item with neither kind nor apiVersion takes the list's kind
// without its List suffix and the list's apiVersion, as that decoder does, so a
// CustomResourceDefinitionList's bare items are CRDs (in nested lists too, which kubectl may
// refuse: reading a CRD too many never hides one). Reading the list as one document would
// skip the CRDs it holds: a silent pass.
func flattenLists(docs []*yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for _, doc := range docs {
		if len(doc.Content) == 0 {
			continue
		}
		out = appendItems(out, doc, resolveAlias(doc.Content[0]), 0)
	}
	return out
}

// appendItems appends the documents a node stands for.
func appendItems(out []*yaml.Node, doc, root *yaml.Node, depth int) []*yaml.Node {
	items := child(root, "items")
	if items == nil || depth >= maxListDepth || (items.Kind != yaml.SequenceNode && !isNull(items)) {
		return append(out, doc)
	}
	for _, item := range items.Content {
		item = resolveAlias(item)
		if item.Kind != yaml.MappingNode {
			continue // kubectl refuses the list; it holds nothing crdguard could compare
		}
		if child(item, "kind") == nil && child(item, "apiVersion") == nil {
			item = withKind(item, root)
		}
		wrapped := &yaml.Node{Kind: yaml.DocumentNode, Line: item.Line, Column: item.Column, Content: []*yaml.Node{item}}
		out = appendItems(out, wrapped, item, depth+1)
	}
	return out
}

// withKind is a copy of a list's bare item with the kind the list names (without its List
// suffix) and the list's own apiVersion node, so positions point at what the user wrote.
func withKind(item, list *yaml.Node) *yaml.Node {
	var content []*yaml.Node
	for i := 0; i+1 < len(list.Content); i += 2 {
		switch k, v := list.Content[i], list.Content[i+1]; k.Value {
		case "kind":
			bare := *v
			bare.Value = strings.TrimSuffix(v.Value, "List")
			content = append(content, k, &bare)
		case "apiVersion":
			content = append(content, k, v)
		}
	}
	c := *item
	c.Content = append(content, item.Content...)
	return &c
}
