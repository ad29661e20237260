package celproof

import (
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// cachedSchema is the API server's schema adapter for CEL values (model.Structural) with what
// it builds on every call built once: the value of an object asks its schema for the map of
// all its properties, freshly made, each time it is converted and each time a field is looked
// up — on a candidate object, most of what evaluating a rule costs. The schema never changes
// while rules run, so the answers are the same.
type cachedSchema struct {
	*model.Structural
	items      func() common.Schema
	properties func() map[string]common.Schema
	additional func() common.SchemaOrBool
	withMeta   func() common.Schema
}

// cachedSchemaOf adapts s for CEL values.
func cachedSchemaOf(s *structuralschema.Structural) *cachedSchema {
	c := &cachedSchema{Structural: &model.Structural{Structural: s}}
	c.items = sync.OnceValue(func() common.Schema {
		if s.Items == nil {
			return nil
		}
		return cachedSchemaOf(s.Items)
	})
	c.properties = sync.OnceValue(func() map[string]common.Schema {
		if s.Properties == nil {
			return nil
		}
		out := make(map[string]common.Schema, len(s.Properties))
		for name, p := range s.Properties {
			out[name] = cachedSchemaOf(&p)
		}
		return out
	})
	c.additional = sync.OnceValue(func() common.SchemaOrBool {
		if s.AdditionalProperties == nil {
			return nil
		}
		return &cachedSchemaOrBool{StructuralOrBool: model.StructuralOrBool{StructuralOrBool: s.AdditionalProperties}, schema: sync.OnceValue(func() common.Schema {
			if s.AdditionalProperties.Structural == nil {
				return nil
			}
			return cachedSchemaOf(s.AdditionalProperties.Structural)
		})}
	})
	c.withMeta = sync.OnceValue(func() common.Schema { return cachedSchemaOf(model.WithTypeAndObjectMeta(s)) })
	return c
}

// Items is the schema of a list's items.
func (c *cachedSchema) Items() common.Schema { return c.items() }

// Properties maps each property to its schema; callers only read it.
func (c *cachedSchema) Properties() map[string]common.Schema { return c.properties() }

// AdditionalProperties is the schema of a map's values.
func (c *cachedSchema) AdditionalProperties() common.SchemaOrBool { return c.additional() }

// WithTypeAndObjectMeta is the schema of an embedded resource, with apiVersion, kind and
// metadata.
func (c *cachedSchema) WithTypeAndObjectMeta() common.Schema { return c.withMeta() }

// cachedSchemaOrBool is additionalProperties with its schema adapted once.
type cachedSchemaOrBool struct {
	model.StructuralOrBool
	schema func() common.Schema
}

// Schema is the schema of the map's values, or nil.
func (c *cachedSchemaOrBool) Schema() common.Schema { return c.schema() }
