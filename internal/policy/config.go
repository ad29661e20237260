// Package policy turns raw findings into what a project wants to see: per-rule severities,
// fail-open or fail-closed, validation ratcheting, ignores, and warn-only mode. It also reads
// the configuration file (.crdguard.yaml).
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// DefaultFile is the configuration file looked for at the repository root.
const DefaultFile = ".crdguard.yaml"

// Config is the content of .crdguard.yaml (DESIGN §4).
type Config struct {
	// Mode is "error" (default) or "warn": in warn mode every error is reported as a warning.
	Mode string `yaml:"mode"`
	// FailMode is "closed" (default: unknown-change is an error) or "open" (a warning).
	FailMode string `yaml:"failMode"`
	// Ratcheting lowers value tightenings that Kubernetes ratchets from error to warning.
	// Defaults to false.
	Ratcheting bool `yaml:"ratcheting"`
	// Rules sets a rule's severity: error, warning, info or off.
	Rules map[string]string `yaml:"rules"`
	// Paths are globs of where CRDs are looked for; defaults to the whole tree.
	Paths []string `yaml:"paths"`
	// Exclude are globs of paths never read; defaults to DefaultExclude, which setting it
	// replaces (exclude: [] reads everything).
	Exclude []string `yaml:"exclude"`
	// Samples are globs of custom resources to validate against the new schemas.
	Samples []string `yaml:"samples"`
	// Baselines are more refs to compare head with, such as the last release tags.
	Baselines []string `yaml:"baselines"`
	// AcknowledgeLabel is the PR label that turns a failing check neutral.
	AcknowledgeLabel string `yaml:"acknowledgeLabel"`
	// Ignore drops matching findings; every entry needs a reason.
	Ignore []Ignore `yaml:"ignore"`
	// Stability caps the severity of breaking changes by the stability of the version they are
	// in (alpha, beta, stable by Kubernetes' version names): {alpha: warning} lets alpha
	// versions change as Kubernetes' deprecation policy allows. Unset: no cap.
	Stability map[string]string `yaml:"stability"`
	// KubernetesVersion is the oldest Kubernetes (1.N) the CRDs must install on: new and
	// changed CEL rules are compiled with that version's CEL libraries. Empty: the libraries of
	// the API server crdguard links.
	KubernetesVersion string `yaml:"kubernetesVersion"`
	// Delivery says how the CRDs reach clusters, where crdguard cannot tell from the repository.
	Delivery Delivery `yaml:"delivery"`
	// Helm says how charts are rendered: per chart folder glob, the values files, single values,
	// release name and namespace, and named value sets each compared as a delivery of its own.
	// Unset: each chart with its own values.yaml, as helm template renders it.
	Helm []HelmChart `yaml:"helm"`

	// skipTests says exclude is the default, which leaves test and fixture folders out.
	skipTests       bool
	severities      map[string]severityOverride
	ceilings        map[string]finding.Severity // stability → severity cap
	expires         []time.Time                 // per ignore entry; zero: never
	now             func() time.Time
	kubernetesMinor uint
	lines           map[string]int // line of each key and list item, for errors
}

// Delivery is the delivery: key of .crdguard.yaml.
type Delivery struct {
	// OLM says the operator is installed through OLM v1, whose upgrade preflight then judges
	// each changed CRD too: true or false; unset, crdguard looks for an OLM bundle (a
	// ClusterServiceVersion) in the repository.
	OLM *bool `yaml:"olm"`
}

// OLM decides whether OLM v1's preflight judges the CRDs: what the configuration says, else
// whether the repository holds an OLM bundle (bundle is its ClusterServiceVersion file, "" for
// none).
func (c *Config) OLM(bundle string) bool {
	if c.Delivery.OLM != nil {
		return *c.Delivery.OLM
	}
	return bundle != ""
}

var minorRE = regexp.MustCompile(`^v?1\.(\d{1,3})(?:\.\d+)?$`)

// KubernetesMinor is N of kubernetesVersion 1.N, or 0 when it is not set.
func (c *Config) KubernetesMinor() uint { return c.kubernetesMinor }

// Ignore matches findings to drop; an empty field matches anything.
type Ignore struct {
	CRD     string `yaml:"crd"`
	Version string `yaml:"version"`
	Path    string `yaml:"path"`
	Rule    string `yaml:"rule"`
	// Change is a change's stable ID (the JSON report's "change"): the entry acknowledges
	// that one change.
	Change string `yaml:"change"`
	// Expires (YYYY-MM-DD) is the last day the entry holds; after it the findings count again.
	Expires string `yaml:"expires"`
	Reason  string `yaml:"reason"`
}

// HelmChart is one helm: entry: how the charts its glob matches are rendered.
type HelmChart struct {
	// Chart is a glob of chart folders (folders with a Chart.yaml) from the repository root.
	Chart string `yaml:"chart"`
	// Values are values files by path from the chart folder, applied in order over values.yaml.
	Values []string `yaml:"values"`
	// Set are single values by Helm key (crds.enabled), applied after Values.
	Set map[string]any `yaml:"set"`
	// ReleaseName and Namespace are .Release.Name and .Release.Namespace; defaults:
	// release-name and default, as helm template renders them.
	ReleaseName string `yaml:"releaseName"`
	Namespace   string `yaml:"namespace"`
	// Sets are named value sets, each rendered over Values and Set and compared on its own.
	Sets map[string]HelmValueSet `yaml:"sets"`
}

// HelmValueSet is one named value set.
type HelmValueSet struct {
	Values []string       `yaml:"values"`
	Set    map[string]any `yaml:"set"`
}

type severityOverride struct {
	off      bool
	severity finding.Severity
}

// DefaultExclude keeps vendored dependencies out. Test and fixture folders (testdata, test,
// e2e, fixtures, …: source.Facts.Test) are left out by default too, by what source knows of
// each file rather than by a glob, so that a paths glob naming such a folder brings it back
// (Config.Filter).
var DefaultExclude = []string{"**/vendor/**"}

// Filter is what the configuration reads: paths and exclude, and, while exclude is the default,
// no test or fixture folder that no paths glob names.
func (c *Config) Filter() source.Filter {
	return source.Filter{Paths: c.Paths, Exclude: c.Exclude, SkipTests: c.skipTests, Helm: c.HelmSettings()}
}

// HelmSettings is how charts are rendered (helm: and kubernetesVersion).
func (c *Config) HelmSettings() source.HelmSettings {
	h := source.HelmSettings{KubernetesVersion: c.KubernetesVersion}
	for _, e := range c.Helm {
		s := source.ChartSettings{Chart: e.Chart, Values: source.Values{Files: e.Values, Set: e.Set}, ReleaseName: e.ReleaseName, Namespace: e.Namespace}
		names := make([]string, 0, len(e.Sets))
		for n := range e.Sets {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			s.Sets = append(s.Sets, source.ValueSet{Name: n, Values: source.Values{Files: e.Sets[n].Values, Set: e.Sets[n].Set}})
		}
		h.Charts = append(h.Charts, s)
	}
	return h
}

// Default is the configuration used when there is no file.
func Default() *Config {
	c := &Config{}
	if err := c.validate(); err != nil {
		panic(err) // the zero config is valid by construction
	}
	return c
}

// Load reads a configuration file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config %s: %w", path, err)
	}
	c, err := Parse(data)
	var le *LineError
	if errors.As(err, &le) {
		return nil, fmt.Errorf("config %s: line %d: %s", path, le.Line, le.Msg)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Find reads the configuration file at path when one is given, else DefaultFile in dir when it
// exists, else returns Default.
func Find(path, dir string) (*Config, error) {
	if path != "" {
		return Load(path)
	}
	def := filepath.Join(dir, DefaultFile)
	if _, err := os.Stat(def); err != nil {
		return Default(), nil
	}
	return Load(def)
}

// yamlLine splits the YAML parser's "line 3: did not find expected key".
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// Parse reads configuration YAML strictly: unknown keys, values of the wrong kind, unknown rule
// IDs, bad globs and bad values are errors that name them and, as a *LineError, their line.
func Parse(data []byte) (*Config, error) {
	c := &Config{lines: map[string]int{}}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, &LineError{line, m[2]}
		}
		return nil, errors.New(msg)
	}
	if err := checkShape(&doc, c.lines); err != nil {
		return nil, err
	}
	if doc.Kind != 0 {
		if err := doc.Decode(c); err != nil {
			return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: ")) // checkShape let through what decodes
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) validate() error {
	switch c.Mode {
	case "":
		c.Mode = "error"
	case "error", "warn":
	default:
		return c.atLine("mode", fmt.Errorf("mode: %q is not allowed (allowed: error, warn)", c.Mode))
	}
	switch c.FailMode {
	case "":
		c.FailMode = "closed"
	case "closed", "open":
	default:
		return c.atLine("failMode", fmt.Errorf("failMode: %q is not allowed (allowed: closed, open)", c.FailMode))
	}
	c.severities = make(map[string]severityOverride, len(c.Rules))
	for id, s := range c.Rules {
		if _, ok := rules.Lookup(id); !ok {
			return c.atLine("rules."+id, fmt.Errorf("rules: unknown rule ID %q (crdguard rules lists them)", id))
		}
		if s == "off" {
			c.severities[id] = severityOverride{off: true}
			continue
		}
		sev, err := finding.ParseSeverity(s)
		if err != nil {
			return c.atLine("rules."+id, fmt.Errorf("rules.%s: %q is not allowed (allowed: error, warning, info, off)", id, s))
		}
		c.severities[id] = severityOverride{severity: sev}
	}
	for i, ig := range c.Ignore {
		if ig.Rule != "" {
			if _, ok := rules.Lookup(ig.Rule); !ok {
				return c.atLine(fmt.Sprintf("ignore[%d]", i), fmt.Errorf("ignore[%d]: unknown rule ID %q", i, ig.Rule))
			}
		}
		if strings.TrimSpace(ig.Reason) == "" {
			return c.atLine(fmt.Sprintf("ignore[%d]", i), fmt.Errorf("ignore[%d]: a reason is required", i))
		}
		if err := c.validIgnore(i, ig); err != nil {
			return err
		}
	}
	if err := c.validStability(); err != nil {
		return err
	}
	if _, set := c.lines["exclude"]; !set && c.Exclude == nil {
		c.Exclude = append([]string{}, DefaultExclude...)
		c.skipTests = true
	}
	for key, globs := range map[string][]string{"paths": c.Paths, "exclude": c.Exclude, "samples": c.Samples} {
		for i, g := range globs {
			if err := source.ValidGlob(g); err != nil {
				return c.atLine(fmt.Sprintf("%s[%d]", key, i), fmt.Errorf("%s: %w", key, err))
			}
		}
	}
	if c.KubernetesVersion != "" {
		m := minorRE.FindStringSubmatch(c.KubernetesVersion)
		if m == nil {
			return c.atLine("kubernetesVersion", fmt.Errorf("kubernetesVersion: %q is not a Kubernetes minor version such as \"1.30\"", c.KubernetesVersion))
		}
		minor, _ := strconv.Atoi(m[1])
		if minor < 25 {
			return c.atLine("kubernetesVersion", fmt.Errorf("kubernetesVersion: %q predates CEL validation rules (Kubernetes 1.25); use 1.25 or later", c.KubernetesVersion))
		}
		c.kubernetesMinor = uint(minor)
		// Validation ratcheting (KEP-4008) is on by default from 1.30 (beta; GA in 1.33): on an
		// older cluster, lowering tightenings to warnings would hide errors users will hit.
		if c.Ratcheting && minor < 30 {
			return c.atLine("ratcheting", fmt.Errorf("ratcheting: true needs Kubernetes 1.30 or later (validation ratcheting is on by default from 1.30), but kubernetesVersion is %q; set ratcheting: false or raise kubernetesVersion", c.KubernetesVersion))
		}
	}
	if err := c.validHelm(); err != nil {
		return err
	}
	if c.AcknowledgeLabel == "" {
		c.AcknowledgeLabel = "crd-breaking-change-approved"
	}
	return nil
}

// validHelm checks each helm: entry: a chart glob, values files, and set keys Helm can read.
func (c *Config) validHelm() error {
	for i, e := range c.Helm {
		at := fmt.Sprintf("helm[%d]", i)
		if strings.TrimSpace(e.Chart) == "" {
			return c.atLine(at, fmt.Errorf("%s: chart is required: a glob of chart folders, e.g. chart: charts/widgets", at))
		}
		if err := source.ValidGlob(e.Chart); err != nil {
			return c.atLine(at+".chart", fmt.Errorf("%s.chart: %w", at, err))
		}
		sets := map[string]HelmValueSet{"": {Values: e.Values, Set: e.Set}}
		for n, s := range e.Sets {
			sets[n] = s
		}
		for n, s := range sets {
			key := at
			if n != "" {
				key = at + ".sets." + n
			}
			for j, v := range s.Values {
				if strings.TrimSpace(v) == "" {
					return c.atLine(key+".values", fmt.Errorf("%s.values[%d]: a values file path is required", key, j))
				}
			}
			for k, v := range s.Set {
				if err := source.ValidSet(k, v); err != nil {
					return c.atLine(key+".set", fmt.Errorf("%s.set: %w", key, err))
				}
			}
		}
	}
	return nil
}
