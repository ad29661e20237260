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
// glob that matches nothing in either commit is a configuration error, and one that matches
// only in base (the change removes its folder) a notice.
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
		err                string
	}{
		{"default", "", shipped + removed, []string{leftOut}, ""},
		{"exclude replaced", "exclude: []\n", shipped + removed + celTests + fixtures + testdata + e2e, nil, ""},
		{"exclude of one's own", "exclude: [hack/**]\n", shipped + removed + fixtures + testdata + e2e, nil, ""},
		{"paths typo", "paths: [config/crds/**, config/crd/**]\n", "", nil,
			`config: paths: "config/crds/**" matches no YAML or JSON file in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)`},
		{"paths not naming testdata", "paths: [pkg/**/crd.yaml]\n", "", nil,
			`config: paths: "pkg/**/crd.yaml" matches only files in test or fixture folders, which are read only where paths names the folder, in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)`},
		{"paths excluded", "paths: [hack/**]\nexclude: [hack/**]\n", "", nil,
			`config: paths: "hack/**" matches only excluded files (exclude: ["hack/**"]) in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)`},
		{"a folder the change removes", "paths: [config/crd/**, old/**]\n", scoped("config/crd/bases/fixtures.yaml", "basefixtures") + scoped("config/crd/latest-tests.yaml", "latest") + removed + "crd-removed olds.example.com   old/crd.yaml:4 base\n",
			[]string{source.UnmatchedNotice("old/**", "head")}, ""},
		{"paths naming testdata", "paths: [pkg/**/testdata/**]\n", testdata, nil, ""},
		{"paths naming one test folder", "paths: [config/**, charts/**, pkg/**/testdata/*.yaml]\n", shipped + removed + testdata, nil, ""},
		{"paths naming every test folder", "paths: [\"**/crds/**\", test/e2e/**, hack/cel-tests/**, \"**/fixtures/**\", \"**/testdata/**\"]\n", scoped("charts/test-operator/crds/crd.yaml", "charts") + celTests + fixtures + testdata + e2e, nil, ""},
		{"paths everywhere", "paths: [\"**\"]\n", shipped + removed, []string{leftOut}, ""},
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
			if tc.name == "a folder the change removes" {
				tr.Write("old/crd.yaml", stubCRD("olds"))
			}
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
			for p, data := range files {
				tr.Write(p, bytes.Replace(data, []byte("scope: Namespaced"), []byte("scope: Cluster"), 1))
			}
			if tc.name == "a folder the change removes" {
				tr.Remove("old/crd.yaml")
			}
			tr.Commit("head")
			repo, err := source.OpenRepo(tr.Dir)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Git(repo, GitOptions{Base: "main", Filter: config(tc.config)})
			if tc.err != "" || err != nil {
				if fmt.Sprint(err) != tc.err {
					t.Fatalf("error %v\nwant  %s", err, tc.err)
				}
				return
			}
			assertFindings(t, res, tc.want)
			if got, want := fmt.Sprintf("%q", res.Notices), fmt.Sprintf("%q", tc.notices); got != want {
				t.Errorf("notices\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// When every CRD of the repository lies in test folders, comparing nothing is a configuration
// error that says so, never a silent pass; a shipped CRD anywhere, paths naming the folder or an
// exclude list of one's own make it a normal run.
func TestGitAllCRDsInTestFolders(t *testing.T) {
	const testOnly = `config: all CRDs found are in test and fixture folders (hack/cel-tests/, test/), which are not compared by default; set paths to compare them, e.g. paths: ["hack/cel-tests/**"]`
	for _, tc := range []struct {
		name, config string
		shipped      bool   // a CRD in config/crd too
		change       string // the file the change edits
		err          string
	}{
		{"unrelated change", "", false, "docs/notes.yaml", testOnly},
		// A manifest that only names the kind (crdguard's own action.yml) holds no CRD.
		{"a manifest mentioning the kind", "", false, "action.yml", testOnly},
		{"test CRD changed", "", false, "test/e2e/crds/crd.yaml", testOnly},
		{"a shipped CRD as well", "", true, "docs/notes.yaml", ""},
		{"paths naming the folder", "paths: [test/e2e/**]\n", false, "docs/notes.yaml", ""},
		{"exclude of one's own", "exclude: []\n", false, "docs/notes.yaml", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := policy.Parse([]byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			tr := newTestRepo(t)
			tr.Write("README.md", []byte("x\n"))
			tr.Write("test/e2e/crds/crd.yaml", stubCRD("e2e"))
			tr.Write("hack/cel-tests/crd.yaml", stubCRD("celtests"))
			if tc.shipped {
				tr.Write("config/crd/crd.yaml", stubCRD("widgets"))
			}
			tr.Branch("main", tr.Commit("base"))
			content := []byte("notes: changed\n")
			if tc.change == "action.yml" {
				content = []byte("name: crdguard\ndescription: Checks CustomResourceDefinition upgrades\nruns:\n  using: docker\n  image: Dockerfile\n")
			}
			if tc.change == "test/e2e/crds/crd.yaml" {
				content = append([]byte("# changed\n"), stubCRD("e2e")...)
			}
			tr.Write(tc.change, content)
			tr.Commit("head")
			repo, err := source.OpenRepo(tr.Dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Git(repo, GitOptions{Base: "main", Filter: cfg.Filter()})
			if got := fmt.Sprint(err); tc.err == "" && err != nil || tc.err != "" && got != tc.err {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}
