package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplateInChartWithoutChartYAML: a CRD template in a templates/ folder whose chart has no
// Chart.yaml in the repository (cert-manager v1.19.0's deploy/charts/cert-manager keeps
// Chart.template.yaml, which its build turns into Chart.yaml) is still not rendered and stays
// chart-not-rendered, with a message that says why the folder is no chart; a template beside
// neither file keeps the message of a template outside any chart.
func TestTemplateInChartWithoutChartYAML(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	templated := strings.Replace(string(plain), "              size:\n", "{{- if .Values.size }}\n              size:\n{{- end }}\n", 1)
	const problem = "YAML does not parse: line 30: could not find expected ':'"
	outside := "a template (Helm {{ }} or envsubst ${VAR}) outside any Helm chart, which does not read as YAML without rendering (" + problem + "): its CRDs are not compared; crdguard renders charts only (a folder with a Chart.yaml): compare what it renders instead (helm template or envsubst first, or crdguard diff on the chart folders), or leave the file out with paths or exclude in .crdguard.yaml"
	built := func(dir, besides string) string {
		return "a Helm template in " + dir + "/templates, but " + dir + " has no Chart.yaml (it has " + besides + ": is Chart.yaml written when the chart is built?), so it is no chart crdguard can render, and the file does not read as YAML without rendering (" + problem + "): its CRDs are not compared; commit Chart.yaml, compare what the chart renders instead (helm template first, or crdguard diff on the built chart folders), or leave the file out with paths or exclude in .crdguard.yaml"
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		file    string // the template, relative to the folder read
		want    string // "" for built(chart, besides)
		besides string
	}{
		{"Chart.template.yaml", map[string]string{"deploy/charts/cm/Chart.template.yaml": "name: cm\n", "deploy/charts/cm/values.yaml": "size: true\n"},
			"deploy/charts/cm/templates/crd.yaml", "", "Chart.template.yaml"},
		{"values.yaml only", map[string]string{"deploy/charts/cm/values.yaml": "size: true\n"},
			"deploy/charts/cm/templates/crds/crd.yaml", "", "values.yaml"},
		{"templates at the root", map[string]string{"values.yaml": "size: true\n"}, "templates/crd.yaml", "", "values.yaml"},
		{"a crds folder, which helm never renders", map[string]string{"deploy/charts/cm/Chart.template.yaml": "name: cm\n"}, "deploy/charts/cm/crds/crd.yaml", outside, ""},
		{"a templates folder of nothing", map[string]string{}, "deploy/templates/crd.yaml", outside, ""},
		{"no templates folder", map[string]string{"deploy/values.yaml": "size: true\n"}, "deploy/crd.yaml", outside, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.files[tc.file] = templated
			for name, text := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			tree, err := ReadPath(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				chart := strings.TrimSuffix(tc.file[:strings.LastIndex("/"+tc.file, "/templates/")], "/")
				want = built(filepath.ToSlash(filepath.Join(dir, chart)), tc.besides)
			}
			if len(tree.NotRendered) != 1 || len(tree.CRDs) != 0 {
				t.Fatalf("%d not rendered, %d CRDs, want 1 and 0", len(tree.NotRendered), len(tree.CRDs))
			}
			p := tree.NotRendered[0]
			if p.File != filepath.ToSlash(filepath.Join(dir, tc.file)) || p.Line != 30 || strings.Join(p.Names, ",") != "widgets.example.com" || p.Message != want {
				t.Errorf("got %s:%d %v\n%s\nwant %s:30 [widgets.example.com]\n%s", p.File, p.Line, p.Names, p.Message, tc.file, want)
			}
		})
	}
}
