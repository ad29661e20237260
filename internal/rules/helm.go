package rules

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// Helm rules: whether a change to a CRD in a Helm chart reaches the clusters that run the chart,
// judged by what helm does with the chart's folders (source.Facts: the chart and crds/ or
// templates/). Nothing is rendered: templates are read as crdguard reads them everywhere.

const (
	// resourcePolicy is the annotation that keeps a resource when helm would delete it.
	resourcePolicy = "helm.sh/resource-policy"
	// adoption is what helm needs on an existing object to take it into a release.
	adoption = "label app.kubernetes.io/managed-by: Helm and annotations meta.helm.sh/release-name: RELEASE and meta.helm.sh/release-namespace: NAMESPACE"
)

var (
	helmCRDNotUpgraded = &Rule{
		ID: "helm-crd-not-upgraded", Severity: finding.Warning, Level: CRDLevel,
		Summary: "A CRD in a Helm chart's crds/ folder changed or was added: helm upgrade will not apply it.",
		Advice:  "document the step for users, or move the CRDs to templates/ with helm.sh/resource-policy: keep, or to a CRD sub-chart that is upgraded",
		Doc:     "Helm installs the CRDs of a chart's crds/ folder on `helm install` only: `helm upgrade` never creates, updates or deletes them (Helm's documented choice), so every existing release keeps the old definitions, and users see `unknown field` errors or silently lose the new fields until they apply the CRDs by hand. crdguard reports this once per chart and change, listing the CRDs. Users must apply the new CRDs before upgrading, server-side because large CRDs exceed client-side apply's annotation limit: `kubectl apply --server-side -f <chart>/crds/` (from the chart archive: `helm pull REPO/CHART --version V --untar`); say so in the release notes. Or ship the CRDs in templates/ with `helm.sh/resource-policy: keep`, or in a CRD sub-chart that is upgraded like any release.",
	}
	helmCRDMovedToCRDs = &Rule{
		ID: "helm-crd-moved-to-crds", Severity: finding.Error, Level: CRDLevel,
		Summary: "A CRD moved from a Helm chart's templates/ to its crds/ folder: helm upgrade deletes it, and every object of it.",
		Advice:  "keep the CRD in templates/ (with helm.sh/resource-policy: keep), or add helm.sh/resource-policy: keep to the templated CRD in a release before moving it",
		Doc:     "A CRD in templates/ belongs to the release. Moved to crds/, it is no longer in the rendered manifest, so `helm upgrade` deletes it as a resource that left the release, and the API server deletes every custom resource of it; crds/ is not applied on upgrade, so nothing recreates it. Only a templated CRD that already carried `helm.sh/resource-policy: keep` survives (helm skips deleting it): then it is orphaned, no longer upgraded by anything, and this is a warning. Keep the CRD in templates/, or release `helm.sh/resource-policy: keep` first and document that users must apply crds/ by hand from then on.",
	}
	helmCRDMovedToTemplates = &Rule{
		ID: "helm-crd-moved-to-templates", Severity: finding.Warning, Level: CRDLevel,
		Summary: "A CRD moved from a Helm chart's crds/ to its templates/ folder: helm upgrade fails until the installed CRD carries Helm's adoption metadata.",
		Advice:  "tell users to add Helm's ownership metadata to the installed CRD before upgrading (" + adoption + ")",
		Doc:     "A CRD installed from crds/ is not part of any release. Once the chart renders it from templates/, `helm upgrade` tries to create it and fails: `rendered manifests contain a resource that already exists. Unable to continue with upgrade: CustomResourceDefinition \"NAME\" in namespace \"\" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key \"app.kubernetes.io/managed-by\": must be set to \"Helm\"; annotation validation error: missing key \"meta.helm.sh/release-name\": must be set to \"RELEASE\"; annotation validation error: missing key \"meta.helm.sh/release-namespace\": must be set to \"NAMESPACE\"`. Users must first run `kubectl label crd NAME app.kubernetes.io/managed-by=Helm` and `kubectl annotate crd NAME meta.helm.sh/release-name=RELEASE meta.helm.sh/release-namespace=NAMESPACE`; say so in the upgrade notes.",
	}
	helmKeepRemoved = &Rule{
		ID: "helm-keep-removed", Severity: finding.Error, Level: CRDLevel, Twin: "helm-keep-added",
		Summary: "A templated CRD lost helm.sh/resource-policy: keep: helm uninstall deletes it, and every object of it.",
		Advice:  "keep the annotation helm.sh/resource-policy: keep on templated CRDs",
		Doc:     "Without `helm.sh/resource-policy: keep`, a CRD rendered from a chart's templates/ is deleted by `helm uninstall` (and by an upgrade or rollback that drops it from the release), and the API server deletes every custom resource of it with it. A change that removes the annotation turns an uninstall, often done to reinstall, into data loss. Keep the annotation (a value-guarded `{{- if .Values.crds.keep }}` around it counts as kept).",
	}
	helmKeepAdded = &Rule{
		ID: "helm-keep-added", Severity: finding.Info, Level: CRDLevel,
		Summary: "A templated CRD gained helm.sh/resource-policy: keep.",
		Doc:     "With `helm.sh/resource-policy: keep`, helm leaves the CRD, and every object of it, in place when an uninstall, upgrade or rollback would delete it.",
	}
	helmKeepMissing = &Rule{
		ID: "helm-keep-missing", Severity: finding.Warning, Level: CRDLevel,
		Summary: "A CRD new in a Helm chart's templates/ has no helm.sh/resource-policy: keep.",
		Advice:  "add the annotation helm.sh/resource-policy: keep to templated CRDs",
		Doc:     "A CRD rendered from templates/ without `helm.sh/resource-policy: keep` is deleted by `helm uninstall`, with every custom resource of it. Annotate templated CRDs with `helm.sh/resource-policy: keep` so that an uninstall never takes the users' data.",
	}
)

var helmCRDInBoth = &Rule{
	ID: "helm-crd-in-crds-and-templates", Severity: finding.Warning, Level: CRDLevel,
	Summary: "A Helm chart defines a CRD both in crds/ and in templates/: helm install fails.",
	Advice:  "keep the CRD in one of the two folders",
	Doc:     "`helm install` creates the CRDs of crds/ first, then creates what templates/ renders; the templated copy of a CRD that crds/ already created is not the release's, so the install fails: `rendered manifests contain a resource that already exists. Unable to continue with install: CustomResourceDefinition \"NAME\" in namespace \"\" exists and cannot be imported into the current release: invalid ownership metadata` (unless installed with --skip-crds). Upgrades of releases that already render it go on, since helm upgrade ignores crds/. Keep the CRD in one folder.",
}

var helmCRDLeftRelease = &Rule{
	ID: HelmCRDLeftRelease, Severity: finding.Error, Level: CRDLevel,
	Summary: "A chart no longer renders a CRD it rendered from templates/, while the project still ships the CRD elsewhere: helm upgrade deletes it, and every object of it.",
	Advice:  "keep the CRD in the chart's templates/, or release it with helm.sh/resource-policy: keep before taking it out",
	Doc:     "A CRD rendered from a chart's templates/ belongs to the release. When the chart stops rendering it (the template is deleted, or the CRD moves to config/crd or another chart) while the project still ships it elsewhere, `helm upgrade` deletes it as a resource that left the release, and the API server deletes every custom resource of it, whatever installs the other copy later. A templated CRD that carried `helm.sh/resource-policy: keep` is left in place, so it is not reported. When the template shipped the CRD with other objects, this one finding also says that applying that file with pruning deletes it (no separate crd-removed-from-bundle). When no copy is left anywhere, the CRD is crd-removed; moved to the same chart's crds/, helm-crd-moved-to-crds. When the chart's release (its top chart) gains a dependency fetched from a chart repository in the same change, that chart may render the CRD in the same release (then helm upgrade keeps it), which crdguard cannot see: crd-left-repository (warning) names the dependency instead.",
}

var helmRules = []*Rule{helmCRDNotUpgraded, helmCRDMovedToCRDs, helmCRDMovedToTemplates, helmCRDInBoth, helmCRDLeftRelease, helmKeepRemoved, helmKeepAdded, helmKeepMissing}

// Helm judges the pairs of a comparison by what helm does with the charts that ship them: old
// and new say where each file lies (source.Facts). A chart's crds/ change is one finding per
// chart, at its first CRD, naming every CRD. The notices say what was assumed: changed CRDs in
// crds/ or templates/ folders of a chart without its Chart.yaml are not in a chart.
func Helm(pairs []crd.Pair, sets [][]string, old, new *source.Tree) ([]finding.Finding, []string) {
	out, rendered := inBoth(old, new)
	out = append(out, leftRelease(old, new)...)
	var outside []string
	notUpgraded := map[string][]*crd.CRD{}
	notUpgradedSets := map[string][]string{}
	var charts []string
	var templated []templatedChange
	for i, p := range pairs {
		if p.New == nil || p.New.Object == nil || p.Old != nil && p.Old.Object == nil {
			continue
		}
		// What the pair's findings hold for: the value sets it stands for.
		from := len(out)
		prefix := source.SetPrefix(sets[i])
		nf := new.Facts(p.New.File)
		if nf.ChartLike != "" && (new.Changed == nil || new.Changed[p.New.File]) && !slices.Contains(outside, p.New.File) {
			outside = append(outside, p.New.File)
		}
		var of source.Facts
		if p.Old != nil {
			of = old.Facts(p.Old.File)
		}
		moved := p.Old != nil && of.Helm != nf.Helm
		switch nf.Helm {
		case source.HelmCRDs:
			if moved && of.Helm == source.HelmTemplates {
				out = append(out, movedToCRDs(p, of, nf))
				continue
			}
			if p.Old != nil && sameChart(old, of, new, nf) && of.Helm == nf.Helm && reflect.DeepEqual(p.Old.Object, p.New.Object) {
				continue // the same definition: nothing for helm to apply
			}
			if rendered[[2]string{new.Rel(nf.Chart), p.New.Name}] {
				continue // templates/ has it too: upgrades apply that copy (inBoth says the rest)
			}
			if old.HasFile != nil && !old.HasChart(new, nf.Chart) {
				continue // a chart new in the change: every release of it is an install
			}
			if _, ok := notUpgraded[nf.Chart]; !ok {
				charts = append(charts, nf.Chart)
			}
			notUpgraded[nf.Chart] = append(notUpgraded[nf.Chart], p.New)
			notUpgradedSets[nf.Chart] = append(notUpgradedSets[nf.Chart], sets[i]...)
		case source.HelmTemplates:
			if p.Old == nil || !reflect.DeepEqual(p.Old.Object, p.New.Object) || !sameChart(old, of, new, nf) {
				t := templatedChange{crd: p.New, newChart: nf.Chart, sets: sets[i]}
				if p.Old != nil {
					t.oldChart = of.Chart // "" when the CRD was in no chart: no release to compare with
				}
				templated = append(templated, t)
			}
			if moved && of.Helm == source.HelmCRDs {
				out = append(out, helmFinding(helmCRDMovedToTemplates, p.New, finding.Head, namePath, fmt.Sprintf("CRD %s moved from %s/crds to %s/templates: helm upgrade of every release installed before fails with 'CustomResourceDefinition %q in namespace \"\" exists and cannot be imported into the current release: invalid ownership metadata'", p.New.Name, of.Chart, nf.Chart, p.New.Name)))
			}
			was, is := keep(p.Old), keep(p.New)
			switch {
			case p.Old != nil && of.Helm == source.HelmTemplates && was == kept && is == notKept:
				out = append(out, helmFinding(helmKeepRemoved, p.Old, finding.Base, crd.Path{"metadata", "annotations", resourcePolicy}, fmt.Sprintf("CRD %s in %s/templates no longer has helm.sh/resource-policy: keep: helm uninstall deletes it and every object of it", p.New.Name, nf.Chart)))
			case p.Old != nil && of.Helm == source.HelmTemplates && was == notKept && is == kept:
				out = append(out, helmFinding(helmKeepAdded, p.New, finding.Head, crd.Path{"metadata", "annotations", resourcePolicy}, fmt.Sprintf("CRD %s in %s/templates now has helm.sh/resource-policy: keep: helm uninstall leaves it and its objects", p.New.Name, nf.Chart)))
			case (p.Old == nil || of.Helm != source.HelmTemplates) && is == notKept:
				out = append(out, helmFinding(helmKeepMissing, p.New, finding.Head, namePath, fmt.Sprintf("CRD %s is new in %s/templates without helm.sh/resource-policy: keep: helm uninstall would delete it and every object of it", p.New.Name, nf.Chart)))
			}
		}
		for k := range out[from:] {
			out[from+k].Message = prefix + out[from+k].Message
		}
	}
	for _, chart := range charts {
		f := crdsNotUpgraded(chart, notUpgraded[chart])
		f.Message = source.SetPrefix(notUpgradedSets[chart]) + f.Message
		out = append(out, f)
	}
	var notices []string
	if len(outside) > 0 {
		slices.Sort(outside)
		shown := strings.Join(outside[:min(len(outside), 3)], ", ")
		if len(outside) > 3 {
			shown += fmt.Sprintf(" and %d more", len(outside)-3)
		}
		files := fmt.Sprintf("%d changed CRD files lie", len(outside))
		if len(outside) == 1 {
			files = "a changed CRD file lies"
		}
		notices = append(notices, fmt.Sprintf("%s in crds/ or templates/ folders of what looks like a Helm chart (a values.yaml or a Chart.template.yaml) with no Chart.yaml (%s): helm loads no chart without a Chart.yaml, so they were judged as plain manifests, with no Helm rule", files, shown))
	}
	return once(append(out, releaseSizes(old, new, templated)...)), notices
}

// once drops a finding that says exactly what an earlier one says: the identical renderings of
// a chart under several value sets are compared as copies, and each copy's pair would say it.
func once(fs []finding.Finding) []finding.Finding {
	type key struct {
		rule, crd, message string
		at                 finding.Location
	}
	seen := map[key]bool{}
	out := fs[:0]
	for _, f := range fs {
		k := key{f.Rule, f.CRD, f.Message, f.Location}
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// inBoth reports the CRDs a chart of the head defines both in crds/ and in templates/ where the
// base did not, at the templated copy; rendered are all such CRDs of the head, by chart (as
// Tree.Rel names it) and name.
func inBoth(old, new *source.Tree) (_ []finding.Finding, rendered map[[2]string]bool) {
	both := func(t *source.Tree) map[[2]string]*crd.CRD {
		crds := map[[2]string]bool{}
		templated := map[[2]string]*crd.CRD{}
		for _, c := range t.CRDs {
			f := t.Facts(c.File)
			k := [2]string{t.Rel(f.Chart), c.Name}
			switch {
			case f.Helm == source.HelmCRDs:
				crds[k] = true
			case f.Helm == source.HelmTemplates && templated[k] == nil:
				templated[k] = c
			}
		}
		for k := range templated {
			if !crds[k] {
				delete(templated, k)
			}
		}
		return templated
	}
	before, after := both(old), both(new)
	var out []finding.Finding
	rendered = map[[2]string]bool{}
	for k, c := range after {
		rendered[k] = true
		if before[k] == nil {
			f := new.Facts(c.File)
			out = append(out, helmFinding(helmCRDInBoth, c, finding.Head, namePath, source.SetPrefix(new.SetsOf(c.Name, c.File))+fmt.Sprintf("CRD %s is in both %s/crds and %s/templates: helm install creates it from crds/ and then fails on the templated copy (\"exists and cannot be imported into the current release\") unless run with --skip-crds", c.Name, f.Chart, f.Chart)))
		}
	}
	return out, rendered
}

// leftRelease reports the CRDs a chart of the base renders from templates/ (without keep) that
// the same chart of the head renders nowhere, while the head still ships them: helm upgrade
// deletes them. A head copy in the chart's crds/ is helm-crd-moved-to-crds, no copy at all
// crd-removed; a chart gone from the head is no upgrade.
func leftRelease(old, new *source.Tree) []finding.Finding {
	type key struct{ chart, name string }
	inChart := map[key]bool{}
	shipped := map[string]bool{}
	// Two files named as counterparts (diff a.yaml b.yaml) are in counterpart charts, wherever.
	chartKey := func(t *source.Tree, chart string) string {
		if old.Input != "" || new.Input != "" {
			return ""
		}
		return t.Rel(chart)
	}
	add := func(file, name string) {
		shipped[name] = true
		if f := new.Facts(file); f.Chart != "" {
			inChart[key{chartKey(new, f.Chart), name}] = true
		}
	}
	for _, c := range new.CRDs {
		add(c.File, c.Name)
	}
	for _, u := range new.Unread { // a templated schema: the chart still renders it
		add(u.File, u.Name)
	}
	var out []finding.Finding
	seen := map[key]bool{}
	for _, c := range old.CRDs {
		f := old.Facts(c.File)
		k := key{chartKey(old, f.Chart), c.Name}
		if f.Helm != source.HelmTemplates || keep(c) != notKept || seen[k] || inChart[k] || !shipped[c.Name] || !new.HasChart(old, f.Chart) {
			continue
		}
		seen[k] = true
		prefix := source.SetPrefix(old.SetsOf(c.Name, c.File))
		if top, ok := old.ChartTemplate(c.File); ok {
			if remotes := source.Gained(old, new, old.Rel(top)); len(remotes) > 0 {
				dep := releaseFromDependency(c, f.Chart, top, remotes)
				dep.Message = prefix + dep.Message
				out = append(out, dep)
				continue
			}
		}
		out = append(out, helmFinding(helmCRDLeftRelease, c, finding.Base, namePath, prefix+leftReleaseMessage(f.Chart, c.Name, "the project still ships elsewhere")+helmUpgradeDeletes))
	}
	return out
}

// releaseFromDependency is the finding for a CRD that a chart (chart, in the release of the top
// chart top) stopped rendering while top gained dependencies fetched from a chart repository
// (remotes): such a chart may render the CRD in the same release, and then helm upgrade keeps it
// (kyverno 1.17 moved its policies.kyverno.io CRDs from its crds sub-chart to kyverno-api, a
// dependency from https://kyverno.github.io/api, which renders them from its templates/).
// crdguard fetches nothing, so it can tell neither that nor the opposite: a crd-left-repository
// warning at the first new dependency, saying what to check, instead of helm-crd-left-release's
// error.
func releaseFromDependency(c *crd.CRD, chart, top string, remotes []source.Remote) finding.Finding {
	entries := make([]string, 0, len(remotes))
	for _, r := range remotes {
		entries = append(entries, fmt.Sprintf("%s (%s:%d)", r.Entry, r.File, r.Line))
	}
	what, that := "the dependency", "that chart renders"
	if len(remotes) > 1 {
		what, that = "the dependencies", "one of them renders"
	}
	return finding.Finding{
		Rule: crdLeftRepository.ID, Severity: crdLeftRepository.Severity, CRD: c.Name,
		Message: fmt.Sprintf("%s, while chart %s now takes %s %s from a chart repository, which crdguard does not fetch: if %s the CRD from its templates/, helm upgrade keeps it in the release, and what this change does to it is not checked; if none does (or ships it in crds/), helm upgrade deletes it and every object of it; %s",
			leftReleaseMessage(chart, c.Name, "the project still ships elsewhere"), top, what, strings.Join(entries, ", "), that, crdLeftRepository.Advice),
		Location: finding.Location{File: remotes[0].File, Line: remotes[0].Line, Side: finding.Head},
	}
}

// HelmCRDLeftRelease is the rule of a CRD a chart stopped rendering while it still ships.
const HelmCRDLeftRelease = "helm-crd-left-release"

const helmUpgradeDeletes = ": helm upgrade deletes it from every cluster that installed the chart, and every object of it"

func leftReleaseMessage(chart, name, ships string) string {
	return fmt.Sprintf("chart %s no longer renders CRD %s, which %s", chart, name, ships)
}

// LeftReleaseAndBundle is the helm-crd-left-release finding of a CRD that left a chart's
// templates/ file which shipped it with other objects (a bundle): one finding naming both
// consequences, the crd-removed-from-bundle one included.
func LeftReleaseAndBundle(gone *crd.CRD, chart string, elsewhere []string) finding.Finding {
	return helmFinding(helmCRDLeftRelease, gone, finding.Base, namePath, fmt.Sprintf("%s%s; and since %s shipped it with other objects, %s", leftReleaseMessage(chart, gone.Name, strings.Join(elsewhere, ", ")+map[bool]string{true: " still ship", false: " still ships"}[len(elsewhere) > 1]), helmUpgradeDeletes,
		gone.File, prunedBy("whoever applies it", gone.Object.Spec.Names.Kind)))
}

// sameChart reports whether two files lie in the same chart of the two sides: the same folder
// under each side's root (diff old/ new/ names them old/charts/x and new/charts/x), or, when two
// files are compared as counterparts (diff a.yaml b.yaml), both in a chart.
func sameChart(old *source.Tree, of source.Facts, new *source.Tree, nf source.Facts) bool {
	if old.Input != "" || new.Input != "" {
		return of.Chart != "" && nf.Chart != ""
	}
	return of.Chart != "" && old.Rel(of.Chart) == new.Rel(nf.Chart)
}

// movedToCRDs is the finding for a CRD that left templates/ for crds/: an error, unless the
// templated CRD was kept (helm then leaves it, orphaned).
func movedToCRDs(p crd.Pair, of, nf source.Facts) finding.Finding {
	f := helmFinding(helmCRDMovedToCRDs, p.New, finding.Head, namePath, fmt.Sprintf("CRD %s moved from %s/templates to %s/crds: it leaves the release, so helm upgrade deletes it and every object of it, and crds/ is never applied on upgrade", p.New.Name, of.Chart, nf.Chart))
	if keep(p.Old) == kept {
		f.Severity = finding.Warning
		f.Message = fmt.Sprintf("CRD %s moved from %s/templates to %s/crds: helm upgrade leaves it in place (it had helm.sh/resource-policy: keep), but nothing upgrades it any more: helm never applies crds/ on upgrade; tell users to apply it by hand (kubectl apply --server-side -f %s/crds/)", p.New.Name, of.Chart, nf.Chart, nf.Chart)
	}
	return f
}

// crdsNotUpgraded is the one finding for a chart whose crds/ changed, at its first CRD.
func crdsNotUpgraded(chart string, cs []*crd.CRD) finding.Finding {
	slices.SortFunc(cs, func(a, b *crd.CRD) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	var names []string
	for _, c := range cs {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	what := fmt.Sprintf("CRD %s", names[0])
	if len(names) > 1 {
		what = fmt.Sprintf("%d CRDs (%s)", len(names), strings.Join(names, ", "))
	}
	return helmFinding(helmCRDNotUpgraded, cs[0], finding.Head, namePath, fmt.Sprintf("%s changed or new in %s/crds: helm upgrade never applies a chart's crds/ folder, so existing releases keep the old definitions; users must run kubectl apply --server-side -f %s/crds/ before helm upgrade", what, chart, chart))
}

// policy says whether a CRD carries helm.sh/resource-policy: keep.
type policy int

const (
	notKept policy = iota
	kept
	// templated: the value is filled in by a template, so whether it keeps is not known.
	templated
)

// keep reads a CRD's resource policy as helm does (trimmed, case-insensitive "keep").
func keep(c *crd.CRD) policy {
	if c == nil || c.Object == nil {
		return notKept
	}
	v, ok := c.Object.Annotations[resourcePolicy]
	switch {
	case !ok:
		return notKept
	case strings.EqualFold(strings.TrimSpace(v), "keep"):
		return kept
	case strings.Contains(v, source.Placeholder):
		return templated
	}
	return notKept
}

// helmFinding builds a CRD-level finding at a key of c.
func helmFinding(r *Rule, c *crd.CRD, side finding.Side, at crd.Path, msg string) finding.Finding {
	if r.Advice != "" {
		msg += ": " + r.Advice
	}
	return finding.Finding{Rule: r.ID, Severity: r.Severity, CRD: c.Name, Message: msg,
		Location: finding.Location{File: c.File, Line: c.LineOf(at), Side: side}}
}
