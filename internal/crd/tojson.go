package crd

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Limits on one document, so hostile input costs bounded time and memory.
const (
	// MaxDepth is the deepest nesting of mappings and sequences accepted; real CRD schemas stay
	// well under 100 levels.
	MaxDepth = 1000
	// MaxExpandedNodes bounds the nodes produced once aliases are expanded (a "billion laughs"
	// document has few nodes but expands to billions). The largest real CRD in the corpus has
	// about 60,000; every node decoded costs memory.
	MaxExpandedNodes = 1_000_000
	// MaxDocuments bounds the YAML documents read from one file.
	MaxDocuments = 10_000
)

// jsonEncoder turns a YAML node tree into JSON text, resolving tags the way YAML 1.2 (and so
// the API server's own decoder for these documents) reads them.
type jsonEncoder struct {
	buf   []byte
	nodes int
	// skip are nodes written as null (decoded another way).
	skip map[*yaml.Node]bool
}

// nodeError is an encoding problem at a line of the source.
type nodeError struct {
	line int
	msg  string
}

// Error renders the problem with its line.
func (e *nodeError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func toJSON(n *yaml.Node) ([]byte, error) { return toJSONSkipping(n, nil) }

func toJSONSkipping(n *yaml.Node, skip map[*yaml.Node]bool) ([]byte, error) {
	// Most values encoded are small and kept (an enum value, a default in the decoded schema):
	// the buffer starts small and grows for whole documents.
	e := &jsonEncoder{buf: make([]byte, 0, 32), skip: skip}
	if err := e.encode(n, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

func (e *jsonEncoder) encode(n *yaml.Node, depth int) error {
	if depth > MaxDepth {
		return &nodeError{n.Line, fmt.Sprintf("nesting is deeper than %d levels", MaxDepth)}
	}
	if e.skip[n] {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	e.nodes++
	if e.nodes > MaxExpandedNodes {
		return &nodeError{n.Line, fmt.Sprintf("document expands to more than %d nodes (YAML alias bomb?)", MaxExpandedNodes)}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.encode(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return &nodeError{n.Line, "alias to an unknown anchor"}
		}
		return e.encode(n.Alias, depth+1)
	case yaml.MappingNode:
		e.buf = append(e.buf, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolveAlias(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return &nodeError{k.Line, "mapping key is not a scalar"}
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				return &nodeError{k.Line, "YAML merge key (<<) left unexpanded"}
			}
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = appendJSONString(e.buf, k.Value)
			e.buf = append(e.buf, ':')
			if err := e.encode(n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case yaml.SequenceNode:
		e.buf = append(e.buf, '[')
		for i, c := range n.Content {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.encode(c, depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	case yaml.ScalarNode:
		return e.scalar(n)
	default:
		return &nodeError{n.Line, "unexpected YAML node"}
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans. kubectl turns YAML into JSON with
// sigs.k8s.io/yaml, which follows YAML 1.1, so the API server receives `served: yes` as true;
// crdguard must read it the same way (yaml.v3 alone would say "yes" is a string).
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// yaml11Bool reports whether a node is a plain scalar YAML 1.1 reads as a boolean.
func yaml11Bool(n *yaml.Node) (value, ok bool) {
	if n.Kind != yaml.ScalarNode || n.Style != 0 || n.Tag != "!!str" && n.Tag != "" {
		return false, false
	}
	value, ok = yaml11Bools[n.Value]
	return value, ok
}

func (e *jsonEncoder) scalar(n *yaml.Node) error {
	if b, ok := yaml11Bool(n); ok {
		e.buf = strconv.AppendBool(e.buf, b)
		return nil
	}
	switch n.ShortTag() {
	case "!!null":
		e.buf = append(e.buf, "null"...)
	case "!!bool":
		v := strings.ToLower(n.Value)
		if v != "true" && v != "false" {
			return &nodeError{n.Line, fmt.Sprintf("invalid boolean %q", n.Value)}
		}
		e.buf = append(e.buf, v...)
	case "!!int":
		s := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			e.buf = strconv.AppendInt(e.buf, i, 10)
		} else if u, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			e.buf = strconv.AppendUint(e.buf, u, 10)
		} else {
			return &nodeError{n.Line, fmt.Sprintf("integer %q out of range", n.Value)}
		}
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return &nodeError{n.Line, fmt.Sprintf("number %q cannot be represented in JSON", n.Value)}
		}
		e.buf = strconv.AppendFloat(e.buf, f, 'g', -1, 64)
	default: // !!str, !!timestamp, !!binary and custom tags are text to the API server.
		e.buf = appendJSONString(e.buf, n.Value)
	}
	return nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as a JSON string, replacing invalid UTF-8 as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
