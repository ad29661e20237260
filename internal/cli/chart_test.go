package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/charttest"
)

// writeChartDir writes the widgets chart at dir with values.
func writeChartDir(t *testing.T, dir, values string) {
	t.Helper()
	charttest.Write(charttest.Folder{T: t, Dir: dir}, charttest.Chart("", charttest.Template, values))
}

// TestDiffRendersCharts: diff of two chart folders, or of one template in each, renders the
// charts: a values-only change is compared at the template's line, and a chart whose CRDs are
// behind a flag that is off is chart-not-rendered (exit 1), never "nothing to compare".
func TestDiffRendersCharts(t *testing.T) {
	dir := t.TempDir()
	oldChart, newChart := filepath.Join(dir, "old", "widgets"), filepath.Join(dir, "new", "widgets")
	writeChartDir(t, oldChart, charttest.Values)
	writeChartDir(t, newChart, strings.Replace(charttest.Values, "maxSize: 10", "maxSize: 5", 1))
	want := "error max-decreased widgets.example.com widgets.yaml:30 head: maximum of .spec.size changed from 10 to 5: stored objects outside the new bound keep updating only while the value is unchanged (validation ratcheting); clients sending such values are rejected; loosen the bound, or tighten it only in a new version"
	for _, args := range [][]string{{oldChart, newChart}, {filepath.Join(oldChart, charttest.TemplatePath("")), filepath.Join(newChart, charttest.TemplatePath(""))}} {
		code, stdout, stderr := runCLI(t, append([]string{"diff", "--format", "json"}, args...)...)
		if code != 1 || stderr != "" {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		if got := strings.Join(findingLines(t, stdout), "\n"); got != want {
			t.Errorf("%v: findings\n%s\nwant\n%s", args, got, want)
		}
	}
	writeChartDir(t, newChart, strings.Replace(charttest.Values, "enabled: true", "enabled: false", 1))
	code, stdout, stderr := runCLI(t, "diff", "--format", "json", oldChart, newChart)
	if code != 1 || stderr != "" {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	want = "error chart-not-rendered widgets.example.com widgets.yaml:1 head: this template of chart " + newChart + " holds a CustomResourceDefinition but renders no CRD: its condition {{ if .Values.crds.enabled }} (line 1) is false with its values, so its CRDs are not compared; set helm.set: {crds.enabled: true} for chart " + newChart + " in .crdguard.yaml (or a value set that turns it on)"
	if got := strings.Join(findingLines(t, stdout), "\n"); got != want {
		t.Errorf("findings\n%s\nwant\n%s", got, want)
	}
}
