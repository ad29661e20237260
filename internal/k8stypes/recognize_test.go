package k8stypes_test

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/k8stypes"
)

func schema(t *testing.T, y string) *apiextv1.JSONSchemaProps {
	t.Helper()
	var s apiextv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(y), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

const containerPort = `
type: object
properties:
  containerPort: {type: integer, format: int32}
  name: {type: string}
  protocol: {type: string, default: TCP}
`

// TestStandalone: a node is a built-in type by its structure alone, or none.
func TestStandalone(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"a ContainerPort", containerPort, "core/v1.ContainerPort"},
		{"int-or-string and a map", `
type: object
properties:
  limits: {type: object, additionalProperties: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}}
  requests: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
  claims: {type: array, items: {type: object, properties: {name: {type: string}}}}
`, "core/v1.ResourceRequirements"},
		{"a LabelSelector without descriptions: two fields, eight nodes", `
type: object
properties:
  matchExpressions: {type: array, items: {type: object, properties: {key: {type: string}, operator: {type: string}, values: {type: array, items: {type: string}}}, required: [key, operator]}}
  matchLabels: {type: object, additionalProperties: {type: string}}
`, "meta/v1.LabelSelector"},
		{"only matchExpressions: LabelSelector's or NodeSelectorTerm's", `
type: object
properties:
  matchExpressions: {type: array, items: {type: object, properties: {key: {type: string}, operator: {type: string}, values: {type: array, items: {type: string}}}, required: [key, operator]}}
`, ""},
		{"a lone name without the type's doc: too little structure", `
type: object
properties:
  name: {type: string}
`, ""},
		{"a lone name with the doc k8s.io/api gives LocalObjectReference's name, under a field comment", `
type: object
description: Secret contains the http management uri for the RabbitMQ cluster.
properties:
  name: {type: string, description: "Name of the referent. This field is effectively required, but due to backwards compatibility is allowed to be empty. Instances of this type with an empty value here are almost certainly wrong. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names"}
`, "core/v1.LocalObjectReference"},
		{"a lone name with the doc of PodSchedulingGate's name", `
type: object
properties:
  name: {type: string, description: "Name of the scheduling gate.\nEach scheduling gate must have a unique name field."}
`, "core/v1.PodSchedulingGate"},
		{"a lone name with a project's own doc", `
type: object
properties:
  name: {type: string, description: Name of the Secret holding the connection URI.}
`, ""},
		{"a name with LocalObjectReference's doc beside a field of the project's", `
type: object
properties:
  name: {type: string, description: "Name of the referent. This field is effectively required, but due to backwards compatibility is allowed to be empty. Instances of this type with an empty value here are almost certainly wrong. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names"}
  key: {type: integer, description: The key.}
`, ""},
		{"a field of another type", `
type: object
properties:
  containerPort: {type: string}
  name: {type: string}
  protocol: {type: string}
`, ""},
		{"a field the type does not have", `
type: object
properties:
  containerPort: {type: integer}
  name: {type: string}
  protocol: {type: string}
  weight: {type: integer}
`, ""},
		{"a nested look-alike", `
type: object
properties:
  limits: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
  requests: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
  claims: {type: array, items: {type: object, properties: {name: {type: integer}}}}
`, ""},
		{"an enum k8s.io/api does not declare", `
type: object
properties:
  key: {type: string}
  operator: {type: string, enum: [Equal, Exists]}
  value: {type: string}
  effect: {type: string}
`, ""},
		{"a validation rule k8s.io/api does not declare", `
type: object
properties:
  key: {type: string}
  operator: {type: string}
  value: {type: string}
  effect: {type: string}
x-kubernetes-validations: [{rule: "self.key != ''"}]
`, ""},
		{"what the twins above are without them", `
type: object
properties:
  key: {type: string}
  operator: {type: string}
  value: {type: string}
  effect: {type: string}
`, "core/v1.Toleration"},
		{"two types with the same fields: one of them, alike (TestAlike)", `
type: object
properties:
  key: {type: string}
  operator: {type: string}
  values: {type: array, items: {type: string}}
`, "core/v1.NodeSelectorRequirement"},
		{"too few properties to say", `
type: object
properties:
  containerPort: {type: integer}
  protocol: {type: string}
`, ""},
		{"less than half of the type's fields", `
type: object
properties:
  name: {type: string}
  image: {type: string}
  command: {type: array, items: {type: string}}
`, ""},
		{"not an object", `type: string`, ""},
		{"LocalObjectReference's fingerprint", `
type: object
description: |-
  LocalObjectReference contains enough information to let you locate the
  referenced object inside the same namespace.
x-kubernetes-map-type: atomic
properties:
  name: {type: string, default: ""}
`, "core/v1.LocalObjectReference"},
		{"the fingerprint as older controller-gen wrote it, on one line with a TODO", `
type: object
description: "LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.\nTODO: Add other useful fields."
x-kubernetes-map-type: atomic
properties:
  name: {type: string}
`, "core/v1.LocalObjectReference"},
		{"a project's reference with its own comment", `
type: object
description: LocalObjectReference contains enough information to locate the referenced Kubernetes resource object.
x-kubernetes-map-type: atomic
properties:
  name: {type: string}
`, ""},
		{"the comment copied without the map type", `
type: object
description: LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.
properties:
  name: {type: string}
`, ""},
		{"the comment and map type on another shape", `
type: object
description: LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.
x-kubernetes-map-type: atomic
properties:
  name: {type: integer}
`, ""},
		{"the comment and map type with a field of the project's", `
type: object
description: LocalObjectReference contains enough information to let you locate the referenced object inside the same namespace.
x-kubernetes-map-type: atomic
properties:
  name: {type: string}
  namespace: {type: string}
`, ""},
		{"no description", `
type: object
x-kubernetes-map-type: atomic
properties:
  name: {type: string}
`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := k8stypes.Builtin().Standalone(schema(t, tc.schema))
			got := ""
			if p.Known() {
				got = p.Shape.Ref
			}
			if got != tc.want {
				t.Errorf("recognised as %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPlaces: the fields, items and values below a recognised node are named by type and
// field; only k8s.io/api's own default is upstream.
func TestPlaces(t *testing.T) {
	set := k8stypes.Builtin()
	port := set.Standalone(schema(t, containerPort))
	protocol := set.Property(port, "protocol")
	if got := protocol.Name(); got != "ContainerPort.protocol" {
		t.Errorf("name %q", got)
	}
	for _, tc := range []struct {
		def  string
		want bool
	}{{`"TCP"`, true}, {`"UDP"`, false}, {`1`, false}, {`not json`, false}} {
		if got := protocol.Upstream([]byte(tc.def)); got != tc.want {
			t.Errorf("Upstream(%s) = %v, want %v", tc.def, got, tc.want)
		}
	}
	if set.Property(port, "name").Upstream([]byte(`""`)) {
		t.Errorf("ContainerPort.name declares no default")
	}
	gone := set.Property(port, "removedLongAgo")
	if gone.Known() || gone.Name() != "ContainerPort.removedLongAgo" {
		t.Errorf("a field the type does not have: known %v, name %q", gone.Known(), gone.Name())
	}
	res := set.Standalone(schema(t, `
type: object
properties:
  limits: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
  requests: {type: object, additionalProperties: {x-kubernetes-int-or-string: true}}
  claims: {type: array, items: {type: object, properties: {name: {type: string}}}}
`))
	claims := set.Property(res, "claims")
	for _, tc := range []struct {
		p    k8stypes.Place
		want string
	}{
		{claims, "ResourceRequirements.claims"},
		{set.Items(claims), "ResourceRequirements.claims[*]"},
		{set.Property(set.Items(claims), "name"), "ResourceClaim.name"},
		{set.Values(set.Property(res, "limits")), "ResourceRequirements.limits.*"},
		{set.Values(claims), ""},
		{set.Items(set.Property(res, "limits")), ""},
		{set.Property(k8stypes.Place{}, "name"), ""},
	} {
		if got := tc.p.Name(); got != tc.want {
			t.Errorf("name %q, want %q", got, tc.want)
		}
	}
	if claims.Field.ListType != "map" || len(claims.Field.ListMapKeys) != 1 || claims.Field.ListMapKeys[0] != "name" {
		t.Errorf("claims: list type %q keys %v", claims.Field.ListType, claims.Field.ListMapKeys)
	}
}

// extendedContainer is a Container a project extends with a field of its own: six of
// Container's fields with 27 nodes below them, and weight.
func extendedContainer(own string) string {
	return `
type: object
properties:
  name: {type: string}
  image: {type: string}
  command: {type: array, items: {type: string}}
  args: {type: array, items: {type: string}}
  env:
    type: array
    items:
      type: object
      properties:
        name: {type: string}
        value: {type: string}
        valueFrom:
          type: object
          properties:
            configMapKeyRef: {type: object, properties: {name: {type: string}, key: {type: string}, optional: {type: boolean}}}
            secretKeyRef: {type: object, properties: {name: {type: string}, key: {type: string}, optional: {type: boolean}}}
            fieldRef: {type: object, properties: {apiVersion: {type: string}, fieldPath: {type: string}}}
  ports:
    type: array
    items:
      type: object
      properties:
        containerPort: {type: integer}
        name: {type: string}
        protocol: {type: string, default: TCP}
` + own
}

// TestExtended: a built-in type with fields of a project's own is that type when its fields
// dominate; its own fields are no type's, and nothing below it is credited to k8s.io/api.
func TestExtended(t *testing.T) {
	set := k8stypes.Builtin()
	for _, tc := range []struct{ name, schema, want string }{
		{"one field of its own", extendedContainer("  weight: {type: integer}\n"), "core/v1.Container"},
		{"three of its own: not twice as many of Container's", extendedContainer(`  weight: {type: integer}
  tier: {type: string}
  zone: {type: string}
  owner: {type: string}
`), ""},
		{"a rule of the project's on the node", extendedContainer("  weight: {type: integer}\nx-kubernetes-validations: [{rule: \"self.weight > 0\"}]\n"), ""},
		{"too few nodes below Container's fields", `
type: object
properties:
  name: {type: string}
  image: {type: string}
  command: {type: array, items: {type: string}}
  args: {type: array, items: {type: string}}
  weight: {type: integer}
`, ""},
		{"the type naming the most properties does not fit", `
type: object
properties:
  name: {type: string}
  image: {type: integer}
  command: {type: array, items: {type: string}}
  args: {type: array, items: {type: string}}
  env: {type: array, items: {type: object, properties: {name: {type: string}, value: {type: string}}}}
  ports: {type: array, items: {type: object, properties: {containerPort: {type: integer}, name: {type: string}, protocol: {type: string}, hostIP: {type: string}}}}
  weight: {type: integer}
`, ""},
		{"a Volume with a field that does not fit is not a PersistentVolumeSpec for its sources", `
type: object
properties:
  name: {type: string}
  emptyDir: {type: object, properties: {medium: {type: integer}}}
  nfs: {type: object, properties: {server: {type: string}, path: {type: string}, readOnly: {type: boolean}}}
  hostPath: {type: object, properties: {path: {type: string}, type: {type: string}}}
  iscsi:
    type: object
    properties: {targetPortal: {type: string}, iqn: {type: string}, lun: {type: integer}, iscsiInterface: {type: string}, fsType: {type: string}, readOnly: {type: boolean}, portals: {type: array, items: {type: string}}}
  rbd:
    type: object
    properties: {monitors: {type: array, items: {type: string}}, image: {type: string}, pool: {type: string}, user: {type: string}, keyring: {type: string}, fsType: {type: string}, readOnly: {type: boolean}}
`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := set.Standalone(schema(t, tc.schema))
			got := ""
			if p.Known() {
				got = p.Shape.Ref
				if !p.Extended {
					t.Errorf("recognised exactly, want as extended")
				}
			}
			if got != tc.want {
				t.Errorf("recognised as %q, want %q", got, tc.want)
			}
		})
	}
	ext := set.Standalone(schema(t, extendedContainer("  weight: {type: integer}\n")))
	if own := set.Property(ext, "weight"); own.Known() || own.Name() != "" {
		t.Errorf("the project's own field: known %v, name %q", own.Known(), own.Name())
	}
	protocol := set.Property(set.Items(set.Property(ext, "ports")), "protocol")
	if protocol.Name() != "ContainerPort.protocol" || !protocol.Extended {
		t.Errorf("below the extended type: name %q, extended %v", protocol.Name(), protocol.Extended)
	}
	if protocol.Upstream([]byte(`"TCP"`)) {
		t.Errorf("a default below an extended type is credited to k8s.io/api")
	}
}

// TestNormalDoc: descriptions read as the doc comments controller-gen wrote them from.
func TestNormalDoc(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A b\nc.", "A b c."},
		{"  A  b\n\n c. ", "A b c."},
		{"A b.\nTODO: more.\nC.", "A b. C."},
		{"A b.\n---\nNew uses are discouraged.", "A b."},
		{"", ""},
	} {
		if got := k8stypes.NormalDoc(tc.in); got != tc.want {
			t.Errorf("NormalDoc(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// jobScheduling is batch/v1's JobSchedulingConfiguration as controller-gen v0.21.0 writes it
// from k8s.io/api's +k8s:immutable markers, with the rules given.
func jobScheduling(parent, field string) string {
	return `
type: object
properties:
  schedulingPolicy: {type: object, x-kubernetes-preserve-unknown-fields: true}
  schedulingConstraints:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    x-kubernetes-validations: [` + field + `]
  disruptionMode:
    type: object
    x-kubernetes-preserve-unknown-fields: true
    x-kubernetes-validations: [{rule: self == oldSelf, message: field is immutable}]
  resourceClaims:
    type: array
    items: {type: object, x-kubernetes-preserve-unknown-fields: true}
    x-kubernetes-validations: [{rule: self == oldSelf, message: field is immutable}]
x-kubernetes-validations: [` + parent + `]
`
}

// TestGeneratedRules: the rules controller-gen writes from k8s.io/api's own +k8s:immutable
// markers are the type's; any other rule, or these on a field k8s.io/api does not mark, are a
// project's.
func TestGeneratedRules(t *testing.T) {
	const (
		field  = `{rule: self == oldSelf, message: field is immutable}`
		parent = `{rule: "!has(oldSelf.schedulingConstraints) || has(self.schedulingConstraints)", message: field schedulingConstraints is immutable once set},
  {rule: "!has(oldSelf.resourceClaims) || has(self.resourceClaims)", message: field resourceClaims is immutable once set}`
	)
	for _, tc := range []struct{ name, schema, want string }{
		{"as controller-gen writes them", jobScheduling(parent, field), "batch/v1.JobSchedulingConfiguration"},
		{"a field rule of the project's", jobScheduling(parent, `{rule: "self.size() > 0", message: field is immutable}`), ""},
		{"the field rule with another message", jobScheduling(parent, `{rule: self == oldSelf, message: frozen}`), ""},
		{"the parent rule for a field not marked immutable", jobScheduling(`{rule: "!has(oldSelf.schedulingPolicy) || has(self.schedulingPolicy)", message: field schedulingPolicy is immutable once set}`, field), ""},
		{"the parent rule naming two fields", jobScheduling(`{rule: "!has(oldSelf.resourceClaims) || has(self.disruptionMode)", message: field resourceClaims is immutable once set}`, field), ""},
		{"the parent rule with another message", jobScheduling(`{rule: "!has(oldSelf.resourceClaims) || has(self.resourceClaims)", message: keep it}`, field), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := k8stypes.Builtin().Standalone(schema(t, tc.schema))
			got := ""
			if p.Known() {
				got = p.Shape.Ref
			}
			if got != tc.want {
				t.Errorf("recognised as %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAlike: a node that is one of several types with the same fields (SecretKeySelector and
// ConfigMapKeySelector) has what all of them declare, and its fields are named only after the
// type all of them embed; types that fit as well but differ give nothing.
func TestAlike(t *testing.T) {
	set := k8stypes.Builtin()
	sel := set.Standalone(schema(t, `
type: object
x-kubernetes-map-type: atomic
properties:
  key: {type: string}
  name: {type: string, default: ""}
  optional: {type: boolean}
`))
	if !sel.Known() || !sel.Alike {
		t.Fatalf("a key selector: known %v, alike %v", sel.Known(), sel.Alike)
	}
	name, key := set.Property(sel, "name"), set.Property(sel, "key")
	if name.Name() != "LocalObjectReference.name" || !name.Upstream([]byte(`""`)) {
		t.Errorf("name: %q, upstream %v", name.Name(), name.Upstream([]byte(`""`)))
	}
	if !key.Known() || key.Name() != "" || key.Upstream([]byte(`""`)) {
		t.Errorf("key: known %v, name %q", key.Known(), key.Name())
	}
	if other := set.Property(sel, "weight"); other.Known() || other.Name() != "" {
		t.Errorf("a field none of them has: known %v, name %q", other.Known(), other.Name())
	}
	// ISCSIVolumeSource and ISCSIPersistentVolumeSource fit these fields alike, but their
	// secretRef differs (LocalObjectReference, SecretReference).
	iscsi := set.Standalone(schema(t, `
type: object
properties:
  targetPortal: {type: string}
  iqn: {type: string}
  lun: {type: integer}
  iscsiInterface: {type: string, default: default}
  fsType: {type: string}
  readOnly: {type: boolean}
  portals: {type: array, items: {type: string}}
`))
	if iscsi.Known() {
		t.Errorf("two types that differ recognised as %s", iscsi.Shape.Ref)
	}
}

// TestRemovedField: a PodSpec generated from a k8s.io/api older than v0.31.0 has
// resourceClaims[*].source, which the linked one removed, and is still a PodSpec; the same
// field with another shape is not PodResourceClaim's.
func TestRemovedField(t *testing.T) {
	podSpec := func(source string) string {
		return `
type: object
properties:
  serviceAccountName: {type: string}
  containers:
    type: array
    items:
      ` + strings.ReplaceAll(strings.TrimSpace(extendedContainer("")), "\n", "\n      ") + `
  resourceClaims:
    type: array
    items:
      type: object
      properties:
        name: {type: string}
        source: ` + source + `
`
	}
	for _, tc := range []struct{ name, source, want string }{
		{"as k8s.io/api v0.30 had it", `{type: object, properties: {resourceClaimName: {type: string}, resourceClaimTemplateName: {type: string}}}`, "core/v1.PodSpec"},
		{"another shape", `{type: string}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := k8stypes.Builtin().Standalone(schema(t, podSpec(tc.source)))
			got := ""
			if p.Known() {
				got = p.Shape.Ref
			}
			if got != tc.want {
				t.Errorf("recognised as %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRecognitionCopiesNoNodes: checking a schema against a type's structure copies none of
// its nodes (each property was copied to the heap, 512 bytes a node, for every node of every
// candidate type): Declared on a Container of 27 nodes allocates only the place it returns.
func TestRecognitionCopiesNoNodes(t *testing.T) {
	set, s := k8stypes.Builtin(), schema(t, extendedContainer(""))
	if p := set.Declared("core/v1.Container", s); !p.Known() {
		t.Fatal("not a Container")
	}
	if n := testing.AllocsPerRun(20, func() { set.Declared("core/v1.Container", s) }); n != 1 {
		t.Errorf("%v allocations, want 1", n)
	}
}
