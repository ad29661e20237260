package validation

import (
	"context"
	"fmt"
	"strings"

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
	in, v, s, err := structural(c, version)
	if err != nil {
		return nil, err
	}
	schemaValidator, _, err := apiservervalidation.NewSchemaValidator(v.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.Name, version, err)
	}
	sub, err := apiextensions.GetSubresourcesForVersion(in, version)
	if err != nil {
		return nil, err
	}
	var scale *apiextensions.CustomResourceSubresourceScale
	if sub != nil {
		scale = sub.Scale
	}
	gvk := schema.GroupVersionKind{Group: in.Spec.Group, Version: version, Kind: in.Spec.Names.Kind}
	return &Schema{structural: s, validator: newCRValidator(gvk, in.Spec.Scope == apiextensions.NamespaceScoped, s, schemaValidator, scale)}, nil
}

// Structural returns the structural schema of a version of a CRD, as the API server derives it.
func Structural(c *crd.CRD, version string) (*structuralschema.Structural, error) {
	_, _, s, err := structural(c, version)
	return s, err
}

func structural(c *crd.CRD, version string) (*apiextensions.CustomResourceDefinition, *apiextensions.CustomResourceValidation, *structuralschema.Structural, error) {
	in, err := internal(c)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := apiextensions.GetSchemaForVersion(in, version)
	if err != nil || v == nil || v.OpenAPIV3Schema == nil {
		return nil, nil, nil, fmt.Errorf("%s %s has no schema", c.Name, version)
	}
	s, err := structuralschema.NewStructural(v.OpenAPIV3Schema)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %s: schema is not structural: %w", c.Name, version, err)
	}
	return in, v, s, nil
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

// Create sends obj (not modified) through the API server's create path.
func (s *Schema) Create(obj map[string]any) Created {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
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
	nu := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	structuralpruning.Prune(nu.Object, s.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(nu.Object, s.structural)
	structuraldefaulting.Default(nu.Object, s.structural)
	old := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(stored)}
	structuralpruning.Prune(old.Object, s.structural, true)
	structuraldefaulting.Default(old.Object, s.structural)
	// An update names the version it replaces; the samples do not carry one.
	nu.SetResourceVersion("1")
	old.SetResourceVersion("1")
	return s.validator.ValidateUpdate(context.Background(), nu, old)
}

// ErrorKey identifies an error independently of its wording, to compare two schemas' verdicts.
func ErrorKey(e *field.Error) string {
	return strings.Join([]string{e.Field, string(e.Type)}, "\x00")
}
