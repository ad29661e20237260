package crd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// The limits a CRD meets on its way into a cluster, as the servers define them.
const (
	// LastAppliedAnnotation is the annotation client-side `kubectl apply` stores the applied
	// object in (k8s.io/api/core/v1.LastAppliedConfigAnnotation).
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
	// AnnotationLimit is the most bytes the API server accepts in all annotations of an object
	// together, keys and values (k8s.io/apimachinery/pkg/api/validation.TotalAnnotationSizeLimitB).
	AnnotationLimit = 256 << 10
	// StorageLimit is etcd's default limit on one request (--max-request-bytes, 1.5 MiB;
	// go.etcd.io/etcd/server/v3/embed.DefaultMaxRequestBytes): the write that stores an object
	// carries the object's encoding and its key.
	StorageLimit = 3 << 19
)

// AnnotationSize is the size the API server counts against AnnotationLimit after a client-side
// `kubectl apply` of the document: every annotation's key and value, the last-applied
// configuration among them. kubectl writes that annotation as the document it read, without
// the annotation itself (an empty annotations map where there were none), encoded by
// encoding/json (keys sorted, compact, HTML characters escaped) with a trailing newline; this
// is the same encoding.
func (c *CRD) AnnotationSize() (int, error) {
	obj, err := c.applied()
	if err != nil {
		return 0, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	delete(annotations, LastAppliedAnnotation)
	meta["annotations"] = annotations
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(obj); err != nil {
		return 0, fmt.Errorf("encoding %s as kubectl would: %w", c.Name, err)
	}
	size := len(LastAppliedAnnotation) + buf.Len()
	for k, v := range annotations {
		s, _ := v.(string)
		size += len(k) + len(s)
	}
	return size, nil
}

// applied is the document as kubectl reads it: JSON values, whole numbers as int64.
func (c *CRD) applied() (map[string]any, error) {
	root := c.tree()
	if root == nil {
		return nil, fmt.Errorf("%s: the document's text is not at hand", c.Name)
	}
	raw, err := toJSON(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Name, err)
	}
	return obj, nil
}

// storedCodec encodes objects as kube-apiserver stores them in etcd by default
// (--storage-media-type application/vnd.kubernetes.protobuf).
var storedCodec = protobuf.NewSerializer(scheme, scheme)

// StoredSize is the size of the request that stores the CRD in etcd when it is created: the
// object as the API server encodes it (protobuf, with its metadata: uid, creation time,
// generation), its key (named twice: the transaction's compare and its put) and the request's
// framing. It leaves out what depends on how the CRD is applied — managedFields and client-side
// apply's last-applied annotation — and the status the server writes next (accepted names,
// conditions), so it is a lower bound: a CRD it puts above StorageLimit cannot be stored by any
// client, and one just below may still fail once those are added.
func (c *CRD) StoredSize() (int, error) { return c.StoredSizeAs(storedCodec) }

// StoredSizeAs is StoredSize with the object encoded by enc: the in-process API server of
// crdguard's tests stores CRDs as v1beta1 JSON, kube-apiserver as v1 protobuf.
func (c *CRD) StoredSizeAs(enc runtime.Encoder) (int, error) {
	if c.Object == nil {
		return 0, fmt.Errorf("%s: not a definition", c.Name)
	}
	obj := c.Object.DeepCopy()
	obj.UID = "00000000-0000-0000-0000-000000000000"
	obj.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	obj.Generation = 1
	obj.ResourceVersion, obj.ManagedFields = "", nil
	delete(obj.Annotations, LastAppliedAnnotation)
	// The API server's create sets the stored versions to the storage version.
	obj.Status = apiextv1.CustomResourceDefinitionStatus{}
	for _, v := range obj.Spec.Versions {
		if v.Storage {
			obj.Status.StoredVersions = append(obj.Status.StoredVersions, v.Name)
		}
	}
	obj.TypeMeta = metav1.TypeMeta{APIVersion: GroupVersionV1, Kind: Kind}
	var data bytes.Buffer
	if err := enc.Encode(obj, &data); err != nil {
		return 0, fmt.Errorf("encoding %s as the API server stores it: %w", c.Name, err)
	}
	return data.Len() + 2*len(StorageKey(c.Name)) + StorageFraming, nil
}

// StorageFraming is what etcd's request to create an object adds to the object's encoding and
// its key named twice (the raft header, the transaction, the lengths): found by
// TestStorageLimitAgainstEtcd, which stores CRDs at the boundary in a real etcd. It is 39 or 40
// bytes, by the length of the request's ID; the smaller keeps StoredSize a lower bound.
const StorageFraming = 39

// StorageKey is where kube-apiserver stores a CRD in etcd (its default --etcd-prefix /registry).
func StorageKey(name string) string {
	return "/registry/apiextensions.k8s.io/customresourcedefinitions/" + name
}

// Contributors names what makes a CRD large, largest first, so its author knows what to trim:
// the descriptions, each version's schema when there are several, and the largest schema
// subtrees that occur more than once (an embedded type repeated at several paths or in every
// version). Sizes are of the document's JSON. At most limit entries.
func (c *CRD) Contributors(limit int) []string {
	obj, err := c.applied()
	if err != nil {
		return nil
	}
	total, _ := json.Marshal(obj)
	m := &measure{groups: map[[32]byte]*repeat{}}
	spec, _ := obj["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	schemas := 0
	var perVersion []string
	for _, v := range versions {
		v, _ := v.(map[string]any)
		name, _ := v["name"].(string)
		schema, _ := v["schema"].(map[string]any)
		root, ok := schema["openAPIV3Schema"].(map[string]any)
		if !ok {
			continue
		}
		schemas++
		size := len(m.walk(root, name+" ."))
		perVersion = append(perVersion, fmt.Sprintf("%s %s", name, bytesOf(size)))
	}
	if validation, ok := spec["validation"].(map[string]any); ok {
		if root, ok := validation["openAPIV3Schema"].(map[string]any); ok {
			m.walk(root, ".")
		}
	}
	var out []entry
	if m.descriptions > 0 {
		out = append(out, entry{m.descriptions, fmt.Sprintf("descriptions %s (%d%%; controller-gen crd:maxDescLen=0 drops them)", bytesOf(m.descriptions), 100*m.descriptions/max(len(total), 1))})
	}
	if schemas > 1 {
		out = append(out, entry{len(total) - len(total)/schemas, fmt.Sprintf("%d versions each carry a whole schema (%s)", schemas, strings.Join(perVersion, ", "))})
	}
	var reps []*repeat
	for _, r := range m.groups {
		if r.count > 1 {
			reps = append(reps, r)
		}
	}
	sort.Slice(reps, func(i, j int) bool {
		if a, b := reps[i].size*reps[i].count, reps[j].size*reps[j].count; a != b {
			return a > b
		}
		return reps[i].paths[0] < reps[j].paths[0]
	})
	var shown []string
	for _, r := range reps {
		if inside(r.paths[0], shown) || r.size*r.count < len(total)/50 {
			continue
		}
		shown = append(shown, r.paths[0])
		where := strings.Join(r.paths[:min(len(r.paths), 3)], ", ")
		if len(r.paths) > 3 {
			where += fmt.Sprintf(" and %d more", len(r.paths)-3)
		}
		out = append(out, entry{r.size * (r.count - 1), fmt.Sprintf("one schema of %s repeated %d times (%s; +kubebuilder:validation:Schemaless on the Go field, or one shared type, shrinks it)", bytesOf(r.size), r.count, where)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].bytes > out[j].bytes })
	var text []string
	for _, e := range out[:min(len(out), limit)] {
		text = append(text, e.text)
	}
	return text
}

type entry struct {
	bytes int
	text  string
}

// repeat is one schema subtree and where it occurs.
type repeat struct {
	size, count int
	paths       []string
}

// measure walks schemas, summing descriptions and grouping identical subtrees.
type measure struct {
	descriptions int
	groups       map[[32]byte]*repeat
}

// minRepeat is the smallest subtree worth naming as repeated.
const minRepeat = 1 << 10

// walk returns the node's JSON (encoding/json's, keys sorted) and records its descriptions and,
// for large object nodes, where it occurs. Each node is encoded once: a parent is its
// children's bytes put together.
func (m *measure) walk(n map[string]any, path string) []byte {
	out := encodeSorted(n, func(k string, v any) []byte { return m.value(k, v, path) })
	if len(out) >= minRepeat {
		sum := sha256.Sum256(out)
		r := m.groups[sum]
		if r == nil {
			r = &repeat{size: len(out)}
			m.groups[sum] = r
		}
		r.count++
		r.paths = append(r.paths, path)
	}
	return out
}

// encodeSorted writes a JSON object as encoding/json does (keys sorted), each value encoded by
// value.
func encodeSorted(n map[string]any, value func(k string, v any) []byte) []byte {
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, k)
		out = append(out, ':')
		out = append(out, value(k, n[k])...)
	}
	return append(out, '}')
}

// value encodes the value of key k of a schema node at path.
func (m *measure) value(k string, v any, path string) []byte {
	switch k {
	case "properties", "patternProperties", "definitions", "dependencies":
		if props, ok := v.(map[string]any); ok {
			return encodeSorted(props, func(name string, v any) []byte {
				if child, ok := v.(map[string]any); ok && k == "properties" {
					return m.walk(child, joinStep(path, "."+name))
				}
				b, _ := json.Marshal(v)
				return b
			})
		}
	case "items":
		if child, ok := v.(map[string]any); ok {
			return m.walk(child, joinStep(path, "[*]"))
		}
	case "additionalProperties":
		if child, ok := v.(map[string]any); ok {
			return m.walk(child, joinStep(path, ".*"))
		}
	case "description":
		b, _ := json.Marshal(v)
		m.descriptions += len(b) + len(`"description":,`)
		return b
	}
	b, _ := json.Marshal(v)
	return b
}

// joinStep appends a step to a path whose root is written ".".
func joinStep(path, step string) string {
	if strings.HasSuffix(path, ".") {
		return strings.TrimSuffix(path, ".") + step
	}
	return path + step
}

// inside reports whether path lies at or under one of the paths shown.
func inside(path string, shown []string) bool {
	for _, s := range shown {
		if path == s || strings.HasPrefix(path, s+".") || strings.HasPrefix(path, s+"[") {
			return true
		}
	}
	return false
}

// bytesOf writes a size in bytes with thousands separators.
func bytesOf(n int) string { return Bytes(n) + " bytes" }

// Bytes writes a count with thousands separators (262,144).
func Bytes(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
