package action

import (
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/charttest"
)

// Issue 41 in the action: what a chart renders and what a kustomization installs reach the
// pull request like any CRD file — inline comments at the template's lines, the check run's
// conclusion and annotations — through the strict fake GitHub, which refuses a comment outside
// git's own diff.

// linkTo marks a file of deliveryPR that is a symbolic link to the path after it.
const linkTo = "symlink to "

// deliveryPR is a pull request whose base commit holds the files of base and whose head commit
// changes them as head says ("" deletes, linkTo+target makes a link); the widgets CRD file of
// newPullRequest is removed first.
func deliveryPR(t *testing.T, base, head map[string]string) *pullRequest {
	t.Helper()
	pr := newPullRequest(t)
	pr.repo.Remove("config/crd/widgets.yaml")
	write := func(files map[string]string) {
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			switch data := files[name]; {
			case data == "":
				pr.repo.Remove(name)
			case strings.HasPrefix(data, linkTo):
				pr.repo.Symlink(name, strings.TrimPrefix(data, linkTo))
			default:
				pr.repo.Write(name, []byte(data))
			}
		}
	}
	write(base)
	b := pr.repo.Commit("base")
	write(head)
	h := pr.repo.Commit("head")
	pr.base, pr.head = b.String(), h.String()
	pr.showDiff()
	return pr
}

// delivered runs the action and returns its exit code, the inline comments (path:line:side:rule,
// sorted), the check run's conclusion and title, and its annotations (path:line:level:title:
// message).
func (pr *pullRequest) delivered() (code int, comments []string, conclusion, title string, annotations []string) {
	pr.t.Helper()
	code, out := pr.run()
	for _, c := range pr.srv.Comments {
		comments = append(comments, c.Path+":"+itoa(c.Line)+":"+c.Side+":"+ruleOf(c.Body))
	}
	sort.Strings(comments)
	cr := pr.completed(pr.head)
	for _, a := range cr.Annotations {
		annotations = append(annotations, a.Path+":"+itoa(a.StartLine)+":"+a.AnnotationLevel+":"+a.Title+": "+a.Message)
	}
	sort.Strings(annotations)
	if strings.Contains(out, "::error") {
		pr.t.Errorf("workflow-command annotations printed although the check run was posted:\n%s", out)
	}
	return code, comments, cr.Conclusion, cr.Title, annotations
}

// deliveryCase is one shape of rendered delivery a pull request changes, and everything the action
// must say about it.
type deliveryCase struct {
	name       string
	base, head map[string]string
	code       int
	// comments are path:line:side:rule; annotations path:line:level:title: message.
	comments, annotations []string
	conclusion, title     string
}

// check runs the case's pull request through the action and compares all it says, exactly.
func (tc deliveryCase) check(t *testing.T) {
	t.Helper()
	pr := deliveryPR(t, tc.base, tc.head)
	code, comments, conclusion, title, annotations := pr.delivered()
	if code != tc.code || strings.Join(comments, "\n") != strings.Join(tc.comments, "\n") || conclusion != tc.conclusion ||
		title != tc.title || strings.Join(annotations, "\n") != strings.Join(tc.annotations, "\n") {
		t.Errorf("exit %d (want %d)\ncomments:\n%s\nwant:\n%s\ncheck run %s %q (want %s %q)\nannotations:\n%s\nwant:\n%s", code, tc.code,
			strings.Join(comments, "\n"), strings.Join(tc.comments, "\n"), conclusion, title, tc.conclusion, tc.title,
			strings.Join(annotations, "\n"), strings.Join(tc.annotations, "\n"))
	}
}

// merged is files with more laid over them.
func merged(files map[string]string, more map[string]string) map[string]string {
	out := maps.Clone(files)
	maps.Copy(out, more)
	return out
}

const (
	widgetsChart = "charts/widgets"
	// removedColor is field-removed's message for .spec.color.
	removedColor = ".spec.color was removed: clients that set it are rejected or silently lose it, and stored values are pruned on the next write; keep the field and mark it deprecated, or add a new version with a conversion webhook"
	// lowered is max-decreased's message for .spec.size, 10 to 5.
	lowered = "maximum of .spec.size changed from 10 to 5: stored objects outside the new bound keep updating only while the value is unchanged (validation ratcheting); clients sending such values are rejected; loosen the bound, or tighten it only in a new version"
	failed  = "Breaking CRD changes: 1 breaking change, 0 warnings"
)

// Charts and kustomizations shaped like the ones operators ship, each changed by a pull request
// in the way issue 41 found misread: the finding (or its absence) reaches the pull request at the
// template's line through the strict fake GitHub. Each failed on the code before issue 41
// (6fc2268); what it gave there is in the commit that added it.
func TestActionRenderedDeliveries(t *testing.T) {
	tpl := charttest.TemplatePath(widgetsChart)
	chart := charttest.Chart(widgetsChart, charttest.Template, charttest.Values)
	// sizeHelper has the size schema written by a helper that include and nindent place.
	sizeHelper := strings.Replace(charttest.Template, "              size:\n                type: integer\n                maximum: {{ .Values.maxSize }}\n",
		"              size:\n                {{- include \"widgets.size\" . | nindent 16 }}\n", 1)
	helper := func(max string) string {
		return charttest.Helpers + "{{- define \"widgets.size\" -}}\ntype: integer\nmaximum: " + max + "\n{{- end }}\n"
	}
	// appDefault defaults .spec.color to the chart's appVersion.
	appDefault := strings.Replace(charttest.Template, "                type: string\n              note:", "                type: string\n                default: {{ .Chart.AppVersion | quote }}\n              note:", 1)
	// A description that opens with an action: before issue 41 the file was taken for a template
	// whose schema is templated, and skipped.
	plainBraces := charttest.Plain(`"{{ .Name }}-{{ .Namespace }} names the generated secret."`)
	noKeep := strings.Replace(charttest.Plain(`"d"`), "    helm.sh/resource-policy: keep\n", "", 1)
	sub := "charts/app/charts/widgets"
	app := merged(charttest.Chart(sub, charttest.Template, "crds:\n  enabled: false\nmaxSize: 1\ndescription: d\n"), map[string]string{
		"charts/app/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: widgets\n  version: 1.0.0\n",
		"charts/app/values.yaml": "widgets:\n  maxSize: 10\n  crds:\n    enabled: true\n",
	})
	off := strings.Replace(charttest.Values, "enabled: true", "enabled: false", 1)
	sets := ".crdguard.yaml"
	setsConfig := "helm:\n- chart: charts/widgets\n  sets:\n    crds-on:\n      set: {crds.enabled: true}\n"
	for _, tc := range []deliveryCase{
		{name: "both sides templated, a field removed (include/nindent labels, .Release, tpl)", base: chart,
			head: map[string]string{tpl: charttest.WithoutColor(charttest.Template)},
			code: ExitFindings, comments: []string{tpl + ":31:LEFT:field-removed"}, conclusion: "failure", title: failed,
			annotations: []string{tpl + ":31:failure:field-removed: widgets.example.com v1 .spec.color: " + removedColor + " (removed; was line 31)"}},
		// A required value the pull request adds: an error at the template naming the value.
		{name: "chart that does not render", base: chart,
			head: map[string]string{tpl: strings.Replace(charttest.Template, "{{ .Values.maxSize }}", `{{ required "set maxLimit" .Values.maxLimit }}`, 1)},
			code: ExitFindings, comments: []string{tpl + ":30:RIGHT:chart-not-rendered"}, conclusion: "failure", title: failed, annotations: []string{tpl + ":30:failure:chart-not-rendered: " +
				"chart charts/widgets does not render with its values.yaml: execution error at (widgets/templates/crds/widgets.yaml:30:28): set maxLimit; give it maxLimit in .crdguard.yaml (helm: - chart: charts/widgets, set: {maxLimit: …}, or a values file under values:)"}},
		{name: "templated in head only", base: merged(chart, map[string]string{tpl: charttest.Plain(`"A widget of release-name."`)}),
			head: map[string]string{tpl: strings.Replace(charttest.Template, "{{ .Values.maxSize }}", "{{ sub .Values.maxSize 5 }}", 1)},
			code: ExitFindings, comments: []string{tpl + ":30:RIGHT:max-decreased"}, conclusion: "failure", title: failed,
			annotations: []string{tpl + ":30:failure:max-decreased: widgets.example.com v1 .spec.size: " + lowered}},
		{name: "values-only change", base: chart,
			head: map[string]string{widgetsChart + "/values.yaml": strings.Replace(charttest.Values, "maxSize: 10", "maxSize: 5", 1)},
			// The template's line is not in the diff: the finding is in the review's body.
			code: ExitFindings, conclusion: "failure", title: failed, annotations: []string{tpl + ":30:failure:max-decreased: widgets.example.com v1 .spec.size: " + lowered}},
		{name: "include/nindent helper", base: merged(chart, map[string]string{tpl: sizeHelper, widgetsChart + "/templates/_helpers.tpl": helper("10")}),
			head: map[string]string{widgetsChart + "/templates/_helpers.tpl": helper("5")},
			// At the line that includes the helper.
			code: ExitFindings, conclusion: "failure", title: failed, annotations: []string{tpl + ":29:failure:max-decreased: widgets.example.com v1 .spec.size: " + lowered}},
		{name: ".Chart appVersion as a default", base: merged(chart, map[string]string{tpl: appDefault}),
			head: map[string]string{widgetsChart + "/Chart.yaml": strings.Replace(charttest.ChartYAML, `"1.0"`, `"1.1"`, 1)},
			code: ExitFindings, conclusion: "failure", title: failed, annotations: []string{tpl + ":33:failure:default-changed: widgets.example.com v1 .spec.color: " +
				`default of .spec.color changed from "1.0" to "1.1": stored objects that omitted the field now read back with the new value; keep the old default, or set the old value explicitly in existing objects first`}},
		{name: "sub-chart in charts/", base: app, head: map[string]string{charttest.TemplatePath(sub): charttest.WithoutColor(charttest.Template)},
			code: ExitFindings, comments: []string{charttest.TemplatePath(sub) + ":31:LEFT:field-removed"}, conclusion: "failure", title: failed,
			annotations: []string{charttest.TemplatePath(sub) + ":31:failure:field-removed: widgets.example.com v1 .spec.color: " + removedColor + " (removed; was line 31)"}},
		{name: "named value set", base: merged(charttest.Chart(widgetsChart, charttest.Template, off), map[string]string{sets: setsConfig}),
			head: map[string]string{tpl: charttest.WithoutColor(charttest.Template)},
			code: ExitFindings, comments: []string{tpl + ":31:LEFT:field-removed"}, conclusion: "failure", title: failed,
			annotations: []string{tpl + ":31:failure:field-removed: widgets.example.com v1 .spec.color: with value set \"crds-on\": " + removedColor + " (removed; was line 31)"}},
		{name: "symlinked templates/", base: map[string]string{widgetsChart + "/Chart.yaml": charttest.ChartYAML, widgetsChart + "/crds/widgets.yaml": noKeep},
			head: map[string]string{widgetsChart + "/crds/widgets.yaml": "", "config/crd/widgets.yaml": noKeep, widgetsChart + "/templates": linkTo + "../../config/crd"},
			// Located where Helm reads the CRD, behind the link.
			code: ExitOK, conclusion: "neutral", title: "CRD changes to review: 0 breaking changes, 2 warnings", annotations: []string{
				widgetsChart + "/templates/widgets.yaml:4:warning:helm-crd-moved-to-templates: widgets.example.com: CRD widgets.example.com moved from charts/widgets/crds to charts/widgets/templates: " +
					`helm upgrade of every release installed before fails with 'CustomResourceDefinition "widgets.example.com" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata': ` +
					"tell users to add Helm's ownership metadata to the installed CRD before upgrading (label app.kubernetes.io/managed-by: Helm and annotations meta.helm.sh/release-name: RELEASE and meta.helm.sh/release-namespace: NAMESPACE)",
				widgetsChart + "/templates/widgets.yaml:4:warning:helm-keep-missing: widgets.example.com: CRD widgets.example.com is new in charts/widgets/templates without helm.sh/resource-policy: keep: " +
					"helm uninstall would delete it and every object of it: add the annotation helm.sh/resource-policy: keep to templated CRDs"}},
		{name: "{{ }} in a plain description", base: map[string]string{"config/crd/widgets.yaml": plainBraces},
			head: map[string]string{"config/crd/widgets.yaml": charttest.WithoutColor(plainBraces)},
			code: ExitFindings, comments: []string{"config/crd/widgets.yaml:30:LEFT:field-removed"}, conclusion: "failure", title: failed,
			annotations: []string{"config/crd/widgets.yaml:30:failure:field-removed: widgets.example.com v1 .spec.color: " + removedColor + " (removed; was line 30)"}},
		{name: "renamed file listed under its new name",
			base: map[string]string{"config/crd/kustomization.yaml": "resources:\n- widgets.yaml\n", "config/crd/widgets.yaml": charttest.Plain(`"d"`)},
			head: map[string]string{"config/crd/kustomization.yaml": "resources:\n- example.com_widgets.yaml\n", "config/crd/widgets.yaml": "", "config/crd/example.com_widgets.yaml": charttest.Plain(`"d"`)},
			code: ExitOK, conclusion: "success", title: "No breaking CRD changes (1 CRD compared)"},
		// Twin: a kustomization that lists the old name after the rename fails to build.
		{name: "renamed file, the kustomization not updated",
			base: map[string]string{"config/crd/kustomization.yaml": "resources:\n- widgets.yaml\n", "config/crd/widgets.yaml": charttest.Plain(`"d"`)},
			head: map[string]string{"config/crd/widgets.yaml": "", "config/crd/example.com_widgets.yaml": charttest.Plain(`"d"`)},
			code: ExitFindings, conclusion: "failure", title: failed, annotations: []string{"config/crd/kustomization.yaml:2:failure:kustomization-not-built: " +
				"kustomize cannot build this kustomization, so what kubectl apply -k installs from it is not known: accumulating resources: accumulation err='accumulating resources from 'widgets.yaml': " +
				"'/config/crd/widgets.yaml' doesn't exist': must build at directory: not a valid directory: '/config/crd/widgets.yaml' doesn't exist; fix it so that kustomize build accepts it, or leave it out with exclude in .crdguard.yaml"}},
		// Twin: a chart that shipped the CRD in crds/ before is upgraded, which Helm never does.
		{name: "chart upgraded, its crds/ changed", base: map[string]string{widgetsChart + "/Chart.yaml": charttest.ChartYAML, widgetsChart + "/crds/widgets.yaml": charttest.Plain(`"d"`)},
			head: map[string]string{widgetsChart + "/crds/widgets.yaml": charttest.Plain(`"e"`)},
			// Line 4 is not in the diff: a comment on the file.
			code: ExitOK, comments: []string{widgetsChart + "/crds/widgets.yaml:0::helm-crd-not-upgraded"}, conclusion: "neutral", title: "CRD changes to review: 0 breaking changes, 1 warning",
			annotations: []string{widgetsChart + "/crds/widgets.yaml:4:warning:helm-crd-not-upgraded: widgets.example.com: CRD widgets.example.com changed or new in charts/widgets/crds: " +
				"helm upgrade never applies a chart's crds/ folder, so existing releases keep the old definitions; users must run kubectl apply --server-side -f charts/widgets/crds/ before helm upgrade: " +
				"document the step for users, or move the CRDs to templates/ with helm.sh/resource-policy: keep, or to a CRD sub-chart that is upgraded"}},
		{name: "chart new in the pull request", base: map[string]string{},
			head: map[string]string{widgetsChart + "/Chart.yaml": charttest.ChartYAML, widgetsChart + "/crds/widgets.yaml": charttest.Plain(`"d"`)},
			code: ExitOK, conclusion: "success", title: "No breaking CRD changes (1 CRD compared)"},
	} {
		t.Run(tc.name, tc.check)
	}
}

// CRD files that leave the repository for a remote resource the kustomization now lists: one
// crd-left-repository warning at the remote entry, never crd-removed (the kustomization still
// installs the CRD), and the check run asks for review without failing. Twin: the kustomization lists nothing
// instead, and the removal fails.
func TestActionRemoteKustomizeResource(t *testing.T) {
	const k = "config/crd/kustomization.yaml"
	base := map[string]string{k: "resources:\n- widgets.yaml\n", "config/crd/widgets.yaml": readFile(t, "../../testdata/action/pr/base.yaml")}
	gone := func(kustomization string) map[string]string {
		return map[string]string{k: kustomization, "config/crd/widgets.yaml": ""}
	}
	for _, tc := range []deliveryCase{
		{name: "a remote instead", base: base, head: gone("resources:\n- https://github.com/example/widgets/config/crd?ref=v2.0.0\n"), code: ExitOK,
			comments: []string{k + ":2:RIGHT:crd-left-repository"}, conclusion: "neutral", title: "CRD changes to review: 0 breaking changes, 1 warning", annotations: []string{k + ":2:warning:crd-left-repository: widgets.example.com: " +
				"CRD widgets.example.com left the repository (config/crd/widgets.yaml in base) for the remote resource https://github.com/example/widgets/config/crd?ref=v2.0.0 (config/crd/kustomization.yaml:2), which crdguard does not fetch: " +
				"the CRD stays installed, but what this change does to it is not checked; run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand"}},
		{name: "nothing instead", base: base, head: gone("resources: []\n"), code: ExitFindings,
			comments: []string{"config/crd/widgets.yaml:4:LEFT:crd-removed"}, conclusion: "failure", title: failed, annotations: []string{"config/crd/widgets.yaml:4:failure:crd-removed: widgets.example.com: " +
				"CRD widgets.example.com was removed: deleting a CRD from a cluster deletes every object of it; keep the CRD, or make sure its removal is intended and documented (line 4 of the base version)"}},
	} {
		t.Run(tc.name, tc.check)
	}
}
