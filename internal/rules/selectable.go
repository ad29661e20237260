package rules

import (
	"fmt"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/finding"
)

// Selectable fields (Kubernetes ≥ 1.31): the JSONPaths a version lets clients filter by with
// field selectors (kubectl get --field-selector, informers of controllers).

var (
	selectableFieldRemoved = &Rule{
		ID: "selectable-field-removed", Severity: finding.Error, Level: VersionLevel, Twin: "selectable-field-added",
		Summary: "A selectable field (selectableFields) was removed from a version.",
		Advice:  "clients and controllers that list with a field selector on it get an error instead of objects; keep the field selectable",
		Doc:     "selectableFields lets clients filter lists and watches by a field (kubectl get --field-selector spec.issuerRef.name=x, a controller's informer restricted to its objects). When a field stops being selectable, every such request is refused with 'field label not supported', so controllers stop seeing their objects and scripts fail. Keep the field selectable as long as the version is served. The finding's path is the field's jsonPath.",
	}
	selectableFieldAdded = &Rule{
		ID: "selectable-field-added", Severity: finding.Info, Level: VersionLevel,
		Summary: "A selectable field (selectableFields) was added to a version.",
		Doc:     "A new selectable field lets clients filter by it; nothing that worked before changes. It needs Kubernetes 1.31 or later (the CustomResourceFieldSelectors feature; older API servers drop the field and refuse such selectors): with kubernetesVersion 1.30 the finding is a warning, and before 1.30, whose API has no such field, it is invalid-crd (also for a new CRD). The finding's path is the field's jsonPath.",
	}
)

var selectableRules = []*Rule{selectableFieldRemoved, selectableFieldAdded}

// compareSelectableFields reports the selectable fields of one version that were removed or
// added, by jsonPath.
func compareSelectableFields(e *emitter, version string, o, w []apiextv1.SelectableField) {
	for i, f := range o {
		if !hasSelectable(w, f.JSONPath) {
			at := e.pair.Old.VersionPath(version).Join("selectableFields", i, "jsonPath")
			e.add(selectableFieldRemoved, version, f.JSONPath, finding.Base, at, f.JSONPath, nil,
				"field selectors on "+f.JSONPath+" of "+version+" no longer work")
		}
	}
	for i, f := range w {
		if !hasSelectable(o, f.JSONPath) {
			at := e.pair.New.VersionPath(version).Join("selectableFields", i, "jsonPath")
			r, severity, msg := selectableAdded(e.opts.KubernetesVersion, version, f.JSONPath)
			e.add(r, version, f.JSONPath, finding.Head, at, nil, f.JSONPath, msg).Severity = severity
		}
	}
}

// newCRDSelectableFields judges the selectable fields of a new CRD for the configured
// kubernetesVersion; where that version supports them there is nothing to say.
func newCRDSelectableFields(e *emitter) {
	if m := e.opts.KubernetesVersion; m == 0 || m >= selectableSince {
		return
	}
	for _, v := range e.pair.New.Object.Spec.Versions {
		compareSelectableFields(e, v.Name, nil, v.SelectableFields)
	}
}

// selectableSince is the Kubernetes minor whose API servers honour selectableFields by default
// (the CustomResourceFieldSelectors feature: alpha in 1.30, beta and on in 1.31).
const selectableSince = 31

// selectableAdded is the rule, severity and message for a selectable field new in the change,
// judged for the oldest Kubernetes the CRD must install on (minor, 0 when not configured):
// before 1.30 the API does not have the field, so kubectl apply's strict field validation
// refuses the CRD (invalid-crd); 1.30 accepts it but, with the feature gate off by default,
// drops it, so field selectors on it are refused there.
func selectableAdded(minor uint, version, path string) (*Rule, finding.Severity, string) {
	added := path + " of " + version + " is now selectable with field selectors"
	switch {
	case minor == 0 || minor >= selectableSince:
		return selectableFieldAdded, selectableFieldAdded.Severity, added
	case minor < selectableSince-1:
		return invalidCRD, invalidCRD.Severity, fmt.Sprintf("selectableFields (%s of %s) needs Kubernetes 1.%d; kubernetesVersion is 1.%d, whose API has no such field", path, version, selectableSince, minor)
	}
	return selectableFieldAdded, finding.Warning, added + fmt.Sprintf(", but Kubernetes 1.%d (kubernetesVersion) drops selectableFields unless the alpha CustomResourceFieldSelectors feature gate is on, so field selectors on it are refused there", minor)
}

func hasSelectable(fs []apiextv1.SelectableField, path string) bool {
	for _, f := range fs {
		if f.JSONPath == path {
			return true
		}
	}
	return false
}
