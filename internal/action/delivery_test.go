package action

import (
	"sort"
	"strings"
	"testing"
)

// Issue 41 in the action: what a chart renders and what a kustomization installs reach the
// pull request like any CRD file — inline comments at the template's lines, the check run's
// conclusion and annotations — through the strict fake GitHub, which refuses a comment outside
// git's own diff.

// deliveryPR is a pull request whose base commit holds the files of base and whose head commit
// changes them as head says ("" deletes); the widgets CRD file of newPullRequest is removed first.
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
			if files[name] == "" {
				pr.repo.Remove(name)
				continue
			}
			pr.repo.Write(name, []byte(files[name]))
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

const (
	chartMeta = "apiVersion: v2\nname: widgets\nversion: 1.0.0\n"
	// chartCRD is a CRD template: line 17 maximum, 18 color.
	chartCRD = `{{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, maximum: {{ .Values.maxSize }}}
              color: {type: string}
{{- end }}
`
)

// A chart whose CRD template holds templated values: the removal is commented at the template's
// line and fails the check run (before issue 41 it passed green: 0 CRDs compared).
func TestActionChartTemplatedCRD(t *testing.T) {
	tpl := "charts/widgets/templates/crd.yaml"
	pr := deliveryPR(t, map[string]string{
		"charts/widgets/Chart.yaml": chartMeta, "charts/widgets/values.yaml": "crds: {enabled: true}\nmaxSize: 10\n", tpl: chartCRD,
	}, map[string]string{tpl: strings.Replace(chartCRD, "              color: {type: string}\n", "", 1)})
	code, comments, conclusion, title, annotations := pr.delivered()
	want := []string{tpl + ":22:LEFT:field-removed"}
	if code != ExitFindings || strings.Join(comments, " ") != strings.Join(want, " ") || conclusion != "failure" ||
		title != "Breaking CRD changes: 1 breaking change, 0 warnings" || strings.Join(annotations, " ") != tpl+":22:failure:field-removed: widgets.example.com v1 .spec.color: "+
		".spec.color was removed: clients that set it are rejected or silently lose it, and stored values are pruned on the next write; keep the field and mark it deprecated, or add a new version with a conversion webhook (removed; was line 22)" {
		t.Fatalf("exit %d, comments %q (want %q), check run %s %q, annotations %q", code, comments, want, conclusion, title, annotations)
	}
}

// A chart that does not render with its values (a required value the pull request adds): an
// error at the template, naming the value, and a failed check run — never "0 CRDs compared".
func TestActionChartNotRendered(t *testing.T) {
	tpl := "charts/widgets/templates/crd.yaml"
	pr := deliveryPR(t, map[string]string{
		"charts/widgets/Chart.yaml": chartMeta, "charts/widgets/values.yaml": "crds: {enabled: true}\nmaxSize: 10\n", tpl: chartCRD,
	}, map[string]string{tpl: strings.Replace(chartCRD, "{{ .Values.maxSize }}", `{{ required "set maxLimit" .Values.maxLimit }}`, 1)})
	code, comments, conclusion, title, annotations := pr.delivered()
	want := []string{tpl + ":21:RIGHT:chart-not-rendered"}
	if code != ExitFindings || strings.Join(comments, " ") != strings.Join(want, " ") || conclusion != "failure" ||
		title != "Breaking CRD changes: 1 breaking change, 0 warnings" || strings.Join(annotations, " ") != tpl+":21:failure:chart-not-rendered: "+
		"chart charts/widgets does not render with its values.yaml: execution error at (widgets/templates/crd.yaml:21:48): set maxLimit; give it maxLimit in .crdguard.yaml (helm: - chart: charts/widgets, set: {maxLimit: …}, or a values file under values:)" {
		t.Fatalf("exit %d, comments %q (want %q), check run %s %q, annotations %q", code, comments, want, conclusion, title, annotations)
	}
}

// CRD files that leave the repository for a remote resource the kustomization now lists: one
// crd-left-repository warning at the remote entry, never crd-removed (the kustomization still
// installs the CRD), and the check run asks for review without failing. Twin: the kustomization lists nothing
// instead, and the removal fails.
func TestActionRemoteKustomizeResource(t *testing.T) {
	const k = "config/crd/kustomization.yaml"
	base := map[string]string{k: "resources:\n- widgets.yaml\n", "config/crd/widgets.yaml": readFile(t, "../../testdata/action/pr/base.yaml")}
	for _, tc := range []struct {
		name, kustomization string
		code                int
		comments            []string
		conclusion, title   string
		annotations         string
	}{
		{"a remote instead", "resources:\n- https://github.com/example/widgets/config/crd?ref=v2.0.0\n", ExitOK,
			[]string{k + ":2:RIGHT:crd-left-repository"}, "neutral", "CRD changes to review: 0 breaking changes, 1 warning", k + ":2:warning:crd-left-repository: widgets.example.com: " +
				"CRD widgets.example.com left the repository (config/crd/widgets.yaml in base) for the remote resource https://github.com/example/widgets/config/crd?ref=v2.0.0 (config/crd/kustomization.yaml:2), which crdguard does not fetch: " +
				"the CRD stays installed, but what this change does to it is not checked; run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand"},
		{"nothing instead", "resources: []\n", ExitFindings,
			[]string{"config/crd/widgets.yaml:4:LEFT:crd-removed"}, "failure", "Breaking CRD changes: 1 breaking change, 0 warnings", "config/crd/widgets.yaml:4:failure:crd-removed: widgets.example.com: " +
				"CRD widgets.example.com was removed: deleting a CRD from a cluster deletes every object of it; keep the CRD, or make sure its removal is intended and documented (line 4 of the base version)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := deliveryPR(t, base, map[string]string{k: tc.kustomization, "config/crd/widgets.yaml": ""})
			code, comments, conclusion, title, annotations := pr.delivered()
			if code != tc.code || strings.Join(comments, " ") != strings.Join(tc.comments, " ") || conclusion != tc.conclusion ||
				title != tc.title || strings.Join(annotations, " ") != tc.annotations {
				t.Fatalf("exit %d, comments %q (want %q), check run %s %q, annotations %q", code, comments, tc.comments, conclusion, title, annotations)
			}
		})
	}
}
