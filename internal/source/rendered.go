package source

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
)

// A chart's templates are never read one by one: the chart is rendered (renderChart) and the
// CRDs of its output are what the tree holds, each at its template's file and line. What a chart
// could not give is a ChartProblem (rule chart-not-rendered): the chart did not render, a
// template that holds a CRD rendered nothing, or a file outside any chart is a template that does
// not parse as YAML.

// addRendering adds what one chart rendered to the tree: the CRD documents of each template's
// output (want, when set, picks which), and the chart's failure. Value sets after the first keep
// their CRDs apart as deliveries of their own (Tree.Delivery).
func (t *Tree) addRendering(r *rendering, want func(*crd.CRD) bool) {
	if r.Failed != nil {
		t.NotRendered = append(t.NotRendered, *r.Failed)
		t.unrendered = append(t.unrendered, t.rel(r.Chart))
		return
	}
	for _, tpl := range r.Templates {
		if !crd.MentionsCRD(tpl.Output) {
			if holdsCRD(tpl.Source) {
				t.empty = append(t.empty, emptyTemplate{file: tpl.File, source: tpl.Source, set: r.Set, chart: r.Chart})
			}
			continue
		}
		if t.outputs == nil {
			t.outputs = map[[2]string]string{}
		}
		t.outputs[[2]string{r.Set, tpl.File}] = string(tpl.Output)
		read := crd.Read(tpl.File, tpl.Output, false)
		line := lineMap(tpl.Source, tpl.Output)
		p := &Tree{facts: map[string]Facts{tpl.File: PathFacts(t.rel(tpl.File))}}
		for _, c := range read.CRDs {
			c.Relocate(tpl.File, line)
			if want != nil && !want(c) {
				continue
			}
			if r.Set != "" {
				t.setDelivery(c, r.Set)
			}
			if c.Patch {
				p.Patches = append(p.Patches, c)
			} else {
				p.CRDs = append(p.CRDs, c)
			}
		}
		for _, pr := range read.Problems {
			pr.Line = line(pr.Line)
			pr.Message = fmt.Sprintf("what chart %s renders from this template: %s", r.Chart, pr.Message)
			p.Problems = append(p.Problems, pr)
		}
		if len(p.CRDs) > 0 && read.Count > 1 {
			f := p.facts[tpl.File]
			f.Bundle = true
			p.facts[tpl.File] = f
		}
		if len(read.CRDs)+len(read.Problems) == 0 && holdsCRD(tpl.Source) {
			t.empty = append(t.empty, emptyTemplate{file: tpl.File, source: tpl.Source, set: r.Set, chart: r.Chart})
		}
		t.merge(p)
	}
}

// holdsCRD reports whether a template's own text writes a CRD document (kind:
// CustomResourceDefinition on a line of its own), as opposed to one it only mentions.
func holdsCRD(src []byte) bool {
	return kindLine.Match(src)
}

var kindLine = regexp.MustCompile(`(?m)^\s*kind:\s*["']?CustomResourceDefinition["']?\s*$`)

// emptyTemplate is a template that holds a CRD and rendered none with the values used.
type emptyTemplate struct {
	file, chart, set string
	source           []byte
}

// conditionRE finds the first {{ if … }} of a template, and the values it reads.
var conditionRE = regexp.MustCompile(`\{\{-?\s*(?:if|with)\s+([^}]*?)\s*-?\}\}`)

// judgeEmpty turns the templates that held CRDs and rendered none into notices, when every CRD
// they hold is compared from another file of the tree (or defined, as elsewhere says, in a file
// the tree did not read), or else into chart-not-rendered problems naming the condition and the
// value to set.
func (t *Tree) judgeEmpty(elsewhere func(names []string) bool) {
	for _, e := range t.empty {
		names := templateNames(e.file, e.source)
		compared := len(names) > 0 && !slices.ContainsFunc(names, func(n string) bool {
			return !slices.ContainsFunc(t.CRDs, func(c *crd.CRD) bool { return c.Name == n && c.File != e.file })
		})
		if !compared && elsewhere != nil && len(names) > 0 {
			compared = elsewhere(names)
		}
		with := "its values"
		if e.set != "" {
			with = "value set " + e.set
		}
		line, cond, key := condition(e.source)
		if compared {
			t.Notices = append(t.Notices, fmt.Sprintf("%s holds CRDs that chart %s does not render with %s (%s); they are compared from another file", e.file, e.chart, with, strings.Join(names, ", ")))
			continue
		}
		how := "give the chart the values that make it render its CRDs in .crdguard.yaml (helm: - chart: " + e.chart + ", set: {key: value} or values: [a values file])"
		if key != "" {
			how = fmt.Sprintf("set helm.set: {%s: true} for chart %s in .crdguard.yaml (or a value set that turns it on)", key, e.chart)
		}
		what := "renders no CRD"
		if cond != "" {
			what = fmt.Sprintf("renders no CRD: its condition {{ %s }} (line %d) is false", cond, line)
		}
		t.NotRendered = append(t.NotRendered, ChartProblem{Chart: e.chart, Set: e.set, File: e.file, Line: line, Names: names,
			Message: fmt.Sprintf("this template of chart %s holds a CustomResourceDefinition but %s with %s, so its CRDs are not compared; %s", e.chart, what, with, how)})
	}
	t.empty = nil
}

// condition is the line, text and first value of a template's first condition (1, "", "" when
// it has none).
func condition(src []byte) (int, string, string) {
	loc := conditionRE.FindSubmatchIndex(src)
	if loc == nil {
		return 1, "", ""
	}
	line := 1 + strings.Count(string(src[:loc[0]]), "\n")
	cond := string(src[loc[2]:loc[3]])
	key := ""
	if m := valuesRef.FindStringSubmatch(cond); m != nil {
		key = strings.TrimPrefix(m[1], ".")
	}
	return line, "if " + cond, key
}

// templateNames are the CRD names a template writes, read with its actions set aside; names a
// template fills in are left out.
func templateNames(file string, src []byte) []string {
	clean, _ := detemplate(src)
	docs, problems := crd.Parse(file, clean)
	var out []string
	add := func(name string) {
		if name != "" && !strings.Contains(name, placeholder) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, c := range docs {
		if strings.Contains(c.Name, placeholder) && c.Object != nil {
			add(c.Object.Spec.Names.Plural + "." + c.Object.Spec.Group) // the API server requires this name
			continue
		}
		add(c.Name)
	}
	for _, p := range problems { // a value set aside may not decode: the name still reads
		add(p.Name)
	}
	return out
}

// sameOutput reports whether a template rendered the same text on both sides (with the same
// value set): its CRDs did not change.
func sameOutput(old, new *Tree, set, file string) bool {
	a, ok := old.outputs[[2]string{set, file}]
	b, ok2 := new.outputs[[2]string{set, file}]
	return ok && ok2 && a == b
}

// setDelivery records that a CRD comes from a named value set of its chart.
func (t *Tree) setDelivery(c *crd.CRD, set string) {
	if t.delivery == nil {
		t.delivery = map[*crd.CRD]string{}
	}
	t.delivery[c] = set
}

// Delivery is the named value set of its chart a CRD was rendered with, "" for none: each set is
// a delivery of its own, paired with the same set's copy.
func (t *Tree) Delivery(c *crd.CRD) string { return t.delivery[c] }

// SetsOf is every named value set that rendered a definition of CRD name from file, sorted: a
// finding about that file's CRD, where no one copy stands for the others (the CRD left, or
// arrived), holds for all of them.
func (t *Tree) SetsOf(name, file string) []string {
	var sets []string
	for c, set := range t.delivery {
		if c.Name == name && c.File == file && !slices.Contains(sets, set) {
			sets = append(sets, set)
		}
	}
	slices.Sort(sets)
	return sets
}

// SetPrefix is how a finding's message starts when the CRD it is about was rendered with named
// value sets of its chart (each a delivery of its own): `with value set "x": `, or `with value
// sets "x", "y": ` for renderings that agree; "" for none.
func SetPrefix(sets []string) string {
	var named []string
	for _, s := range sets {
		if s != "" && !slices.Contains(named, s) {
			named = append(named, s)
		}
	}
	if len(named) == 0 {
		return ""
	}
	slices.Sort(named)
	quoted := make([]string, len(named))
	for i, s := range named {
		quoted[i] = strconv.Quote(s)
	}
	what := "value set"
	if len(named) > 1 {
		what = "value sets"
	}
	return fmt.Sprintf("with %s %s: ", what, strings.Join(quoted, ", "))
}

// InUnrenderedChart reports whether a file of the other tree lies in a chart this tree could not
// render (the same folder under each side's root): what it held is unknown here.
func (t *Tree) InUnrenderedChart(other *Tree, file string) bool {
	rel := other.rel(file)
	return slices.ContainsFunc(t.unrendered, func(chart string) bool {
		return chart == "." || strings.HasPrefix(rel, chart+"/")
	})
}

// ChartTemplate reports whether a file lies in the templates/ folder of a chart, or of a
// sub-chart under a chart's charts/: Helm renders it, so it is never read as it is. It returns
// the top chart, the one `helm template` is run on.
func (t *Tree) ChartTemplate(file string) (string, bool) {
	chart, folder, _ := t.helmOf(file)
	if chart == "" || folder != HelmTemplates {
		return "", false
	}
	return t.topChart(chart), true
}

// topChart climbs from a chart to the chart whose charts/ folder holds it, as far as it goes.
func (t *Tree) topChart(chart string) string {
	for {
		parent := path.Dir(chart)
		if path.Base(parent) != "charts" || chart == "." {
			return chart
		}
		up := path.Dir(parent)
		if !t.has(path.Join(up, "Chart.yaml")) {
			return chart
		}
		chart = up
	}
}
