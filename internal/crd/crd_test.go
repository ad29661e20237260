package crd

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func parseFile(t *testing.T, name string) ([]*CRD, []Problem) {
	t.Helper()
	data, err := os.ReadFile("../../testdata/crd/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(name, data)
}

func TestParseV1beta1(t *testing.T) {
	crds, problems := parseFile(t, "v1beta1.yaml")
	if len(problems) != 0 || len(crds) != 1 {
		t.Fatalf("crds %d problems %v", len(crds), problems)
	}
	c := crds[0]
	if c.APIVersion != GroupVersionV1beta1 || c.Name != "widgets.example.com" {
		t.Fatalf("got %s %s", c.APIVersion, c.Name)
	}
	// The API server's v1beta1 defaults apply before the conversion: an unset
	// preserveUnknownFields is true, an unset listKind is Kind+"List".
	if !c.Object.Spec.PreserveUnknownFields || c.Object.Spec.Names.ListKind != "WidgetList" || c.Object.Spec.Conversion.Strategy != "None" {
		t.Errorf("v1beta1 defaults not applied: preserveUnknownFields %t, listKind %q, conversion %+v", c.Object.Spec.PreserveUnknownFields, c.Object.Spec.Names.ListKind, c.Object.Spec.Conversion)
	}
	v := c.Object.Spec.Versions
	if len(v) != 1 || v[0].Schema == nil || v[0].Schema.OpenAPIV3Schema == nil || v[0].Subresources == nil || v[0].Subresources.Status == nil {
		t.Fatalf("top-level validation and subresources were not moved to the version: %+v", v)
	}
	// Locations of the top-level schema, seen through the version.
	if got := c.LineOf(c.SchemaPath("v1").Join("properties", "spec", "properties", "size", "maximum")); got != 30 {
		t.Errorf("maximum at line %d, want 30", got)
	}
	if got := c.LineOf(c.SubresourcesPath("v1").Join("status")); got != 20 {
		t.Errorf("status subresource at line %d, want 20", got)
	}
}

func TestParseJSON(t *testing.T) {
	crds, problems := parseFile(t, "v1.json")
	if len(problems) != 0 || len(crds) != 1 {
		t.Fatalf("crds %d problems %v", len(crds), problems)
	}
	c := crds[0]
	if got := c.LineOf(c.SchemaPath("v1").Join("properties", "spec", "properties", "size", "maximum")); got != 20 {
		t.Errorf("maximum at line %d, want 20", got)
	}
}

func TestParseMultiDocument(t *testing.T) {
	crds, problems := parseFile(t, "multi.yaml")
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	var got []string
	for _, c := range crds {
		got = append(got, fmt.Sprintf("%s@%d", c.Name, c.Line))
	}
	if want := "gadgets.example.com@7 gizmos.example.com@23"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

func TestParseProblems(t *testing.T) {
	const head = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.com\n"
	// spec is what makes a document a definition rather than a patch.
	const spec = "spec:\n  group: g\n  names: {kind: W, plural: w}\n"
	for _, tc := range []struct {
		name, input string
		line        int
		want        string
	}{
		{"unclosed flow sequence", head + "spec:\n  group: [oops\n", 6, "line 6: did not find expected ',' or ']'"},
		{"tab indentation", head + "spec:\n\tgroup: x\n", 6, "YAML does not parse"},
		{"wrong type", head + spec + "  versions:\n    - name: v1\n      served: maybe\n", 10, "cannot unmarshal string"},
		{"unsupported apiVersion", "apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n" + spec + "  versions: [{name: v1}]\n", 1, `unsupported apiVersion "apiextensions.k8s.io/v2"`},
		{"no name", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {}\n" + spec + "  versions: [{name: v1}]\n", 1, "no metadata.name"},
		{"infinite number", head + spec + "  versions:\n    - name: v1\n      schema:\n        openAPIV3Schema:\n          maximum: .inf\n", 12, "cannot be represented in JSON"},
		{"merge of a scalar", head + "x: &a 5\n" + spec + "  versions: [{name: v1}]\n  <<: *a\n", 10, "map merge requires a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crds, problems := Parse("in.yaml", []byte(tc.input))
			if len(crds) != 0 || len(problems) != 1 {
				t.Fatalf("crds %d problems %v", len(crds), problems)
			}
			p := problems[0]
			if p.Line != tc.line || !strings.Contains(p.Message, tc.want) || p.File != "in.yaml" {
				t.Fatalf("problem %s:%d %q, want line %d containing %q", p.File, p.Line, p.Message, tc.line, tc.want)
			}
		})
	}
}

func TestParseSkipsOtherKinds(t *testing.T) {
	crds, problems := Parse("x.yaml", []byte("apiVersion: v1\nkind: ConfigMap\n---\n- a list\n---\njust a string\n---\n"))
	if len(crds) != 0 || len(problems) != 0 {
		t.Fatalf("crds %d problems %v", len(crds), problems)
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: bomb.example.com\nspec:\n  group: g\n  names: {kind: B, plural: b}\n  versions: [{name: v1}]\n")
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	crds, problems := Parse("bomb.yaml", []byte(b.String()))
	if len(crds) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Message, "alias bomb") {
		t.Fatalf("crds %d problems %v", len(crds), problems)
	}
}

func TestDeepNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: deep.example.com\nspec:\n  group: g\n  names: {kind: D, plural: d}\n  versions: ")
	b.WriteString(strings.Repeat("[", MaxDepth+10))
	b.WriteString(strings.Repeat("]", MaxDepth+10))
	b.WriteString("\n")
	crds, problems := Parse("deep.yaml", []byte(b.String()))
	if len(crds) != 0 || len(problems) != 1 {
		t.Fatalf("crds %d problems %v", len(crds), problems)
	}
	if p := problems[0]; p.Line != 8 || !strings.Contains(p.Message, "deeper") && !strings.Contains(p.Message, "exceeded max depth") {
		t.Fatalf("problem %+v", p)
	}
}

func TestLineOfFallsBackToDeepestNode(t *testing.T) {
	crds, _ := parseFile(t, "v1.json")
	c := crds[0]
	spec := c.SchemaPath("v1").Join("properties", "spec")
	if got, want := c.LineOf(spec.Join("properties", "nothing-here", "type")), c.LineOf(spec.Join("properties")); got != want || got == 0 {
		t.Fatalf("missing key at line %d, want the deepest existing node's line %d", got, want)
	}
	if c.Has(spec.Join("properties", "nothing-here")) || !c.Has(spec) {
		t.Fatal("Has is wrong")
	}
}

func TestStringItemMatchesAsEncoded(t *testing.T) {
	data := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: w.example.com\nspec:\n  names:\n    shortNames:\n      - \"a<b&c\"\n      - plain\n"
	crds, problems := Parse("x.yaml", []byte(data))
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	if got := crds[0].LineOf(Path{"spec", "names", "shortNames", StringItem("a<b&c")}); got != 8 {
		t.Fatalf("line %d, want 8", got)
	}
}

// Documents that lack what a definition needs are patches, whatever else they hold: never a
// problem, never compared.
func TestParsePatches(t *testing.T) {
	for _, tc := range []struct{ name, input string }{
		{"kubebuilder webhook patch", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {namespace: system, name: webhook-service, path: /convert}\n      conversionReviewVersions: [v1]\n"},
		{"test assertion", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: policies.kyverno.io\nstatus:\n  acceptedNames: {kind: Policy}\n"},
		{"stub with a scope", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x.example.com\nspec:\n  scope: Cluster\n  names: {kind: X, plural: xs}\n"},
		{"no versions", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x.example.com\nspec:\n  group: example.com\n  names: {kind: X, plural: xs}\n  versions: []\n"},
		{"undecodable patch", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x.example.com\nspec:\n  conversion: {strategy: [not, a, string]}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crds, problems := Parse("p.yaml", []byte(tc.input))
			if len(problems) != 0 || len(crds) != 1 || !crds[0].Patch || crds[0].Object != nil || crds[0].Line != 1 {
				t.Fatalf("want one patch, got %+v problems %v", crds, problems)
			}
		})
	}
}
