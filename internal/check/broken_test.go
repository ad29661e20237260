package check

import (
	"fmt"
	"strings"
	"testing"
)

// A file that does not parse in base is not what a change brings: deleting or fixing it is a
// notice, never a finding. A head that breaks a file is one invalid-crd, however many CRDs the
// broken text names.
func TestGitBrokenBase(t *testing.T) {
	three := string(stubCRD("alphas")) + "---\n" + string(stubCRD("betas")) + "---\n" + string(stubCRD("gammas"))
	// A merge-conflict marker in the middle of the second document.
	conflict := strings.Replace(three, "  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gammas",
		"  scope: Namespaced\n<<<<<<< HEAD\n  versions:\n=======\n  versions: []\n>>>>>>> branch\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gammas", 1)
	parseError := "line 24: YAML does not parse: line 24: could not find expected ':'"
	// The same marker in the first document: no CRD of the file decodes.
	first := "<<<<<<< HEAD\n" + three
	firstError := "line 2: YAML does not parse: line 2: mapping values are not allowed in this context"
	for _, tc := range []struct {
		name, base, head, want string
		notices                []string
	}{
		{"deleted", first, "", "", []string{"config/crd/legacy.yaml did not parse in base and is deleted, so nothing of it is compared (" + firstError + ")"}},
		{"fixed", first, three, "", []string{"config/crd/legacy.yaml did not parse in base and is fixed in head: its CRDs are compared with nothing, as if new; review them by hand against what clusters run (" + firstError + ")"}},
		// What decodes before the marker is read: leaving it is a removal.
		{"deleted after a readable document", conflict, "", "crd-removed alphas.example.com   config/crd/legacy.yaml:4 base\n", []string{"config/crd/legacy.yaml did not parse in base and is deleted, so nothing of it is compared (" + parseError + ")"}},
		{"fixed after a readable document", conflict, three, "", []string{"config/crd/legacy.yaml did not parse in base and is fixed in head: its CRDs are compared with nothing, as if new; review them by hand against what clusters run (" + parseError + ")"}},
		// Twins: the change breaks the file; the base and the head are both broken.
		{"broken by the change", three, conflict, "invalid-crd    config/crd/legacy.yaml:24 head\n", nil},
		{"broken first by the change", three, first, "invalid-crd    config/crd/legacy.yaml:2 head\n", nil},
		{"broken on both sides", conflict, conflict + "# touched\n", "invalid-crd    config/crd/legacy.yaml:24 head\n", []string{"base: config/crd/legacy.yaml:24: " + strings.TrimPrefix(parseError, "line 24: ")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
			tr.Write("config/crd/legacy.yaml", []byte(tc.base))
			tr.Branch("main", tr.Commit("base"))
			if tc.head == "" {
				tr.Remove("config/crd/legacy.yaml")
			} else {
				tr.Write("config/crd/legacy.yaml", []byte(tc.head))
			}
			tr.Commit("head")
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			if got, want := fmt.Sprintf("%q", res.Notices), fmt.Sprintf("%q", tc.notices); got != want {
				t.Errorf("notices\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// In git mode as in folders, a changed file that does not parse and does not look like a CRD is
// invalid-crd where the other commit has a CRD at its path, never crd-removed; a broken file
// elsewhere says nothing.
func TestGitBrokenAtCRDPath(t *testing.T) {
	const notYAML = "hello: [\nthis is: not YAML\n"
	for _, tc := range []struct {
		name, file, want string
	}{
		{"the CRD's file", "config/crd/widgets.yaml", "invalid-crd widgets.example.com   config/crd/widgets.yaml:3 head\n"},
		{"a values file", "charts/w/values.yaml", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
			tr.Write("charts/w/values.yaml", []byte("replicas: 1\n"))
			tr.Branch("main", tr.Commit("base"))
			tr.Write(tc.file, []byte(notYAML))
			tr.Commit("head")
			assertFindings(t, tr.check(GitOptions{Base: "main"}), tc.want)
		})
	}
}
