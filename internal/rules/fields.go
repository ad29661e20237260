package rules

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/celproof"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/k8stypes"
)

// Structural changes: fields, required, types, nullability, pruning and the x-kubernetes
// extensions that change how stored data is read. Validation ratcheting never rescues these.

var (
	fieldRemoved = &Rule{
		ID: "field-removed", Severity: finding.Error, Level: PropertyLevel, Twin: "field-added",
		Summary: "A property was removed from the schema.",
		Advice:  "clients that set it are rejected or silently lose it, and stored values are pruned on the next write; keep the field and mark it deprecated, or add a new version with a conversion webhook",
		Doc:     "Removing a property breaks every client that still sends it (strict clients get an error, others lose the value) and the API server prunes the stored value the next time the object is written, so the data is gone for good. Only the topmost removed property is reported. When the object gains a property of the same type and shape beside it (the same properties all the way down; for a string, a number or a list of them, a name akin to the old one, such as resource and resources) and no other property fits, the one finding says so (renamed?) and names it: a rename breaks what a removal breaks, and the addition is not reported on its own. Keep the field and document it as deprecated, or remove it only in a new API version served next to the old one with a conversion webhook that carries the value.",
	}
	fieldAdded = &Rule{
		ID: "field-added", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An optional property was added.",
		Doc:     "Adding an optional property is safe: existing objects simply do not set it. If the new property is also required, required-added reports that separately.",
	}
	requiredAdded = &Rule{
		ID: "required-added", Severity: finding.Error, Level: PropertyLevel, Twin: "required-removed",
		Summary: "A property of an existing object became required.",
		Advice:  defaultRequiredRatchet.Stored("stored objects without it") + "; old clients cannot create objects; give it a default instead, or require it only in a new version",
		Doc:     "Making a property required invalidates every stored object that does not set it, and clients built against the old schema cannot create new ones. The API server checks required on the parent object, so validation ratcheting (Kubernetes 1.30 and later) lets a stored object without the property keep updating only while the update leaves that parent object as it is (a write through /status, or of labels, when the parent is .spec); any other change to it fails, and at the root of the object no update passes. Give the property a default so it is filled in for everyone, or make it required only in a new API version. A required property inside an object that is itself new is not reported.",
	}
	requiredRemoved = &Rule{
		ID: "required-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A property is no longer required.",
		Doc:     "Relaxing required is safe for stored objects and clients; readers must now cope with the property being absent.",
	}
	typeChanged = &Rule{
		ID: "type-changed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "The type of a property changed.",
		Advice:  "stored values of the old type no longer validate and clients send the old type; add a new property (or version) with the new type instead",
		Doc:     "Changing a property's type makes every stored value of the old type invalid and breaks every client that sends it. The change is reported once for the property, not for each of its children. Add a new property with the new type and deprecate the old one, or introduce a new API version with a conversion webhook. A CRD moved from apiextensions.k8s.io/v1beta1 to v1 gets a type at every node the v1beta1 schema left untyped, as v1 requires: each such node is still an error (a value of another type is refused), and all of them are one change of the CRD in reports, with the advice for that move.",
	}
	nullableRemoved = &Rule{
		ID: "nullable-removed", Severity: finding.Error, Level: PropertyLevel, Twin: "nullable-added",
		Summary: "nullable: true was dropped.",
		Advice:  "clients that send null are now rejected (or have the field pruned); keep nullable: true",
		Doc:     "Without nullable, an explicit null is no longer accepted for the property, so clients and GitOps manifests that send null start failing. Keep nullable: true.",
	}
	nullableAdded = &Rule{
		ID: "nullable-added", Severity: finding.Warning, Level: PropertyLevel,
		Summary: "nullable: true was added.",
		Advice:  "readers that never saw null for this field may now receive it",
		Doc:     "Allowing null is safe for writers, but controllers and clients that read the field may not expect null values; check them before merging.",
	}
	preserveUnknownRemoved = &Rule{
		ID: "preserve-unknown-fields-removed", Severity: finding.Error, Level: PropertyLevel, Twin: "preserve-unknown-fields-added",
		Summary: "x-kubernetes-preserve-unknown-fields was dropped, so unknown fields are pruned (info when it moved from the root to spec and status, or the CRD keeps every unknown field).",
		Advice:  "every field the schema does not list is silently deleted from stored objects on their next write; keep the marker, or list every field in use first",
		Doc:     "Dropping x-kubernetes-preserve-unknown-fields (or spec.preserveUnknownFields) turns on pruning: every field that the schema does not list is removed from objects when they are next written, without an error. Keep the marker, or first describe every field that objects actually carry. When the marker moves from the root to spec and status (both declared, and every property the root newly declares keeps every value), only top-level fields other than apiVersion, kind, metadata, spec and status are pruned, which objects of a kind do not hold: info saying so. A marker kept on an ancestor does not protect a node that declares its own schema (the API server prunes each declared property by its own schema), so elsewhere the removal stays an error. A node's marker dropped in a CRD that still keeps every unknown field (a v1beta1 CRD's spec.preserveUnknownFields, true by default there) prunes nothing: info saying so; the same drop where the new CRD prunes is an error.",
	}
	preserveUnknownAdded = &Rule{
		ID: "preserve-unknown-fields-added", Severity: finding.Info, Level: PropertyLevel,
		Summary: "x-kubernetes-preserve-unknown-fields was added.",
		Doc:     "Keeping unknown fields instead of pruning them is safe for stored data.",
	}
	intOrStringRemoved = &Rule{
		ID: "int-or-string-removed", Severity: finding.Error, Level: PropertyLevel, Twin: "int-or-string-added",
		Summary: "x-kubernetes-int-or-string was dropped.",
		Advice:  "stored values of the other kind (number or string) no longer validate; keep int-or-string",
		Doc:     "A property that accepted both integers and strings now accepts only one of them: stored objects and clients that use the other kind fail validation. Keep x-kubernetes-int-or-string.",
	}
	intOrStringAdded = &Rule{
		ID: "int-or-string-added", Severity: finding.Info, Level: PropertyLevel,
		Summary: "x-kubernetes-int-or-string was added (integer or string now accepted).",
		Doc:     "Accepting both integers and strings where one of them was accepted before is safe for writers; readers must handle both.",
	}
	additionalPropertiesRemoved = &Rule{
		ID: "additional-properties-removed", Severity: finding.Error, Level: PropertyLevel, Twin: "additional-properties-added",
		Summary: "A map lost its value schema or was closed.",
		Advice:  "the map's entries are pruned from stored objects or rejected; keep additionalProperties",
		Doc:     "Removing additionalProperties (or setting it to false) makes the object stop accepting arbitrary keys: existing entries are pruned from stored objects and clients that set them are rejected. Keep the map's value schema.",
	}
	additionalPropertiesAdded = &Rule{
		ID: "additional-properties-added", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An object now accepts arbitrary keys (additionalProperties added).",
		Doc:     "Opening an object to arbitrary keys is safe for stored data and clients.",
	}
	mapValuesTyped = &Rule{
		ID: "map-values-typed", Severity: finding.Error, Level: PropertyLevel, Twin: "preserve-unknown-fields-added",
		Summary: "An object that kept every key with any value now checks its values against a value schema (additionalProperties).",
		Advice:  "an entry whose value does not match is refused on create and whenever an update changes it (validation ratcheting lets an unchanged stored entry through), and clients that send one are rejected; check the values in use, or keep the values free-form",
		Doc:     "A free-form object (no properties, unknown fields kept — by x-kubernetes-preserve-unknown-fields, or by a v1beta1 CRD's preserveUnknownFields, its default) accepts and keeps every key with any value. Giving it additionalProperties with a schema keeps every key but now checks each value against that schema (strings only, a quantity pattern, typed objects whose unknown fields are pruned): an entry of another kind is refused when an object is created with it or an update changes it (validation ratcheting, Kubernetes 1.30 and later, lets an unchanged stored entry through), and clients that send one are rejected. This is the usual v1beta1 → v1 migration of a map; it is not the loosening 'now accepts arbitrary keys' (additional-properties-added), which is reported only where the old object did not keep its keys. The finding carries a value the old schema accepted and the new one refuses. Check the values in use before merging.",
	}
	listItemsTyped = &Rule{
		ID: "list-items-typed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "A list without an items schema, whose items could be any value, now checks them against one.",
		Advice:  "an item that does not match is refused on create and whenever an update changes the list, and clients that send one are rejected; check the items in use, or keep the items free-form",
		Doc:     "A v1beta1 CRD may give a list no items schema (a hand-written schema, or properties written where items belonged): every item is accepted, whatever its kind. Giving the list an items schema — the usual v1beta1 → v1 migration, since v1 requires one — checks every item against it: an item of another kind, or an object item without a field the schema requires, is refused when an object is created with it or an update changes the list, and clients that send one are rejected. The finding carries a list the old schema accepted and the new one refuses. Check the items in use before merging.",
	}
	embeddedResourceChanged = &Rule{
		ID: "embedded-resource-changed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "x-kubernetes-embedded-resource changed.",
		Advice:  "the API server validates and prunes the embedded object differently (apiVersion, kind and metadata); keep the marker as it was",
		Doc:     "x-kubernetes-embedded-resource makes the server treat the value as a Kubernetes object (apiVersion, kind, metadata are validated and kept). Adding or removing it changes what stored objects are allowed to contain and what is pruned. Keep it as it was, or change it only in a new version.",
	}
)

var fieldRules = []*Rule{
	fieldRemoved, fieldAdded, requiredAdded, requiredRemoved, typeChanged, nullableRemoved, nullableAdded,
	preserveUnknownRemoved, preserveUnknownAdded, intOrStringRemoved, intOrStringAdded,
	additionalPropertiesRemoved, additionalPropertiesAdded, mapValuesTyped, listItemsTyped, embeddedResourceChanged,
}

// checkIntOrString runs before checkType: int-or-string usually comes with the type keyword
// disappearing or appearing, which is not a type change of its own.
func checkIntOrString(n *node) {
	if !n.changed(kwIntOrString) {
		return
	}
	n.judge(kwIntOrString)
	if n.new.XIntOrString {
		n.emit(intOrStringAdded, finding.Head, n.keyAt(finding.Head, kwIntOrString), n.old.Type, "int-or-string", "%s now accepts integers and strings", n.path)
		if n.new.Type == "" && (n.old.Type == "integer" || n.old.Type == "string") {
			n.judge(kwType)
		}
		if len(n.old.AnyOf) == 0 && intOrStringBranches(n.new.AnyOf) {
			// The anyOf controller-gen writes for an IntOrString (a structural schema may carry
			// one with int-or-string) accepts both kinds: it is this finding, not a combinator.
			n.judge(kwAnyOf)
		}
		return
	}
	n.emit(intOrStringRemoved, finding.Base, n.keyAt(finding.Base, kwIntOrString), "int-or-string", n.new.Type, "%s no longer accepts both integers and strings", n.path)
	n.judge(kwType) // the remaining type is part of this finding
	n.stop = true
}

// intOrStringBranches reports whether branches are exactly {type: integer} and {type: string}.
func intOrStringBranches(branches []apiextv1.JSONSchemaProps) bool {
	if len(branches) != 2 {
		return false
	}
	types := []string{branches[0].Type, branches[1].Type}
	slices.Sort(types)
	return slices.Equal(types, []string{"integer", "string"}) &&
		reflect.DeepEqual(branches[0], apiextv1.JSONSchemaProps{Type: branches[0].Type}) &&
		reflect.DeepEqual(branches[1], apiextv1.JSONSchemaProps{Type: branches[1].Type})
}

func checkType(n *node) {
	if !n.changed(kwType) || n.judged&(1<<kwType) != 0 || typeLoosened(n) {
		return
	}
	// Between unset and object, the node's properties mean the same on both sides (the usual
	// v1beta1 → v1 migration adds type: object everywhere), so the walk goes on beneath it: a
	// field removed or newly required there is a break of its own. At the root it is no change
	// at all: every custom resource is an object.
	objectOrUnset := n.old.Type+n.new.Type == "object"
	if objectOrUnset && n.path == "." {
		n.judge(kwType)
		return
	}
	n.judge(kwType)
	f := n.emit(typeChanged, sideOf(n.new.Type != ""), n.keyAt(sideOf(n.new.Type != ""), kwType), orNil(n.old.Type), orNil(n.new.Type),
		"type of %s changed from %s to %s", n.path, quoteOr(n.old.Type, "any"), quoteOr(n.new.Type, "any"))
	if n.old.Type == "" && n.e.movedToV1() {
		// v1 requires a type at every node, so the move types every node the v1beta1 schema
		// left untyped at once: each node refuses values it accepted (3 where an object now
		// is), and all of them are one change of the CRD.
		f.Cause = finding.CauseV1Typed
		advise(f, typeChanged, "apiextensions.k8s.io/v1 requires a type at every node the v1beta1 schema left untyped; a stored value of another type no longer validates: check that none exists, or keep the node untyped with x-kubernetes-preserve-unknown-fields: true")
	}
	n.stop = !objectOrUnset // otherwise one finding: the children of a changed type are moot
}

// movedToV1 reports a CRD whose base document is apiextensions.k8s.io/v1beta1 and whose head
// document is v1.
func (e *emitter) movedToV1() bool {
	return e.pair.Old != nil && e.pair.New != nil && e.pair.Old.APIVersion == crd.GroupVersionV1beta1 && e.pair.New.APIVersion == crd.GroupVersionV1
}

func checkFields(n *node) {
	o, w := n.old, n.new
	if n.changed(kwRequired) {
		n.judge(kwRequired)
		for _, name := range w.Required {
			if !slices.Contains(o.Required, name) && !(n.path == "." && alwaysSet[name]) {
				f := n.emitAt(requiredAdded, childPath(n.path, name), finding.Head, n.at(finding.Head, "required", crd.StringItem(name)), false, true,
					"%s is now required", childPath(n.path, name))
				f.Message = reratchet(f.Message, defaultRequiredRatchet, n.ratchet(RequiredRatchet(n.path)))
			}
		}
		for _, name := range o.Required {
			if !slices.Contains(w.Required, name) {
				n.emitAt(requiredRemoved, childPath(n.path, name), finding.Base, n.at(finding.Base, "required", crd.StringItem(name)), true, false,
					"%s is no longer required", childPath(n.path, name))
			}
		}
	}
	checkMapValuesTyped(n)
	checkListItemsTyped(n)
	if n.changed(kwPreserveUnknownFields) && n.judged&(1<<kwPreserveUnknownFields) == 0 {
		n.judge(kwPreserveUnknownFields)
		if !prunable(o.Type) && !prunable(w.Type) {
			// Pruning only removes keys of objects: on a scalar or list the marker is a no-op
			// (controller-gen emits it on booleans and strings, and later drops it).
		} else if isTrue(w.XPreserveUnknownFields) {
			n.emit(preserveUnknownAdded, finding.Head, n.keyAt(finding.Head, kwPreserveUnknownFields), false, true, "%s now keeps unknown fields", n.path)
		} else {
			f := n.emit(preserveUnknownRemoved, finding.Base, n.keyAt(finding.Base, kwPreserveUnknownFields), true, false, "unknown fields under %s will be pruned", n.path)
			switch {
			case n.e.pair.New.Object.Spec.PreserveUnknownFields:
				// A CRD that keeps every unknown field (a v1beta1 CRD's preserveUnknownFields,
				// true by default there) prunes nothing, marker or not.
				f.Severity = finding.Info
				f.Message = fmt.Sprintf("%s no longer has x-kubernetes-preserve-unknown-fields, but the CRD keeps every unknown field (spec.preserveUnknownFields): nothing is pruned", n.path)
			case rootKeepsSpecAndStatus(n):
				f.Severity = finding.Info
				f.Message = "the object's top level no longer keeps unknown fields, but spec and status still keep theirs: only top-level fields other than apiVersion, kind, metadata, spec and status are pruned"
			}
		}
	}
	if n.changed(kwEmbeddedResource) {
		n.judge(kwEmbeddedResource)
		n.emit(embeddedResourceChanged, sideOf(w.XEmbeddedResource), n.keyAt(sideOf(w.XEmbeddedResource), kwEmbeddedResource), o.XEmbeddedResource, w.XEmbeddedResource,
			"x-kubernetes-embedded-resource of %s changed from %t to %t", n.path, o.XEmbeddedResource, w.XEmbeddedResource)
	}
	checkAdditionalProperties(n)
}

// alwaysSet are the root properties every object the API server validates has, so requiring
// them rejects nothing (controller-gen writes required: [metadata, spec] at the root).
var alwaysSet = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

func checkAdditionalProperties(n *node) {
	if !n.changed(kwAdditionalProperties) || n.judged&(1<<kwAdditionalProperties) != 0 {
		return
	}
	o, w := n.old.AdditionalProperties, n.new.AdditionalProperties
	oldOpen := o != nil && (o.Schema != nil || o.Allows)
	newOpen := w != nil && (w.Schema != nil || w.Allows)
	switch {
	case oldOpen && !newOpen && isTrue(n.new.XPreserveUnknownFields) && len(n.new.Properties) == 0:
		// Every key is still kept and no value is checked any more: a loosening, which
		// preserve-unknown-fields-added reports. With properties, a key the old map accepted
		// may now meet a property schema that refuses its value.
		n.judge(kwAdditionalProperties)
	case oldOpen && !newOpen:
		n.judge(kwAdditionalProperties)
		n.emit(additionalPropertiesRemoved, finding.Base, n.keyAt(finding.Base, kwAdditionalProperties), true, false, "%s no longer accepts arbitrary keys", n.path)
	case !oldOpen && newOpen:
		n.judge(kwAdditionalProperties)
		n.emit(additionalPropertiesAdded, finding.Head, n.keyAt(finding.Head, kwAdditionalProperties), false, true, "%s now accepts arbitrary keys", n.path)
	}
}

func checkNullable(n *node) {
	if !n.changed(kwNullable) {
		return
	}
	n.judge(kwNullable)
	if n.new.Nullable {
		n.emit(nullableAdded, finding.Head, n.keyAt(finding.Head, kwNullable), false, true, "%s now accepts null", n.path)
	} else {
		n.emit(nullableRemoved, finding.Base, n.keyAt(finding.Base, kwNullable), true, false, "%s no longer accepts null", n.path)
	}
}

// fieldRemoved reports a removed property; to, when set, is the property added beside it with
// the same type and shape (renames), named in the same finding.
func (n *node) fieldRemoved(name, to string) {
	// A rename is one finding, the removal's, with its rule and severity: a rename breaks what a
	// removal breaks (stored values under the old name are pruned, clients sending it lose it).
	also := ""
	if to != "" {
		also = ", and " + childPath(n.path, to) + " was added beside it with the same type and shape (renamed?)"
	}
	var f *finding.Finding
	switch {
	case isTrue(n.new.XPreserveUnknownFields):
		f = n.fieldUnlisted(name, "which keeps unknown fields", also)
	case n.e.pair.New.Object.Spec.PreserveUnknownFields && prunable(n.new.Type):
		f = n.fieldUnlisted(name, "and the CRD keeps unknown fields (spec.preserveUnknownFields)", also)
	case n.fieldNeverHonoured(name):
		return
	default:
		old := n.old.Properties[name]
		f = n.emitAt(fieldRemoved, childPath(n.path, name), finding.Base, n.at(finding.Base, "properties", name), orNil(old.Type), nil,
			"%s was removed%s", childPath(n.path, name), also)
	}
	if to != "" {
		head := n.e.doc(finding.Head)
		f.RenamedTo = &finding.Renamed{Path: childPath(n.path, to),
			Location: finding.Location{File: head.File, Line: head.LineOf(n.at(finding.Head, "properties", to)), Side: finding.Head}}
	}
}

// renames pairs removed properties of this node's object with added ones of the same type and
// shape (sameShape): by removed name, the added name it was most likely renamed to. A shape
// without structure (a string, a list of strings) is common, so there the names must be akin
// too (resource → resources, color → colour; not prefix → region). A pair counts only when
// neither has another candidate (two removed strings and one added string say nothing about
// which was renamed), and never for a property k8s.io/api dropped from a built-in type, which
// was not renamed. Two versions of one CRD compared for conversion-missing list each
// difference on its own (e.renamesOff).
func (n *node) renames(names, added []string) map[string]string {
	if n.e.renamesOff {
		return nil
	}
	var removed []string
	for _, name := range names {
		if _, kept := n.new.Properties[name]; !kept && k8stypes.UnhonouredWhy(n.place(finding.Head), name) == "" {
			removed = append(removed, name)
		}
	}
	if len(removed) == 0 || len(added) == 0 {
		return nil
	}
	alike := func(r, a string) bool {
		ro, an := n.old.Properties[r], n.new.Properties[a]
		return sameShape(&ro, &an) && (structured(&ro) || akin(r, a))
	}
	out := map[string]string{}
	for _, r := range removed {
		var to []string
		for _, a := range added {
			if alike(r, a) {
				to = append(to, a)
			}
		}
		if len(to) != 1 {
			continue
		}
		from := 0
		for _, other := range removed {
			if alike(other, to[0]) {
				from++
			}
		}
		if from == 1 {
			out[r] = to[0]
		}
	}
	return out
}

// structured reports whether a node's shape says more than its type: it has properties, or
// holds items or map values that do.
func structured(s *apiextv1.JSONSchemaProps) bool {
	switch {
	case len(s.Properties) > 0:
		return true
	case s.Items != nil && s.Items.Schema != nil:
		return structured(s.Items.Schema)
	case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return structured(s.AdditionalProperties.Schema)
	}
	return false
}

// akin reports whether two property names look like one renamed: one holds the other (of three
// letters or more), or they differ by one edit in five letters (color, colour), case aside.
func akin(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 3 && strings.Contains(b, a) || crd.EditDistance(a, b) <= len(a)/5
}

// sameShape reports whether two schema nodes hold values of the same shape: the same type and
// int-or-string, the same x-kubernetes markers that decide what is kept (preserve-unknown-fields,
// embedded-resource), the same property names, each of the same shape, and items and map values
// of the same shape. Validations and documentation are not compared: a renamed field often gains
// a check or a better description on the way.
func sameShape(a, b *apiextv1.JSONSchemaProps) bool {
	if a.Type != b.Type || a.XIntOrString != b.XIntOrString || isTrue(a.XPreserveUnknownFields) != isTrue(b.XPreserveUnknownFields) ||
		a.XEmbeddedResource != b.XEmbeddedResource || len(a.Properties) != len(b.Properties) {
		return false
	}
	for name, ap := range a.Properties {
		bp, ok := b.Properties[name]
		if !ok || !sameShape(&ap, &bp) {
			return false
		}
	}
	ai, bi := a.Items != nil && a.Items.Schema != nil, b.Items != nil && b.Items.Schema != nil
	if ai != bi || ai && !sameShape(a.Items.Schema, b.Items.Schema) {
		return false
	}
	am, bm := a.AdditionalProperties, b.AdditionalProperties
	switch {
	case (am == nil) != (bm == nil):
		return false
	case am == nil:
		return true
	case am.Allows != bm.Allows || (am.Schema == nil) != (bm.Schema == nil):
		return false
	}
	return am.Schema == nil || sameShape(am.Schema, bm.Schema)
}

func (n *node) fieldAdded(name string) {
	nw := n.new.Properties[name]
	n.emitAt(fieldAdded, childPath(n.path, name), finding.Head, n.at(finding.Head, "properties", name), nil, orNil(nw.Type),
		"%s was added", childPath(n.path, name))
}

// prunable reports whether values of a schema type can carry unknown fields to prune: objects,
// and untyped nodes that may hold objects.
func prunable(typ string) bool { return typ == "object" || typ == "" }

// checkMapValuesTyped judges a free-form object that becomes a typed map: the old node kept every
// key with any value (keepsEveryValue), the new one keeps every key too but checks the values
// against additionalProperties. No key is pruned, so it is neither preserve-unknown-fields-removed
// nor additional-properties-added: it is map-values-typed, with a value now refused, unless the
// value schema accepts and keeps anything.
func checkMapValuesTyped(n *node) {
	w := n.new.AdditionalProperties
	if !n.changed(kwAdditionalProperties) || w == nil || w.Schema == nil || len(n.new.Properties) > 0 || !keepsEveryValue(n.e.pair.Old, n.old) {
		return
	}
	n.judge(kwAdditionalProperties, kwPreserveUnknownFields)
	values, anything := freeSchema(w.Schema)
	if anything {
		return // any value, unknown fields kept: the same map
	}
	pruned := ""
	if prunable(values.Type) && !values.XIntOrString && dropsUnknown(n.e.pair.New, &values) {
		pruned = ", and fields inside a value that the value schema does not list are pruned"
	}
	example, used := n.refusedAt(celproof.MapValues)
	shown := ""
	if example != nil {
		shown = fmt.Sprintf(": e.g. an entry with the value %s was accepted and is now rejected", used)
	}
	f := n.emit(mapValuesTyped, finding.Head, n.keyAt(finding.Head, kwAdditionalProperties), "any", orNil(values.Type),
		"%s kept every key with any value and now accepts only %s%s%s", n.path, acceptedKind(values, "values", "its value schema"), pruned, shown)
	if example != nil {
		f.Example = finding.Value(example)
	}
}

// checkListItemsTyped judges a list without an items schema (v1beta1 allowed one: its items were
// any values) that gains one: every item is now checked against it, an item of another kind is
// refused. Unless the items schema accepts and keeps anything, it is list-items-typed, with an
// item now refused.
func checkListItemsTyped(n *node) {
	w := n.new.Items
	if !n.changed(kwItems) || n.old.Items != nil || w == nil || w.Schema == nil || n.new.Type != "array" || n.old.Type != "array" {
		return
	}
	n.judge(kwItems)
	items, anything := freeSchema(w.Schema)
	if anything {
		return
	}
	example, used := n.refusedAt(celproof.Items)
	shown := ""
	if example != nil {
		shown = fmt.Sprintf(": e.g. the item %s was accepted and is now rejected", used)
	}
	f := n.emit(listItemsTyped, finding.Head, n.keyAt(finding.Head, kwItems), "any", orNil(items.Type),
		"%s accepted items of any kind and now accepts only %s%s", n.path, acceptedKind(items, "items", "its items schema"), shown)
	if example != nil {
		f.Example = finding.Value(example)
	}
}

// freeSchema is s without its documentation, and whether it accepts and keeps any value.
func freeSchema(s *apiextv1.JSONSchemaProps) (apiextv1.JSONSchemaProps, bool) {
	c := *s
	c.Description, c.Title, c.Example, c.ExternalDocs = "", "", nil, nil
	return c, reflect.DeepEqual(c, apiextv1.JSONSchemaProps{XPreserveUnknownFields: c.XPreserveUnknownFields}) && isTrue(c.XPreserveUnknownFields)
}

// acceptedKind says what values of schema s are accepted, as "<kind> <noun>" (string values,
// integers or strings, object items …).
func acceptedKind(s apiextv1.JSONSchemaProps, noun, schema string) string {
	switch {
	case s.XIntOrString && s.Pattern != "":
		return "integers, or strings matching its pattern"
	case s.XIntOrString:
		return "integers or strings"
	case s.Type == "string" && s.Pattern != "":
		return "strings matching its pattern"
	case s.Type != "":
		return s.Type + " " + noun
	}
	return noun + " matching " + schema
}

// refusedAt is an object the old schema accepts and the new one refuses with one of anyValues
// as a value of the node's map values or list items (kind), and that value in JSON; nil when
// none is refused or the node cannot be reached.
func (n *node) refusedAt(kind celproof.StepKind) (map[string]any, string) {
	steps, ok := n.steps()
	if !ok {
		return nil, ""
	}
	example, used := n.e.judge(n.version).Refused(append(steps, celproof.Step{Kind: kind}), anyValues, func(*field.Error) bool { return true })
	if example == nil {
		return nil, ""
	}
	b, _ := json.Marshal(used)
	return example, string(b)
}

// anyValues are the values tried, in turn, as an entry of a map whose values became typed: one
// of each JSON kind, so that whatever the value schema asks, one of them is likely refused.
var anyValues = []any{int64(0), "a", true, map[string]any{}, []any{}, 0.5}

// rootKeepsSpecAndStatus reports whether n is the root and every property it newly declares
// (spec and status among them) keeps every value, so dropping the root's marker prunes only
// top-level keys an object of the kind does not use; a property old already declared was
// pruned by its own schema before, and its own rules compare it.
func rootKeepsSpecAndStatus(n *node) bool {
	if n.parent != nil || n.new.AdditionalProperties != nil {
		return false
	}
	if _, ok := n.new.Properties["spec"]; !ok {
		return false
	}
	if _, ok := n.new.Properties["status"]; !ok {
		return false
	}
	for name, s := range n.new.Properties {
		if _, declared := n.old.Properties[name]; !declared && !keepsEveryValue(n.e.pair.New, &s) {
			return false
		}
	}
	return true
}

// keepsEveryValue reports whether a node of c keeps every key of its objects with any value: an
// object (or untyped node) with no properties and no value schema that keeps unknown fields, by
// its own x-kubernetes-preserve-unknown-fields or by a v1beta1 CRD's preserveUnknownFields.
func keepsEveryValue(c *crd.CRD, s *apiextv1.JSONSchemaProps) bool {
	return prunable(s.Type) && len(s.Properties) == 0 && s.AdditionalProperties == nil &&
		(c.Object.Spec.PreserveUnknownFields || isTrue(s.XPreserveUnknownFields))
}
