package source

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	helmutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/ignore"
	"helm.sh/helm/v4/pkg/strvals"
	sigsyaml "sigs.k8s.io/yaml"
)

// Helm charts are rendered by Helm's own engine, as `helm template` renders them without a
// cluster: the chart is loaded from the compared commit (its .helmignore applied, links inside
// the repository followed as Helm's loader follows them), its values.yaml with the values
// .crdguard.yaml gives, `lookup` finds nothing, and .Capabilities is Helm's default or the
// kubernetesVersion of the configuration. crds/ is not rendered: Helm installs it as it is.

// HelmSettings say how the charts of a repository are rendered (.crdguard.yaml helm:).
type HelmSettings struct {
	// Charts are the settings by chart folder glob; the first whose glob matches a chart's
	// folder applies. A chart no glob matches is rendered with its own values.yaml alone.
	Charts []ChartSettings
	// KubernetesVersion is the Kubernetes version .Capabilities reports ("1.30"); empty:
	// Helm's default, as `helm template` without --kube-version.
	KubernetesVersion string
}

// ChartSettings are the values a team renders a chart with.
type ChartSettings struct {
	// Chart is a glob of chart folders, from the repository root (or the compared folder).
	Chart string
	// Values are what every rendering of the chart is given over the chart's values.yaml.
	Values
	// ReleaseName and Namespace are .Release.Name and .Release.Namespace; empty:
	// `helm template`'s "release-name" and "default".
	ReleaseName, Namespace string
	// Sets are named value sets, each rendered over Values and compared as its own delivery
	// of the chart's CRDs; none: the chart is rendered once, with Values.
	Sets []ValueSet
}

// Values are values files and single values, as helm's -f and --set-json give them.
type Values struct {
	// Files are values files, by path from the chart folder, applied in order.
	Files []string
	// Set are single values by Helm's key path (crds.enabled, a.b[0].c), applied after Files
	// in key order.
	Set map[string]any
}

// ValueSet is one named set of values.
type ValueSet struct {
	Name string
	Values
}

// defaultRelease and defaultNamespace are what `helm template` renders .Release with when it
// is given no name and no namespace.
const (
	defaultRelease   = "release-name"
	defaultNamespace = "default"
)

// settingsFor returns the settings of the first entry whose glob matches a chart folder
// (named from the root; also tried as the caller names it), or none.
func (h HelmSettings) settingsFor(rel, named string) ChartSettings {
	for _, c := range h.Charts {
		if Match(c.Chart, rel) || Match(c.Chart, named) {
			return c
		}
	}
	return ChartSettings{}
}

// deliveries are the value sets a chart is rendered with: its sets, or one unnamed set.
func (c ChartSettings) deliveries() []ValueSet {
	if len(c.Sets) == 0 {
		return []ValueSet{{}}
	}
	return c.Sets
}

// chartFile is one file of a chart as Helm's loader names it: the path from the chart folder,
// through links.
type chartFile struct {
	Name string
	Data []byte
}

// rendering is what one chart rendered with one value set.
type rendering struct {
	// Chart is the chart folder, named as the tree names files; Set the value set ("" for none).
	Chart, Set string
	// Templates are the rendered templates of the chart and its sub-charts, by file.
	Templates []renderedTemplate
	// Failed says where and why the chart did not render; nil when it did.
	Failed *ChartProblem
}

// renderedTemplate is one template and what it rendered.
type renderedTemplate struct {
	// File is the template as the tree names files (through links: Helm's own name for it).
	File string
	// Source is the template's text; Output what it rendered.
	Source, Output []byte
}

// ChartProblem is a chart that did not render: at the template (and line) Helm's error names,
// else at its Chart.yaml.
type ChartProblem struct {
	// Chart is the chart folder; Set the value set it was rendered with ("" for none).
	Chart, Set string
	File       string
	Line       int
	// Message says what failed and how to give the chart what it needs.
	Message string
	// Names are the CRDs the problem leaves unknown, when the template names them.
	Names []string
	// Kustomization marks a kustomization that kustomize refuses to build (File), not a chart.
	Kustomization bool
}

// renderChart loads a chart from its files and renders it with one value set, as `helm
// template` does. values reads a values file by its path as the tree names files. A chart
// that does not load or render comes back with Failed set, never an error: what a chart
// cannot do is a finding.
func renderChart(dir string, files []chartFile, s ChartSettings, set ValueSet, kube string, values func(string) ([]byte, bool)) *rendering {
	r := &rendering{Chart: dir, Set: set.Name}
	fail := func(file string, line int, msg string) *rendering {
		r.Failed = &ChartProblem{Chart: dir, Set: set.Name, File: file, Line: line, Message: msg}
		return r
	}
	chartYAML := path.Join(dir, "Chart.yaml")
	loaded, err := loadChart(files)
	if err != nil {
		return fail(chartYAML, 1, fmt.Sprintf("Helm cannot load chart %s: %v", dir, err))
	}
	vals, file, err := chartValues(dir, s.Values, set.Values, values)
	if err != nil {
		return fail(file, 1, err.Error())
	}
	caps := common.DefaultCapabilities.Copy()
	if kube != "" {
		v, err := common.ParseKubeVersion(kube)
		if err != nil {
			return fail(chartYAML, 1, fmt.Sprintf("kubernetesVersion %q is not a Kubernetes version: %v", kube, err))
		}
		caps.KubeVersion = *v
	}
	if kv := loaded.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return fail(chartYAML, 1, fmt.Sprintf("chart %s requires kubeVersion %s, which Kubernetes %s is not: set kubernetesVersion in .crdguard.yaml to a version the chart supports", dir, kv, caps.KubeVersion.Version))
	}
	if err := chartutil.ProcessDependencies(loaded, vals); err != nil {
		return fail(chartYAML, 1, fmt.Sprintf("Helm cannot process the dependencies of chart %s: %v", dir, err))
	}
	release := common.ReleaseOptions{Name: orDefault(s.ReleaseName, defaultRelease), Namespace: orDefault(s.Namespace, defaultNamespace), Revision: 1, IsInstall: true}
	// The values schema is not validated: its $refs may name URLs, and nothing is fetched.
	top, err := helmutil.ToRenderValuesWithSchemaValidation(loaded, vals, release, caps, true)
	if err != nil {
		return fail(chartYAML, 1, fmt.Sprintf("Helm cannot merge the values of chart %s: %v", dir, err))
	}
	var e engine.Engine // no cluster: lookup finds nothing, as in helm template
	out, err := e.RenderWithContext(context.Background(), loaded, top)
	if err != nil {
		folders := chartFolders(dir, loaded, files)
		file, line := renderErrorAt(err, folders, chartYAML)
		return fail(file, line, notRenderedMessage(dir, set.Name, err, sourceLine(files, dir, file, line)))
	}
	folders := chartFolders(dir, loaded, files)
	sources := map[string][]byte{}
	for _, f := range files {
		sources[path.Join(dir, f.Name)] = f.Data
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasSuffix(k, "/NOTES.txt") {
			continue
		}
		file := repoFile(k, folders)
		if file == "" {
			continue
		}
		r.Templates = append(r.Templates, renderedTemplate{File: file, Source: sources[file], Output: []byte(out[k])})
	}
	return r
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// loadChart loads a chart from its files with Helm's loader, leaving out what its .helmignore
// (and Helm's default, dotfiles in templates/) names, as loading a folder does.
func loadChart(files []chartFile) (*chartv2.Chart, error) {
	rules := ignore.Empty()
	for _, f := range files {
		if f.Name == ignore.HelmIgnore {
			r, err := ignore.Parse(bytes.NewReader(f.Data))
			if err != nil {
				return nil, fmt.Errorf("reading .helmignore: %w", err)
			}
			rules = r
		}
	}
	rules.AddDefaults()
	buffered := make([]*archive.BufferedFile, 0, len(files))
	var total int64
	for _, f := range files {
		if ignored(rules, f.Name) {
			continue
		}
		total += int64(len(f.Data))
		if total > archive.MaxDecompressedChartSize {
			return nil, fmt.Errorf("the chart is larger than Helm's limit of %d bytes", archive.MaxDecompressedChartSize)
		}
		buffered = append(buffered, &archive.BufferedFile{Name: f.Name, Data: bytes.TrimPrefix(f.Data, utf8BOM)})
	}
	return loader.LoadFiles(buffered)
}

// ignored applies .helmignore to a file as Helm's folder walk does: a folder it names leaves
// out everything below it.
func ignored(rules *ignore.Rules, name string) bool {
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		if rules.Ignore(strings.Join(parts[:i], "/"), fileInfo{name: parts[i-1], dir: true}) {
			return true
		}
	}
	return rules.Ignore(name, fileInfo{name: parts[len(parts)-1]})
}

// chartValues merges the values files and single values a chart is rendered with, in Helm's
// order (files in turn, each over the last; then single values). On failure it returns the file
// to blame.
func chartValues(dir string, base, set Values, read func(string) ([]byte, bool)) (map[string]any, string, error) {
	vals := map[string]any{}
	for _, v := range []Values{base, set} {
		for _, f := range v.Files {
			name := path.Join(dir, f)
			data, ok := read(name)
			if !ok {
				return nil, path.Join(dir, "Chart.yaml"), fmt.Errorf("the values file %s that .crdguard.yaml gives chart %s is not in the repository", name, dir)
			}
			m, err := common.ReadValues(data)
			if err != nil {
				return nil, name, fmt.Errorf("the values file %s does not parse: %v", name, err)
			}
			vals = mergeValues(vals, m)
		}
		keys := make([]string, 0, len(v.Set))
		for k := range v.Set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			js, err := json.Marshal(v.Set[k])
			if err != nil {
				return nil, path.Join(dir, "Chart.yaml"), fmt.Errorf("helm set %s: %v", k, err)
			}
			if err := strvals.ParseJSON(k+"="+string(js), vals); err != nil {
				return nil, path.Join(dir, "Chart.yaml"), fmt.Errorf("helm set %s: %v", k, err)
			}
		}
	}
	return vals, "", nil
}

// ValidSet reports whether Helm can set a value by a key (crds.enabled, a.b[0]), as --set-json.
func ValidSet(key string, value any) error {
	js, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	if err := strvals.ParseJSON(key+"="+string(js), map[string]any{}); err != nil {
		return fmt.Errorf("%s: Helm cannot set this key: %v", key, err)
	}
	return nil
}

// mergeValues lays b over a as helm merges values files: mappings merge, anything else replaces.
func mergeValues(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// chartFolders maps the full path Helm names each loaded (sub-)chart by (mychart,
// mychart/charts/sub) to its folder as the tree names files: a sub-chart folder by the name its
// Chart.yaml gives, an aliased dependency by its alias; a packaged sub-chart (.tgz) to the
// archive.
func chartFolders(dir string, c *chartv2.Chart, files []chartFile) map[string]string {
	out := map[string]string{}
	var walk func(c *chartv2.Chart, folder string, inFiles []chartFile)
	walk = func(c *chartv2.Chart, folder string, inFiles []chartFile) {
		out[c.ChartFullPath()] = folder
		// The name each folder of charts/ gives its chart.
		named := map[string]string{}
		sub := map[string][]chartFile{}
		for _, f := range inFiles {
			rest, ok := strings.CutPrefix(f.Name, "charts/")
			if !ok {
				continue
			}
			d, inner, nested := strings.Cut(rest, "/")
			if !nested {
				if strings.HasSuffix(d, ".tgz") {
					if n := archiveChartName(f.Data); n != "" {
						named[n] = "charts/" + d
					}
				}
				continue
			}
			sub[d] = append(sub[d], chartFile{Name: inner, Data: f.Data})
			if inner == "Chart.yaml" {
				var m struct {
					Name string `json:"name"`
				}
				if sigsyaml.Unmarshal(f.Data, &m) == nil && m.Name != "" {
					named[m.Name] = "charts/" + d
				}
			}
		}
		for _, d := range c.Dependencies() {
			name := d.Name()
			for _, dep := range c.Metadata.Dependencies {
				if dep.Alias == d.Name() && dep.Alias != "" {
					name = dep.Name
				}
			}
			f, ok := named[name]
			if !ok {
				continue
			}
			if strings.HasSuffix(f, ".tgz") {
				markArchive(d, path.Join(folder, f), out)
				continue
			}
			walk(d, path.Join(folder, f), sub[strings.TrimPrefix(f, "charts/")])
		}
	}
	walk(c, dir, files)
	return out
}

// markArchive maps a packaged sub-chart and everything in it to the archive file.
func markArchive(c *chartv2.Chart, file string, out map[string]string) {
	out[c.ChartFullPath()] = file
	for _, d := range c.Dependencies() {
		markArchive(d, file, out)
	}
}

// archiveChartName is the name of the chart a .tgz holds, "" when it does not load.
func archiveChartName(data []byte) string {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return ""
	}
	return c.Name()
}

// repoFile turns an engine output name (mychart/charts/sub/templates/crd.yaml) into the file
// as the tree names it: the longest full chart path it starts with gives the folder.
func repoFile(key string, folders map[string]string) string {
	best := ""
	for full := range folders {
		if strings.HasPrefix(key, full+"/") && len(full) > len(best) {
			best = full
		}
	}
	if best == "" {
		return ""
	}
	folder := folders[best]
	if strings.HasSuffix(folder, ".tgz") {
		return folder
	}
	return path.Join(folder, strings.TrimPrefix(key, best+"/"))
}

var (
	// execErrorAt is where Helm's engine says a template failed: "template: c/templates/x.yaml:12:5:"
	// or "parse error at (c/templates/x.yaml:3):".
	execErrorAt = regexp.MustCompile(`([^\s:()"]+/templates/[^\s:()"]+):(\d+)`)
	// valuesRef is the first value a failing action reads (.Values.crds.enabled).
	valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)`)
)

// renderErrorAt is the file and line Helm's error names, else the chart's Chart.yaml.
func renderErrorAt(err error, folders map[string]string, chartYAML string) (string, int) {
	m := execErrorAt.FindStringSubmatch(err.Error())
	if m == nil {
		return chartYAML, 1
	}
	file := repoFile(m[1], folders)
	if file == "" {
		return chartYAML, 1
	}
	line := 1
	fmt.Sscanf(m[2], "%d", &line)
	return file, line
}

// sourceLine is a line of a chart's file ("" when there is none).
func sourceLine(files []chartFile, dir, file string, line int) string {
	for _, f := range files {
		if path.Join(dir, f.Name) == file {
			if lines := strings.Split(string(f.Data), "\n"); line >= 1 && line <= len(lines) {
				return lines[line-1]
			}
		}
	}
	return ""
}

// notRenderedMessage says why a chart did not render and how to give it the values it needs:
// the value Helm's message names, else the one the failing line reads.
func notRenderedMessage(dir, set string, err error, failing string) string {
	msg := strings.TrimSpace(strings.ReplaceAll(err.Error(), "\n", " "))
	with := "its values.yaml"
	if set != "" {
		with = "value set " + set
	}
	how := "give it the values it needs in .crdguard.yaml (helm: - chart: " + dir + ", with values: [a values file] or set: {key: value})"
	m := valuesRef.FindStringSubmatch(msg)
	if m == nil {
		m = valuesRef.FindStringSubmatch(failing)
	}
	if m != nil {
		how = fmt.Sprintf("give it %s in .crdguard.yaml (helm: - chart: %s, set: {%s: …}, or a values file under values:)", strings.TrimPrefix(m[1], "."), dir, strings.TrimPrefix(m[1], "."))
	}
	return fmt.Sprintf("chart %s does not render with %s: %s; %s", dir, with, msg, how)
}

// fileInfo is what .helmignore's rules ask of a file: its name and whether it is a folder.
type fileInfo struct {
	name string
	dir  bool
}

func (f fileInfo) Name() string { return f.name }
func (f fileInfo) IsDir() bool  { return f.dir }
func (f fileInfo) Size() int64  { return 0 }
func (f fileInfo) Mode() os.FileMode {
	if f.dir {
		return os.ModeDir
	}
	return 0
}
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) Sys() any           { return nil }
