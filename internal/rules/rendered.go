package rules

import (
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// Rendered delivery: what crdguard could not render is an error, never a pass with nothing
// compared.

// ChartNotRendered is the rule of a chart, or a template, whose CRDs could not be had.
const ChartNotRendered = "chart-not-rendered"

var chartNotRendered = &Rule{
	ID: ChartNotRendered, Severity: finding.Error, Level: CRDLevel,
	Advice:  "give the chart the values it needs under helm: in .crdguard.yaml, or leave the file out with paths or exclude",
	Summary: "A Helm chart did not render, a template that holds a CRD rendered none, or a template outside any chart does not parse: its CRDs are not compared.",
	Doc:     "crdguard renders every chart whose templates may hold CRDs with Helm's own engine, as `helm template` does without a cluster: the chart's values.yaml, and the values `.crdguard.yaml` gives it under `helm:` (values files, single values, release name and namespace, named value sets). When a chart does not render (a `required` or `fail`, a missing value, a template error, a kubeVersion the chart refuses), nothing it renders can be compared, so this error names the template, Helm's message and the value to give. A template that holds a CustomResourceDefinition but renders none with the values used (`{{- if .Values.crds.enabled }}`) is this error too, naming the condition and the value to set (`helm: [{chart: charts/x, set: {crds.enabled: true}}]`), unless the same CRDs are compared from another file of the repository (then a notice). A file outside any chart that is a template (`{{ }}` or `${VAR}`) and does not parse as YAML cannot be rendered at all: compare what it renders (helm template or envsubst first), or leave it out with `paths` or `exclude`. The other side's CRDs of such a chart or file are neither added nor removed: they are unknown.",
}

// KustomizationNotBuilt is the rule of a kustomization kustomize refuses to build.
const KustomizationNotBuilt = "kustomization-not-built"

var kustomizationNotBuilt = &Rule{
	ID: KustomizationNotBuilt, Severity: finding.Error, Level: CRDLevel,
	Advice:  "fix the kustomization so that kustomize build (kubectl apply -k) accepts it, or leave it out with exclude in .crdguard.yaml",
	Summary: "A kustomization that installs or may install CRDs does not build: what kubectl apply -k installs from it is not known.",
	Doc:     "crdguard builds kustomizations with kustomize's own library (krusty), as `kubectl apply -k` builds them, over the compared commit's files (nothing is fetched): the kustomizations in the folders of the CRD files and above them, every kustomization the change touches, and in `crdguard diff` every kustomization of the folders. The CRDs are compared as the outermost of those kustomizations above a CRD file builds them (patches, components, replacements applied), at the lines of their own files. When kustomize refuses one (a file it lists is missing or lies outside its folder, a patch matches nothing, a cycle, YAML that does not parse, a remote patch or generator crdguard does not fetch), what it installs is not known, so this error names the kustomization and quotes kustomize. Its CRD files are still compared as written. A problem the base had just the same is reported once. Remote resources are not a failure: they are left out of the build (a notice names each).",
}

var renderedRules = []*Rule{chartNotRendered, kustomizationNotBuilt}

// NotRendered is the chart-not-rendered finding of a side's chart problem, or the
// kustomization-not-built finding of a kustomization kustomize refuses; its message already says
// what to do, so the rule's advice is not added.
func NotRendered(p source.ChartProblem, side finding.Side) finding.Finding {
	name := ""
	if len(p.Names) == 1 {
		name = p.Names[0]
	}
	r := chartNotRendered
	if p.Kustomization {
		r = kustomizationNotBuilt
	}
	return finding.Finding{Rule: r.ID, Severity: r.Severity, CRD: name, Message: p.Message,
		Location: finding.Location{File: p.File, Line: p.Line, Side: side}}
}
