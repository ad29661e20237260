package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/charttest"
	"github.com/crdguard/crdguard/internal/source"
)

// Charts shaped like the ones operators ship: the CRD templated in templates/ behind a flag,
// with a helper's labels, values, .Release and .Chart, and tpl. Each test shows what a pull
// request does to such a chart in git mode.

// chartChange commits a chart at base, lets change edit the tree, commits head and checks.
func chartChange(t *testing.T, base func(tr *testRepo), change func(tr *testRepo), f source.Filter) *GitResult {
	t.Helper()
	tr := newTestRepo(t)
	base(tr)
	tr.Branch("main", tr.Commit("base"))
	change(tr)
	tr.Commit("head")
	return tr.check(GitOptions{Base: "main", Filter: f})
}

func TestChartBothSidesTemplatedWithARemoval(t *testing.T) {
	res := chartChange(t, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, charttest.Values))
	}, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.WithoutColor(charttest.Template), charttest.Values))
	}, source.Filter{})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.color charts/widgets/templates/crds/widgets.yaml:31 base\n")
	if res.CRDs != 1 {
		t.Errorf("%d CRDs compared, want 1", res.CRDs)
	}
}

// Templated on one side only: the base's plain CRD in templates/ becomes a template. Before
// rendering, the head's CRD was unread and the base's looked removed.
func TestChartOneSideTemplated(t *testing.T) {
	plain := charttest.Plain(`"A widget of release-name."`)
	res := chartChange(t, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", plain, charttest.Values))
	}, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", strings.Replace(charttest.Template, "{{ .Values.maxSize }}", "{{ sub .Values.maxSize 5 }}", 1), charttest.Values))
	}, source.Filter{})
	assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size charts/widgets/templates/crds/widgets.yaml:30 head\n")
}

// A change to values.yaml alone lowers a rendered maximum: the chart is rendered again and the
// finding lands on the template's line that writes the value.
func TestChartValuesOnlyChange(t *testing.T) {
	res := chartChange(t, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, charttest.Values))
	}, func(tr *testRepo) {
		tr.Write("charts/widgets/values.yaml", []byte(strings.Replace(charttest.Values, "maxSize: 10", "maxSize: 5", 1)))
	}, source.Filter{})
	assertFindings(t, res, "max-decreased widgets.example.com v1 .spec.size charts/widgets/templates/crds/widgets.yaml:30 head\n")
}

// A chart that needs a value it is not given does not render: an error at the template naming
// the value, never "0 CRDs compared".
func TestChartNotRendered(t *testing.T) {
	required := strings.Replace(charttest.Template, "{{ .Values.maxSize }}", `{{ required "maxSize is required" .Values.maxSize }}`, 1)
	res := chartChange(t, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, charttest.Values))
	}, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.WithoutColor(required), "crds:\n  enabled: true\ndescription: d\n"))
	}, source.Filter{})
	assertFindings(t, res, "chart-not-rendered    charts/widgets/templates/crds/widgets.yaml:30 head\n")
	f := res.Findings[0]
	if want := "chart charts/widgets does not render with its values.yaml: execution error at (widgets/templates/crds/widgets.yaml:30:28): maxSize is required; give it maxSize in .crdguard.yaml (helm: - chart: charts/widgets, set: {maxSize: …}, or a values file under values:)"; f.Message != want {
		t.Errorf("message:\n%s\nwant:\n%s", f.Message, want)
	}
	// Given the value, the change is compared.
	res = chartChange(t, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, charttest.Values))
	}, func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.WithoutColor(required), "crds:\n  enabled: true\ndescription: d\n"))
	}, source.Filter{Helm: source.HelmSettings{Charts: []source.ChartSettings{{Chart: "charts/*", Values: source.Values{Set: map[string]any{"maxSize": 10}}}}}})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.color charts/widgets/templates/crds/widgets.yaml:31 base\n")
}

// A chart that installs its CRDs only behind a flag that is off by default: with no value set,
// an error naming the condition and the value to set; with the flag set in .crdguard.yaml (a
// named value set), the change is compared, as that set's delivery.
func TestChartCRDsBehindAFlag(t *testing.T) {
	off := strings.Replace(charttest.Values, "enabled: true", "enabled: false", 1)
	change := func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.WithoutColor(charttest.Template), off))
	}
	base := func(tr *testRepo) { charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, off)) }
	res := chartChange(t, base, change, source.Filter{})
	assertFindings(t, res, "chart-not-rendered widgets.example.com   charts/widgets/templates/crds/widgets.yaml:1 head\n")
	if want := "this template of chart charts/widgets holds a CustomResourceDefinition but renders no CRD: its condition {{ if .Values.crds.enabled }} (line 1) is false with its values, so its CRDs are not compared; set helm.set: {crds.enabled: true} for chart charts/widgets in .crdguard.yaml (or a value set that turns it on)"; res.Findings[0].Message != want {
		t.Errorf("message:\n%s\nwant:\n%s", res.Findings[0].Message, want)
	}
	sets := source.Filter{Helm: source.HelmSettings{Charts: []source.ChartSettings{{Chart: "charts/widgets",
		Sets: []source.ValueSet{{Name: "crds-on", Values: source.Values{Set: map[string]any{"crds.enabled": true}}}}}}}}
	res = chartChange(t, base, change, sets)
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.color charts/widgets/templates/crds/widgets.yaml:31 base\n")
}

// A sub-chart's templated CRDs are rendered by the parent, as helm renders them, and located in
// the sub-chart's template.
func TestChartSubChart(t *testing.T) {
	sub := func(tr *testRepo, template string) {
		tr.Write("charts/app/Chart.yaml", []byte("apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: widgets\n  version: 1.0.0\n  condition: crds.install\n"))
		tr.Write("charts/app/values.yaml", []byte("crds:\n  install: true\nwidgets:\n  maxSize: 10\n  crds:\n    enabled: true\n"))
		charttest.Write(tr, charttest.Chart("charts/app/charts/widgets", template, "crds:\n  enabled: false\nmaxSize: 1\ndescription: d\n"))
	}
	res := chartChange(t, func(tr *testRepo) { sub(tr, charttest.Template) }, func(tr *testRepo) {
		sub(tr, charttest.WithoutColor(charttest.Template))
	}, source.Filter{})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.color charts/app/charts/widgets/templates/crds/widgets.yaml:31 base\n")
}

// {{ }} inside a description of a plain CRD file is text: the file is read, and a real change in
// it is reported (before: invalid-crd, and the change hidden behind it).
func TestPlainDescriptionWithBraces(t *testing.T) {
	plain := charttest.Plain(`"{{ .Name }}-{{ .Namespace }} names the generated secret."`)
	res := chartChange(t, func(tr *testRepo) {
		tr.Write("config/crd/widgets.yaml", []byte(plain))
	}, func(tr *testRepo) {
		tr.Write("config/crd/widgets.yaml", []byte(charttest.WithoutColor(plain)))
	}, source.Filter{})
	assertFindings(t, res, "field-removed widgets.example.com v1 .spec.color config/crd/widgets.yaml:30 base\n")
}

// A CRD that moves from a chart's templates into a dependency fetched from a chart repository
// still ships: one crd-left-repository warning at the dependency, never crd-removed. The twin,
// a dependency the chart holds in charts/, leaves the CRD removed.
func TestChartCRDLeavesForADependency(t *testing.T) {
	base := func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, charttest.Values))
	}
	deps := "dependencies:\n- name: widgets-crds\n  version: 1.0.0\n  repository: https://charts.example.com\n"
	res := chartChange(t, base, func(tr *testRepo) {
		tr.Remove("charts/widgets/templates/crds/widgets.yaml")
		tr.Write("charts/widgets/Chart.yaml", []byte(charttest.ChartYAML+deps))
	}, source.Filter{})
	assertFindings(t, res, "crd-left-repository widgets.example.com   charts/widgets/Chart.yaml:8 head\n")
	res = chartChange(t, base, func(tr *testRepo) {
		tr.Remove("charts/widgets/templates/crds/widgets.yaml")
		tr.Write("charts/widgets/Chart.yaml", []byte(charttest.ChartYAML+deps))
		tr.Write("charts/widgets/charts/widgets-crds/Chart.yaml", []byte("apiVersion: v2\nname: widgets-crds\nversion: 1.0.0\n"))
	}, source.Filter{})
	assertFindings(t, res, "crd-removed widgets.example.com   charts/widgets/templates/crds/widgets.yaml:5 base\n")
}

// A chart whose templates/ folder is a link to the CRD folder renders what the link leads to, as
// Helm's loader follows it: a CRD moved from crds/ behind the link, without keep, is reported.
func TestChartSymlinkedTemplates(t *testing.T) {
	plain := strings.Replace(charttest.Plain(`"d"`), "    helm.sh/resource-policy: keep\n", "", 1)
	res := chartChange(t, func(tr *testRepo) {
		tr.Write("charts/widgets/Chart.yaml", []byte(charttest.ChartYAML))
		tr.Write("charts/widgets/crds/widgets.yaml", []byte(plain))
	}, func(tr *testRepo) {
		tr.Remove("charts/widgets/crds/widgets.yaml")
		tr.Write("config/crd/widgets.yaml", []byte(plain))
		tr.Symlink("charts/widgets/templates", "../../config/crd")
	}, source.Filter{})
	assertFindings(t, res, "helm-crd-moved-to-templates widgets.example.com   charts/widgets/templates/widgets.yaml:4 head\nhelm-keep-missing widgets.example.com   charts/widgets/templates/widgets.yaml:4 head\n")
}

// A chart new in the change is no Helm upgrade: its crds/ CRDs are not helm-crd-not-upgraded.
func TestNewChartIsNoUpgrade(t *testing.T) {
	plain := charttest.Plain(`"d"`)
	res := chartChange(t, func(tr *testRepo) {
		tr.Write("README.md", []byte("a\n"))
	}, func(tr *testRepo) {
		tr.Write("charts/widgets/Chart.yaml", []byte(charttest.ChartYAML))
		tr.Write("charts/widgets/crds/widgets.yaml", []byte(plain))
	}, source.Filter{})
	assertFindings(t, res, "")
}

// Issue 41 item 4: a chart compared under two named value sets is two deliveries. Sets that
// render one template into different definitions are no duplicate-crd (each set is installed on
// its own), and every finding about a CRD rendered with named sets names them — rule findings,
// the helm-* rules and crd-left-repository alike: a finding each set's rendering gives on its own
// names that set, one that sets rendering the same definition (or a CRD that arrives or leaves
// under all of them) give once names them all.
func TestChartValueSetsAreDeliveries(t *testing.T) {
	sets := func(named map[string]int) source.Filter {
		var vs []source.ValueSet
		for _, name := range []string{"large", "on", "small"} {
			if max, ok := named[name]; ok {
				vs = append(vs, source.ValueSet{Name: name, Values: source.Values{Set: map[string]any{"maxSize": max, "crds.enabled": true}}})
			}
		}
		return source.Filter{Helm: source.HelmSettings{Charts: []source.ChartSettings{{Chart: "charts/widgets", Sets: vs}}}}
	}
	differ, same := sets(map[string]int{"small": 5, "large": 20}), sets(map[string]int{"small": 10, "large": 10})
	const tpl = "charts/widgets/templates/crds/widgets.yaml"
	noKeep := strings.Replace(charttest.Template, "    helm.sh/resource-policy: keep\n", "", 1)
	plain := strings.Replace(charttest.Plain(`"d"`), "    helm.sh/resource-policy: keep\n", "", 1)
	chart := func(template string) func(tr *testRepo) {
		return func(tr *testRepo) { charttest.Write(tr, charttest.Chart("charts/widgets", template, charttest.Values)) }
	}
	const (
		removed     = ".spec.color was removed: clients that set it are rejected or silently lose it, and stored values are pruned on the next write; keep the field and mark it deprecated, or add a new version with a conversion webhook"
		keepRemoved = "CRD widgets.example.com in charts/widgets/templates no longer has helm.sh/resource-policy: keep: helm uninstall deletes it and every object of it: keep the annotation helm.sh/resource-policy: keep on templated CRDs"
		keepMissing = "CRD widgets.example.com is new in charts/widgets/templates without helm.sh/resource-policy: keep: helm uninstall would delete it and every object of it: add the annotation helm.sh/resource-policy: keep to templated CRDs"
	)
	for _, tc := range []struct {
		name         string
		base, change func(tr *testRepo)
		f            source.Filter
		want         []string // rule file:line side: message
	}{
		{"a field removed, sets that render differently", chart(charttest.Template), chart(charttest.WithoutColor(charttest.Template)), differ, []string{
			"field-removed " + tpl + ":31 base: with value set \"large\": " + removed,
			"field-removed " + tpl + ":31 base: with value set \"small\": " + removed}},
		{"a field removed, sets that render the same", chart(charttest.Template), chart(charttest.WithoutColor(charttest.Template)), same, []string{
			"field-removed " + tpl + ":31 base: with value sets \"large\", \"small\": " + removed}},
		{"keep removed, sets that render differently", chart(charttest.Template), chart(noKeep), differ, []string{
			"helm-keep-removed " + tpl + ":9 base: with value set \"large\": " + keepRemoved,
			"helm-keep-removed " + tpl + ":9 base: with value set \"small\": " + keepRemoved}},
		{"keep removed, sets that render the same", chart(charttest.Template), chart(noKeep), same, []string{
			"helm-keep-removed " + tpl + ":9 base: with value sets \"large\", \"small\": " + keepRemoved}},
		{"a new chart without keep", func(tr *testRepo) { tr.Write("README.md", []byte("a\n")) }, chart(noKeep), differ, []string{
			"crd-added " + tpl + ":5 head: with value sets \"large\", \"small\": CRD widgets.example.com is new",
			"helm-keep-missing " + tpl + ":5 head: with value sets \"large\", \"small\": " + keepMissing}},
		{"moved from crds/ to templates/", func(tr *testRepo) {
			tr.Write("charts/widgets/Chart.yaml", []byte(charttest.ChartYAML))
			tr.Write("charts/widgets/crds/widgets.yaml", []byte(plain))
		}, func(tr *testRepo) {
			tr.Remove("charts/widgets/crds/widgets.yaml")
			charttest.Write(tr, charttest.Chart("charts/widgets", noKeep, strings.Replace(charttest.Values, "description: \"A widget of {{ .Release.Name }}.\"", "description: d", 1)))
		}, sets(map[string]int{"on": 10}), []string{
			"helm-crd-moved-to-templates " + tpl + ":5 head: with value set \"on\": CRD widgets.example.com moved from charts/widgets/crds to charts/widgets/templates: " +
				`helm upgrade of every release installed before fails with 'CustomResourceDefinition "widgets.example.com" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata': ` +
				"tell users to add Helm's ownership metadata to the installed CRD before upgrading (label app.kubernetes.io/managed-by: Helm and annotations meta.helm.sh/release-name: RELEASE and meta.helm.sh/release-namespace: NAMESPACE)",
			"helm-keep-missing " + tpl + ":5 head: with value set \"on\": " + keepMissing}},
		{"left for a dependency from a chart repository", chart(charttest.Template), func(tr *testRepo) {
			tr.Remove(tpl)
			tr.Write("charts/widgets/Chart.yaml", []byte(charttest.ChartYAML+"dependencies:\n- name: widgets-crds\n  version: 1.0.0\n  repository: https://charts.example.com\n"))
		}, differ, []string{
			"crd-left-repository charts/widgets/Chart.yaml:8 head: with value sets \"large\", \"small\": CRD widgets.example.com left the repository (" + tpl + " in base) for the remote resource " +
				"https://charts.example.com widgets-crds 1.0.0 (charts/widgets/Chart.yaml:8), which crdguard does not fetch: the CRD stays installed, but what this change does to it is not checked; " +
				"run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand"}},
		{"left the chart's release for config/crd", chart(noKeep), func(tr *testRepo) {
			tr.Remove(tpl)
			tr.Write("config/crd/widgets.yaml", []byte(strings.Replace(plain, "maximum: 10", "maximum: 5", 1)))
		}, differ, []string{
			"helm-crd-left-release " + tpl + ":5 base: with value sets \"large\", \"small\": chart charts/widgets no longer renders CRD widgets.example.com, which the project still ships elsewhere: " +
				"helm upgrade deletes it from every cluster that installed the chart, and every object of it: keep the CRD in the chart's templates/, or release it with helm.sh/resource-policy: keep before taking it out",
			// The plain copy takes the place of the first set's rendering (pairing keeps one per
			// path): compared with it, the change says which set it was.
			"max-decreased config/crd/widgets.yaml:28 head: with value set \"large\": maximum of .spec.size changed from 20 to 5: stored objects outside the new bound keep updating only while the value is unchanged (validation ratcheting); clients sending such values are rejected; loosen the bound, or tighten it only in a new version",
			"description-changed config/crd/widgets.yaml:33 head: with value set \"large\": description of .spec.note changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := chartChange(t, tc.base, tc.change, tc.f)
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%s %s:%d %s: %s", f.Rule, f.Location.File, f.Location.Line, f.Location.Side, f.Message))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A CRD sub-chart stops rendering CRDs while the top chart gains a dependency from a chart
// repository, as kyverno 1.17 moved its policies.kyverno.io CRDs from its crds sub-chart to
// kyverno-api (https://kyverno.github.io/api), which renders them in the same release: helm
// upgrade keeps them there, so it is crd-left-repository naming the dependency, not
// helm-crd-left-release's "helm upgrade deletes it" (the false error crdguard gave on kyverno
// v1.16.3 → v1.17.0, nine times), nor crd-removed when no copy is left in the repository.
// Twins: the dependency already in base, or none, keep helm-crd-left-release. A dependency in
// head is not fetched: one notice says so (before, a chart's remote dependencies went unsaid).
func TestSubChartCRDsTakenFromADependency(t *testing.T) {
	const top = "apiVersion: v2\nname: app\nversion: 1.0.0\n"
	// Quoted, as kyverno writes it (the line was 1 when read as text).
	const dep = "dependencies:\n- name: widgets-api\n  version: 0.1.0\n  repository: \"https://charts.example.com\"\n"
	tpl := charttest.TemplatePath("charts/app/charts/crds")
	noKeep := strings.Replace(charttest.Template, "    helm.sh/resource-policy: keep\n", "", 1)
	plain := charttest.Plain(`"d"`)
	base := func(topChart string, copy bool) func(tr *testRepo) {
		return func(tr *testRepo) {
			tr.Write("charts/app/Chart.yaml", []byte(topChart))
			charttest.Write(tr, charttest.Chart("charts/app/charts/crds", noKeep, charttest.Values))
			if copy {
				tr.Write("config/crd/widgets.yaml", []byte(plain))
			}
		}
	}
	head := func(topChart string) func(tr *testRepo) {
		return func(tr *testRepo) {
			tr.Remove(tpl)
			tr.Write("charts/app/Chart.yaml", []byte(topChart))
		}
	}
	const leftRelease = "helm-crd-left-release " + "charts/app/charts/crds/templates/crds/widgets.yaml:5 base: chart charts/app/charts/crds no longer renders CRD widgets.example.com, which the project still ships elsewhere: " +
		"helm upgrade deletes it from every cluster that installed the chart, and every object of it: keep the CRD in the chart's templates/, or release it with helm.sh/resource-policy: keep before taking it out"
	for _, tc := range []struct {
		name         string
		base, change func(tr *testRepo)
		want         string
	}{
		{"the top chart gains the dependency", base(top, true), head(top + dep),
			"crd-left-repository charts/app/Chart.yaml:7 head: chart charts/app/charts/crds no longer renders CRD widgets.example.com, which the project still ships elsewhere, " +
				"while chart charts/app now takes the dependency https://charts.example.com widgets-api 0.1.0 (charts/app/Chart.yaml:7) from a chart repository, which crdguard does not fetch: " +
				"if that chart renders the CRD from its templates/, helm upgrade keeps it in the release, and what this change does to it is not checked; if none does (or ships it in crds/), helm upgrade deletes it and every object of it; " +
				"run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand"},
		{"no copy left in the repository", base(top, false), head(top + dep),
			"crd-left-repository charts/app/Chart.yaml:7 head: CRD widgets.example.com left the repository (" + tpl + " in base) for the remote resource https://charts.example.com widgets-api 0.1.0 (charts/app/Chart.yaml:7), which crdguard does not fetch: " +
				"the CRD stays installed, but what this change does to it is not checked; run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand"},
		{"twin: the dependency already in base", base(top+dep, true), head(top + dep), leftRelease},
		{"twin: no dependency", base(top, true), head(top), leftRelease},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := chartChange(t, tc.base, tc.change, source.Filter{})
			var got []string
			for _, f := range res.Findings {
				got = append(got, fmt.Sprintf("%s %s:%d %s: %s", f.Rule, f.Location.File, f.Location.Line, f.Location.Side, f.Message))
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), tc.want)
			}
			// The dependency is not fetched: a notice says what it installs is not checked.
			var notices []string
			if tc.name != "twin: no dependency" {
				notices = []string{"head: charts/app/Chart.yaml:7 lists the remote resource https://charts.example.com widgets-api 0.1.0, which crdguard does not fetch: the CRDs it installs are not checked"}
			}
			if strings.Join(res.Notices, "\n") != strings.Join(notices, "\n") {
				t.Errorf("notices %q, want %q", res.Notices, notices)
			}
		})
	}
}
