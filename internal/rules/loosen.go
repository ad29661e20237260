package rules

import (
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/crdguard/crdguard/internal/finding"
)

// Loosenings that look like tightenings by name: the keyword changes the same way as in a
// breaking change, but what the API server accepts or keeps only grows.

var (
	typeRemoved = &Rule{
		ID: "type-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "type was dropped from a node that keeps unknown fields, so it accepts any value.",
		Doc:     "Without type, a node marked x-kubernetes-preserve-unknown-fields: true, or any node of a v1beta1 CRD whose spec.preserveUnknownFields is true (its default there), accepts any JSON value, and what it held before is kept as it was, so no stored object or client breaks. Readers (controllers) may now receive values of other types and must cope with them. A list's items schema dropped with the type is part of the same loosening when it only checks values (no default, list type or map type anywhere in it); otherwise what it did is left to unknown-change.",
	}
	formatUnenforced = &Rule{
		ID: "format-unenforced", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A format was added or changed that the API server does not enforce for the node's type.",
		Doc:     "The API server checks string formats it knows (date-time, uri, email, k8s-short-name, …; password accepts any string) and, on numbers, only the ranges of int32 and float. int64 on integers, double on numbers, formats on other types and unknown names are documentation for clients and code generators: every value that passed before still passes.",
	}
	fieldUnlisted = &Rule{
		ID: "field-unlisted", Severity: finding.Warning, Level: PropertyLevel,
		Summary: "A property was removed from an object that keeps unknown fields (x-kubernetes-preserve-unknown-fields, or a v1beta1 CRD's preserveUnknownFields).",
		Advice:  "stored values are kept, but no longer validated or defaulted, and typed clients generated from the schema lose the field; keep it listed if clients use it",
		Doc:     "The object keeps fields its schema does not list, so the removed property's values are neither pruned nor rejected: no data is lost. But its validations and defaults no longer apply, and clients and documentation generated from the schema no longer know the field. Keep the property listed while clients depend on it.",
	}
)

var looseningRules = []*Rule{typeRemoved, formatUnenforced, fieldUnlisted}

// typeLoosened handles a type that disappeared where the new node keeps unknown fields, by its
// own x-kubernetes-preserve-unknown-fields or because the new CRD prunes nothing (a v1beta1
// CRD's preserveUnknownFields, true by default there, which lets a schema leave types out): the
// node accepts anything now, what it held is kept, and the walk goes on below it.
func typeLoosened(n *node) bool {
	if n.old.Type == "" || n.new.Type != "" {
		return false
	}
	keeps := "keeps unknown fields"
	switch {
	case isTrue(n.new.XPreserveUnknownFields):
	case n.e.pair.New.Object.Spec.PreserveUnknownFields:
		keeps = "the CRD keeps unknown fields (spec.preserveUnknownFields)"
	default:
		return false
	}
	n.judge(kwType)
	f := n.emit(typeRemoved, finding.Base, n.keyAt(finding.Base, kwType), n.old.Type, nil,
		"%s no longer has type %s and %s, so it accepts any value", n.path, strconv.Quote(n.old.Type), keeps)
	if n.old.Items != nil && n.new.Items == nil && onlyChecks(n.old.Items.Schema) {
		// The old list's items schema went with its type (argo-workflows v3.7's withItems:
		// {type: array, items: {type: object}} became {x-kubernetes-preserve-unknown-fields:
		// true}): items of any kind are accepted now, and kept as they are.
		n.judge(kwItems)
		f.Message += "; its items are no longer checked against the old items schema"
	}
	return true
}

// onlyChecks reports a schema that only checks values: no default anywhere in it (dropping
// one changes what objects read back, default-removed) and no list or map type (dropping one
// changes how server-side apply merges). Dropping such a schema where the values are kept
// refuses nothing and loses nothing.
func onlyChecks(s *apiextv1.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if s.Default != nil || s.XListType != nil || len(s.XListMapKeys) > 0 || s.XMapType != nil {
		return false
	}
	var subs []*apiextv1.JSONSchemaProps
	for _, p := range s.Properties {
		subs = append(subs, &p)
	}
	if s.Items != nil {
		if s.Items.Schema == nil && len(s.Items.JSONSchemas) > 0 {
			return false
		}
		if s.Items.Schema != nil {
			subs = append(subs, s.Items.Schema)
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		subs = append(subs, s.AdditionalProperties.Schema)
	}
	for _, bs := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range bs {
			subs = append(subs, &bs[i])
		}
	}
	if s.Not != nil {
		subs = append(subs, s.Not)
	}
	for _, sub := range subs {
		if !onlyChecks(sub) {
			return false
		}
	}
	return true
}

// newestKubernetes is the API server release whose format list decides what is enforced: the
// newest crdguard links enforces the most formats, so a format is only called unenforced when no
// release enforces it.
var newestKubernetes = version.MajorMinor(1, 37)

// enforcedFormat reports whether the API server rejects values that do not match format on a
// node of this type. On numbers only ranges are checked: int32 on integers and float on
// numbers (kube-openapi's number validator; docs/proof.md shows a create refused for 5000000000
// under int32), while int64 and double accept every value JSON decoding produces.
func enforcedFormat(typ, format string) bool {
	switch typ {
	case "integer":
		return format == "int32"
	case "number":
		return format == "float"
	case "", "string":
	default:
		return false
	}
	if strings.ReplaceAll(format, "-", "") == "password" {
		return false // "any kind of string"
	}
	return len(apivalidation.GetUnrecognizedFormats(&spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Format: format}}, newestKubernetes)) == 0
}

// formatLoosened handles a format added or changed to one the API server does not enforce on
// this node: nothing is rejected that was accepted.
func formatLoosened(n *node) bool {
	w := n.new.Format
	if !n.changed(kwFormat) || w == "" || enforcedFormat(n.new.Type, w) {
		return false
	}
	n.judge(kwFormat)
	// What passes is any value of the node's type (an array, not an integer, for a format on an
	// array): the format is checked on none of them.
	what := n.new.Type
	if what == "" {
		what = "value"
	}
	n.emit(formatUnenforced, finding.Head, n.keyAt(finding.Head, kwFormat), orNil(n.old.Format), w,
		"%s now has format %s, which the API server does not enforce: any %s passes", n.path, strconv.Quote(w), what)
	return true
}

// fieldUnlisted reports a removed property as a warning when the new object keeps unknown
// fields, so its values survive; keeps says why the object keeps them (its own marker, or a
// v1beta1 CRD's preserveUnknownFields, which prunes nothing), also is what the message adds (a
// rename).
func (n *node) fieldUnlisted(name, keeps, also string) *finding.Finding {
	old := n.old.Properties[name]
	return n.emitAt(fieldUnlisted, childPath(n.path, name), finding.Base, n.at(finding.Base, "properties", name), orNil(old.Type), nil,
		"%s was removed from the schema of %s, %s%s", childPath(n.path, name), n.path, keeps, also)
}
