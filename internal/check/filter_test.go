package check

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/source"
)

// stubCRD is a small definition named <plural>.example.com.
func stubCRD(plural string) []byte {
	return []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + plural + ".example.com\nspec:\n  group: example.com\n  names: {kind: Stub, plural: " + plural + "}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n")
}

// Test and fixture folders are not compared by default, with one notice; a paths glob that
// names the folder, or an exclude list of one's own, brings them back exactly as written; a
// shipped CRD in a folder or file that merely carries such a word is always compared. A paths
// glob that matches nothing is a notice rather than a silent pass.
func TestGitFixturesAndUnmatchedPaths(t *testing.T) {
	config := func(text string) source.Filter {
		t.Helper()
		c, err := policy.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return c.Filter()
	}
	const removed = "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n"
	// scoped is the finding of a stub whose scope head changes.
	scoped := func(file, plural string) string {
		return "scope-changed " + plural + ".example.com   " + file + ":8 head\n"
	}
	var (
		shipped  = scoped("charts/test-operator/crds/crd.yaml", "charts") + scoped("config/crd/bases/fixtures.yaml", "basefixtures") + scoped("config/crd/latest-tests.yaml", "latest")
		celTests = scoped("hack/cel-tests/crd.yaml", "celtests")
		fixtures = scoped("integration/fixtures/gateway.yaml", "gateways")
		testdata = scoped("pkg/x/testdata/crd.yaml", "testdata")
		e2e      = scoped("test/e2e/crds/crd.yaml", "e2e")
		tail     = ": they are inputs of tests, not what the project ships; a paths glob that names the folder, or an exclude list of your own, compares them"
		leftOut  = "4 changed files with CRDs in test and fixture folders not compared (hack/cel-tests/: 1, integration/fixtures/: 1, pkg/x/testdata/: 1, test/: 1)" + tail
	)
	for _, tc := range []struct {
		name, config, want string
		notices            []string
	}{
		{"default", "", shipped + removed, []string{leftOut}},
		{"exclude replaced", "exclude: []\n", shipped + removed + celTests + fixtures + testdata + e2e, nil},
		{"exclude of one's own", "exclude: [hack/**]\n", shipped + removed + fixtures + testdata + e2e, nil},
		{"paths typo", "paths: [config/crds/**, config/crd/**]\n", scoped("config/crd/bases/fixtures.yaml", "basefixtures") + scoped("config/crd/latest-tests.yaml", "latest") + removed,
			[]string{source.UnmatchedNotice("config/crds/**", "head")}},
		{"paths not naming testdata", "paths: [pkg/**/crd.yaml]\n", "", []string{source.UnmatchedNotice("pkg/**/crd.yaml", "head"), "1 changed file with CRDs in test and fixture folders not compared (pkg/x/testdata/: 1)" + tail}},
		{"paths naming testdata", "paths: [pkg/**/testdata/**]\n", testdata, nil},
		{"paths naming one test folder", "paths: [config/**, charts/**, pkg/**/testdata/*.yaml]\n", shipped + removed + testdata, nil},
		{"paths naming every test folder", "paths: [\"**/crds/**\", test/e2e/**, hack/cel-tests/**, \"**/fixtures/**\", \"**/testdata/**\"]\n", scoped("charts/test-operator/crds/crd.yaml", "charts") + celTests + fixtures + testdata + e2e, nil},
		{"paths everywhere", "paths: [\"**\"]\n", shipped + removed, []string{leftOut}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			files := map[string][]byte{
				"config/crd/bases/fixtures.yaml":     stubCRD("basefixtures"),
				"config/crd/latest-tests.yaml":       stubCRD("latest"),
				"charts/test-operator/crds/crd.yaml": stubCRD("charts"),
				"hack/cel-tests/crd.yaml":            stubCRD("celtests"),
				"integration/fixtures/gateway.yaml":  stubCRD("gateways"),
				"pkg/x/testdata/crd.yaml":            stubCRD("testdata"),
				"test/e2e/crds/crd.yaml":             stubCRD("e2e"),
				"test/e2e/kuttl/00-assert.yaml":      []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
			}
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
			for p, data := range files {
				tr.Write(p, data)
			}
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
			for p, data := range files {
				tr.Write(p, bytes.Replace(data, []byte("scope: Namespaced"), []byte("scope: Cluster"), 1))
			}
			tr.Commit("head")
			res := tr.check(GitOptions{Base: "main", Filter: config(tc.config)})
			assertFindings(t, res, tc.want)
			if got, want := fmt.Sprintf("%q", res.Notices), fmt.Sprintf("%q", tc.notices); got != want {
				t.Errorf("notices\n%s\nwant\n%s", got, want)
			}
		})
	}
}
