package source

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/crd"
)

// renderCharts renders charts (top chart folders, as the tree names files) of one side into the
// tree with the settings that match each: every value set of a chart is a rendering of its own.
// A chart whose files nowhere mention a CRD (outside crds/, which Helm does not render) is not
// rendered: what it needs to render is no concern of a CRD check. want, when set, picks the
// CRDs kept. Charts are rendered on all cores.
func (t *Tree) renderCharts(fsys chartFS, charts []string, helm HelmSettings, want func(*crd.CRD) bool) {
	out := make([][]*rendering, len(charts))
	remotes := make([][]Remote, len(charts))
	Parallel(len(charts), func(i int) {
		out[i], remotes[i] = renderOne(fsys, charts[i], t.rel(charts[i]), helm)
	})
	for i, rs := range out {
		for _, r := range rs {
			t.addRendering(r, want)
		}
		if len(remotes[i]) > 0 {
			t.setRemoteVia(t.rel(charts[i]), remotes[i])
		}
		// Rendered without them: what they install is not checked, and the notice says so.
		for _, r := range remotes[i] {
			t.addRemote(r.File, r.Line, r.Entry)
		}
	}
}

// renderOne reads one chart and renders it with each of its value sets (nothing when it renders
// no CRD whatever its values), and returns the dependencies it takes from a chart repository.
func renderOne(fsys chartFS, chart, rel string, helm HelmSettings) ([]*rendering, []Remote) {
	files, err := fsys.list(chart)
	if err != nil {
		return []*rendering{{Chart: chart, Failed: &ChartProblem{Chart: chart, File: chart + "/Chart.yaml", Line: 1,
			Message: fmt.Sprintf("Helm cannot load chart %s: %v", chart, err)}}}, nil
	}
	remotes := chartRemotes(chart, files)
	if !mayRenderCRDs(files) {
		return nil, remotes
	}
	s := helm.settingsFor(rel, chart)
	var out []*rendering
	for _, set := range s.deliveries() {
		out = append(out, renderChart(chart, files, s, set, helm.KubernetesVersion, fsys.read))
	}
	return out, remotes
}

// chartRemotes are the dependencies of a chart's Chart.yaml that helm fetches from a chart
// repository (http, https or oci) and that its charts/ folder does not hold: what they install
// is not in the repository, so crdguard does not check it (crd-left-repository).
func chartRemotes(chart string, files []chartFile) []Remote {
	var meta []byte
	present := map[string]bool{}
	for _, f := range files {
		if f.Name == "Chart.yaml" {
			meta = f.Data
		}
		if rest, ok := strings.CutPrefix(f.Name, "charts/"); ok {
			d, inner, nested := strings.Cut(rest, "/")
			switch {
			case nested && inner == "Chart.yaml":
				var m struct {
					Name string `json:"name"`
				}
				if sigsyaml.Unmarshal(f.Data, &m) == nil {
					present[m.Name] = true
				}
			case !nested && strings.HasSuffix(d, ".tgz"):
				present[archiveChartName(f.Data)] = true
			}
		}
	}
	var deps struct {
		Dependencies []struct {
			Name, Version, Repository string
		} `json:"dependencies"`
	}
	if meta == nil || sigsyaml.Unmarshal(meta, &deps) != nil {
		return nil
	}
	var out []Remote
	for i, d := range deps.Dependencies {
		r := d.Repository
		if present[d.Name] || !(strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "oci://")) {
			continue
		}
		out = append(out, Remote{File: chart + "/Chart.yaml", Line: dependencyLine(meta, i), Entry: strings.TrimSpace(r + " " + d.Name + " " + d.Version)})
	}
	return out
}

// dependencyLine is the line of the repository of the i-th dependency a Chart.yaml lists, read
// from its YAML nodes (the value may be quoted, as kyverno quotes it), 1 when there is none.
func dependencyLine(meta []byte, i int) int {
	doc, err := kyaml.Parse(string(meta))
	if err != nil || doc.YNode().Kind != kyaml.MappingNode {
		return 1
	}
	seq := mapValue(doc.YNode(), "dependencies")
	if seq == nil || seq.Kind != kyaml.SequenceNode || i >= len(seq.Content) || seq.Content[i].Kind != kyaml.MappingNode {
		return 1
	}
	if r := mapValue(seq.Content[i], "repository"); r != nil {
		return r.Line
	}
	return seq.Content[i].Line
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
