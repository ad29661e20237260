package crd

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
		{"name before kind", "apiVersion: apiextensions.k8s.io/v1\nmetadata:\n  name: a.example.com\nkind: CustomResourceDefinition\nspec:\n  versions:\n  - name: v1\n    storage: true\n", "[{a.example.com [v1] []}]", true},
		{"a block List with a name of its own, before its kind", "apiVersion: v1\nmetadata:\n  name: b.example.com\nkind: List\nitems:\n- apiVersion: apiextensions.k8s.io/v1\n  kind: CustomResourceDefinition\n  metadata:\n    name: a.example.com\n  spec:\n    versions:\n    - name: v3\n      storage: true\n", "[{a.example.com [v3] []}]", true},
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

// The line scanner and the YAML parser agree on every CRD document of the shared corpus and the
// rule cases: same name, stored and deprecated versions; the scanner may give up, never differ.
func TestScanVersionFactsAgreesWithYAML(t *testing.T) {
	var files []string
	for _, root := range []string{"../../../shared/corpus", "../../../shared/corpus-more", "../../testdata/rules"} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 100 {
		t.Fatalf("only %d files found", len(files))
	}
	scanned, gaveUp := 0, 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range splitDocuments(data) {
			nodes, problems := parseDocuments("", doc)
			if len(problems) > 0 || len(nodes) != 1 {
				continue
			}
			name := scalar(child(child(nodes[0].Content[0], "metadata"), "name"))
			parsed := appendFacts(nil, nodes[0], map[string]bool{name: true})
			if len(parsed) != 1 {
				continue
			}
			got, kind, ok := scanVersionFacts(doc, nil)
			if !ok {
				gaveUp++
				continue
			}
			scanned++
			if kind != Kind || fmt.Sprint(got) != fmt.Sprint(parsed[0]) {
				t.Errorf("%s: scanned %s %v, parsed %v", p, kind, got, parsed[0])
			}
		}
	}
	t.Logf("%d CRD documents scanned, %d left to the parser", scanned, gaveUp)
	if scanned < 100 {
		t.Errorf("only %d documents scanned", scanned)
	}
}

// Several versions, each with a schema deeper than the facts: every version's facts are its own.
func TestScanVersionFactsSeveralVersions(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.example.com\nspec:\n  versions:\n")
	for i, v := range []string{"v1alpha1", "v1beta1", "v1"} {
		fmt.Fprintf(&b, "  - name: %s\n    served: true\n    storage: %t\n    deprecated: %t\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          a:\n            type: string\n", v, i == 0, i == 1)
	}
	got, kind, ok := scanVersionFacts([]byte(b.String()), nil)
	if want := "{a.example.com [v1alpha1] [v1beta1]}"; fmt.Sprint(got) != want || kind != Kind || !ok {
		t.Errorf("got %v %s %v, want %s", got, kind, ok, want)
	}
}
