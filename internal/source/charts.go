package source

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/crdguard/crdguard/internal/crd"
)

// renderCharts renders charts (top chart folders, as the tree names files) of one side into the
// tree with the settings that match each: every value set of a chart is a rendering of its own.
// A chart whose files nowhere mention a CRD (outside crds/, which Helm does not render) is not
// rendered: what it needs to render is no concern of a CRD check. want, when set, picks the
// CRDs kept. Charts are rendered on all cores.
func (t *Tree) renderCharts(fsys chartFS, charts []string, helm HelmSettings, want func(*crd.CRD) bool) {
	out := make([][]*rendering, len(charts))
	Parallel(len(charts), func(i int) {
		out[i] = renderOne(fsys, charts[i], t.rel(charts[i]), helm)
	})
	for _, rs := range out {
		for _, r := range rs {
			t.addRendering(r, want)
		}
	}
}

// renderOne reads one chart and renders it with each of its value sets; nothing when it renders
// no CRD whatever its values.
func renderOne(fsys chartFS, chart, rel string, helm HelmSettings) []*rendering {
	files, err := fsys.list(chart)
	if err != nil {
		return []*rendering{{Chart: chart, Failed: &ChartProblem{Chart: chart, File: chart + "/Chart.yaml", Line: 1,
			Message: fmt.Sprintf("Helm cannot load chart %s: %v", chart, err)}}}
	}
	if !mayRenderCRDs(files) {
		return nil
	}
	s := helm.settingsFor(rel, chart)
	var out []*rendering
	for _, set := range s.deliveries() {
		out = append(out, renderChart(chart, files, s, set, helm.KubernetesVersion, fsys.read))
	}
	return out
}

// mayRenderCRDs reports whether any file of a chart outside its crds/ folders (a template, a
// helper, a file .Files.Get reads, a packaged sub-chart) mentions a CRD.
func mayRenderCRDs(files []chartFile) bool {
	for _, f := range files {
		if strings.HasPrefix(f.Name, HelmCRDs+"/") || strings.Contains(f.Name, "/"+HelmCRDs+"/") && !strings.Contains(f.Name, HelmTemplates+"/") {
			continue
		}
		if strings.HasSuffix(f.Name, ".tgz") && strings.HasPrefix(f.Name, "charts/") {
			if archiveMentionsCRD(f.Data) {
				return true
			}
			continue
		}
		if crd.MentionsCRD(f.Data) {
			return true
		}
	}
	return false
}

// archiveMentionsCRD reports whether a packaged sub-chart's templates or files mention a CRD.
func archiveMentionsCRD(data []byte) bool {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return true // it cannot load: rendering says why
	}
	for _, f := range append(c.Templates, c.Files...) {
		if crd.MentionsCRD(f.Data) {
			return true
		}
	}
	for _, d := range c.Dependencies() {
		for _, f := range d.Templates {
			if crd.MentionsCRD(f.Data) {
				return true
			}
		}
	}
	return false
}

// sortedKeys returns a set's members in order.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
