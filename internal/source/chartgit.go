package source

import (
	"errors"
	"path"
	"slices"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/crdguard/crdguard/internal/crd"
)

// In git mode only the charts a change touches are rendered, on both sides: a chart whose files
// (its templates, helpers, values.yaml, Chart.yaml, sub-charts, what its links lead to, the
// values files .crdguard.yaml gives it) are the same on both sides renders the same CRDs, so it
// is rendered once, and only when an unchanged copy of a changed CRD is wanted from it.

// chartIndex is what one commit holds for charts: its top chart folders and its links.
type chartIndex struct {
	charts []string
	// links are the links of the tree by path, each with the path it leads to in the tree
	// ("" when it leads outside it).
	links map[string]string
}

// indexCharts lists the top chart folders and the links of a commit's tree (one walk over its
// trees, no file read but the links).
func (r *Repo) indexCharts(tree *object.Tree, fsys *gitFS) (chartIndex, error) {
	idx := chartIndex{links: map[string]string{}}
	var chartDirs []string
	err := eachFile(tree, func(name string, e object.TreeEntry) error {
		switch {
		case e.Mode == filemode.Symlink:
			to := ""
			if res, err := fsys.resolve(name); err == nil {
				to = res.real
			}
			idx.links[name] = to
		case path.Base(name) == "Chart.yaml":
			chartDirs = append(chartDirs, path.Dir(name))
		}
		return nil
	})
	if err != nil {
		return idx, err
	}
	has := map[string]bool{}
	for _, d := range chartDirs {
		has[d] = true
	}
	for _, d := range chartDirs {
		if parent := path.Dir(d); path.Base(parent) == "charts" && d != "." && has[path.Dir(parent)] {
			continue // a sub-chart: its parent renders it
		}
		idx.charts = append(idx.charts, d)
	}
	return idx, nil
}

// touches reports whether a change (the paths it changed) touches a chart of the index: a file
// below the chart's folder, below where one of its links leads, or one of its values files.
func (idx chartIndex) touches(chart string, changed map[string]bool, values []string) bool {
	targets := []string{chart}
	for link, to := range idx.links {
		if to != "" && under(link, chart) {
			targets = append(targets, to)
		}
	}
	for p := range changed {
		for _, d := range targets {
			if under(p, d) {
				return true
			}
		}
	}
	for _, v := range values {
		if changed[path.Join(chart, v)] {
			return true
		}
	}
	return false
}

// valuesFiles are every values file the settings give a chart.
func (h HelmSettings) valuesFiles(rel string) []string {
	s := h.settingsFor(rel, rel)
	out := append([]string{}, s.Files...)
	for _, set := range s.Sets {
		out = append(out, set.Files...)
	}
	return out
}

// renderChanged renders, on each side, the charts the change touches, into the comparison's
// trees; the head's rendered templates count as changed. It returns the charts rendered.
func (r *Repo) renderChanged(cmp *Comparison, oldFS, newFS *gitFS, changed map[string]bool, f Filter) (map[string]bool, error) {
	oldIdx, err := r.indexCharts(oldFS.root, oldFS)
	if err != nil {
		return nil, err
	}
	newIdx, err := r.indexCharts(newFS.root, newFS)
	if err != nil {
		return nil, err
	}
	for name := range newFS.working {
		if path.Base(name) == "Chart.yaml" && !slices.Contains(newIdx.charts, path.Dir(name)) {
			newIdx.charts = append(newIdx.charts, path.Dir(name))
		}
	}
	touched := map[string]bool{}
	for _, idx := range []chartIndex{oldIdx, newIdx} {
		for _, c := range idx.charts {
			if oldIdx.touches(c, changed, f.Helm.valuesFiles(c)) || newIdx.touches(c, changed, f.Helm.valuesFiles(c)) {
				touched[c] = true
			}
		}
	}
	allowed := func(c *crd.CRD) bool { return f.Allows(c.File) }
	for _, side := range []struct {
		t   *Tree
		fs  *gitFS
		idx chartIndex
	}{{cmp.Old, oldFS, oldIdx}, {cmp.New, newFS, newIdx}} {
		var charts []string
		for _, c := range side.idx.charts {
			if touched[c] {
				charts = append(charts, c)
			}
		}
		side.t.renderCharts(side.fs, charts, f.Helm, allowed)
	}
	// A template that rendered the same on both sides changed nothing: its CRDs are kept aside,
	// as unchanged copies for addUnchanged.
	same := func(t *Tree, c *crd.CRD) bool {
		_, tpl := t.ChartTemplate(c.File)
		return tpl && sameOutput(cmp.Old, cmp.New, t.Delivery(c), c.File)
	}
	cmp.Old.CRDs = slices.DeleteFunc(cmp.Old.CRDs, func(c *crd.CRD) bool { return same(cmp.Old, c) })
	var kept []*crd.CRD
	cmp.New.CRDs = slices.DeleteFunc(cmp.New.CRDs, func(c *crd.CRD) bool {
		if same(cmp.New, c) {
			kept = append(kept, c)
			return true
		}
		return false
	})
	cmp.sameRendered = kept
	for _, c := range cmp.New.CRDs {
		if _, ok := cmp.New.ChartTemplate(c.File); ok {
			cmp.New.Changed[c.File] = true
		}
	}
	return touched, nil
}

// judgeEmptyIn judges both sides' templates that rendered no CRD: their CRDs count as compared
// when another file of the same commit defines them.
func (r *Repo) judgeEmptyIn(cmp *Comparison, oldFS, newFS *gitFS, f Filter) {
	for _, side := range []struct {
		t  *Tree
		fs *gitFS
	}{{cmp.Old, oldFS}, {cmp.New, newFS}} {
		if len(side.t.empty) == 0 {
			continue
		}
		side.t.judgeEmpty(func(names []string) bool { return r.definesAll(side.fs, side.t, names, f) })
	}
}

// definesAll reports whether files of a commit other than chart templates define every one of
// the CRDs named.
func (r *Repo) definesAll(fsys *gitFS, t *Tree, names []string, f Filter) bool {
	found := map[string]bool{}
	needles := make([][]byte, len(names))
	for i, n := range names {
		needles[i] = []byte(n)
	}
	_ = eachFile(fsys.root, func(name string, e object.TreeEntry) error {
		if e.Mode == filemode.Symlink || !f.Allows(name) {
			return nil
		}
		if _, tpl := t.ChartTemplate(name); tpl {
			return nil
		}
		data, err := r.readBlob(name, e)
		if err != nil || !containsAny(data, needles) || !crd.MentionsCRD(data) {
			return nil
		}
		docs, _ := crd.Parse(name, data)
		for _, c := range docs {
			found[c.Name] = true
		}
		if len(found) >= len(names) && allFound(found, names) {
			return errFound
		}
		return nil
	})
	return allFound(found, names)
}

func allFound(found map[string]bool, names []string) bool {
	for _, n := range names {
		if !found[n] {
			return false
		}
	}
	return true
}

// errFound stops a walk that found what it looked for.
var errFound = errors.New("found")
