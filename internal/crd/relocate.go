package crd

import yaml "go.yaml.in/yaml/v3"

// Relocate moves a CRD read from generated text (a Helm chart's rendered output) to the file
// and lines the text was generated from: line maps a line of the generated text to a line of
// file. Every position the CRD carries (its document, each key, its unknown keys) is moved.
func (c *CRD) Relocate(file string, line func(int) int) {
	c.File = file
	c.Line = line(c.Line)
	for i := range c.Unknown {
		c.Unknown[i].Line = line(c.Unknown[i].Line)
	}
	root := c.tree()
	relocateNodes(root, line, map[*yaml.Node]bool{})
	c.root, c.lazy, c.relocated = root, nil, true
	if root != nil {
		c.shape = shapeOf(root, c.Line)
	}
}

// relocateNodes rewrites the line of every node under n once (aliases share nodes).
func relocateNodes(n *yaml.Node, line func(int) int, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	n.Line = line(n.Line)
	for _, k := range n.Content {
		relocateNodes(k, line, seen)
	}
	relocateNodes(n.Alias, line, seen)
}
