package crd

import (
	"encoding/binary"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Subtrees shares the schema subtrees that the definitions of one comparison have in common, so
// that what they repeat is held once: the copies of a CRD in install bundles, charts and
// kustomize builds, its two sides where a change leaves most of it alone, and a repository's
// release manifests, each the bundle as it was at a release (from one release to the next a
// CRD's schema changes in a few places, every property map away from them is the same).
// Sharing is by value: a map or schema is replaced only by one that is reflect.DeepEqual to it,
// so what each definition says is unchanged. Definitions are read, never written, once decoded
// (rules, the API server's checks and OLM's preflight work on copies or conversions), which is
// what lets them share. A nil *Subtrees shares nothing.
type Subtrees struct {
	mu   sync.Mutex
	seed maphash.Seed
	// done are the definitions already shared.
	done map[*apiextv1.CustomResourceDefinition]bool
	// maps are the property maps seen, by the hash of their content.
	maps map[uint64][]map[string]apiextv1.JSONSchemaProps
	// schemas are the items and additionalProperties schemas seen, by the hash of their content.
	schemas map[uint64][]*apiextv1.JSONSchemaProps
}

// NewSubtrees returns an empty table.
func NewSubtrees() *Subtrees {
	return &Subtrees{seed: maphash.MakeSeed(), done: map[*apiextv1.CustomResourceDefinition]bool{}, maps: map[uint64][]map[string]apiextv1.JSONSchemaProps{}, schemas: map[uint64][]*apiextv1.JSONSchemaProps{}}
}

// Share makes the schemas of o's versions hold the subtrees an earlier definition given to
// Share has in common with them. o must be a definition just decoded, not yet read by anyone
// else: its maps are rewritten in place before they are shared. A definition given again (a
// copy that holds an earlier one's Object) is left as it is.
func (t *Subtrees) Share(o *apiextv1.CustomResourceDefinition) {
	if t == nil || o == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done[o] {
		return
	}
	t.done[o] = true
	for i := range o.Spec.Versions {
		if v := &o.Spec.Versions[i]; v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			t.schema(v.Schema.OpenAPIV3Schema)
		}
	}
}

// schema shares what lies below s, in place, and returns the hash of s's content. The hash
// covers what tells most schemas apart cheaply; equal hashes are confirmed by DeepEqual.
func (t *Subtrees) schema(s *apiextv1.JSONSchemaProps) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	for _, str := range [...]string{s.Type, s.Format, s.Description, s.Pattern, s.Title} {
		h.WriteString(str)
		h.WriteByte(0)
	}
	for _, r := range s.Required {
		h.WriteString(r)
		h.WriteByte(0)
	}
	for _, e := range s.Enum {
		h.Write(e.Raw)
		h.WriteByte(0)
	}
	for _, r := range s.XValidations {
		h.WriteString(r.Rule)
		h.WriteByte(0)
	}
	if s.Default != nil {
		h.Write(s.Default.Raw)
	}
	if s.Properties != nil {
		h.WriteByte(1)
		writeUint64(&h, t.properties(s))
	}
	if s.Items != nil {
		h.WriteByte(2)
		if s.Items.Schema != nil {
			writeUint64(&h, t.shared(&s.Items.Schema))
		}
		for i := range s.Items.JSONSchemas {
			writeUint64(&h, t.schema(&s.Items.JSONSchemas[i]))
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		h.WriteByte(3)
		writeUint64(&h, t.shared(&s.AdditionalProperties.Schema))
	}
	if s.Not != nil {
		h.WriteByte(4)
		writeUint64(&h, t.schema(s.Not))
	}
	for _, list := range [...][]apiextv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
		h.WriteByte(5)
		for i := range list {
			writeUint64(&h, t.schema(&list[i]))
		}
	}
	return h.Sum64()
}

// properties shares the subtrees of s's properties, then s's property map itself, and returns
// the map's hash.
func (t *Subtrees) properties(s *apiextv1.JSONSchemaProps) uint64 {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var h maphash.Hash
	h.SetSeed(t.seed)
	for _, k := range keys {
		p := s.Properties[k]
		sum := t.schema(&p)
		s.Properties[k] = p // the map is this definition's own until it is shared below
		h.WriteString(k)
		h.WriteByte(0)
		writeUint64(&h, sum)
	}
	sum := h.Sum64()
	for _, m := range t.maps[sum] {
		if reflect.DeepEqual(m, s.Properties) {
			s.Properties = m
			return sum
		}
	}
	t.maps[sum] = append(t.maps[sum], s.Properties)
	return sum
}

// shared shares the subtrees of *p, then *p itself, and returns its hash.
func (t *Subtrees) shared(p **apiextv1.JSONSchemaProps) uint64 {
	sum := t.schema(*p)
	for _, s := range t.schemas[sum] {
		if reflect.DeepEqual(s, *p) {
			*p = s
			return sum
		}
	}
	t.schemas[sum] = append(t.schemas[sum], *p)
	return sum
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.Write(b[:])
}
