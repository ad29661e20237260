package source

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/crdguard/crdguard/internal/crd"
)

// Where a file lies in its Helm chart (Facts.Helm). Helm installs the CRDs of a chart's crds/
// folder (any depth, .yaml, .yml and .json files) before anything else on `helm install`, and
// never upgrades or deletes them; it renders every file of templates/ into the release and
// applies it on every install and upgrade, deleting what leaves the release.
const (
	HelmCRDs      = "crds"
	HelmTemplates = "templates"
)

// helmOf finds the chart a file belongs to (the nearest folder above it with a Chart.yaml) and
// the file's folder in it. Subcharts (charts/NAME with their own Chart.yaml) are charts of
// their own, as helm loads them. Outside charts, chartLike is the folder of chartLikeOf.
func (t *Tree) helmOf(file string) (chart, folder, chartLike string) {
	if t.HasFile == nil {
		return "", "", ""
	}
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		if t.has(path.Join(dir, "Chart.yaml")) {
			rest := strings.TrimPrefix(file, dir+"/")
			if dir == "." {
				rest = file
			}
			switch first, _, _ := strings.Cut(rest, "/"); first {
			case HelmCRDs, HelmTemplates:
				if strings.Contains(rest, "/") {
					folder = first
				}
			}
			return dir, folder, ""
		}
		if dir == "." || dir == "/" || dir == "" {
			chartLike, _, _ = chartLikeOf(file, t.has)
			return "", "", chartLike
		}
	}
}

// chartLikeOf finds what looks like a Helm chart that helm would refuse to load: dir is the
// folder above the innermost crds/ or templates/ folder holding file that has what a chart has
// beside them (besides: a Chart.template.yaml, which builds such as cert-manager's turn into
// Chart.yaml, or a values.yaml) but no Chart.yaml, and sub is that crds/ or templates/ folder;
// all "" when there is none. has says which files the side holds.
func chartLikeOf(file string, has func(string) bool) (dir, sub, besides string) {
	for d := path.Dir(file); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if base := path.Base(d); base != HelmCRDs && base != HelmTemplates {
			continue
		}
		up := path.Dir(d)
		if has(path.Join(up, "Chart.yaml")) {
			return "", "", ""
		}
		for _, f := range []string{"Chart.template.yaml", "values.yaml"} {
			if has(path.Join(up, f)) {
				return up, path.Base(d), f
			}
		}
	}
	return "", "", ""
}

// has reports whether a file exists, remembering the answers.
func (t *Tree) has(name string) bool {
	if t.hasFile == nil {
		t.hasFile = map[string]bool{}
	}
	is, ok := t.hasFile[name]
	if !ok {
		is = t.HasFile(name)
		t.hasFile[name] = is
	}
	return is
}

// gitHasFile reports whether a commit has a file, read through read (a commit's files, the
// working tree's changes laid over them).
func gitHasFile(read func(string) ([]byte, bool)) func(string) bool {
	return func(name string) bool {
		_, ok := read(name)
		return ok
	}
}

// dirHasFile reports whether a regular file exists on disk. Folders above the one a comparison
// names count too: a chart's crds/ compared on its own is still the chart's.
func dirHasFile(name string) bool {
	info, err := os.Stat(filepath.FromSlash(name))
	return err == nil && info.Mode().IsRegular()
}

// ReleaseLimit is the most a Kubernetes Secret holds (k8s.io/kubernetes validation's
// MaxSecretSize, 1 MiB): helm stores each release in one, under data.release.
const ReleaseLimit = 1 << 20

// ReleaseSize measures, at least, the release Secret helm 3 stores for an install of the chart:
// helm writes the release as JSON — the chart's metadata and values as it parsed them, its
// templates and other files (each base64, as encoding/json writes bytes; subcharts under
// charts/ are not in it), the rendered manifest and more (release info, hooks) — gzips it at
// the best compression and base64-encodes that into the Secret's data. Nothing is rendered
// here: the manifest holds the chart's templated CRDs as crdguard reads them (templates/ files
// that define CRDs, actions set aside), and the chart's other templates, which render into the
// manifest too, are left out; with a .helmignore, whose patterns are not read, only templates/
// and crds/ count among the files. So the real Secret is larger (up to how well gzip compresses
// what was left out). ok is false when the tree cannot read its charts.
func (t *Tree) ReleaseSize(chart string) (size int, ok bool, err error) {
	if t.ChartFiles == nil {
		return 0, false, nil
	}
	files, err := t.ChartFiles(chart)
	if err != nil {
		return 0, false, fmt.Errorf("reading chart %s: %w", chart, err)
	}
	type file struct {
		Name string `json:"name"`
		Data []byte `json:"data"`
	}
	var rel struct {
		Chart struct {
			Metadata  json.RawMessage `json:"metadata,omitempty"`
			Templates []file          `json:"templates"`
			Values    json.RawMessage `json:"values,omitempty"`
			Files     []file          `json:"files"`
		} `json:"chart"`
		Manifest string `json:"manifest"`
	}
	// helm loads the chart without what .helmignore names; crdguard does not read its
	// patterns, so with one only templates/ and crds/ count (which charts do not ignore).
	_, ignores := files[".helmignore"]
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var manifest strings.Builder
	for _, name := range names {
		data := files[name]
		switch first, _, _ := strings.Cut(name, "/"); {
		case name == "Chart.yaml":
			rel.Chart.Metadata = parsed(data)
		case name == "values.yaml":
			rel.Chart.Values = parsed(data) // parsed, as helm keeps it: comments do not count
		case first == "charts" && strings.Contains(name, "/"):
			// subcharts are loaded as dependencies, which the release JSON leaves out
		case first == HelmTemplates && strings.Contains(name, "/"):
			rel.Chart.Templates = append(rel.Chart.Templates, file{name, data})
			if IsManifest(name) && crd.MentionsCRD(data) {
				clean, _ := detemplate(data)
				manifest.WriteString("---\n# Source: " + name + "\n")
				manifest.Write(clean)
			}
		case ignores && first != HelmCRDs:
		default:
			rel.Chart.Files = append(rel.Chart.Files, file{name, data})
		}
	}
	rel.Manifest = manifest.String()
	js, err := json.Marshal(rel)
	if err != nil {
		return 0, false, fmt.Errorf("encoding the release of chart %s: %w", chart, err)
	}
	var gz bytes.Buffer
	w, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return 0, false, err
	}
	if _, err := w.Write(js); err != nil {
		return 0, false, err
	}
	if err := w.Close(); err != nil {
		return 0, false, err
	}
	return base64.StdEncoding.EncodedLen(gz.Len()), true, nil
}

// parsed is a chart's YAML file as the JSON helm writes of what it parsed, nil when it does
// not parse (then it counts for nothing).
func parsed(data []byte) json.RawMessage {
	js, err := sigsyaml.YAMLToJSON(data)
	if err != nil || !json.Valid(js) {
		return nil
	}
	return js
}

// gitChartFiles lists the files of a chart folder of a commit (names relative to the chart),
// read through read.
func gitChartFiles(tree *object.Tree, read func(string) ([]byte, bool)) func(string) (map[string][]byte, error) {
	return func(chart string) (map[string][]byte, error) {
		sub := tree
		if chart != "." {
			var err error
			if sub, err = tree.Tree(chart); err != nil {
				return nil, err
			}
		}
		out := map[string][]byte{}
		err := eachFile(sub, func(name string, _ object.TreeEntry) error {
			if data, ok := read(path.Join(chart, name)); ok {
				out[name] = data
			}
			return nil
		})
		return out, err
	}
}

// dirChartFiles lists the files of a chart folder on disk (names relative to the chart).
func dirChartFiles(chart string) (map[string][]byte, error) {
	root := filepath.FromSlash(chart)
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := readLimited(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	return out, err
}

// HasChart reports whether the tree has a chart where other has the chart folder chart: the
// same folder under each side's root.
func (t *Tree) HasChart(other *Tree, chart string) bool {
	if t.HasFile == nil || chart == "" {
		return false
	}
	name := chart
	switch {
	case other.Root == "" || t.Root == "":
	case chart == other.Root:
		name = t.Root
	default:
		name = path.Join(t.Root, other.rel(chart))
	}
	return t.has(path.Join(name, "Chart.yaml"))
}
