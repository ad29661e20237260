package rules

import (
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/k8stypes"
)

// Embedded built-in Kubernetes types (DESIGN §7): a schema node is recognised as a field of a
// built-in type by structure, from the data package k8stypes reads from k8s.io/api; the rules
// here only ask it.

var upstreamDefaultAdded = &Rule{
	ID: "upstream-default-added", Severity: finding.Info, Level: PropertyLevel,
	Summary: "A field of an embedded Kubernetes type got the default k8s.io/api declares for it.",
	Doc:     "A CRD that embeds a built-in Kubernetes type (a PodTemplateSpec, a Volume, a Container) copies the `+default=` markers of the k8s.io/api it is generated from: upgrading k8s.io/api adds defaults such as `protocol: TCP` on container ports or `name: \"\"` on local object references. The API server gives the objects built from the template (the Pods, Services, volumes the controller creates) the same default when they are created, so nothing changes for them. Only a field recognised as that built-in type's field (by structure; a type with fewer than three fields by the doc comment and map type controller-gen copies from k8s.io/api, or, where a project's field comment replaced the type's, by the doc comments of its fields, which controller-gen copies too (a `{name}` whose name reads \"Name of the referent. …\" is a LocalObjectReference), or, in git mode and `crdguard diff` of two folders, by the Go field the repository's sources generate it from (a field declared `*corev1.LocalObjectReference` in a CRD generated without descriptions; another module's type of the same name, such as fluxcd's `meta.LocalObjectReference`, is not); never on the strength of a parent that extends a built-in type with fields of its own) and a value equal to k8s.io/api's default qualify; any other default stays `default-added`.",
}

var upstreamMapTypeAdded = &Rule{
	ID: "upstream-map-type-added", Severity: finding.Info, Level: PropertyLevel,
	Summary: "An embedded Kubernetes type or field became atomic for server-side apply, as k8s.io/api declares it.",
	Doc:     "controller-gen writes `x-kubernetes-map-type: atomic` where k8s.io/api marks a type `+structType=atomic` (LabelSelector, LocalObjectReference, SecretKeySelector) or a map field `+mapType=atomic` (PodSpec.nodeSelector); a generator or k8s.io/api upgrade adds it to every embedded copy at once. Server-side apply then treats the object as one value, as the API server already does for the built-in objects the controller creates from it, and nothing is refused. Only a node recognised as that built-in type or field (by structure; never on the strength of a parent that extends a built-in type with fields of its own) qualifies; the same change on a project's own type stays `map-type-changed`.",
}

var upstreamFieldDropped = &Rule{
	ID: "upstream-field-dropped", Severity: finding.Warning, Level: PropertyLevel, Twin: "field-added",
	Summary: "A field that the built-in Kubernetes API never honoured in that place left an embedded type, as k8s.io/api removed it.",
	Advice:  "a client that still sends it is refused or loses it, but no object built from it ever used it; drop it from the manifests that set it",
	Doc:     "k8s.io/api sometimes removes a field from a built-in type's field because the built-in API never honoured it there: PersistentVolumeClaimSpec.resources became VolumeResourceRequirements, without ResourceRequirements' claims, which a PersistentVolumeClaim never used and the API server clears on every PVC create and update. A CRD that embeds the type (a volumeClaimTemplate) and is regenerated from the newer k8s.io/api loses the field in every copy: a manifest that still sets it is refused by strict clients or has it pruned, but nothing built from it changes. It is a warning, not field-removed, and says why; only a node recognised as that built-in field qualifies (the same field removed from a container's resources stays field-removed).",
}

var builtinRules = []*Rule{upstreamDefaultAdded, upstreamMapTypeAdded, upstreamFieldDropped}

// fieldNeverHonoured reports a removed property that k8s.io/api dropped from the built-in field
// this node is because the built-in API never honoured it there (k8stypes.Unhonoured).
func (n *node) fieldNeverHonoured(name string) bool {
	why := k8stypes.UnhonouredWhy(n.place(finding.Head), name)
	if why == "" {
		return false
	}
	old := n.old.Properties[name]
	n.emitAt(upstreamFieldDropped, childPath(n.path, name), finding.Base, n.at(finding.Base, "properties", name), orNil(old.Type), nil,
		"%s was removed as k8s.io/api removed it: %s", childPath(n.path, name), why)
	return true
}

// upstreamAtomic names what k8s.io/api declares atomic that the new schema's node is: the
// type (+structType=atomic) or the map field (+mapType=atomic); "" when it declares neither.
func (n *node) upstreamAtomic() string {
	p := n.place(finding.Head)
	if !p.Known() || p.Extended {
		return ""
	}
	if p.Suffix == "" && p.Field != nil && p.Field.MapType == "atomic" {
		return p.Name() + " (+mapType=atomic)"
	}
	if p.Shape.Kind == k8stypes.KindObject {
		if t := k8stypes.Builtin().Type(p.Shape.Ref); t != nil && t.MapType == "atomic" && (!p.Alike || p.Field == nil) {
			return t.Name + " (+structType=atomic)"
		}
	}
	return ""
}

// place is what built-in type field this node is on one side, worked out once per node and
// only when a finding asks: a recognised parent's property, items or values, else the node
// recognised on its own.
func (n *node) place(side finding.Side) k8stypes.Place {
	i, schema := 1, n.new
	if side == finding.Base {
		i, schema = 0, n.old
	}
	if p := n.places[i]; p != nil {
		return *p
	}
	var p k8stypes.Place
	set := k8stypes.Builtin()
	switch {
	case n.parent == nil:
		p = set.Standalone(schema)
	case n.inBranch:
		p = n.parent.place(side) // a branch of allOf/anyOf/oneOf/not is its node
	default:
		pp := n.parent.place(side)
		if pp.Known() && n.rel != nil && len(n.rel.segs) > 0 {
			switch n.rel.segs[0] {
			case "properties":
				p = set.Property(pp, n.rel.segs[1].(string))
			case "items":
				p = set.Items(pp)
			case "additionalProperties":
				p = set.Values(pp)
			}
		}
		if !p.Known() || p.Extended {
			switch q := set.Standalone(schema); {
			case !p.Known():
				p = q
			case q.Known() && !q.Extended && *q.Shape == *p.Shape:
				// Below a type extended with a project's fields, and that type by its own
				// structure too: named as the extended type's field, credited as the type.
				p.Extended = false
			}
		}
	}
	if !p.Known() && !n.inBranch {
		// What the schema cannot tell (a lone name stripped of its descriptions), the Go field
		// it is generated from may: a field declared as corev1.LocalObjectReference.
		p = set.Declared(n.goType(side, schema), schema)
	}
	n.places[i] = &p
	return p
}

// goType is the built-in type the side's Go sources declare this node with (crd.GoTypes),
// asked only of objects with properties, the only nodes a built-in struct type can be.
func (n *node) goType(side finding.Side, schema *apiextv1.JSONSchemaProps) string {
	src, doc := n.e.pair.NewGo, n.e.pair.New
	if side == finding.Base {
		src, doc = n.e.pair.OldGo, n.e.pair.Old
	}
	if src == nil || doc == nil || schema == nil || schema.Type != "object" || len(schema.Properties) == 0 {
		return ""
	}
	return src.Builtin(doc.Object.Spec.Group, n.version, doc.Object.Spec.Names.Kind, n.path)
}

// builtinName names the built-in type field a finding at path is about (this node, or one of
// its properties), on the finding's side first: "" when it is none.
func (n *node) builtinName(path string, side finding.Side) string {
	other := finding.Head
	if side == finding.Head {
		other = finding.Base
	}
	for _, s := range []finding.Side{side, other} {
		if name := n.placeOf(path, s).Name(); name != "" {
			return name
		}
	}
	return ""
}

// placeOf is the place of this node (path == n.path) or of its property at path.
func (n *node) placeOf(path string, side finding.Side) k8stypes.Place {
	if path == n.path {
		return n.place(side)
	}
	prefix := n.path + "."
	if n.path == "." {
		prefix = "."
	}
	name, ok := strings.CutPrefix(path, prefix)
	if !ok || strings.ContainsAny(name, ".[") {
		return k8stypes.Place{}
	}
	return k8stypes.Builtin().Property(n.place(side), name)
}

// upstreamDefault says whether the new default of this node is the default k8s.io/api
// declares for the built-in type field the new schema's node is. The old schema need not be
// recognised: it was generated from an older k8s.io/api, which may have had fields since
// removed (PodResourceClaim.source).
func (n *node) upstreamDefault(w *apiextv1.JSON) (k8stypes.Place, bool) {
	if w == nil {
		return k8stypes.Place{}, false
	}
	p := n.place(finding.Head)
	return p, p.Upstream(w.Raw)
}
