package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every way a kustomization names a CRD patch is applied; what kustomize refuses is a notice.
func TestApplyPatches(t *testing.T) {
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
		name, kustomization, patch, notice string
		webhook                            bool
	}{
		{"patches", "resources: [bases/w.yaml]\npatches:\n- path: patches/p.yaml\n", string(webhook), "", true},
		{"patchesStrategicMerge", "bases: [bases/w.yaml]\npatchesStrategicMerge:\n- patches/p.yaml\n", string(webhook), "", true},
		{"patchesJson6902", "resources: [bases/w.yaml]\npatchesJson6902:\n- path: patches/p.yaml\n" + target, json6902, "", true},
		{"inline patch with a target", "resources: [bases/w.yaml]\npatches:\n- patch: |-\n" + indent(json6902, "    ") + target, "", "", true},
		{"patch of another kind only", "resources: [bases/w.yaml]\npatches:\n- path: patches/p.yaml\n", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", "", false},
		{"no patches", "resources: [bases/w.yaml]\n", string(webhook), "", false},
		{"patch of a missing CRD", "resources: [bases/w.yaml]\npatches:\n- path: patches/p.yaml\n", strings.Replace(string(webhook), "widgets.example.com", "gadgets.example.com", 1), "kustomize says: no resource matches strategic merge patch", false},
		{"kustomization does not parse", "resources: [bases/w.yaml\n", string(webhook), "config/crd/kustomization.yaml: not read", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{"config/crd/bases/w.yaml": string(base), "config/crd/patches/p.yaml": tc.patch, "config/crd/kustomization.yaml": tc.kustomization} {
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
			if len(tr.CRDs) != 1 || len(tr.Problems) != 0 {
				t.Fatalf("crds %d problems %v", len(tr.CRDs), tr.Problems)
			}
			c := tr.CRDs[0]
			got := c.Object.Spec.Conversion != nil && c.Object.Spec.Conversion.Strategy == "Webhook"
			if got != tc.webhook || (c.PatchedBy != "") != tc.webhook {
				t.Errorf("webhook %v, patched by %q; want %v", got, c.PatchedBy, tc.webhook)
			}
			if c.LineOf(c.VersionPath("v1")) != 17 {
				t.Errorf("lines are not those of the definition: v1 at %d", c.LineOf(c.VersionPath("v1")))
			}
			switch {
			case tc.notice == "" && len(tr.Notices) != 0:
				t.Errorf("notices %v", tr.Notices)
			case tc.notice != "" && (len(tr.Notices) != 1 || !strings.Contains(tr.Notices[0], tc.notice) || !strings.HasPrefix(tr.Notices[0], filepath.ToSlash(dir)+"/config/crd/kustomization.yaml: ")):
				t.Errorf("notices %q, want one containing %q", tr.Notices, tc.notice)
			}
		})
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}
