package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", "mode: error\nfailmode: open\n", `line 2: unknown key failmode (did you mean failMode?)`},
		{"misspelt key", "exclud: [x]\n", `line 1: unknown key exclud (did you mean exclude?)`},
		{"far from any key", "colour: red\n", `line 1: unknown key colour (known keys: acknowledgeLabel, baselines, delivery, exclude, failMode, helm, ignore, kubernetesVersion, mode, paths, ratcheting, rules, samples, stability)`},
		{"paths not a list", "mode: warn\npaths: config/crd/**\n", `line 2: paths must be a list of globs, e.g. paths: ["config/crd/**"]`},
		{"baselines not a list", "baselines: v1.4.0\n", `line 1: baselines must be a list of refs, e.g. baselines: [v1.4.0]`},
		{"list item not a value", "paths:\n  - config\n  - {a: b}\n", `line 3: paths[1] must be a single value, not a list or mapping`},
		{"bad glob", "paths:\n  - config/crd/**\n  - config/[crd\n", `line 3: paths: bad glob "config/[crd": syntax error in pattern`},
		{"ratcheting not a bool", "ratcheting: sometimes\n", `line 1: ratcheting must be true or false`},
		{"delivery not a mapping", "delivery: olm\n", `line 1: delivery must be a mapping, e.g. delivery: {olm: true}`},
		{"helm not a list", "helm: {chart: x}\n", `line 1: helm must be a list of charts, e.g. helm: [{chart: charts/widgets, set: {crds.enabled: true}}]`},
		{"helm unknown key", "helm:\n- chart: charts/x\n  value: [a.yaml]\n", `line 3: unknown key value (did you mean values?)`},
		{"helm without chart", "helm:\n- set: {a: 1}\n", `line 2: helm[0]: chart is required: a glob of chart folders, e.g. chart: charts/widgets`},
		{"helm values not a list", "helm:\n- chart: x\n  values: a.yaml\n", `line 3: helm[0].values must be a list of values files, e.g. values: [ci/values.yaml]`},
		{"helm set not a mapping", "helm:\n- chart: x\n  set: [a]\n", `line 3: helm[0].set must be a mapping of Helm values by key, e.g. set: {crds.enabled: true}`},
		{"helm set key Helm cannot read", "helm:\n- chart: x\n  set: {\"a[x]\": 1}\n", `line 3: helm[0].set: a[x]: Helm cannot set this key: error parsing index: strconv.Atoi: parsing "x": invalid syntax`},
		{"helm value set unknown key", "helm:\n- chart: x\n  sets:\n    on: {sett: {a: 1}}\n", `line 4: unknown key sett (did you mean set?)`},
		{"delivery key misspelt", "delivery:\n  olmv1: true\n", `line 2: unknown key olmv1 (did you mean olm?)`},
		{"delivery.olm not a bool", "delivery: {olm: always}\n", `line 1: delivery.olm must be true or false`},
		{"rules not a mapping", "rules: [field-added]\n", `line 1: rules must be a mapping of rule IDs to severities, e.g. rules: {description-changed: "off"}`},
		{"not a mapping", "- mode: warn\n", `line 1: the configuration must be a mapping of keys (mode, paths, rules, …)`},
		{"unknown rule", "rules:\n  field-gone: off\n", `line 2: rules: unknown rule ID "field-gone" (crdguard rules lists them)`},
		{"bad severity", "rules:\n  field-added: fatal\n", `line 2: rules.field-added: "fatal" is not allowed (allowed: error, warning, info, off)`},
		{"bad mode", "mode: loud\n", `line 1: mode: "loud" is not allowed (allowed: error, warn)`},
		{"bad failMode", "failMode: ajar\n", `line 1: failMode: "ajar" is not allowed (allowed: closed, open)`},
		{"ignore without reason", "ignore:\n  - {rule: field-removed}\n", `line 2: ignore[0]: a reason is required`},
		{"ignore unknown rule", "ignore:\n  - {rule: nope, reason: x}\n", `line 2: ignore[0]: unknown rule ID "nope"`},
		{"ignore everything", "ignore:\n  - {reason: because}\n", `line 2: ignore[0]: matches every finding; name a crd, version, path, rule or change`},
		{"unknown ignore key", "ignore:\n  - {rul: field-removed, reason: x}\n", `line 2: unknown key rul (did you mean rule?)`},
		{"not yaml", "mode: [\n", `line 1: did not find expected node content`},
		{"kubernetesVersion not a minor", "kubernetesVersion: latest\n", `line 1: kubernetesVersion: "latest" is not a Kubernetes minor version such as "1.30"`},
		{"kubernetesVersion before CEL", "kubernetesVersion: \"1.20\"\n", `line 1: kubernetesVersion: "1.20" predates CEL validation rules (Kubernetes 1.25); use 1.25 or later`},
		{"ratcheting before 1.30", "kubernetesVersion: \"1.29\"\nratcheting: true\n", `line 2: ratcheting: true needs Kubernetes 1.30 or later (validation ratcheting is on by default from 1.30), but kubernetesVersion is "1.29"; set ratcheting: false or raise kubernetesVersion`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Parse error = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestKubernetesVersion(t *testing.T) {
	for _, tc := range []struct {
		yaml  string
		minor uint
	}{{"", 0}, {`kubernetesVersion: "1.30"`, 30}, {"kubernetesVersion: v1.33.2", 33}, {"kubernetesVersion: 1.9", 0}} {
		c, err := Parse([]byte(tc.yaml))
		if tc.minor == 0 && tc.yaml != "" {
			if err == nil {
				t.Errorf("%q: accepted as 1.%d", tc.yaml, c.KubernetesMinor())
			}
			continue
		}
		if err != nil || c.KubernetesMinor() != tc.minor {
			t.Errorf("%q: minor %v (%v), want %d", tc.yaml, c, err, tc.minor)
		}
	}
}

// Load names the file and the line, as an editor would.
func TestLoadNamesFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".crdguard.yaml")
	if err := os.WriteFile(path, []byte("mode: warn\nfailmode: open\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := "config " + path + ": line 2: unknown key failmode (did you mean failMode?)"; err == nil || err.Error() != want {
		t.Fatalf("Load error = %v, want %s", err, want)
	}
}

func TestParseFull(t *testing.T) {
	c, err := Parse([]byte(`
mode: warn
failMode: open
ratcheting: true
rules:
  enum-value-added: error
  description-changed: off
paths: ["config/crd/**"]
exclude: ["**/testdata/**"]
samples: ["config/samples/**"]
baselines: [v1.0.0]
acknowledgeLabel: approved
ignore:
  - {crd: widgets.example.com, version: v1alpha1, path: .spec.legacy, rule: field-removed, reason: "removed before GA"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != "warn" || c.FailMode != "open" || !c.Ratcheting || c.AcknowledgeLabel != "approved" ||
		len(c.Paths) != 1 || len(c.Exclude) != 1 || len(c.Samples) != 1 || len(c.Baselines) != 1 || len(c.Ignore) != 1 {
		t.Fatalf("parsed %+v", c)
	}
	if d := Default(); d.Mode != "error" || d.FailMode != "closed" || d.AcknowledgeLabel != "crd-breaking-change-approved" {
		t.Fatalf("defaults %+v", d)
	}
}

func f(rule string, sev finding.Severity, path string, ratchetable bool) finding.Finding {
	return finding.Finding{Rule: rule, Severity: sev, CRD: "widgets.example.com", Version: "v1", Path: path, Message: "m", Ratchetable: ratchetable}
}

func TestApply(t *testing.T) {
	in := []finding.Finding{
		f("field-removed", finding.Error, ".spec.legacy", false),
		f("field-removed", finding.Error, ".spec.other", false),
		f("max-decreased", finding.Error, ".spec.size", true),
		f("validation-rule-added", finding.Error, ".spec.name", false), // uses oldSelf: not ratchetable
		f("unknown-change", finding.Error, ".spec.size", false),
		f("description-changed", finding.Info, ".spec", false),
		f("enum-value-added", finding.Info, ".spec.color", false),
	}
	type want struct {
		rule, path string
		sev        finding.Severity
	}
	for _, tc := range []struct {
		name             string
		config           string
		want             []want
		ignored, off     int
		ratchetNoteAdded bool
	}{
		{"defaults", "", []want{
			{"field-removed", ".spec.legacy", finding.Error}, {"field-removed", ".spec.other", finding.Error},
			{"max-decreased", ".spec.size", finding.Error}, {"validation-rule-added", ".spec.name", finding.Error},
			{"unknown-change", ".spec.size", finding.Error}, {"description-changed", ".spec", finding.Info},
			{"enum-value-added", ".spec.color", finding.Info},
		}, 0, 0, false},
		{"ratcheting, fail open, overrides, ignore", `
ratcheting: true
failMode: open
rules: {description-changed: "off", enum-value-added: error}
ignore: [{crd: widgets.example.com, path: .spec.legacy, rule: field-removed, reason: gone before GA}]
`, []want{
			{"field-removed", ".spec.other", finding.Error}, {"max-decreased", ".spec.size", finding.Warning},
			{"validation-rule-added", ".spec.name", finding.Error}, {"unknown-change", ".spec.size", finding.Warning},
			{"enum-value-added", ".spec.color", finding.Error},
		}, 1, 1, true},
		{"warn mode", "mode: warn\n", []want{
			{"field-removed", ".spec.legacy", finding.Warning}, {"field-removed", ".spec.other", finding.Warning},
			{"max-decreased", ".spec.size", finding.Warning}, {"validation-rule-added", ".spec.name", finding.Warning},
			{"unknown-change", ".spec.size", finding.Warning}, {"description-changed", ".spec", finding.Info},
			{"enum-value-added", ".spec.color", finding.Info},
		}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			out := c.Apply(in)
			if out.Ignored != tc.ignored || out.Off != tc.off {
				t.Errorf("ignored %d off %d, want %d %d", out.Ignored, out.Off, tc.ignored, tc.off)
			}
			if len(out.Findings) != len(tc.want) {
				t.Fatalf("got %d findings, want %d: %+v", len(out.Findings), len(tc.want), out.Findings)
			}
			for i, w := range tc.want {
				g := out.Findings[i]
				if g.Rule != w.rule || g.Path != w.path || g.Severity != w.sev {
					t.Errorf("finding %d = %s %s %s, want %s %s %s", i, g.Rule, g.Path, g.Severity, w.rule, w.path, w.sev)
				}
				if noted := strings.HasSuffix(g.Message, RatchetNote); noted != (tc.ratchetNoteAdded && g.Rule == "max-decreased") {
					t.Errorf("%s: ratchet note %v", g.Rule, noted)
				}
			}
			if in[2].Severity != finding.Error || in[2].Message != "m" {
				t.Error("Apply modified its input")
			}
		})
	}
}

// exclude defaults to vendor/** and to leaving test folders out; setting it, even to nothing,
// replaces the default and brings test folders back.
// helm: becomes the settings charts are rendered with, value sets in name order.
func TestHelmSettings(t *testing.T) {
	c, err := Parse([]byte("kubernetesVersion: \"1.30\"\nhelm:\n- chart: charts/*\n  values: [ci/values.yaml]\n  set: {crds.enabled: true}\n  releaseName: w\n  namespace: ns\n  sets:\n    z: {set: {a: 1}}\n    b: {values: [b.yaml]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%+v", c.Filter().Helm)
	want := "{Charts:[{Chart:charts/* Values:{Files:[ci/values.yaml] Set:map[crds.enabled:true]} ReleaseName:w Namespace:ns Sets:[{Name:b Values:{Files:[b.yaml] Set:map[]}} {Name:z Values:{Files:[] Set:map[a:1]}}]}] KubernetesVersion:1.30}"
	if got != want {
		t.Errorf("settings\n%s\nwant\n%s", got, want)
	}
}

func TestExcludeDefault(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"", "{[] [**/vendor/**] true {[] }}"},
		{"paths: [config/crd/**]\n", "{[config/crd/**] [**/vendor/**] true {[] }}"},
		{"exclude: []\n", "{[] [] false {[] }}"},
		{"exclude: [vendor/**]\n", "{[] [vendor/**] false {[] }}"},
	} {
		c, err := Parse([]byte(tc.config))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(c.Filter()); got != tc.want {
			t.Errorf("%q: filter %s, want %s", tc.config, got, tc.want)
		}
	}
	if got := fmt.Sprint(Default().Filter()); got != "{[] [**/vendor/**] true {[] }}" {
		t.Errorf("Default: filter %s", got)
	}
}

// TestOLMDelivery: delivery.olm decides when set, the repository's OLM bundle when not.
func TestOLMDelivery(t *testing.T) {
	for _, tc := range []struct {
		yaml, bundle string
		want         bool
	}{
		{"", "", false},
		{"", "bundle/manifests/op.clusterserviceversion.yaml", true},
		{"delivery: {olm: false}\n", "bundle/manifests/op.clusterserviceversion.yaml", false},
		{"delivery: {olm: true}\n", "", true},
		{"delivery: {}\n", "", false},
	} {
		c, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if got := c.OLM(tc.bundle); got != tc.want {
			t.Errorf("%q with bundle %q: OLM = %v, want %v", tc.yaml, tc.bundle, got, tc.want)
		}
	}
}
