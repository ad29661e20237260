package crd

import (
	"fmt"
	"testing"
)

// The storage history reads only the versions of the CRDs asked about: the storage version,
// status.storedVersions, deprecations, v1beta1's single version and CRDs inside a List; a
// document of another CRD, or one that does not parse, is never parsed or taken into account.
func TestReadVersionFacts(t *testing.T) {
	const crdHead = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\nspec:\n"
	for _, tc := range []struct {
		name, data string
		want       string
		ok         bool
	}{
		{"a bundle", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n" + fmt.Sprintf(crdHead, "a.example.com") +
			"  versions:\n  - name: v1alpha1\n    storage: false\n    deprecated: true\n  - name: v1\n    storage: true\nstatus:\n  storedVersions: [v1beta1]\n" +
			"---\n" + fmt.Sprintf(crdHead, "b.example.com") + "  versions:\n  - name: v9\n    storage: true\n",
			"[{a.example.com [v1 v1beta1] [v1alpha1]}]", true},
		{"v1beta1's single version", fmt.Sprintf(crdHead, "a.example.com") + "  version: v1beta1\n", "[{a.example.com [v1beta1] []}]", true},
		{"a List", `{"kind": "List", "items": [{"kind": "CustomResourceDefinition", "metadata": {"name": "a.example.com"}, "spec": {"versions": [{"name": "v2", "storage": true}]}}]}`, "[{a.example.com [v2] []}]", true},
		{"another CRD that does not parse", fmt.Sprintf(crdHead, "b.example.com") + "  versions: [\n---\n" + fmt.Sprintf(crdHead, "a.example.com") + "  versions:\n  - name: v1\n    storage: true\n", "[{a.example.com [v1] []}]", true},
		{"the CRD asked about does not parse", fmt.Sprintf(crdHead, "a.example.com") + "  versions: [\n", "[]", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ReadVersionFacts([]byte(tc.data), map[string]bool{"a.example.com": true})
			if s := fmt.Sprint(got); s != tc.want || ok != tc.ok {
				t.Errorf("got %s %v, want %s %v", s, ok, tc.want, tc.ok)
			}
		})
	}
}
