package source

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every way a kustomization names a CRD patch is applied, by kustomize itself; a kustomization
// kustomize refuses is a problem at the kustomization that quotes kustomize (fail closed: what
// kubectl apply -k installs from it is not known), and the definition is compared as written.
func TestKustomizeBuilds(t *testing.T) {
	base, err := os.ReadFile("../../testdata/repos/kubebuilder/old/config/crd/bases/example.com_widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	webhook, err := os.ReadFile("../../testdata/repos/kubebuilder/old/config/crd/patches/webhook_in_widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const json6902 = "- op: add\n  path: /spec/conversion\n  value:\n    strategy: Webhook\n    webhook:\n      clientConfig: {service: {namespace: system, name: webhook-service, path: /convert}}\n      conversionReviewVersions: [v1]\n"
	const target = "  target:\n    group: apiextensions.k8s.io\n    version: v1\n    kind: CustomResourceDefinition\n    name: widgets.example.com\n"
	for _, tc := range []struct {
		name, kustomization, patch, problem string
		webhook                             bool
	}{
		{"patches", "resources: [bases/w.yaml]\npatches:\n- path: patches/p.yaml\n", string(webhook), "", true},
		{"patchesStrategicMerge", "bases: [bases/w.yaml]\npatchesStrategicMerge:\n- patches/p.yaml\n", string(webhook), "", true},
		{"patchesJson6902", "resources: [bases/w.yaml]\npatchesJson6902:\n- path: patches/p.yaml\n" + target, json6902, "", true},
		{"inline patch with a target", "resources: [bases/w.yaml]\npatches:\n- patch: |-\n" + indent(json6902, "    ") + target, "", "", true},
		// kubectl apply -k refuses a patch of an object the kustomization does not hold.
		{"patch of another kind only", "resources: [bases/w.yaml]\npatches:\n- path: patches/p.yaml\n", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
			":1: " + built + `no resource matches strategic merge patch "Deployment.v1.apps/x.[noNs]": no matches for Id Deployment.v1.apps/x.[noNs]; failed to find unique target for patch Deployment.v1.apps/x.[noNs]` + fix, false},
		{"patch of another kind with it", "resources: [bases/w.yaml, d.yaml]\npatches:\n- path: patches/p.yaml\n", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 2}\n", "", false},
		{"no patches", "resources: [bases/w.yaml]\n", string(webhook), "", false},
		{"patch of a missing CRD", "resources: [bases/w.yaml]\npatches:\n- path: patches/p.yaml\n", strings.Replace(string(webhook), "widgets.example.com", "gadgets.example.com", 1), ":1: " + built + `no resource matches strategic merge patch "CustomResourceDefinition.v1.apiextensions.k8s.io/gadgets.example.com.[noNs]": no matches for Id CustomResourceDefinition.v1.apiextensions.k8s.io/gadgets.example.com.[noNs]; failed to find unique target for patch CustomResourceDefinition.v1.apiextensions.k8s.io/gadgets.example.com.[noNs]` + fix, false},
		{"kustomization does not parse", "resources: [bases/w.yaml\n", string(webhook), ":1: " + built + "invalid Kustomization: yaml: line 1: did not find expected ',' or ']'" + fix, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{"config/crd/bases/w.yaml": string(base), "config/crd/patches/p.yaml": tc.patch, "config/crd/kustomization.yaml": tc.kustomization,
				"config/crd/d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"} {
				full := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tr, err := ReadPath(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			var problems []string
			for _, p := range tr.NotRendered {
				problems = append(problems, fmt.Sprintf("%s:%d: %s", strings.TrimPrefix(p.File, filepath.ToSlash(dir)+"/config/crd/kustomization.yaml"), p.Line, p.Message))
			}
			if want := []string{tc.problem}; len(tr.CRDs) != 1 || tc.problem == "" && len(problems) != 0 || tc.problem != "" && !slices.Equal(problems, want) {
				t.Fatalf("crds %d problems\n%q\nwant\n%q", len(tr.CRDs), problems, want)
			}
			c := tr.CRDs[0]
			got := c.Object.Spec.Conversion != nil && c.Object.Spec.Conversion.Strategy == "Webhook"
			if got != tc.webhook || (c.PatchedBy != "") != tc.webhook {
				t.Errorf("webhook %v, patched by %q; want %v", got, c.PatchedBy, tc.webhook)
			}
			if c.LineOf(c.VersionPath("v1")) != 17 {
				t.Errorf("lines are not those of the definition: v1 at %d", c.LineOf(c.VersionPath("v1")))
			}
			if len(tr.Notices) != 0 {
				t.Errorf("notices %v", tr.Notices)
			}
		})
	}
}

// built starts the message of a kustomization kustomize refuses.
const built = "kustomize cannot build this kustomization, so what kubectl apply -k installs from it is not known: "

// fix ends the message of a kustomization kustomize refuses.
const fix = "; fix it so that kustomize build accepts it, or leave it out with exclude in .crdguard.yaml"

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}
