package validation

import (
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/crd"
)

// asV1beta1 judges a document written as apiextensions.k8s.io/v1beta1 as the API server that
// served that version (Kubernetes 1.21 and earlier) did: the checks it made only of requests to
// the v1 API leave no complaint. Those are the refusal of spec.preserveUnknownFields: true (the
// v1beta1 default, which the document need not even write), a schema required in every version
// (with unknown fields kept, v1beta1 needed none), OpenAPI's list of property types, and a
// structural schema where nothing else asks for one — the server still asked when the CRD prunes
// (preserveUnknownFields: false), has defaults or uses x-kubernetes extensions, and so does this.
func asV1beta1(c *crd.CRD, obj *apiextensions.CustomResourceDefinition, errs field.ErrorList) field.ErrorList {
	if c.APIVersion != crd.GroupVersionV1beta1 {
		return errs
	}
	spec := &obj.Spec
	keeps := spec.PreserveUnknownFields == nil || *spec.PreserveUnknownFields
	structural := !keeps || anySchema(spec, func(s *apiextensions.JSONSchemaProps) bool {
		return s.Default != nil || s.XEmbeddedResource || s.XPreserveUnknownFields != nil || s.XIntOrString ||
			len(s.XListMapKeys) > 0 || s.XListType != nil || len(s.XValidations) > 0
	})
	nonStructural := map[string]bool{}
	if !structural {
		eachSchema(spec, func(at *field.Path, s *apiextensions.JSONSchemaProps) {
			at = at.Child("openAPIV3Schema")
			ss, err := structuralschema.NewStructural(s)
			if err != nil {
				nonStructural[field.Invalid(at, "", err.Error()).Error()] = true
				return
			}
			for _, e := range structuralschema.ValidateStructural(at, ss) {
				nonStructural[e.Error()] = true
			}
		})
	}
	out := errs[:0]
	for _, e := range errs {
		switch {
		case e.Field == "spec.preserveUnknownFields" && strings.HasPrefix(e.Detail, "cannot set to true"):
		case keeps && e.Type == field.ErrorTypeRequired && strings.HasSuffix(e.Field, ".schema.openAPIV3Schema") && e.Detail == "":
		case e.Type == field.ErrorTypeNotSupported && strings.Contains(e.Field, "openAPIV3Schema") && strings.HasSuffix(e.Field, ".type"):
		case nonStructural[e.Error()]:
		default:
			out = append(out, e)
		}
	}
	return out
}

// eachSchema calls f with every schema of a CRD spec and the field path of its holder.
func eachSchema(spec *apiextensions.CustomResourceDefinitionSpec, f func(*field.Path, *apiextensions.JSONSchemaProps)) {
	if spec.Validation != nil && spec.Validation.OpenAPIV3Schema != nil {
		f(field.NewPath("spec", "validation"), spec.Validation.OpenAPIV3Schema)
	}
	for i, v := range spec.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			f(field.NewPath("spec", "versions").Index(i).Child("schema"), v.Schema.OpenAPIV3Schema)
		}
	}
}

// anySchema reports whether a node of any schema of the spec satisfies pred.
func anySchema(spec *apiextensions.CustomResourceDefinitionSpec, pred func(*apiextensions.JSONSchemaProps) bool) bool {
	found := false
	eachSchema(spec, func(_ *field.Path, s *apiextensions.JSONSchemaProps) {
		found = found || crdvalidation.SchemaHas(s, pred)
	})
	return found
}
