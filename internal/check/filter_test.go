package check

import (
	"fmt"
	"testing"

	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/source"
)

// Fixtures under testdata are not read unless exclude says otherwise, and a paths glob that
// matches nothing is a notice rather than a silent pass.
func TestGitFixturesAndUnmatchedPaths(t *testing.T) {
	config := func(text string) source.Filter {
		t.Helper()
		c, err := policy.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return source.Filter{Paths: c.Paths, Exclude: c.Exclude}
	}
	const removed = "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n"
	for _, tc := range []struct {
		name, config, want, notices string
	}{
		{"default", "", removed, "[]"},
		{"exclude replaced", "exclude: []\n", removed + "crd-removed fixtures.example.com   pkg/x/testdata/crd.yaml:4 base\n", "[]"},
		{"paths typo", "paths: [config/crds/**, config/crd/**]\n", removed, "[" + source.UnmatchedNotice("config/crds/**", "head") + "]"},
		{"paths only in testdata", "paths: [pkg/**/crd.yaml]\n", "", "[" + source.UnmatchedNotice("pkg/**/crd.yaml", "head") + "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
			tr.Write("pkg/x/testdata/crd.yaml", []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: fixtures.example.com\nspec:\n  group: example.com\n  names: {kind: Fixture, plural: fixtures}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n"))
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
			tr.Remove("pkg/x/testdata/crd.yaml")
			tr.Commit("head")
			res := tr.check(GitOptions{Base: "main", Filter: config(tc.config)})
			assertFindings(t, res, tc.want)
			if got := fmt.Sprintf("%q", res.Notices); got != fmt.Sprintf("%q", splitNotices(tc.notices)) {
				t.Errorf("notices %s, want %s", got, tc.notices)
			}
		})
	}
}

func splitNotices(s string) []string {
	if s == "[]" {
		return nil
	}
	return []string{s[1 : len(s)-1]}
}
