package rules

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	crdifyconfig "sigs.k8s.io/crdify/pkg/config"
	"sigs.k8s.io/crdify/pkg/runner"
	"sigs.k8s.io/crdify/pkg/validations"
	crdifyproperty "sigs.k8s.io/crdify/pkg/validations/property"
	"sigs.k8s.io/crdify/pkg/validators/version"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// OLM v1 rules: whether operator-controller's CRD Upgrade Safety preflight lets an upgrade reach
// the cluster. operator-controller runs sigs.k8s.io/crdify on the installed CRD and the bundle's
// new one and refuses the whole upgrade on any error; crdguard runs the same library with the
// same configuration (OLMFollows) and never judges the change itself here: what crdguard
// thinks is said beside OLM's verdict, from the pair's own findings.

// OLMFollows names the operator-controller release whose preflight configuration crdguard
// follows, and the crdify it links.
const OLMFollows = "operator-controller v1.11.0 with sigs.k8s.io/crdify v0.6.1-0.20260602124154-bb9957dbf465"

// olmWayOut is how a cluster's administrator lets an upgrade through that the preflight refuses.
const olmWayOut = "spec.install.preflight.crdUpgradeSafety.enforcement: None on the ClusterExtension"

var olmPreflightRefuses = &Rule{
	ID: "olm-preflight-refuses", Severity: finding.Error, Level: CRDLevel,
	Summary: "OLM v1's CRD Upgrade Safety preflight will refuse this upgrade on every cluster that installs the operator through OLM.",
	Advice:  "keep the old shape, or tell cluster administrators who accept the risk to set " + olmWayOut,
	Doc: "Operators delivered through OLM v1 (a bundle with a ClusterServiceVersion in the repository, or `delivery: {olm: true}` in .crdguard.yaml) meet a second gate when a cluster upgrades them: operator-controller's CRD Upgrade Safety preflight compares the installed CRD with the bundle's and refuses the whole upgrade on any change it judges unsafe or cannot classify. crdguard computes that verdict with the library operator-controller uses, `sigs.k8s.io/crdify`, configured as " + OLMFollows + " configures it: served-version checks skipped when a conversion webhook converts, unclassified changes refused, description changes allowed, enum values may be added. " +
		"The preflight refuses some changes crdguard proves safe (a loosened pattern, a rewritten CEL rule, every new default — also the `default: \"\"` that a k8s.io/api upgrade adds to embedded types) and lets through some that break (such findings say so). Each finding quotes OLM's message as operator-controller prints it and says what crdguard thinks of the same change. " +
		"Ways out: keep the old shape until the change is needed, or ask administrators who accept the risk to set `" + olmWayOut + "`.",
}

var olmRules = []*Rule{olmPreflightRefuses}

// OLMLetsThrough is the sentence added to a breaking finding of a CRD whose upgrade OLM v1's
// preflight lets through.
const OLMLetsThrough = " (OLM v1's CRD Upgrade Safety preflight lets this upgrade through: it will not stop this change)"

// olmConfig is operator-controller's preflight configuration (crdupgradesafety.defaultConfig
// in OLMFollows): made anew for each run, since crdify's validations keep what they are given.
func olmConfig() *crdifyconfig.Config {
	return &crdifyconfig.Config{
		Conversion:           crdifyconfig.ConversionPolicyIgnore,
		UnhandledEnforcement: crdifyconfig.EnforcementPolicyError,
		Validations: []crdifyconfig.ValidationConfig{
			{Name: "description", Enforcement: crdifyconfig.EnforcementPolicyNone},
			{Name: "enum", Enforcement: crdifyconfig.EnforcementPolicyError, Configuration: map[string]any{"additionPolicy": crdifyproperty.AdditionPolicyAllow}},
		},
	}
}

// OLMVerdict is OLM v1's preflight verdict on one pair.
type OLMVerdict struct {
	// Refusals are the olm-preflight-refuses findings, one per error of the preflight.
	Refusals []finding.Finding
	// Passes says the preflight lets the CRD's upgrade through.
	Passes bool
}

// OLM runs OLM v1's preflight on a pair whose two sides are definitions. stored are the versions
// a cluster that installed the old CRD lists in status.storedVersions beyond its storage
// version; own are crdguard's findings of the pair, quoted beside each refusal.
func OLM(p crd.Pair, stored []string, own []finding.Finding) (v OLMVerdict) {
	if p.Old == nil || p.New == nil || p.Old.Object == nil || p.New.Object == nil {
		return OLMVerdict{Passes: true}
	}
	e := &emitter{pair: p}
	defer func() {
		// A library that fails must not pass the upgrade: fail closed, saying so.
		if r := recover(); r != nil {
			e.out = nil
			e.crd(olmPreflightRefuses, finding.Head, namePath, nil, nil, "crdguard could not compute OLM v1's preflight verdict for CRD %s (the crdify library failed: %v); treat the upgrade as refused until it is checked on a cluster", p.Name(), r)
			v = OLMVerdict{Refusals: e.out}
		}
	}()
	run, err := runner.New(olmConfig(), runner.DefaultRegistry())
	if err != nil {
		panic(fmt.Sprintf("configuring crdify as operator-controller does: %v", err))
	}
	old := p.Old.Object.DeepCopy()
	old.Status.StoredVersions = installedStoredVersions(old, stored)
	res := run.Run(old, p.New.Object)
	if !res.HasFailures() {
		return OLMVerdict{Passes: true}
	}
	for _, r := range res.CRDValidation {
		for _, msg := range r.Errors {
			e.crd(olmPreflightRefuses, finding.Head, namePath, nil, nil, "OLM v1's preflight refuses the upgrade of CRD %s with “%s” (%s)", p.Name(), finding.Cut(r.Name+": "+msg, 600), crdguardSays(own, "", ""))
		}
	}
	for _, side := range [][]versionResult{versionResults(res.SameVersionValidation), versionResults(res.ServedVersionValidation)} {
		for _, vr := range side {
			olmVersionRefusals(e, vr, own)
		}
	}
	return OLMVerdict{Refusals: e.out}
}

// versionResult is one version's (or one pair of served versions') property results.
type versionResult struct {
	// label is crdify's version label: "v1", or "v1alpha1 -> v1" between served versions.
	label string
	// version is the version the findings are placed in: the later of a served pair.
	version string
	props   []validations.PropertyComparisonResult
}

func versionResults(in []version.VersionedPropertyComparisonResult) []versionResult {
	out := make([]versionResult, 0, len(in))
	for _, r := range in {
		v := r.Version
		if i := strings.LastIndex(v, "->"); i >= 0 {
			v = strings.TrimSpace(v[i+2:])
		}
		out = append(out, versionResult{label: r.Version, version: v, props: r.PropertyComparisons})
	}
	return out
}

// olmVersionRefusals adds a finding per error of one version's property results, at the
// property in the new CRD (the old one when the new has no such node).
func olmVersionRefusals(e *emitter, vr versionResult, own []finding.Finding) {
	newPlaces := olmPlacesOf(e.pair.New, vr.version)
	for _, pr := range vr.props {
		for _, cr := range pr.ComparisonResults {
			for _, msg := range cr.Errors {
				if cr.Name == "unhandled" {
					msg = unhandledFields(msg)
				}
				side := finding.Head
				place, ok := newPlaces[pr.Property]
				if !ok {
					side, place = finding.Base, olmPlacesOf(e.pair.Old, vr.version)[pr.Property]
				}
				if place.path == "" {
					place.path = "."
				}
				at := append(e.doc(side).SchemaPath(vr.version), place.rel...)
				quoted := fmt.Sprintf("%s: %s: %s: %s", vr.label, pr.Property, cr.Name, msg)
				e.add(olmPreflightRefuses, vr.version, place.path, side, at, nil, nil,
					fmt.Sprintf("OLM v1's preflight refuses the upgrade of CRD %s with “%s” (%s)", e.pair.Name(), finding.Cut(quoted, 600), crdguardSays(own, vr.version, place.path)))
			}
		}
	}
}

// crdguardSays words crdguard's own judgement of what OLM refuses: the findings at the same
// version and path (for a CRD-wide refusal, the CRD's breaking findings).
func crdguardSays(own []finding.Finding, version, path string) string {
	var said []string
	for _, f := range own {
		if f.Rule == olmPreflightRefuses.ID {
			continue
		}
		if path == "" && f.Severity == finding.Error || path != "" && f.Version == version && f.Path == path {
			if s := f.Rule + ", " + f.Severity.String(); !slices.Contains(said, s) {
				said = append(said, s)
			}
		}
	}
	sort.Strings(said)
	switch {
	case len(said) > 0:
		return "crdguard: " + strings.Join(said, "; ")
	case path == "":
		return "crdguard finds no breaking change in this CRD"
	default:
		return "crdguard finds no change that breaks at " + path
	}
}

// installedStoredVersions is status.storedVersions of a cluster that installed old: what old
// itself lists, its storage version, and the versions known stored from elsewhere.
func installedStoredVersions(old *apiextv1.CustomResourceDefinition, stored []string) []string {
	out := slices.Clone(old.Status.StoredVersions)
	for _, v := range old.Spec.Versions {
		if v.Storage {
			out = append(out, v.Name)
		}
	}
	out = append(out, stored...)
	slices.Sort(out)
	return slices.Compact(out)
}

// olmPlace is where a crdify property is in crdguard's terms: its path and its YAML path below
// the version's openAPIV3Schema.
type olmPlace struct {
	path string
	rel  []any
}

// olmPlacesOf maps the property names crdify gives (its "simple location", ^.spec.foo.items)
// to places in one version of a CRD, walking the schema as crdify flattens it.
func olmPlacesOf(c *crd.CRD, version string) map[string]olmPlace {
	out := map[string]olmPlace{}
	for _, v := range c.Object.Spec.Versions {
		if v.Name == version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			olmPlaces(v.Schema.OpenAPIV3Schema, field.NewPath("^"), olmPlace{path: "."}, out)
		}
	}
	return out
}

func olmPlaces(s *apiextv1.JSONSchemaProps, loc *field.Path, at olmPlace, out map[string]olmPlace) {
	if s == nil {
		return
	}
	if _, seen := out[loc.String()]; !seen { // a name with dots can collide: the first place wins
		out[loc.String()] = at
	}
	under := func(p string, segs ...any) olmPlace {
		return olmPlace{path: p, rel: append(slices.Clone(at.rel), segs...)}
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		child := s.Properties[n]
		olmPlaces(&child, loc.Child(n), under(childPath(at.path, n), "properties", n), out)
	}
	if s.Items != nil {
		olmPlaces(s.Items.Schema, loc.Child("items"), under(at.path+"[*]", "items"), out)
	}
	if s.AdditionalProperties != nil {
		olmPlaces(s.AdditionalProperties.Schema, loc.Child("additionalProperties"), under(childPath(at.path, "*"), "additionalProperties"), out)
	}
	for _, c := range []struct {
		kw       string
		branches []apiextv1.JSONSchemaProps
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		for i := range c.branches {
			olmPlaces(&c.branches[i], loc.Child(c.kw).Index(i), under(at.path, c.kw, i), out)
		}
	}
	olmPlaces(s.Not, loc.Child("not"), under(at.path, "not"), out)
}

// cmpField is a field of a go-cmp diff line, once its two-rune marker and indentation are cut.
var cmpField = regexp.MustCompile(`^([A-Z][A-Za-z0-9]*):`)

// schemaJSONNames maps JSONSchemaProps' Go field names to their JSON names.
var schemaJSONNames = func() map[string]string {
	m := map[string]string{}
	t := reflect.TypeFor[apiextv1.JSONSchemaProps]()
	for i := range t.NumField() {
		f := t.Field(i)
		m[f.Name] = strings.Split(f.Tag.Get("json"), ",")[0]
	}
	return m
}()

// unhandledFields words crdify's "unhandled changes found" error, a go-cmp diff of the schema
// props no validation judged, as the fields that differ. Each diff line starts with a two-rune
// marker ("-", "+" or a space, then a space that go-cmp picks at random) and one tab per level:
// a changed line belongs to the top-level field last named at level one.
func unhandledFields(msg string) string {
	head, diff, ok := strings.Cut(msg, "\n")
	if !ok {
		return msg
	}
	var fields []string
	current := ""
	for _, line := range strings.Split(diff, "\n") {
		r := []rune(line)
		if len(r) < 2 {
			continue
		}
		marker, rest := r[0], string(r[2:])
		body := strings.TrimLeft(rest, "\t")
		if len(rest)-len(body) == 1 {
			current = ""
			if m := cmpField.FindStringSubmatch(body); m != nil {
				current = m[1]
			}
		}
		if (marker == '-' || marker == '+') && current != "" {
			name := current
			if j := schemaJSONNames[name]; j != "" {
				name = j
			}
			if !slices.Contains(fields, name) {
				fields = append(fields, name)
			}
		}
	}
	sort.Strings(fields)
	head = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(head), ":"))
	if len(fields) == 0 {
		return head
	}
	return head + " in " + strings.Join(fields, ", ")
}
