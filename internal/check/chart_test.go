package check

import (
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
// its own), and each finding names the set it was found with; sets that render the same
// definition give one finding naming both.
func TestChartValueSetsAreDeliveries(t *testing.T) {
	sets := func(small, large int) source.Filter {
		return source.Filter{Helm: source.HelmSettings{Charts: []source.ChartSettings{{Chart: "charts/widgets", Sets: []source.ValueSet{
			{Name: "small", Values: source.Values{Set: map[string]any{"maxSize": small}}},
			{Name: "large", Values: source.Values{Set: map[string]any{"maxSize": large}}},
		}}}}}
	}
	base := func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.Template, charttest.Values))
	}
	change := func(tr *testRepo) {
		charttest.Write(tr, charttest.Chart("charts/widgets", charttest.WithoutColor(charttest.Template), charttest.Values))
	}
	const removed = ".spec.color was removed: clients that set it are rejected or silently lose it, and stored values are pruned on the next write; keep the field and mark it deprecated, or add a new version with a conversion webhook"
	for _, tc := range []struct {
		name     string
		f        source.Filter
		want     string
		messages []string
	}{
		{"sets that render differently", sets(5, 20),
			"field-removed widgets.example.com v1 .spec.color charts/widgets/templates/crds/widgets.yaml:31 base\n" +
				"field-removed widgets.example.com v1 .spec.color charts/widgets/templates/crds/widgets.yaml:31 base\n",
			[]string{`with value set "large": ` + removed, `with value set "small": ` + removed}},
		{"sets that render the same", sets(10, 10),
			"field-removed widgets.example.com v1 .spec.color charts/widgets/templates/crds/widgets.yaml:31 base\n",
			[]string{`with value sets "large", "small": ` + removed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := chartChange(t, base, change, tc.f)
			assertFindings(t, res, tc.want)
			var messages []string
			for _, f := range res.Findings {
				messages = append(messages, f.Message)
			}
			if strings.Join(messages, "\n") != strings.Join(tc.messages, "\n") {
				t.Errorf("messages\n%s\nwant\n%s", strings.Join(messages, "\n"), strings.Join(tc.messages, "\n"))
			}
		})
	}
}
