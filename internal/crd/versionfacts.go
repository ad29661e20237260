package crd

import (
	"bytes"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// VersionFacts is what one CRD document says about its versions: which it stores (the storage
// version, status.storedVersions) and which it deprecates. The storage history reads only this,
// from thousands of past revisions, so nothing else of the document is decoded.
type VersionFacts struct {
	Name       string
	Stored     []string
	Deprecated []string
}

// ReadVersionFacts returns the version facts of the CRDs of a manifest whose metadata.name is
// one of names. A document is scanned (to its name when it is another CRD); the YAML parser
// reads only what the scanner gives up on and mentions one of the names. ok is false when such
// a document does not parse: what that revision stored is unknown.
func ReadVersionFacts(data []byte, names map[string]bool) (out []VersionFacts, ok bool) {
	ok = true
	for _, doc := range splitDocuments(data) {
		if !bytes.Contains(doc, []byte(Kind)) {
			continue
		}
		if f, kind, ok := scanVersionFacts(doc, names); ok && kind != "List" {
			if kind == Kind && names[f.Name] {
				out = append(out, f)
			}
			continue
		}
		if !mentionsAny(doc, names) {
			continue
		}
		nodes, problems := parseDocuments("", doc)
		if len(problems) > 0 {
			ok = false
			continue
		}
		for _, n := range nodes {
			out = appendFacts(out, n, names)
		}
	}
	return out, ok
}

func mentionsAny(doc []byte, names map[string]bool) bool {
	for n := range names {
		if bytes.Contains(doc, []byte(n)) {
			return true
		}
	}
	return false
}

// splitDocuments cuts a YAML stream at its document markers, so that a bundle's other
// documents are never parsed; a JSON file is one document.
func splitDocuments(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		line := data[i:]
		next := len(data)
		if end >= 0 {
			line, next = data[i:i+end], i+end+1
		}
		if isDocStart(line) {
			out = append(out, data[start:i])
			start = next
		}
		i = next
	}
	return append(out, data[start:])
}

// appendFacts adds the facts of one parsed document (a CRD, or a List of them).
func appendFacts(out []VersionFacts, n *yaml.Node, names map[string]bool) []VersionFacts {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	switch scalar(child(n, "kind")) {
	case "List":
		if items := child(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, it := range items.Content {
				out = appendFacts(out, it, names)
			}
		}
		return out
	case Kind:
	default:
		return out
	}
	name := scalar(child(child(n, "metadata"), "name"))
	if !names[name] {
		return out
	}
	f := VersionFacts{Name: name}
	spec := child(n, "spec")
	versions := child(spec, "versions")
	if versions != nil && versions.Kind == yaml.SequenceNode && len(versions.Content) > 0 {
		for _, v := range versions.Content {
			vn := scalar(child(v, "name"))
			if truthy(child(v, "storage")) {
				f.Stored = append(f.Stored, vn)
			}
			if truthy(child(v, "deprecated")) {
				f.Deprecated = append(f.Deprecated, vn)
			}
		}
	} else if v := scalar(child(spec, "version")); v != "" {
		f.Stored = append(f.Stored, v) // v1beta1's single version is its storage version
	}
	if sv := child(child(n, "status"), "storedVersions"); sv != nil && sv.Kind == yaml.SequenceNode {
		for _, v := range sv.Content {
			f.Stored = append(f.Stored, scalar(v))
		}
	}
	return append(out, f)
}

func scalar(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	if n = resolveAlias(n); n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func truthy(n *yaml.Node) bool {
	b, err := strconv.ParseBool(scalar(n))
	return err == nil && b
}
