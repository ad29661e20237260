package source

import (
	"slices"
	"testing"
)

// TestChartLikeOf: what looks like a chart helm refuses to load is the folder above the
// innermost crds/ or templates/ folder of a file with a values.yaml or a Chart.template.yaml
// beside them and no Chart.yaml; anything else is not chart-like.
func TestChartLikeOf(t *testing.T) {
	for _, tc := range []struct {
		name, file        string
		files             []string
		dir, sub, besides string
	}{
		{"values.yaml beside templates", "c/templates/crd.yaml", []string{"c/values.yaml"}, "c", "templates", "values.yaml"},
		{"Chart.template.yaml beside templates", "c/templates/x/crd.yaml", []string{"c/Chart.template.yaml", "c/values.yaml"}, "c", "templates", "Chart.template.yaml"},
		{"values.yaml beside crds", "c/crds/crd.yaml", []string{"c/values.yaml"}, "c", "crds", "values.yaml"},
		{"the innermost folder with a chart's files", "a/templates/b/crds/crd.yaml", []string{"a/values.yaml"}, "a", "templates", "values.yaml"},
		{"at the root", "templates/crd.yaml", []string{"values.yaml"}, ".", "templates", "values.yaml"},
		{"a chart", "c/templates/crd.yaml", []string{"c/Chart.yaml", "c/values.yaml"}, "", "", ""},
		{"a chart's folder inside a chart-like one", "a/templates/b/templates/crd.yaml", []string{"a/values.yaml", "a/templates/b/Chart.yaml"}, "", "", ""},
		{"nothing beside templates", "c/templates/crd.yaml", []string{"c/README.md"}, "", "", ""},
		{"values.yaml but no templates or crds folder", "c/deploy/crd.yaml", []string{"c/values.yaml"}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			has := func(name string) bool { return slices.Contains(tc.files, name) }
			dir, sub, besides := chartLikeOf(tc.file, has)
			if dir != tc.dir || sub != tc.sub || besides != tc.besides {
				t.Errorf("chartLikeOf(%s) = %q, %q, %q, want %q, %q, %q", tc.file, dir, sub, besides, tc.dir, tc.sub, tc.besides)
			}
		})
	}
}
