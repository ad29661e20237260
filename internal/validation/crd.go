// Package validation runs the API server's own validation offline: the CustomResourceDefinition
// create and update checks (structural schemas, CEL compilation and cost, list-map keys,
// defaults, immutable fields, stored versions), so that a CRD the cluster would refuse is
// reported before it is merged.
package validation

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
}()

// Error is one complaint of the API server, with the line of the YAML it concerns.
type Error struct {
	// Field is the API server's field path, e.g. spec.versions[0].schema.openAPIV3Schema.….
	Field string
	// Type is the kind of error (Invalid value, Required value, Forbidden, …).
	Type field.ErrorType
	// Message is the full error as the API server words it.
	Message string
	// Line is the line of the YAML key the field path leads to (or its deepest existing parent).
	Line int
}

// internal returns the CRD as the API server validates it: v1 defaults applied, converted to the
// internal version.
//
// The conversion builds the internal schema nodes, maps and lists afresh but shares with c what
// has the same layout in both versions: strings, pointers to scalars, string lists (required,
// list-map keys), the rule lists, and a version's subresources, columns and selectable fields.
// Nothing that validates the result writes into those (TestConversionLeavesTheCRDAlone; a
// caller that edits rules copies them first), so c's schemas are not copied before converting —
// copying every schema first was 8% of the CPU of a whole run on prometheus-operator's
// prometheusagents (four conversions per pair). The v1 defaulting writes only the names, the
// conversion strategy, a webhook's port and the stored versions, so the conversion settings and
// the status are copied, and the metadata, on which the update validation sets the server's.
func internal(c *crd.CRD) (*apiextensions.CustomResourceDefinition, error) {
	return converted(c, c.Object.Spec.Versions)
}

// internalVersion is internal for the versions of c named version (one, in a valid CRD) and no
// other: a Version validates objects of its own version only, and each version's schema,
// subresources and columns convert on their own (one version's schema, the same as itself,
// moves to the spec's shared one, where the server's per-version getters find it). Converting
// the others as well cost a whole conversion per side for every judged CRD pair.
func internalVersion(c *crd.CRD, version string) (*apiextensions.CustomResourceDefinition, error) {
	var versions []apiextv1.CustomResourceDefinitionVersion
	for _, v := range c.Object.Spec.Versions {
		if v.Name == version {
			versions = append(versions, v)
		}
	}
	return converted(c, versions)
}

// converted is internal with c's versions replaced by versions.
func converted(c *crd.CRD, versions []apiextv1.CustomResourceDefinitionVersion) (*apiextensions.CustomResourceDefinition, error) {
	v1 := *c.Object
	v1.Spec.Versions = versions
	v1.ObjectMeta = *c.Object.ObjectMeta.DeepCopy()
	v1.Spec.Conversion = c.Object.Spec.Conversion.DeepCopy()
	v1.Status = *c.Object.Status.DeepCopy()
	scheme.Default(&v1)
	out := &apiextensions.CustomResourceDefinition{}
	if err := scheme.Convert(&v1, out, nil); err != nil {
		return nil, fmt.Errorf("converting %s: %w", c.Name, err)
	}
	return out, nil
}

// Create validates a CRD the cluster does not have yet.
func Create(c *crd.CRD) ([]Error, error) {
	obj, err := internal(c)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	prepareCRDForCreate(obj)
	distinct := distinctVersionSchemas(obj)
	skipRepeatedCEL(obj)
	return located(c, asV1beta1(c, obj, ours(distinct, crdvalidation.ValidateCustomResourceDefinition(ctx, obj)))), nil
}

// Update validates new as an update of old, which the cluster has established (so immutable
// fields, stored versions and the leniency for problems old already had apply).
func Update(old, new *crd.CRD) ([]Error, error) {
	o, err := internal(old)
	if err != nil {
		return nil, err
	}
	n, err := internal(new)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	prepareCRDForCreate(o)
	// PrepareForCreate clears status: keep what the old file says objects are stored as.
	for _, v := range old.Object.Status.StoredVersions {
		if !apiextensions.IsStoredVersion(o, v) {
			o.Status.StoredVersions = append(o.Status.StoredVersions, v)
		}
	}
	apiextensions.SetCRDCondition(o, apiextensions.CustomResourceDefinitionCondition{Type: apiextensions.Established, Status: apiextensions.ConditionTrue})
	o.ResourceVersion, n.ResourceVersion, n.Generation = "1", "1", o.Generation
	carryServerMetadata(n, o)
	prepareCRDForUpdate(n, o)
	distinct := distinctVersionSchemas(n)
	skipUnchangedCEL(o, n)
	skipRepeatedCEL(o)
	skipRepeatedCEL(n)
	return located(new, asV1beta1(new, n, ours(distinct, crdvalidation.ValidateCustomResourceDefinitionUpdate(ctx, n, o)))), nil
}

// identicalSchemasDetail starts the API server's complaint about versions that all repeat one
// schema (they must use the top-level one, which a v1 document cannot: the conversion moves them
// there itself).
const identicalSchemasDetail = "per-version schemas may not all be set to identical values"

// distinctVersionSchemas reports whether the versions of c have schemas of their own that are not
// all the same. Leaving out CEL rules that need no compiling (skipUnchangedCEL, skipRepeatedCEL)
// can make such schemas equal — versions that differ only in a rule's message — and the server
// would then complain about a sameness that is crdguard's, not the document's.
func distinctVersionSchemas(c *apiextensions.CustomResourceDefinition) bool {
	for _, v := range c.Spec.Versions[min(1, len(c.Spec.Versions)):] {
		if !reflect.DeepEqual(v.Schema, c.Spec.Versions[0].Schema) {
			return true
		}
	}
	return false
}

// ours drops the complaint about identical version schemas when the document's were distinct.
func ours(distinct bool, errs field.ErrorList) field.ErrorList {
	if !distinct {
		return errs
	}
	out := errs[:0]
	for _, e := range errs {
		if !(e.Field == "spec.versions" && strings.HasPrefix(e.Detail, identicalSchemasDetail)) {
			out = append(out, e)
		}
	}
	return out
}

// carryServerMetadata does what the API server does with the metadata it sets itself before it
// validates an update (rest.BeforeUpdate): a file has no uid, creationTimestamp or deletion
// fields, the installed CRD (kube://, or `kubectl get -o yaml`) has them, and an update that
// leaves them out keeps the old ones rather than changing immutable fields. Managed fields are
// the field manager's, which keeps the old ones too.
func carryServerMetadata(n, o *apiextensions.CustomResourceDefinition) {
	if n.UID == "" {
		n.UID = o.UID
	}
	if !o.CreationTimestamp.IsZero() {
		n.CreationTimestamp = o.CreationTimestamp
	}
	if o.DeletionTimestamp != nil {
		n.DeletionTimestamp = o.DeletionTimestamp
	}
	if o.DeletionGracePeriodSeconds != nil && n.DeletionGracePeriodSeconds == nil {
		n.DeletionGracePeriodSeconds = o.DeletionGracePeriodSeconds
	}
	if len(n.ManagedFields) == 0 {
		n.ManagedFields = o.ManagedFields
	}
}

func located(c *crd.CRD, errs field.ErrorList) []Error {
	out := make([]Error, 0, len(errs))
	for _, e := range errs {
		out = append(out, Error{Field: e.Field, Type: e.Type, Message: message(e), Line: c.LineOf(yamlPath(c, e.Field))})
	}
	return out
}

// The API server prints a value it refuses in full: a CRD's whole version list, or a schema,
// rendered as a Go struct, runs to tens of kilobytes and says nothing a reader needs past the
// field and the reason. Messages keep the field, the kind of error, a short value and the detail.
const (
	maxValue   = 200                // bytes of a refused value shown
	maxMessage = finding.MaxMessage // bytes of a whole message
)

// message is the API server's error as it words it, with a long value left out or cut short.
func message(e *field.Error) string {
	short := *e
	if s, ok := e.BadValue.(string); ok && len(s) > maxValue {
		short.BadValue = finding.Cut(s, maxValue)
	} else if len(e.Error()) > len(e.Field)+len(e.Detail)+len(e.Type.String())+maxValue {
		short.BadValue = field.OmitValueType{}
	}
	return finding.Cut(short.Error(), maxMessage)
}

// yamlPath turns an API server field path into a path in the CRD's YAML. The internal version
// keeps a schema shared by all versions at spec.validation (and subresources, printer columns
// and selectable fields likewise at spec.*); a v1 document has them per version.
func yamlPath(c *crd.CRD, fieldPath string) crd.Path {
	p := crd.FieldPath(fieldPath)
	if len(p) >= 2 && p[0] == "spec" && !c.Has(crd.Path{"spec", p[1]}) {
		first := crd.Path{"spec", "versions", 0}
		switch p[1] {
		case "validation":
			return append(first.Join("schema"), p[2:]...)
		case "subresources", "additionalPrinterColumns", "selectableFields":
			return append(first, p[1:]...)
		}
	}
	return p
}

// Is reports whether an error is about the given field path or below it.
func (e Error) Is(prefix string) bool {
	return e.Field == prefix || strings.HasPrefix(e.Field, prefix+".") || strings.HasPrefix(e.Field, prefix+"[")
}
