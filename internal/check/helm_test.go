package check

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// The Helm rules judge folders compared in diff mode as they judge commits: old/ and new/ name
// the same chart by its path under each, and two files compared as counterparts are one chart's.
func TestHelmInDiffMode(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"folders, crds/ changed", "helm-crd-not-upgraded/basic/old", "helm-crd-not-upgraded/basic/new", []string{"helm-crd-not-upgraded warning gadgets.example.com"}},
		{"folders, comment only", "helm-crd-not-upgraded/not-comment-only/old", "helm-crd-not-upgraded/not-comment-only/new", nil},
		{"files, comment only", "helm-crd-not-upgraded/not-comment-only/old/charts/widgets/crds/widgets.yaml", "helm-crd-not-upgraded/not-comment-only/new/charts/widgets/crds/widgets.yaml", nil},
		{"files, changed", "helm-crd-not-upgraded/basic/old/charts/widgets/crds/widgets.yaml", "helm-crd-not-upgraded/basic/new/charts/widgets/crds/widgets.yaml", []string{"helm-crd-not-upgraded warning widgets.example.com"}},
		{"folders, keep removed", "helm-keep-removed/basic/old", "helm-keep-removed/basic/new", []string{"helm-keep-removed error widgets.example.com"}},
		{"folders, left the release", "helm-crd-left-release/basic/old", "helm-crd-left-release/basic/new", []string{"helm-crd-left-release error widgets.example.com"}},
		{"folders, chart gone", "helm-crd-left-release/not-chart-gone/old", "helm-crd-left-release/not-chart-gone/new", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := source.ReadPath(filepath.Join(casesDir, tc.old), false)
			if err != nil {
				t.Fatal(err)
			}
			new, err := source.ReadPath(filepath.Join(casesDir, tc.new), false)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range Trees(old, new, rules.Options{}).Findings {
				if f.Severity > finding.Info {
					got = append(got, f.Rule+" "+f.Severity.String()+" "+f.CRD)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
