package check

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/source"
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

// Issue 43, item 4: a base file that does not parse, fixed by the change, is compared through its
// last version that parsed (what clusters can run), so a field the same change removes is
// reported; a notice names the commit. Twin: a file that never parsed stays compared with
// nothing, as if new, with today's notice.
func TestGitBrokenBaseThroughLastParsed(t *testing.T) {
	old, new := caseFile(t, "field-removed/leaf/old.yaml"), caseFile(t, "field-removed/leaf/new.yaml")
	for _, tc := range []struct {
		name      string
		parsedOne bool
		want      string
	}{
		{"an earlier version parsed", true, "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n"},
		{"no version ever parsed", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("README.md", []byte("x\n"))
			var good string
			if tc.parsedOne {
				tr.Write("config/crd/widgets.yaml", old)
				good = tr.Commit("widgets").String()[:12]
			}
			tr.Write("config/crd/widgets.yaml", append([]byte("<<<<<<< HEAD\n"), old...))
			base := tr.Commit("a conflict marker")
			tr.Branch("main", base)
			tr.Write("config/crd/widgets.yaml", new)
			tr.Commit("fixed, and a field removed")
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			why := "line 2: YAML does not parse: line 2: mapping values are not allowed in this context"
			notice := "config/crd/widgets.yaml did not parse in base and is fixed in head: its CRDs are compared with nothing, as if new; review them by hand against what clusters run (" + why + ")"
			if tc.parsedOne {
				notice = "base: config/crd/widgets.yaml does not parse at " + base.String()[:12] + " (" + why + "): its CRDs are compared through its last version that parsed, at " + good + ", which is what clusters can run; base lines are that version's"
			}
			if got, want := fmt.Sprintf("%q", res.Notices), fmt.Sprintf("%q", []string{notice}); got != want {
				t.Errorf("notices\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// A base file over the size limit is unknown, not broken: no earlier version that was under the
// limit stands in for it (clusters may run the large one), and what the change does to its CRDs
// cannot be told, so the base's invalid-crd error says so, whether head shrinks the file or
// deletes it. When head is over the limit too, head's invalid-crd says it and base's is a
// notice, also when the two differ only past the limit (once dropped as unchanged: a pass).
// Twin: a base file that does not parse is still compared through its last version that parsed
// (TestGitBrokenBaseThroughLastParsed).
func TestGitBaseOverSizeLimit(t *testing.T) {
	old, new := caseFile(t, "field-removed/leaf/old.yaml"), caseFile(t, "field-removed/leaf/new.yaml")
	large := func(crd []byte) []byte { // a CRD padded with a comment to just over the limit
		return append(append(slices.Clip(crd), "# "...), append(bytes.Repeat([]byte("x"), source.MaxFileSize), '\n')...)
	}
	limit := fmt.Sprintf("file is larger than the %d MiB limit and was not read", source.MaxFileSize>>20)
	for _, tc := range []struct {
		name    string
		head    []byte
		want    string
		notices []string
	}{
		{"shrunk in head", new, "invalid-crd widgets.example.com   config/crd/widgets.yaml:1 base\n", nil},
		{"deleted in head", nil, "invalid-crd    config/crd/widgets.yaml:1 base\n", nil},
		{"over the limit in head too", large(new), "invalid-crd    config/crd/widgets.yaml:1 head\n", []string{"base: config/crd/widgets.yaml:1: " + limit}},
		// Both sides were read only as far as the limit, where they are the same: still a change.
		{"changed past the limit", append(large(old), "# more\n"...), "invalid-crd    config/crd/widgets.yaml:1 head\n", []string{"base: config/crd/widgets.yaml:1: " + limit}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("README.md", []byte("x\n"))
			tr.Write("config/crd/widgets.yaml", old)
			tr.Commit("widgets, under the limit")
			tr.Write("config/crd/widgets.yaml", large(old))
			tr.Branch("main", tr.Commit("widgets, over the limit"))
			if tc.head == nil {
				tr.Remove("config/crd/widgets.yaml")
			} else {
				tr.Write("config/crd/widgets.yaml", tc.head)
			}
			tr.Commit("head")
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			if got, want := fmt.Sprintf("%q", res.Notices), fmt.Sprintf("%q", tc.notices); got != want {
				t.Errorf("notices\n%s\nwant\n%s", got, want)
			}
			for _, f := range res.Findings {
				if f.Rule == "invalid-crd" && !strings.HasPrefix(f.Message, limit+": ") {
					t.Errorf("invalid-crd does not say the file is over the limit: %q", f.Message)
				}
			}
		})
	}
}
