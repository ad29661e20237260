package crd

import (
	"bytes"
	"strconv"
	"strings"
)

// scanVersionFacts reads a CRD document's version facts line by line, as generators write CRDs
// (block mappings and sequences, plain or quoted scalars), without building the schema: the
// storage history reads thousands of revisions, and the schema is nearly all of each. A line's
// place is its keys' path from the root, by indentation; only a few paths matter. ok is false
// when a line on such a path is anything else (a flow collection, an anchor, an alias, a tag, a
// merge or complex key), or for tabs, directives and JSON: the caller parses the document then.
// With names, a CRD whose metadata.name is not one of them is left as soon as its name is read
// (f has only the name): most documents of a bundle are other CRDs.
func scanVersionFacts(doc []byte, names map[string]bool) (f VersionFacts, kind string, ok bool) {
	var stack []scanFrame
	type version struct {
		name                string
		storage, deprecated bool
	}
	var versions []version
	var specVersion string
	last := -1 // the index of the spec.versions item read last
	// The document stays bytes: only the few lines on a fact's path become strings, so nothing
	// kept (names of CRDs and versions) holds the document's memory.
	text := doc
	for len(text) > 0 {
		raw := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			raw, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		d := 0
		for d < len(raw) && raw[d] == ' ' {
			d++
		}
		// Facts lie four keys deep at most (spec.versions[i].storage): a line below a fourth
		// frame is never read, which is nearly every line of a schema.
		if len(stack) >= 4 && d > stack[3].indent {
			continue
		}
		content := string(bytes.TrimRight(raw[d:], " \r"))
		if content == "" || content[0] == '#' {
			continue
		}
		if content[0] == '\t' || content[0] == '%' || d == 0 && strings.ContainsAny(content[:1], "{[\"'") {
			return f, "", false
		}
		if content == "-" || strings.HasPrefix(content, "- ") {
			for len(stack) > 0 && (stack[len(stack)-1].indent > d || stack[len(stack)-1].indent == d && stack[len(stack)-1].key == "") {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return f, "", false // a sequence at the root
			}
			index := stack[len(stack)-1].items
			stack[len(stack)-1].items++ // before append, which may move the stack
			stack = append(stack, scanFrame{indent: d, index: index})
			rest := strings.TrimLeft(content[1:], " ")
			if rest == "" {
				continue
			}
			switch path := scanPath(stack); {
			case path == "status.storedVersions.#":
				v, ok := plainValue(rest)
				if !ok {
					return f, "", false
				}
				f.Stored = append(f.Stored, v) // after the versions' (below)
				continue
			case strings.ContainsAny(rest[:1], "-{[&*!?|>"):
				if path == "spec.versions.#" {
					return f, "", false
				}
				continue
			}
			d += len(content) - len(rest)
			content = rest
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= d {
			stack = stack[:len(stack)-1]
		}
		key, value, isKey := cutKey(content)
		if !isKey {
			continue // a scalar's continuation line
		}
		stack = append(stack, scanFrame{indent: d, key: key})
		path := scanPath(stack)
		switch top, _, _ := strings.Cut(path, "."); {
		case strings.Count(path, ".") > 3, top != "kind" && top != "metadata" && top != "spec" && top != "status":
			continue // deep in a schema, or under a key no fact lies under
		}
		if key == "<<" || strings.HasPrefix(key, "?") || strings.ContainsAny(key, "\"'&*!") {
			return f, "", false
		}
		switch {
		case path == "kind" || path == "metadata.name" || path == "spec.version" ||
			strings.HasPrefix(path, "spec.versions.#.") && strings.Count(path, ".") == 3:
			v, ok := plainValue(value)
			if !ok {
				return f, "", false
			}
			switch path {
			case "kind":
				kind = v
			case "metadata.name":
				f.Name = v
				if names != nil && kind == Kind && !names[v] {
					return f, kind, true
				}
			case "spec.version":
				specVersion = v
			default:
				if i := stack[len(stack)-2].index; i != last {
					last = i
					versions = append(versions, version{})
				}
				cur := &versions[len(versions)-1]
				switch key {
				case "name":
					cur.name = v
				case "storage":
					cur.storage = scanBool(v)
				case "deprecated":
					cur.deprecated = scanBool(v)
				}
			}
		case path == "metadata" || path == "spec" || path == "status" || path == "spec.versions" || path == "status.storedVersions":
			if value != "" && (path != "status.storedVersions" || value != "[]") {
				return f, "", false // a flow collection, an alias or a tag where facts lie
			}
		}
	}
	var stored []string // the versions' facts come first, status.storedVersions after, as parsed
	for _, v := range versions {
		if v.storage {
			stored = append(stored, v.name)
		}
		if v.deprecated {
			f.Deprecated = append(f.Deprecated, v.name)
		}
	}
	if len(versions) == 0 && specVersion != "" {
		stored = append(stored, specVersion) // v1beta1's single version is its storage version
	}
	f.Stored = append(stored, f.Stored...)
	return f, kind, true
}

// scanFrame is a key (or, with key "", a sequence item) that the lines below it belong to.
type scanFrame struct {
	indent int
	key    string
	items  int // the items met so far below this key
	index  int // an item's index
}

// scanPath is a frame stack's path: keys joined with dots, "#" for an item.
func scanPath(stack []scanFrame) string {
	var b strings.Builder
	for i, fr := range stack {
		if i > 0 {
			b.WriteByte('.')
		}
		if fr.key == "" {
			b.WriteByte('#')
		} else {
			b.WriteString(fr.key)
		}
	}
	return b.String()
}

// cutKey splits a block mapping line into its key and value (comment removed); isKey is false
// for a line that is not "key:" or "key: value".
func cutKey(content string) (key, value string, isKey bool) {
	i := strings.Index(content, ": ")
	if i < 0 {
		if !strings.HasSuffix(content, ":") {
			return "", "", false
		}
		i = len(content) - 1
	}
	key, value = content[:i], strings.TrimSpace(content[i+1:])
	if strings.ContainsAny(key, " ") && !strings.HasPrefix(key, "?") {
		return "", "", false // a plain scalar that holds ": " further on
	}
	if j := strings.Index(value, " #"); j >= 0 {
		value = strings.TrimSpace(value[:j])
	}
	return key, value, true
}

// plainValue is a scalar's text: plain, or quoted on one line; ok is false for anything else.
func plainValue(v string) (string, bool) {
	if v == "" {
		return "", true
	}
	switch v[0] {
	case '"':
		s, err := strconv.Unquote(v)
		return s, err == nil
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return "", false
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), true
	case '{', '[', '&', '*', '!', '|', '>', '@', '`':
		return "", false
	}
	return v, true
}

// scanBool reads a boolean as sigs.k8s.io/yaml does (YAML 1.1 spellings included).
func scanBool(v string) bool {
	if b, ok := yaml11Bools[v]; ok {
		return b
	}
	b, _ := strconv.ParseBool(v)
	return b
}
