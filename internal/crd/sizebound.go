package crd

import (
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Measuring a CRD exactly (AnnotationSize, StoredSize) builds what kubectl and the API server
// build: the whole document as JSON values, or a deep copy encoded as protobuf. On a large CRD
// that is most of a run's allocation, and almost every CRD is far from both limits. The bounds
// here cost one walk without building anything; callers measure exactly only when the bounds
// leave the answer open. A bound must never be on the wrong side of the exact measure: a size
// finding the bounds wrongly rule out is lost.

// AnnotationBounds returns lo ≤ AnnotationSize() ≤ hi whenever AnnotationSize succeeds; ok is
// false when the document cannot be bounded this way (no text, a merge key left, a non-scalar
// key, too deep or too large once aliases are expanded), and the caller measures exactly.
//
// The walk sizes what encoding/json writes for the document read as JSON values: strings as
// json.Encoder escapes them (HTML characters included), null and booleans exactly, numbers
// between 1 and numberMax bytes (whole numbers become int64 or, beyond it, float64 text). The
// lower bound relies on the decoder having refused duplicate keys (decodeDocument), so every
// key of a mapping stays in the JSON object, and it leaves out the whole annotations entry,
// which the measure rewrites.
func (c *CRD) AnnotationBounds() (lo, hi int, ok bool) {
	root := c.tree()
	if root == nil {
		return 0, 0, false
	}
	var w boundWalk
	lo, hi = w.node(root, 0)
	if w.failed {
		return 0, 0, false
	}
	// The measure writes an empty annotations map where there is none (and a metadata object
	// where there is none, or where it is not an object), and adds the annotations' own keys
	// and values (each at most its JSON, which the annotations node's upper bound covers).
	const added = len(`,"metadata":{"annotations":{}}`)
	hi += len(LastAppliedAnnotation) + len("\n") + added
	lo += len(LastAppliedAnnotation) + len("\n")
	if meta := child(root, "metadata"); meta == nil || meta.Kind != yaml.MappingNode {
		lo = 0 // the measure replaces it: its size is not a floor
	} else if a := child(meta, "annotations"); a != nil {
		_, ahi := w.node(a, 0)
		if w.failed {
			return 0, 0, false
		}
		hi += ahi
		lo -= len(`,"annotations":`) + ahi // the measure drops the last-applied one and may replace the map
	}
	return max(lo, 0), hi, true
}

// numberMax is the longest text encoding/json writes for a float64 (-0.0000012345678901234567
// is 25 bytes), rounded up.
const numberMax = 32

// boundWalk sizes the JSON of a YAML node tree as toJSON, a JSON decode into Go values and
// encoding/json would write it, without writing it.
type boundWalk struct {
	nodes  int
	failed bool
}

// node returns the bounds of n's JSON; a document toJSON refuses sets failed.
func (w *boundWalk) node(n *yaml.Node, depth int) (lo, hi int) {
	if w.failed {
		return 0, 0
	}
	w.nodes++
	if depth > MaxDepth || w.nodes > MaxExpandedNodes {
		w.failed = true
		return 0, 0
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return 4, 4
		}
		return w.node(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			w.failed = true
			return 0, 0
		}
		return w.node(n.Alias, depth+1)
	case yaml.MappingNode:
		lo, hi = 2, 2
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolveAlias(n.Content[i])
			if k.Kind != yaml.ScalarNode || k.Value == "<<" && k.Tag == "!!merge" {
				w.failed = true
				return 0, 0
			}
			klo, khi := stringBounds(k.Value)
			vlo, vhi := w.node(n.Content[i+1], depth+1)
			lo += klo + 1 + vlo
			hi += khi + 1 + vhi
			if i > 0 {
				lo++
				hi++
			}
		}
		return lo, hi
	case yaml.SequenceNode:
		lo, hi = 2, 2
		for i, c := range n.Content {
			clo, chi := w.node(c, depth+1)
			lo += clo
			hi += chi
			if i > 0 {
				lo++
				hi++
			}
		}
		return lo, hi
	case yaml.ScalarNode:
		return scalarBounds(n)
	}
	w.failed = true
	return 0, 0
}

// scalarBounds sizes a scalar as toJSON types it (jsonEncoder.scalar).
func scalarBounds(n *yaml.Node) (lo, hi int) {
	if b, ok := yaml11Bool(n); ok {
		if b {
			return 4, 4
		}
		return 5, 5
	}
	switch n.ShortTag() {
	case "!!null":
		return 4, 4
	case "!!bool": // true or false in any case (toJSON refuses anything else)
		return len(n.Value), len(n.Value)
	case "!!int", "!!float":
		return 1, numberMax
	}
	return stringBounds(n.Value)
}

// stringBounds sizes s as json.Encoder writes it after toJSON and a JSON decode: quoted, `"`,
// `\`, \n, \r, \t as two bytes, other control characters as two (\b, \f) or six, <, > and & as
// six (HTML escaping); a byte of a multi-byte character stays one byte, except in U+2028 and
// U+2029 (escaped: 3 → 6 bytes) and in invalid UTF-8 (each byte becomes U+FFFD: 1 → 3).
func stringBounds(s string) (lo, hi int) {
	lo, hi = 2, 2
	for i := 0; i < len(s); i++ {
		lo += int(escLo[s[i]])
		hi += int(escHi[s[i]])
	}
	return lo, hi
}

// escLo and escHi are the fewest and most bytes a byte of a string can become in stringBounds.
var escLo, escHi = func() (lo, hi [256]uint8) {
	for c := range 256 {
		switch {
		case c >= utf8.RuneSelf:
			lo[c], hi[c] = 1, 3
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			lo[c], hi[c] = 2, 2
		case c < 0x20:
			lo[c], hi[c] = 2, 6
		case c == '<' || c == '>' || c == '&':
			lo[c], hi[c] = 6, 6
		default:
			lo[c], hi[c] = 1, 1
		}
	}
	return lo, hi
}()

// StoredBounds returns lo ≤ StoredSize() ≤ hi whenever StoredSize succeeds, from the protobuf
// sizes of the object's parts without copying or encoding it; ok is false without an object.
// The stored object keeps the spec as written, so its encoding holds the spec's; it replaces
// the status and changes the metadata by storedSlack bytes at most, and only removes otherwise.
func (c *CRD) StoredBounds() (lo, hi int, ok bool) {
	if c.Object == nil {
		return 0, 0, false
	}
	spec := c.Object.Spec.Size()
	status := apiextv1.CustomResourceDefinitionStatus{}
	for _, v := range c.Object.Spec.Versions {
		if v.Storage {
			status.StoredVersions = append(status.StoredVersions, v.Name)
		}
	}
	key := 2*len(StorageKey(c.Name)) + StorageFraming
	lo = len(protobufPrefix) + spec + key
	hi = lo + c.Object.ObjectMeta.Size() + status.Size() + storedSlack
	return lo, hi, true
}

// protobufPrefix starts every protobuf-encoded object (k8s.io/apimachinery's serializer).
const protobufPrefix = "k8s\x00"

// storedSlack covers what StoredSize's encoding adds to the object's spec, metadata and new
// status: the envelope (runtime.Unknown with apiVersion and kind, tags and lengths), the three
// fields' tags and lengths, and the metadata's uid, creation time and generation.
const storedSlack = 512
