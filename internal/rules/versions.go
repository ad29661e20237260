package rules

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// Version-level rules: which versions exist, are served and stored, how objects convert between
// them, and their subresources.

var (
	storedVersionRemoved = &Rule{
		ID: "stored-version-removed", Severity: finding.Error, Level: VersionLevel, Twin: "version-added", Refused: true,
		Summary: "A version that is or was the storage version (or is in status.storedVersions) was removed.",
		Advice:  "the API server refuses the update while objects may still be stored in this version; migrate stored objects, drop the version from status.storedVersions, then remove it (or keep it with served: false)",
		Doc:     "Objects in etcd stay encoded in the version they were written in. The API server refuses to remove a version listed in status.storedVersions, and any cluster that ever stored objects in it still has them. Keep the version with served: false, run a storage migration (rewrite every object), remove the version from status.storedVersions, and only then delete it from spec.versions.",
	}
	servedVersionRemoved = &Rule{
		ID: "served-version-removed", Severity: finding.Error, Level: VersionLevel,
		Summary: "A served version was removed or set served: false (also when it was deprecated).",
		Advice:  "clients, manifests and controllers that use this version get 404s; deprecate it first and stop serving it in a later release",
		Doc:     "Every client, GitOps manifest and controller that reads or writes this apiVersion fails once it is no longer served. Mark the version deprecated: true (with a deprecationWarning) for at least one release so users see warnings, then stop serving it. Deprecation is how a removal is announced, not what makes it safe: clusters whose manifests still use the version break all the same, so the finding stays an error and its message says since when the version was deprecated (the release or commit where it became deprecated in git mode, else 'in base'). Acknowledge a planned removal with the acknowledgement label.",
	}
	versionRemoved = &Rule{
		ID: "version-removed", Severity: finding.Warning, Level: VersionLevel,
		Summary: "A version that base neither serves nor stores was removed (info when the history shows it was never stored).",
		Advice:  "clusters that installed an older release may still list it in status.storedVersions, and the API server then refuses the update; check that no release stored it, or run crdguard in git mode, which reads the history",
		Doc:     "A version that no client can use and no object is stored in can be removed safely, but the base files do not say whether an earlier release stored objects in it: clusters installed from that release still list it in status.storedVersions, and the API server refuses a CRD that drops it (status.storedVersions[0]: Invalid value: must appear in spec.versions). In diff mode this is a warning. In git mode crdguard reads the CRD's history (release tags, then commits; every file that held the CRD, by name) and reports stored-version-removed when any of it stored the version, or this rule at info when none did.",
	}
	storageVersionChanged = &Rule{
		ID: "storage-version-changed", Severity: finding.Warning, Level: VersionLevel,
		Summary: "The storage version moved to another version.",
		Advice:  "objects already stored keep the old encoding until they are rewritten; plan a storage migration before the old version can be removed",
		Doc:     "New writes are stored in the new storage version, but existing objects stay in the old one until each is rewritten; the old version stays in status.storedVersions. This is how versions are meant to evolve, but it needs a storage migration before the old version can ever be removed, and a conversion that round-trips.",
	}
	conversionMissing = &Rule{
		ID: "conversion-missing", Severity: finding.Warning, Level: VersionLevel,
		Summary: "Served versions have different schemas while conversion.strategy is None (error when a field stored objects may already have is lost, info when both versions keep the differing fields as unknown fields).",
		Advice:  "with strategy None the server only rewrites apiVersion, so objects read or written through this version are pruned to its schema; add a conversion webhook or keep the schemas identical",
		Doc:     "With conversion strategy None, the API server converts between versions by changing apiVersion only. When served versions' schemas differ, objects read through one version are pruned or invalid in the other, and a write through a version that lacks a field of the storage version deletes that field. Only differences the change introduces are reported. The severity follows the risk to stored data: error when the lost field is already in the base's storage schema, or the version that lacks it is new; warning when only fields new in this change are lost (a field added to the storage version first, as Flux does with every release, until the other versions catch up), or only validations differ; info when nothing is lost: every field only one of the versions declares is under an object that keeps unknown fields in both, and accepts any object where declared (x-kubernetes-preserve-unknown-fields and no other check), so reads and writes through either version keep its values. Keep the schemas identical or add a conversion webhook.",
	}
	conversionWebhookRemoved = &Rule{
		ID: "conversion-webhook-removed", Severity: finding.Error, Level: CRDLevel,
		Summary: "Conversion strategy changed from Webhook to None while several versions are served.",
		Advice:  "objects are no longer converted between versions, only relabelled; keep the webhook while more than one version is served",
		Doc:     "Without the webhook, objects stored in one version are served in the others with only their apiVersion changed, so fields are lost or invalid. Keep the conversion webhook as long as several versions are served.",
	}
	conversionReviewVersionsChanged = &Rule{
		ID: "conversion-review-versions-changed", Severity: finding.Info, Level: CRDLevel,
		Summary: "The conversion webhook's conversionReviewVersions changed, but not the version the API server sends.",
		Doc:     "The API server sends its ConversionReview in the first version of conversionReviewVersions it speaks (v1 or v1beta1) and ignores the rest, so dropping or adding a later entry (`[v1, v1beta1]` → `[v1]`) changes nothing the webhook receives. When that first spoken version changes, or the webhook's address changes, the finding stays `unknown-change`: the webhook must speak the new version before the CRD is applied.",
	}
	conversionWebhookAdded = &Rule{
		ID: "conversion-webhook-added", Severity: finding.Info, Level: CRDLevel,
		Summary: "Conversion strategy changed from None to Webhook.",
		Doc:     "A conversion webhook is how versions with different schemas convert without losing fields. From now on the API server calls it whenever an object is read or written through a version other than the one it is stored in, so the webhook must be deployed and reachable before the CRD is applied.",
	}
	subresourceRemoved = &Rule{
		ID: "subresource-removed", Severity: finding.Error, Level: VersionLevel,
		Summary: "The status or scale subresource was removed.",
		Advice:  "controllers writing /status and autoscalers using /scale get 404s; keep the subresource",
		Doc:     "Controllers update status through the /status subresource and autoscalers (HPA, kubectl scale) use /scale. Removing either breaks them, and without the status subresource spec and status are written together again. Keep the subresource.",
	}
	subresourceAdded = &Rule{
		ID: "subresource-added", Severity: finding.Warning, Level: VersionLevel,
		Summary: "The status or scale subresource was added.",
		Advice:  "with a status subresource, writes to the main resource ignore status changes, so clients that set status that way lose them; make controllers write status through /status",
		Doc:     "Adding the status subresource changes the main resource's behaviour: status is ignored on create and update, and metadata.generation only increments on spec changes. Controllers that wrote status through the main resource silently lose those writes. Adding scale is safe.",
	}
	scaleSelectorAdded = &Rule{
		ID: "scale-selector-added", Severity: finding.Info, Level: VersionLevel,
		Summary: "The scale subresource got a labelSelectorPath whose field was already a string.",
		Doc:     "With a labelSelectorPath, /scale reports the selector the horizontal pod autoscaler needs for resource metrics. The API server also checks, on every write, that the value at that path is a string when it is set; when the old schema already declares that field a non-nullable string, every stored object passes and nothing else changes. A labelSelectorPath whose field may hold anything else (an object, null, an int-or-string, an undeclared field under x-kubernetes-preserve-unknown-fields), or any other change of the scale paths, stays `unknown-change`.",
	}
	versionAdded = &Rule{
		ID: "version-added", Severity: finding.Info, Level: VersionLevel,
		Summary: "A version was added.",
		Doc:     "A new version does not affect existing versions. If it is served next to others with a different schema, conversion-missing says whether objects convert.",
	}
	printerColumnsChanged = &Rule{
		ID: "printer-columns-changed", Severity: finding.Info, Level: VersionLevel,
		Summary: "additionalPrinterColumns changed.",
		Doc:     "Printer columns only change what kubectl get shows; scripts that parse its output may notice.",
	}
	deprecationChanged = &Rule{
		ID: "deprecation-changed", Severity: finding.Info, Level: VersionLevel,
		Summary: "A version's deprecated flag or deprecationWarning changed.",
		Doc:     "Deprecation only adds a warning to API responses; it is the recommended first step before a version stops being served.",
	}
)

var versionRules = []*Rule{
	storedVersionRemoved, servedVersionRemoved, versionRemoved, storageVersionChanged, conversionMissing,
	conversionWebhookRemoved, conversionReviewVersionsChanged, conversionWebhookAdded, subresourceRemoved, subresourceAdded, scaleSelectorAdded, versionAdded, printerColumnsChanged,
	deprecationChanged,
}

func compareVersions(e *emitter, opts Options) {
	o, w := e.pair.Old.Object, e.pair.New.Object
	stored := storedSet(o, opts.StoredVersions[e.pair.Name()])
	for v := range opts.StoredIn[e.pair.Name()] {
		stored[v] = true
	}
	for _, v := range w.Status.StoredVersions {
		stored[v] = true
	}
	for i := range o.Spec.Versions {
		ov := &o.Spec.Versions[i]
		nv := findVersion(w, ov.Name)
		at := e.pair.Old.VersionPath(ov.Name)
		switch {
		case nv == nil && stored[ov.Name]:
			f := e.version(storedVersionRemoved, ov.Name, finding.Base, at, ov.Name, nil, "version %s was removed but objects may be stored in it", ov.Name)
			if where := opts.StoredIn[e.pair.Name()][ov.Name]; where != "" && !storedSet(o, nil)[ov.Name] {
				f.Message = fmt.Sprintf("version %s was removed but objects may be stored in it: it was the storage version at %s, and clusters installed from there still list it in status.storedVersions: %s", ov.Name, where, storedVersionRemoved.Advice)
			}
		case nv == nil && ov.Served:
			servedRemoved(e, opts, ov, finding.Base, at, "version %s was removed", ov.Name)
		case nv == nil && opts.HistoryRead[e.pair.Name()]:
			f := e.version(versionRemoved, ov.Name, finding.Base, at, ov.Name, nil, "version %s (not served, not stored) was removed; no earlier release or commit stored it", ov.Name)
			f.Severity, f.Message = finding.Info, strings.TrimSuffix(f.Message, ": "+versionRemoved.Advice)
		case nv == nil:
			e.version(versionRemoved, ov.Name, finding.Base, at, ov.Name, nil, "version %s (not served, not stored in base) was removed", ov.Name)
		default:
			// Without the history, objects of an earlier release may be stored in any version.
			compareVersion(e, opts, ov, nv, stored[ov.Name] || nv.Storage || ov.Storage || !opts.HistoryRead[e.pair.Name()])
		}
	}
	for i := range w.Spec.Versions {
		nv := &w.Spec.Versions[i]
		if findVersion(o, nv.Name) == nil {
			e.version(versionAdded, nv.Name, finding.Head, e.pair.New.VersionPath(nv.Name), nil, nv.Name, "version %s was added", nv.Name)
		}
	}
	if os, ns := storageVersion(o), storageVersion(w); os != "" && ns != "" && os != ns {
		e.version(storageVersionChanged, ns, finding.Head, e.pair.New.VersionPath(ns).Join("storage"), os, ns, "storage version moved from %s to %s", os, ns)
	}
	compareConversion(e)
}

func servedRemoved(e *emitter, opts Options, ov *apiextv1.CustomResourceDefinitionVersion, side finding.Side, at crd.Path, format string, args ...any) {
	f := e.version(servedVersionRemoved, ov.Name, side, at, true, false, format, args...)
	if !ov.Deprecated {
		return
	}
	// Deprecation announces a removal; it does not make clients stop using the version.
	since := "in base"
	if when := opts.DeprecatedSince[e.pair.Name()][ov.Name]; when != "" {
		since = "since " + when
	}
	warning := ""
	if ov.DeprecationWarning != nil && *ov.DeprecationWarning != "" {
		warning = fmt.Sprintf(", warning %q", *ov.DeprecationWarning)
	}
	f.Message = fmt.Sprintf(format, args...) + fmt.Sprintf(" (deprecated %s%s): manifests and clients that still use it break all the same; when the removal is planned, acknowledge it (acknowledgeLabel)", since, warning)
}

// columnChanges names the printer columns added, removed and changed (by name), for the
// message and the changelog (in parentheses, which the changelog keeps): " (added Ready, Age;
// removed Status)", or " (their order)".
func columnChanges(old, new []apiextv1.CustomResourceColumnDefinition) string {
	before := map[string]apiextv1.CustomResourceColumnDefinition{}
	for _, c := range old {
		before[c.Name] = c
	}
	var added, changed, removed []string
	after := map[string]bool{}
	for _, c := range new {
		after[c.Name] = true
		o, ok := before[c.Name]
		switch {
		case !ok:
			added = append(added, c.Name)
		case !reflect.DeepEqual(o, c):
			changed = append(changed, c.Name)
		}
	}
	for _, c := range old {
		if !after[c.Name] {
			removed = append(removed, c.Name)
		}
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", added}, {"changed", changed}, {"removed", removed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	if len(parts) == 0 {
		return " (their order)"
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// deprecation says how a version's deprecation changed, with the warning clients now get: the
// changelog quotes it.
func deprecation(name string, ov, nv *apiextv1.CustomResourceDefinitionVersion) string {
	warning := ""
	if nv.DeprecationWarning != nil {
		warning = fmt.Sprintf(", with the warning %q", *nv.DeprecationWarning)
	}
	switch {
	case !nv.Deprecated:
		return name + " is no longer deprecated"
	case !ov.Deprecated:
		return name + " is now deprecated" + warning
	case nv.DeprecationWarning == nil:
		return "the deprecation warning of " + name + " was removed (clients get the default warning)"
	}
	return "the deprecation warning of " + name + " changed" + warning
}

func compareVersion(e *emitter, opts Options, ov, nv *apiextv1.CustomResourceDefinitionVersion, stored bool) {
	name := ov.Name
	if ov.Served && !nv.Served {
		servedRemoved(e, opts, ov, finding.Head, e.pair.New.VersionPath(name).Join("served"), "version %s is no longer served", name)
	}
	compareSubresources(e, name, ov.Subresources, nv.Subresources, schemaOf(ov))
	if !reflect.DeepEqual(ov.AdditionalPrinterColumns, nv.AdditionalPrinterColumns) {
		e.version(printerColumnsChanged, name, finding.Head, e.pair.New.VersionPath(name).Join("additionalPrinterColumns"), nil, nil, "printer columns of %s changed%s", name, columnChanges(ov.AdditionalPrinterColumns, nv.AdditionalPrinterColumns))
	}
	if ov.Deprecated != nv.Deprecated || !eqPtr(ov.DeprecationWarning, nv.DeprecationWarning) {
		e.version(deprecationChanged, name, finding.Head, e.pair.New.VersionPath(name).Join("deprecated"), ov.Deprecated, nv.Deprecated, "%s", deprecation(name, ov, nv))
	}
	compareSelectableFields(e, name, ov.SelectableFields, nv.SelectableFields)
	var unjudged []string
	os, ns := schemaOf(ov), schemaOf(nv)
	if !nv.Served && !stored {
		// No client reads or writes through it and the history shows no object was ever
		// stored in it: its schema constrains nothing (no longer serving it is
		// served-version-removed's finding).
		os, ns = nil, nil
	}
	switch {
	case os != nil && ns != nil:
		compareSchemas(e, name, os, ns)
	case os == nil && ns != nil:
		// A version without a schema (a v1beta1 CRD without validation) accepts any object:
		// it is compared as the empty schema, so only what the new schema demands counts
		// (what it prunes is the CRD's preserveUnknownFields finding).
		compareSchemas(e, name, &apiextv1.JSONSchemaProps{}, ns)
	case os != nil:
		unjudged = append(unjudged, "schema")
	}
	if len(unjudged) > 0 {
		e.version(unknownChange, name, finding.Head, e.pair.New.VersionPath(name).Join(unjudged[0]), nil, nil,
			"version %s changed in a way crdguard does not classify (%v)", name, unjudged)
	}
}

func compareSubresources(e *emitter, version string, o, w *apiextv1.CustomResourceSubresources, oldSchema *apiextv1.JSONSchemaProps) {
	var os, ws apiextv1.CustomResourceSubresources
	if o != nil {
		os = *o
	}
	if w != nil {
		ws = *w
	}
	for _, s := range []struct {
		name     string
		old, new bool
	}{{"status", os.Status != nil, ws.Status != nil}, {"scale", os.Scale != nil, ws.Scale != nil}} {
		switch {
		case s.old && !s.new:
			e.version(subresourceRemoved, version, finding.Base, e.pair.Old.SubresourcesPath(version).Join(s.name), s.name, nil, "the %s subresource of %s was removed", s.name, version)
		case !s.old && s.new:
			f := e.version(subresourceAdded, version, finding.Head, e.pair.New.SubresourcesPath(version).Join(s.name), nil, s.name, "the %s subresource of %s was added", s.name, version)
			if s.name == "scale" {
				f.Severity = finding.Info
			}
		}
	}
	if os.Scale == nil || ws.Scale == nil || reflect.DeepEqual(os.Scale, ws.Scale) {
		return
	}
	at := e.pair.New.SubresourcesPath(version).Join("scale")
	if sel := ws.Scale.LabelSelectorPath; os.Scale.LabelSelectorPath == nil && sel != nil &&
		os.Scale.SpecReplicasPath == ws.Scale.SpecReplicasPath && os.Scale.StatusReplicasPath == ws.Scale.StatusReplicasPath {
		switch stringField(e.pair.Old, oldSchema, *sel) {
		case declared:
			e.version(scaleSelectorAdded, version, finding.Head, at.Join("labelSelectorPath"), nil, *sel,
				"the scale subresource of %s now reports the selector at %s, which the old schema already declares a string", version, *sel)
			return
		case pruned:
			e.version(scaleSelectorAdded, version, finding.Head, at.Join("labelSelectorPath"), nil, *sel,
				"the scale subresource of %s now reports the selector at %s, a field the old schema did not declare, so no stored object holds it", version, *sel)
			return
		}
		e.version(unknownChange, version, finding.Head, at.Join("labelSelectorPath"), nil, *sel,
			"the scale subresource of %s now reports the selector at %s, which the old schema does not declare a non-nullable string: the API server refuses every write of an object whose value there is not a string", version, *sel)
		return
	}
	e.version(unknownChange, version, finding.Head, at, nil, nil,
		"the scale subresource paths of %s changed in a way crdguard does not classify", version)
}

// selectorField is what the old schema lets the field at a scale labelSelectorPath hold.
type selectorField int

const (
	anything selectorField = iota // possibly a value that is not a string
	declared                      // a string that cannot be null
	pruned                        // nothing: the field is undeclared and the API server drops it
)

// stringField says what the old schema lets a stored object hold at a simple JSON path
// (.status.selector): the API server's scale check refuses any write whose value there is set
// and not a string.
func stringField(c *crd.CRD, s *apiextv1.JSONSchemaProps, path string) selectorField {
	for _, name := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		if s == nil || s.Type != "object" {
			return anything
		}
		next := property(s, name)
		if next == nil {
			if dropsUnknown(c, s) {
				return pruned
			}
			return anything
		}
		s = next
	}
	if s.Type == "string" && !s.Nullable && !s.XIntOrString {
		return declared
	}
	return anything
}

func compareConversion(e *emitter) {
	o, w := e.pair.Old.Object, e.pair.New.Object
	os, ns := strategy(o), strategy(w)
	if os == apiextv1.WebhookConverter && ns == apiextv1.NoneConverter && len(servedVersions(w)) > 1 {
		e.crd(conversionWebhookRemoved, finding.Head, crd.Path{"spec", "conversion", "strategy"}, string(os), string(ns), "conversion strategy changed from Webhook to None while %d versions are served", len(servedVersions(w)))
	}
	if os == apiextv1.NoneConverter && ns == apiextv1.WebhookConverter {
		e.crd(conversionWebhookAdded, finding.Head, crd.Path{"spec", "conversion", "strategy"}, string(os), string(ns), "conversion strategy changed from None to Webhook")
	}
	if os == ns && os == apiextv1.WebhookConverter && !reflect.DeepEqual(o.Spec.Conversion.Webhook, w.Spec.Conversion.Webhook) {
		ow, nw := o.Spec.Conversion.Webhook, w.Spec.Conversion.Webhook
		if ow != nil && nw != nil && reflect.DeepEqual(ow.ClientConfig, nw.ClientConfig) {
			at := crd.Path{"spec", "conversion", "webhook", "conversionReviewVersions"}
			if sent(ow.ConversionReviewVersions) == sent(nw.ConversionReviewVersions) && sent(nw.ConversionReviewVersions) != "" {
				e.crd(conversionReviewVersionsChanged, finding.Head, at, ow.ConversionReviewVersions, nw.ConversionReviewVersions,
					"conversionReviewVersions changed from %v to %v: the API server still sends ConversionReview %s, the first of them it speaks", ow.ConversionReviewVersions, nw.ConversionReviewVersions, sent(nw.ConversionReviewVersions))
				return
			}
			e.crd(unknownChange, finding.Head, at, ow.ConversionReviewVersions, nw.ConversionReviewVersions,
				"conversionReviewVersions changed from %v to %v: the API server now sends ConversionReview %s instead of %s, which the deployed webhook must speak before the CRD is applied", ow.ConversionReviewVersions, nw.ConversionReviewVersions, orNone(sent(nw.ConversionReviewVersions)), orNone(sent(ow.ConversionReviewVersions)))
			return
		}
		e.crd(unknownChange, finding.Head, crd.Path{"spec", "conversion", "webhook"}, nil, nil, "the conversion webhook configuration changed in a way crdguard does not classify")
	}
	if ns == apiextv1.NoneConverter {
		checkConversionMissing(e)
	}
}

func strategy(c *apiextv1.CustomResourceDefinition) apiextv1.ConversionStrategyType {
	if c.Spec.Conversion == nil || c.Spec.Conversion.Strategy == "" {
		return apiextv1.NoneConverter
	}
	return c.Spec.Conversion.Strategy
}

func findVersion(c *apiextv1.CustomResourceDefinition, name string) *apiextv1.CustomResourceDefinitionVersion {
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Name == name {
			return &c.Spec.Versions[i]
		}
	}
	return nil
}

func storageVersion(c *apiextv1.CustomResourceDefinition) string {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

func servedVersions(c *apiextv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range c.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}

// storedSet is every version objects may be stored in: the storage version, the versions the
// CRD's status lists, and any the caller knows of (baselines, a live cluster).
func storedSet(c *apiextv1.CustomResourceDefinition, extra []string) map[string]bool {
	m := map[string]bool{}
	if s := storageVersion(c); s != "" {
		m[s] = true
	}
	for _, v := range slices.Concat(c.Status.StoredVersions, extra) {
		m[v] = true
	}
	return m
}

func schemaOf(v *apiextv1.CustomResourceDefinitionVersion) *apiextv1.JSONSchemaProps {
	if v.Schema == nil {
		return nil
	}
	return v.Schema.OpenAPIV3Schema
}

// sent is the ConversionReview version the API server sends a webhook that lists these: the
// first it speaks (apiextensions-apiserver's createConversionReviewObjects), "" for none.
func sent(versions []string) string {
	for _, v := range versions {
		if v == "v1" || v == "v1beta1" {
			return v
		}
	}
	return ""
}

func orNone(v string) string {
	if v == "" {
		return "none (conversion fails)"
	}
	return v
}
