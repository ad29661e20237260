package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chartTemplate is a CRD template behind a flag, its maximum from the values.
const chartTemplate = `{{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          size:
            type: integer
            maximum: {{ .Values.maxSize }}
{{- end }}
`

// writeChartDir writes a chart folder with the template and values.
func writeChartDir(t *testing.T, dir, values string) {
	t.Helper()
	for name, data := range map[string]string{"Chart.yaml": "apiVersion: v2\nname: widgets\nversion: 1.0.0\n", "values.yaml": values, "templates/crd.yaml": chartTemplate} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiffRendersCharts: diff of two chart folders, or of one template in each, renders the
// charts: a values-only change is compared at the template's line, and a chart whose CRDs are
// behind a flag that is off is chart-not-rendered (exit 1), never "nothing to compare".
func TestDiffRendersCharts(t *testing.T) {
	dir := t.TempDir()
	oldChart, newChart := filepath.Join(dir, "old", "widgets"), filepath.Join(dir, "new", "widgets")
	writeChartDir(t, oldChart, "crds:\n  enabled: true\nmaxSize: 10\n")
	writeChartDir(t, newChart, "crds:\n  enabled: true\nmaxSize: 5\n")
	want := "error max-decreased widgets.example.com crd.yaml:22 head: maximum of .size changed from 10 to 5: stored objects outside the new bound keep updating only while the value is unchanged (validation ratcheting); clients sending such values are rejected; loosen the bound, or tighten it only in a new version"
	for _, args := range [][]string{{oldChart, newChart}, {filepath.Join(oldChart, "templates", "crd.yaml"), filepath.Join(newChart, "templates", "crd.yaml")}} {
		code, stdout, stderr := runCLI(t, append([]string{"diff", "--format", "json"}, args...)...)
		if code != 1 || stderr != "" {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		if got := strings.Join(findingLines(t, stdout), "\n"); got != want {
			t.Errorf("%v: findings\n%s\nwant\n%s", args, got, want)
		}
	}
	writeChartDir(t, newChart, "crds:\n  enabled: false\nmaxSize: 5\n")
	code, stdout, stderr := runCLI(t, "diff", "--format", "json", oldChart, newChart)
	if code != 1 || stderr != "" {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if got := findingLines(t, stdout); len(got) != 1 || !strings.HasPrefix(got[0], "error chart-not-rendered widgets.example.com crd.yaml:1 head: this template of chart ") {
		t.Errorf("findings %q", got)
	}
}
