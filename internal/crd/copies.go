package crd

import yaml "go.yaml.in/yaml/v3"

// SameText reports whether c and d are the same document text at different places (a CRD that a
// project ships in several files: an install bundle, a chart copy): the same keys, values,
// styles, comments and columns, on the same lines counted from each document's start. Their
// findings then differ only by d.Line-c.Line. Documents changed by kustomize patches are never
// the same text: what is compared is not what is written.
func (c *CRD) SameText(d *CRD) bool {
	if c == nil || d == nil || c.PatchedBy != "" || d.PatchedBy != "" || c.shape != d.shape {
		return false
	}
	if c.Line == d.Line && (c.lazy != nil && c.lazy == d.lazy || c.lazy == nil && c.root != nil && c.root == d.root) {
		return true // copies of one blob share their documents (source's addUnchanged)
	}
	a, b := c.tree(), d.tree()
	return a != nil && b != nil && sameNode(a, b, c.Line, d.Line)
}

func sameNode(a, b *yaml.Node, aStart, bStart int) bool {
	if a.Kind != b.Kind || a.Tag != b.Tag || a.Value != b.Value || a.Style != b.Style ||
		a.Anchor != b.Anchor || a.Column != b.Column || a.Line-aStart != b.Line-bStart ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		len(a.Content) != len(b.Content) || (a.Alias == nil) != (b.Alias == nil) {
		return false
	}
	if a.Alias != nil && !sameNode(a.Alias, b.Alias, aStart, bStart) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i], aStart, bStart) {
			return false
		}
	}
	return true
}
