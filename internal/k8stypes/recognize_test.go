package k8stypes_test

import (
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
		{"two types with these fields", `
type: object
properties:
  key: {type: string}
  operator: {type: string}
  values: {type: array, items: {type: string}}
`, ""},
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
