package crd

import (
	"strings"
	"testing"
)

// TestMentionsCRD: the prefilter never misses a file Parse reads a CRD from, however the kind is
// spelled (JSON and YAML double-quoted escapes, an escaped line break, in a list item, through a
// merge key), and a file with escapes that hold no CRD is not taken for one; a file with escapes
// that does not parse could hold one.
func TestMentionsCRD(t *testing.T) {
	const meta = "apiVersion: apiextensions.k8s.io/v1\nmetadata:\n  name: w.example.com\nspec:\n  group: example.com\n  names: {kind: W, plural: w}\n  versions: [{name: v1, served: true, storage: true}]\n"
	for _, tc := range []struct {
		name, data string
		want       bool
	}{
		{"spelled out", "kind: CustomResourceDefinition\n" + meta, true},
		{"JSON \\u escape", `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResource\u0044efinition", "metadata": {"name": "w.example.com"}}`, true},
		{"YAML \\x escape", "kind: \"CustomResource\\x44efinition\"\n" + meta, true},
		{"YAML \\U escape", "kind: \"\\U00000043ustomResourceDefinition\"\n" + meta, true},
		{"escaped line break", "kind: \"CustomResource\\\n  Definition\"\n" + meta, true},
		{"escaped key and value", "\"\\u006bind\": \"CustomResource\\u0044efinition\"\n" + meta, true},
		{"a list item", "apiVersion: v1\nkind: List\nitems:\n- kind: \"CustomResource\\u0044efinition\"\n  metadata: {name: w.example.com}\n", true},
		{"through a merge key", "base: &b {kind: \"CustomResource\\u0044efinition\"}\n---\n<<: *b\n" + meta, true},
		{"escapes that do not parse", "kind: \"\\u0041\n  - [\n", true},
		// Twins: escapes, but no CRD.
		{"escapes in a ConfigMap", "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"\\u0041\\x42\"\n  b: \"line\\\n    joined\"\n", false},
		{"an escaped space", "kind: \"CustomResource\\u0020Definition\"\n" + meta, false},
		{"folded plain scalar", "kind: CustomResource\n  Definition\n" + meta, false},
		{"single quotes do not escape", "kind: 'CustomResource\\u0044efinition'\n" + meta, false},
		{"literal block", "kind: |\n  CustomResource\\u0044efinition\n" + meta, false},
		{"an escaped backslash", "kind: \"CustomResource\\\\u0044efinition\"\n" + meta, false},
		{"no escape at all", "apiVersion: v1\nkind: ConfigMap\n", false},
		{"other escapes only", "apiVersion: v1\nkind: ConfigMap\ndata: {a: \"\\t\\n\\\"\\\\\"}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MentionsCRD([]byte(tc.data)); got != tc.want {
				t.Fatalf("MentionsCRD = %v, want %v", got, tc.want)
			}
			// Soundness: whatever Parse reads as a CRD, the prefilter lets through.
			if crds, _ := Parse("f.yaml", []byte(tc.data)); len(crds) > 0 && !MentionsCRD([]byte(tc.data)) {
				t.Fatalf("Parse reads %d CRDs the prefilter skips", len(crds))
			}
		})
	}
}

// TestEscapedCRD: for a template with its actions set aside, only a document that decodes as a
// CRD counts; text with escapes that does not parse holds none.
func TestEscapedCRD(t *testing.T) {
	const meta = "apiVersion: apiextensions.k8s.io/v1\nmetadata:\n  name: w.example.com\nspec:\n  group: example.com\n  names: {kind: W, plural: w}\n  versions: [{name: v1, served: true, storage: true}]\n"
	for _, tc := range []struct {
		name, data string
		want       bool
	}{
		{"escaped kind", "kind: \"CustomResource\\x44efinition\"\n" + meta, true},
		{"escaped kind, broken definition", "kind: \"CustomResource\\x44efinition\"\n" + strings.Replace(meta, "served: true", "served: maybe", 1), true},
		{"escapes that do not parse", "kind: \"\\u0041\n  - [\n", false},
		{"escapes in a ConfigMap", "apiVersion: v1\nkind: ConfigMap\ndata: {a: \"\\x41\"}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EscapedCRD([]byte(tc.data)); got != tc.want {
				t.Fatalf("EscapedCRD = %v, want %v", got, tc.want)
			}
		})
	}
}
