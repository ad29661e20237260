package validation

import (
	"context"
	"fmt"
	"math"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The API server validates CRDs and custom resources in its registry strategies. Those packages
// also hold the etcd storage, and importing them links etcd's client, gRPC and the storage layer
// into crdguard (56 MB instead of about half). So the strategies' steps are composed here from the
// same public functions, in the same order: a CRD create/update is prepared as the strategy
// prepares it, and a custom resource is checked for type, metadata, schema, scale, embedded
// objects, list sets and maps, then CEL, with ratcheting on updates. The proof suite and the
// sample tests compare the outcome with the real server.

// prepareCRDForCreate does what the CRD strategy does before validating a create.
func prepareCRDForCreate(c *apiextensions.CustomResourceDefinition) {
	c.Status = apiextensions.CustomResourceDefinitionStatus{}
	c.Generation = 1
	addStorageVersion(c)
}

// prepareCRDForUpdate does what the CRD strategy does before validating an update.
func prepareCRDForUpdate(n, o *apiextensions.CustomResourceDefinition) {
	n.Status = o.Status
	if !apiequality.Semantic.DeepEqual(o.Spec, n.Spec) {
		n.Generation = o.Generation + 1
	}
	addStorageVersion(n)
}

func addStorageVersion(c *apiextensions.CustomResourceDefinition) {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			if !apiextensions.IsStoredVersion(c, v.Name) {
				c.Status.StoredVersions = append(c.Status.StoredVersions, v.Name)
			}
			return
		}
	}
}

// crValidator validates custom resources of one CRD version as the server's strategy does.
type crValidator struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
	scale      *apiextensions.CustomResourceSubresourceScale
}

// newCRValidator composes the validator; celSchema is s, or s with the rules of nodes that the
// objects to check do not reach left out, or nil for no CEL at all.
func newCRValidator(gvk schema.GroupVersionKind, namespaced bool, s, celSchema *structuralschema.Structural, sv apiservervalidation.SchemaValidator, scale *apiextensions.CustomResourceSubresourceScale) *crValidator {
	v := &crValidator{gvk: gvk, namespaced: namespaced, structural: s, schema: sv, scale: scale}
	if celSchema != nil {
		v.cel = cel.NewValidator(celSchema, true, celconfig.PerCallLimit)
	}
	return v
}

// Validate checks a create.
func (v *crValidator) Validate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	if errs := v.typeMeta(u); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, v.metadata(ctx, u, nil)...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.Object, v.schema)...)
	errs = append(errs, v.scaleErrors(u)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	return append(errs, v.celErrors(ctx, errs, u.Object, nil)...)
}

// ValidateUpdate checks an update, ratcheting what the update leaves unchanged when ratchet is
// set (Kubernetes ≥ 1.30).
func (v *crValidator) ValidateUpdate(ctx context.Context, u, old *unstructured.Unstructured, ratchet bool) field.ErrorList {
	if errs := v.typeMeta(u); len(errs) > 0 {
		return errs
	}
	var schemaOpts []apiservervalidation.ValidationOption
	var celOpts []cel.Option
	if ratchet {
		correlated := common.NewCorrelatedObject(u.Object, old.Object, &model.Structural{Structural: v.structural})
		schemaOpts, celOpts = []apiservervalidation.ValidationOption{apiservervalidation.WithRatcheting(correlated)}, []cel.Option{cel.WithRatcheting(correlated)}
	}
	var errs field.ErrorList
	errs = append(errs, v.metadata(ctx, u, old)...)
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.Object, old.Object, v.schema, schemaOpts...)...)
	errs = append(errs, v.scaleErrors(u)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, v.structural, old.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	}
	return append(errs, v.celErrors(ctx, errs, u.Object, old.Object, celOpts...)...)
}

func (v *crValidator) typeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", v.gvk.Kind)))
	}
	if want := v.gvk.Group + "/" + v.gvk.Version; u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+want))
	}
	return errs
}

func (v *crValidator) metadata(ctx context.Context, u, old *unstructured.Unstructured) field.ErrorList {
	meta, errs := objectMeta(u)
	if len(errs) > 0 {
		return errs
	}
	declarative := utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta)
	if old == nil {
		return metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, meta, nil, v.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"), declarative)
	}
	oldMeta, errs := objectMeta(old)
	if len(errs) > 0 {
		return errs
	}
	return metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, meta, oldMeta, v.namespaced, nil, field.NewPath("metadata"), declarative)
}

func objectMeta(u *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	meta := &metav1.ObjectMeta{}
	raw, ok := u.Object["metadata"]
	if !ok || raw == nil {
		return meta, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}

// scaleErrors checks the replica counts and selector the scale subresource reads.
func (v *crValidator) scaleErrors(u *unstructured.Unstructured) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	var errs field.ErrorList
	for _, p := range []string{v.scale.SpecReplicasPath, v.scale.StatusReplicasPath} {
		n, _, err := unstructured.NestedInt64(u.Object, strings.Split(strings.TrimPrefix(p, "."), ".")...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(p), n, err.Error()))
		case n < 0:
			errs = append(errs, field.Invalid(field.NewPath(p), n, "should be a non-negative integer"))
		case n > math.MaxInt32:
			errs = append(errs, field.Invalid(field.NewPath(p), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if v.scale.LabelSelectorPath != nil {
		p := *v.scale.LabelSelectorPath
		if s, _, err := unstructured.NestedString(u.Object, strings.Split(strings.TrimPrefix(p, "."), ".")...); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(p), s, err.Error()))
		}
	}
	return errs
}

// celErrors runs the CEL rules unless earlier errors make the object unfit for them (the server
// then reports that the rules were not checked).
func (v *crValidator) celErrors(ctx context.Context, errs field.ErrorList, obj, old map[string]any, opts ...cel.Option) field.ErrorList {
	if v.cel == nil {
		return nil
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.ErrorList{field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")}
		}
	}
	celErrs, _ := v.cel.Validate(ctx, nil, v.structural, obj, old, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}
