package validation

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/crd"
)

// Schema validates custom resources of one version of a CRD the way the API server does:
// pruning, null pruning, defaulting, OpenAPI validation, list sets and maps, embedded objects
// and CEL rules, with validation ratcheting on updates.
type Schema struct {
	structural *structuralschema.Structural
	validator  *crValidator
}

// NewSchema builds the validator for a version of a CRD; a version without a structural schema
// is an error.
func NewSchema(c *crd.CRD, version string) (*Schema, error) {
	v, err := NewVersion(c, version)
	if err != nil {
		return nil, err
	}
	return v.schema(v.Structural)
}

// Version is one version of a CRD converted once as the API server converts it, from which
// validators are built.
type Version struct {
	name    string
	in      *apiextensions.CustomResourceDefinition
	openAPI *apiextensions.JSONSchemaProps
	// Structural is the structural schema the server derives.
	Structural *structuralschema.Structural
	// mu guards what is built lazily: a Version is shared by goroutines judging CEL changes.
	mu sync.Mutex
	// reaching are the validators built by Reaching, by the rule-carrying nodes they keep;
	// full replaces them once building them costs more than compiling every rule once.
	reaching map[string]*Schema
	full     *Schema
	noCEL    *Schema
}

// maxReaching is how many partial validators a Version builds before it compiles them all.
const maxReaching = 2

// NewQuietSchema is NewSchema without the CEL rules' messageExpressions, whose messages may
// quote the object: for objects whose contents must not be shown (a cluster's stored objects).
// The rules still run; a failing one reports its static message, or the rule itself.
func NewQuietSchema(c *crd.CRD, version string) (*Schema, error) {
	v, err := newVersion(c, version, true)
	if err != nil {
		return nil, err
	}
	return v.schema(v.Structural)
}

// NewVersion converts a version of a CRD; a version without a structural schema is an error.
func NewVersion(c *crd.CRD, version string) (*Version, error) {
	return newVersion(c, version, false)
}

func newVersion(c *crd.CRD, version string, quiet bool) (*Version, error) {
	in, err := internalVersion(c, version)
	if err != nil {
		return nil, err
	}
	v, err := apiextensions.GetSchemaForVersion(in, version)
	if err != nil || v == nil || v.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("%s %s has no schema", c.Name, version)
	}
	if quiet { // in's rule lists are c's (see internal): each is replaced by an edited copy
		walkSchema(v.OpenAPIV3Schema, func(x *apiextensions.JSONSchemaProps) {
			x.XValidations = slices.Clone(x.XValidations)
			for i := range x.XValidations {
				x.XValidations[i].MessageExpression = ""
			}
		})
	}
	s, err := structuralschema.NewStructural(v.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s %s: schema is not structural: %w", c.Name, version, err)
	}
	return &Version{name: version, in: in, openAPI: v.OpenAPIV3Schema, Structural: s}, nil
}

// WithoutCEL is the validator with every step but the CEL rules, which a caller that compiles
// rules node by node (internal/celproof) runs itself; built once.
func (v *Version) WithoutCEL() (*Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.noCEL == nil {
		s, err := v.schema(nil)
		if err != nil {
			return nil, err
		}
		v.noCEL = s
	}
	return v.noCEL, nil
}

// Reaching builds a validator for obj and objects that set no more than it does: the CEL rules of
// schema nodes obj does not reach are left out — they would never run — so that checking one
// object does not compile every rule of a large CRD. Everything else is the full validator.
func (v *Version) Reaching(obj map[string]any) (*Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.full != nil {
		return v.full, nil
	}
	var key strings.Builder
	reachedRules(v.Structural, []any{obj}, ".", &key)
	if s, ok := v.reaching[key.String()]; ok {
		return s, nil
	}
	if len(v.reaching) >= maxReaching {
		full, err := v.schema(v.Structural)
		v.full = full
		return full, err
	}
	s, err := v.schema(reach(v.Structural, []any{obj}))
	if err != nil {
		return nil, err
	}
	if v.reaching == nil {
		v.reaching = map[string]*Schema{}
	}
	v.reaching[key.String()] = s
	return s, nil
}

// reachedRules writes the paths of the rule-carrying nodes that vals reach: validators that
// keep the same nodes are the same.
func reachedRules(s *structuralschema.Structural, vals []any, path string, key *strings.Builder) {
	if s == nil || len(vals) == 0 {
		return
	}
	if len(s.XValidations) > 0 {
		key.WriteString(path)
		key.WriteByte(0)
	}
	var items, values []any
	props := map[string][]any{}
	for _, v := range vals {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				props[k] = append(props[k], e)
				values = append(values, e)
			}
		case []any:
			items = append(items, x...)
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if p, ok := s.Properties[k]; ok {
			reachedRules(&p, props[k], path+"."+k, key)
		}
	}
	reachedRules(s.Items, items, path+"[]", key)
	if ap := s.AdditionalProperties; ap != nil {
		reachedRules(ap.Structural, values, path+".*", key)
	}
}

// schema builds the validator with the CEL rules of celSchema.
func (v *Version) schema(celSchema *structuralschema.Structural) (*Schema, error) {
	schemaValidator, _, err := apiservervalidation.NewSchemaValidator(v.openAPI)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", v.in.Name, v.name, err)
	}
	sub, err := apiextensions.GetSubresourcesForVersion(v.in, v.name)
	if err != nil {
		return nil, err
	}
	var scale *apiextensions.CustomResourceSubresourceScale
	if sub != nil {
		scale = sub.Scale
	}
	gvk := schema.GroupVersionKind{Group: v.in.Spec.Group, Version: v.name, Kind: v.in.Spec.Names.Kind}
	return &Schema{structural: v.Structural, validator: newCRValidator(gvk, v.in.Spec.Scope == apiextensions.NamespaceScoped, v.Structural, celSchema, schemaValidator, scale)}, nil
}

// reach is s with the CEL rules of the nodes that none of vals (values of s) reaches removed.
func reach(s *structuralschema.Structural, vals []any) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	out := *s
	var objs []map[string]any
	var items, values []any
	for _, v := range vals {
		switch x := v.(type) {
		case map[string]any:
			objs = append(objs, x)
			for _, e := range x {
				values = append(values, e)
			}
		case []any:
			items = append(items, x...)
		}
	}
	if len(s.Properties) > 0 {
		out.Properties = make(map[string]structuralschema.Structural, len(s.Properties))
		for k, p := range s.Properties {
			var sub []any
			for _, o := range objs {
				if e, ok := o[k]; ok {
					sub = append(sub, e)
				}
			}
			out.Properties[k] = *reachOrStrip(&p, sub)
		}
	}
	out.Items = reachOrStrip(s.Items, items)
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		out.AdditionalProperties = &structuralschema.StructuralOrBool{Bool: ap.Bool, Structural: reachOrStrip(ap.Structural, values)}
	}
	return &out
}

func reachOrStrip(s *structuralschema.Structural, vals []any) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if len(vals) > 0 {
		return reach(s, vals)
	}
	if !hasRules(s) {
		return s
	}
	c := s.DeepCopy()
	ClearRules(c)
	return c
}

func hasRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	if vv := s.ValueValidation; vv != nil {
		for _, a := range vv.AllOf {
			if len(a.XValidations) > 0 {
				return true
			}
		}
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	return hasRules(s.Items) || s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Structural)
}

// ClearRules removes the CEL rules of a schema and of everything below it.
func ClearRules(s *structuralschema.Structural) {
	EachNode(s, func(n *structuralschema.Structural) {
		n.XValidations = nil
		if vv := n.ValueValidation; vv != nil {
			for i := range vv.AllOf {
				vv.AllOf[i].XValidations = nil
			}
		}
	})
}

// EachNode calls f on s and on every node below it (properties, items, additional properties),
// in place: what f changes stays in the tree.
func EachNode(s *structuralschema.Structural, f func(*structuralschema.Structural)) {
	if s == nil {
		return
	}
	f(s)
	for k, p := range s.Properties {
		EachNode(&p, f)
		s.Properties[k] = p
	}
	EachNode(s.Items, f)
	if s.AdditionalProperties != nil {
		EachNode(s.AdditionalProperties.Structural, f)
	}
}

// Created is what happens to an object written through the API.
type Created struct {
	// Object is the object as stored: pruned and defaulted.
	Object map[string]any
	// Pruned are the paths of fields the server silently drops (spec.foo, spec.items[0].bar).
	Pruned []string
	// Errors are the validation errors; a create with errors is refused.
	Errors field.ErrorList
}

// Create sends obj (not modified) through the API server's create path, as `kubectl create`
// sends it (see AsSent).
func (s *Schema) Create(obj map[string]any) Created {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	s.AsSent(u)
	pruned := structuralpruning.PruneWithOptions(u.Object, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s.structural)
	structuraldefaulting.Default(u.Object, s.structural)
	errs := s.validator.Validate(context.Background(), u)
	return Created{Object: u.Object, Pruned: pruned, Errors: errs}
}

// Update validates writing obj over stored (an unchanged update, as a controller's status
// update or a GitOps re-apply is) with ratcheting: errors in fields the update does not change
// are forgiven, as Kubernetes ≥ 1.30 does.
func (s *Schema) Update(obj, stored map[string]any) field.ErrorList {
	return s.UpdateRatcheting(obj, stored, true)
}

// UpdateRatcheting is Update with validation ratcheting on or off (off: a cluster older than
// Kubernetes 1.30, where every error of the object counts).
func (s *Schema) UpdateRatcheting(obj, stored map[string]any, ratchet bool) field.ErrorList {
	nu := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	s.AsSent(nu)
	structuralpruning.Prune(nu.Object, s.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(nu.Object, s.structural)
	structuraldefaulting.Default(nu.Object, s.structural)
	old := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(stored)}
	s.AsSent(old)
	structuralpruning.Prune(old.Object, s.structural, true)
	structuraldefaulting.Default(old.Object, s.structural)
	// An update names the version it replaces; the samples do not carry one.
	nu.SetResourceVersion("1")
	old.SetResourceVersion("1")
	return s.validator.ValidateUpdate(context.Background(), nu, old, ratchet)
}

// generatedSuffix stands for the five random characters the API server appends to generateName.
const generatedSuffix = "x7k2q"

// AsSent completes a sample as kubectl and the API server do before validating it: a namespaced
// object without metadata.namespace lands in the "default" namespace (kubebuilder's samples never
// set one), and generateName gets the server's random suffix as the name.
func (s *Schema) AsSent(u *unstructured.Unstructured) {
	if s.validator.namespaced && u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(u.GetGenerateName() + generatedSuffix)
	}
}

// ErrorKey identifies an error independently of its wording, to compare two schemas' verdicts.
func ErrorKey(e *field.Error) string {
	return strings.Join([]string{e.Field, string(e.Type)}, "\x00")
}

// Ratchets reports whether validation ratcheting (Kubernetes ≥ 1.30) forgives this create error
// on an update that leaves the value as it is but changes other fields of the object, as a
// controller or a GitOps tool writing it does. It does not for required and type errors (a
// structural change), nor for constraints that a not/oneOf/anyOf/allOf of an ancestor places on
// the field: their errors belong to the ancestor, which the update changes (the server ratchets
// per node, so a combinator of the field itself ratchets like any constraint; see the rules'
// walker and TestStoredRatchetingMatchesServer).
func (s *Schema) Ratchets(e *field.Error) bool {
	if e.Type == field.ErrorTypeRequired || e.Type == field.ErrorTypeTypeInvalid {
		return false
	}
	_, under := s.Combinator(e.Field)
	return !under
}

// Combinator returns the nearest ancestor of a field of an error (spec.size) whose node carries
// not, oneOf, anyOf or allOf, as a field of an error ("" for the root), and whether there is
// one: that node reports what its branches require of the field.
func (s *Schema) Combinator(f string) (string, bool) {
	holder, found := "", false
	s.walk(f, func(prefix string, node *structuralschema.Structural, _ bool) {
		if combines(node) {
			holder, found = prefix, true
		}
	})
	return holder, found
}

// Forgiver says which node's unchanged value makes validation ratcheting forgive the errors
// the node at a field reports.
type Forgiver int

// The forgivers.
const (
	// ByItself: the field's own value.
	ByItself Forgiver = iota
	// ByList: the list the field lies in an item of, a list whose items the server does not
	// correlate with the old ones (atomic or set; only map lists are correlated, by key).
	ByList
	// ByCombinator: the ancestor whose allOf, anyOf, oneOf or not holds the field.
	ByCombinator
)

// ForgivenWhile returns the field whose unchanged value forgives the errors the node at f
// reports (k8s.io/apiserver's CorrelatedObject: the shallowest of an uncorrelated list and the
// nearest combinator above f), and which kind of node that is.
func (s *Schema) ForgivenWhile(f string) (string, Forgiver) {
	at, by := f, ByItself
	listAt, listDepth, holderAt, holderDepth := "", -1, "", -1
	depth := 0
	s.walk(f, func(prefix string, node *structuralschema.Structural, index bool) {
		if combines(node) {
			holderAt, holderDepth = prefix, depth
		}
		if index && listDepth < 0 && (node.XListType == nil || *node.XListType != "map") {
			listAt, listDepth = prefix, depth
		}
		depth++
	})
	switch {
	case listDepth >= 0 && (holderDepth < 0 || listDepth <= holderDepth):
		at, by = listAt, ByList
	case holderDepth >= 0:
		at, by = holderAt, ByCombinator
	}
	return at, by
}

// Describes reports whether the schema has the field of an error (spec.size, spec.items[0]):
// where it does not, the server prunes it (unless an ancestor keeps unknown fields).
func (s *Schema) Describes(f string) bool {
	return s.walk(f, func(string, *structuralschema.Structural, bool) {})
}

// walk follows a field of an error down the schema, calling visit with each proper ancestor's
// node (and its field: "" for the root; index: the next step is an item of it), and reports
// whether the schema reaches the field.
func (s *Schema) walk(f string, visit func(prefix string, node *structuralschema.Structural, index bool)) bool {
	node, prefix := s.structural, ""
	for _, seg := range crd.FieldPath(f) {
		if node == nil {
			return false
		}
		_, index := seg.(int)
		visit(prefix, node, index)
		switch seg := seg.(type) {
		case int:
			node, prefix = node.Items, prefix+"["+strconv.Itoa(seg)+"]"
		case string:
			if prefix != "" {
				prefix += "."
			}
			prefix += seg
			if p, ok := node.Properties[seg]; ok {
				node = &p
			} else if node.AdditionalProperties != nil {
				node = node.AdditionalProperties.Structural
			} else {
				node = nil
			}
		}
	}
	return node != nil
}

// combines reports whether a schema node carries not, oneOf, anyOf or allOf.
func combines(s *structuralschema.Structural) bool {
	vv := s.ValueValidation
	return vv != nil && (vv.Not != nil || len(vv.AllOf)+len(vv.AnyOf)+len(vv.OneOf) > 0)
}
