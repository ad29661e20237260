package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// The endings of the two invalid-crd messages: a side that cannot be read, and a head that the
// API server would refuse.
const (
	baseUnread = ": crdguard cannot read the base version of CRD widgets.example.com, so it cannot tell what this change does to it; make the file readable, or review the change by hand and acknowledge it"
	headUnread = ": crdguard cannot read the new version of CRD widgets.example.com, so it cannot tell what this change does to it; make the file readable, or review the change by hand and acknowledge it"
	refused    = ": the API server would refuse it; fix the document"
)

// brokenForms are the ways a CRD file the user names can be unreadable, each with the line and
// the problem crdguard must report. They are made from testdata/rules/field-removed/leaf/old.yaml.
var brokenForms = []struct {
	name    string
	broken  func(text string) string
	line    int
	problem string
}{
	{"YAML that does not parse", replace("  group: example.com\n", "  group: [example.com\n"), 6,
		"YAML does not parse: line 6: did not find expected ',' or ']'"},
	{"a document that does not decode", replace("served: true", "served: maybe"), 19,
		`not a valid apiextensions.k8s.io/v1 CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool`},
	{"a merge key on a scalar", replace("  scope: Namespaced\n", "  scope: Namespaced\n  <<: 5\n"), 17,
		"map merge requires a mapping or a list of mappings after <<"},
	{"a templated schema", replace("              size:\n", "{{- if .Values.size }}\n              size:\n{{- end }}\n"), 30,
		"YAML does not parse: line 30: could not find expected ':'"},
	{"a binary file", func(string) string { return "apiVersion: apiextensions.k8s.io/v1\x00kind: CustomResourceDefinition\n" }, 1,
		"binary file, not YAML or JSON"},
	{"a file that is not YAML at all", func(string) string { return "hello: [\nthis is: not YAML\n" }, 3,
		"YAML does not parse: line 3: did not find expected ',' or ']'"},
	{"a duplicate top-level key", replace("  scope: Namespaced\n", "  scope: Namespaced\n  scope: Cluster\n"), 17,
		`duplicate key "scope" in one mapping, first at line 16 (kubectl apply: key "scope" already set in map)`},
	{"a duplicate metadata.name", replace("  name: widgets.example.com\n", "  name: widgets.example.com\n  name: gadgets.example.com\n"), 5,
		`duplicate key "name" in one mapping, first at line 4 (kubectl apply: key "name" already set in map)`},
	{"a duplicate key in a version", replace("    served: true\n", "    served: true\n    served: false\n"), 20,
		`duplicate key "served" in one mapping, first at line 19 (kubectl apply: key "served" already set in map)`},
	{"a duplicate key deep in the schema", replace("                type: integer\n", "                type: integer\n                type: string\n"), 32,
		`duplicate key "type" in one mapping, first at line 31 (kubectl apply: key "type" already set in map)`},
	{"a duplicate key in a flow mapping", replace("      status: {}\n", "      status: {}\n      scale: {specReplicasPath: .spec.size, specReplicasPath: .spec.n, statusReplicasPath: .status.n}\n"), 23,
		`duplicate key "specReplicasPath" in one mapping, first at line 23 (kubectl apply: key "specReplicasPath" already set in map)`},
}

// outsideChart is the chart-not-rendered message of a template outside any chart.
func outsideChart(problem string) string {
	return "a template (Helm {{ }} or envsubst ${VAR}) outside any Helm chart, which does not read as YAML without rendering (" + problem + "): its CRDs are not compared; crdguard renders charts only (a folder with a Chart.yaml): compare what it renders instead (helm template or envsubst first, or crdguard diff on the chart folders), or leave the file out with paths or exclude in .crdguard.yaml"
}

func replace(old, new string) func(string) string {
	return func(text string) string {
		if !strings.Contains(text, old) {
			panic("no " + old)
		}
		return strings.Replace(text, old, new, 1)
	}
}

// TestUnreadableNeverPasses: whatever makes a CRD file named on the command line unreadable, on
// either side, with the other side readable, `diff` exits 1 with exactly one invalid-crd error
// at that file and line, naming the problem; the other side's CRD is never taken for added or
// removed, and --fail-on never does not turn it into a tool failure or hide it.
func TestUnreadableNeverPasses(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(plain)
	for _, tc := range brokenForms {
		for _, brokenSide := range []string{"base", "head"} {
			t.Run(tc.name+" in "+brokenSide, func(t *testing.T) {
				oldText, newText := tc.broken(text), text
				want := "error invalid-crd widgets.example.com old.yaml:" + strconv.Itoa(tc.line) + " base: " + tc.problem + baseUnread
				if brokenSide == "head" {
					oldText, newText = text, tc.broken(text)
					want = "error invalid-crd widgets.example.com new.yaml:" + strconv.Itoa(tc.line) + " head: " + tc.problem + refused
				}
				if tc.name == "a templated schema" { // a template outside any chart: not rendered
					want = "error chart-not-rendered widgets.example.com " + map[string]string{"base": "old.yaml", "head": "new.yaml"}[brokenSide] + ":30 " + brokenSide + ": " + outsideChart(tc.problem)
				}
				oldFile, newFile := writePair(t, oldText, newText)
				code, stdout, stderr := runCLI(t, "diff", "--format", "json", oldFile, newFile)
				if code != 1 || stderr != "" {
					t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
				}
				if got := strings.Join(findingLines(t, stdout), "\n"); got != want {
					t.Fatalf("findings\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
}

// writePair writes old.yaml and new.yaml to a new folder.
func writePair(t *testing.T, oldText, newText string) (oldFile, newFile string) {
	t.Helper()
	dir := t.TempDir()
	oldFile, newFile = filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
	for f, data := range map[string]string{oldFile: oldText, newFile: newText} {
		if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return oldFile, newFile
}

// findingLines renders a JSON report's findings as
// "severity rule crd file:line side: message", file names without their folder.
func findingLines(t *testing.T, stdout string) []string {
	t.Helper()
	var doc struct {
		Findings []struct {
			Rule, Severity, CRD, Message string
			Location                     struct {
				File string
				Line int
				Side string
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var out []string
	for _, f := range doc.Findings {
		out = append(out, f.Severity+" "+f.Rule+" "+f.CRD+" "+filepath.Base(f.Location.File)+":"+strconv.Itoa(f.Location.Line)+" "+f.Location.Side+": "+f.Message)
	}
	return out
}

// TestBothSidesUnreadable: with both named files unreadable there is nothing crdguard could
// compare, and the run fails all the same: an error at each file, or at the head's file where
// the base's problem is crdguard's own (a templated schema is not read on either side).
func TestBothSidesUnreadable(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range brokenForms {
		t.Run(tc.name, func(t *testing.T) {
			broken := tc.broken(string(plain))
			oldFile, newFile := writePair(t, broken, broken)
			code, stdout, stderr := runCLI(t, "diff", "--format", "json", oldFile, newFile)
			if code != 1 || stderr != "" {
				t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
			}
			crd, what := "widgets.example.com", "CRD widgets.example.com"
			if tc.name == "a binary file" || tc.name == "a file that is not YAML at all" {
				crd, what = "", "the CRDs in this file" // no name can be read
			}
			line := strconv.Itoa(tc.line)
			want := []string{
				"error invalid-crd " + crd + " new.yaml:" + line + " head: " + tc.problem + refused,
				"error invalid-crd " + crd + " old.yaml:" + line + " base: " + tc.problem + strings.Replace(baseUnread, "CRD widgets.example.com", what, 1),
			}
			if tc.name == "a templated schema" {
				want = []string{"error chart-not-rendered widgets.example.com new.yaml:30 head: " + outsideChart(tc.problem),
					"error chart-not-rendered widgets.example.com old.yaml:30 base: " + outsideChart(tc.problem)}
			}
			if got := findingLines(t, stdout); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestNothingToCompare: named inputs of which neither holds a CRD are a usage error (exit 2),
// whatever --fail-on says; a big file that does not look like a CRD is a notice on its own, and
// an invalid-crd error when the other side's CRD would otherwise look removed.
func TestNothingToCompare(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crdFile := write("crd.yaml", string(plain))
	other := write("other.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
	big := write("big.yaml", "# "+strings.Repeat("x", 16<<20)+"\n")
	emptyA, emptyB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write("a/README.md", "no manifests\n")
	write("b/values.yaml", "replicas: 1\n")
	for _, tc := range []struct {
		name             string
		args             []string
		code             int
		stderr, findings string
	}{
		{"two files without a CRD", []string{other, other}, 2,
			"crdguard diff: nothing to compare: neither " + other + " nor " + other + " holds a CustomResourceDefinition; name the files or folders that hold your CRDs\n", ""},
		{"not even with --fail-on never", []string{"--fail-on", "never", other, other}, 2,
			"crdguard diff: nothing to compare: neither " + other + " nor " + other + " holds a CustomResourceDefinition; name the files or folders that hold your CRDs\n", ""},
		{"two folders without a CRD", []string{emptyA, emptyB}, 2,
			"crdguard diff: nothing to compare: neither " + emptyA + " nor " + emptyB + " holds a CustomResourceDefinition; name the files or folders that hold your CRDs\n", ""},
		{"a big file that is no CRD", []string{other, big}, 2,
			"crdguard diff: nothing to compare: neither " + other + " nor " + big + " holds a CustomResourceDefinition (" + big + ": skipped, larger than 16 MiB and not like a CRD in its first MiB); name the files or folders that hold your CRDs\n", ""},
		{"a big file in place of a CRD", []string{crdFile, big}, 1, "",
			"error invalid-crd widgets.example.com big.yaml:1 head: file is larger than the 16 MiB limit and was not read" + headUnread},
		{"a file without a CRD in place of one", []string{crdFile, other}, 1, "",
			"error crd-removed widgets.example.com crd.yaml:4 base: CRD widgets.example.com was removed: deleting a CRD from a cluster deletes every object of it; keep the CRD, or make sure its removal is intended and documented"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"diff", "--format", "json"}, tc.args...)...)
			if code != tc.code || stderr != tc.stderr {
				t.Fatalf("exit %d, want %d\nstderr %q\nwant   %q", code, tc.code, stderr, tc.stderr)
			}
			if code == 2 {
				if stdout != "" {
					t.Fatalf("stdout %q", stdout)
				}
				return
			}
			if got := strings.Join(findingLines(t, stdout), "\n"); got != tc.findings {
				t.Fatalf("findings\n%s\nwant\n%s", got, tc.findings)
			}
		})
	}
}

// TestPathsThatReadNothing: a paths glob that matches no file in either commit, or globs that
// match only files without a CRD, are configuration errors (exit 2) naming the glob and the
// folder that holds the CRDs, and neither --fail-on never nor mode: warn turns them into a pass.
func TestPathsThatReadNothing(t *testing.T) {
	repo := gittest.New(t)
	repo.Copy("config/crd/widgets.yaml", "../../testdata/rules/field-removed/leaf/old.yaml")
	repo.Write("deploy/app.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"))
	stub := []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")
	repo.Write("vendor/k8s.io/crd.yaml", stub)
	repo.Write("hack/e2e/crd.yaml", stub)
	// A CRD whose kind is written with a JSON escape is a CRD; escapes alone are not.
	repo.Write("zzz-escaped-kind/widgets.json", []byte(`{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResource\u0044efinition",
 "metadata": {"name": "escaped.example.com"},
 "spec": {"group": "example.com", "names": {"kind": "Escaped", "plural": "escaped"}, "scope": "Namespaced",
          "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}`))
	repo.Write("zzz-escapes-only/app.json", []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "\u0041"}}`))
	repo.Branch("main", repo.Commit("base"))
	repo.Write("deploy/app.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app2\n"))
	repo.Commit("head")
	const typo = `crdguard check: config: paths: "config/crds/**" matches no YAML or JSON file in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)` + "\n"
	for _, tc := range []struct {
		name, config string
		flags        []string
		code         int
		stderr       string
	}{
		{"a typo", "paths: [config/crds/**]\n", nil, 2, typo},
		{"a typo with --fail-on never", "paths: [config/crds/**]\n", []string{"--fail-on", "never"}, 2, typo},
		{"a typo in warn mode", "mode: warn\npaths: [config/crds/**]\n", nil, 2, typo},
		{"a typo next to a good glob", "paths: [config/crd/**, config/crds/**]\n", nil, 2, typo},
		{"a file named wrong", "paths: [config/crd/widget.yaml]\n", nil, 2,
			`crdguard check: config: paths: "config/crd/widget.yaml" matches no YAML or JSON file in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)` + "\n"},
		{"only excluded files", "paths: [vendor/k8s.io/**]\n", nil, 2,
			`crdguard check: config: paths: "vendor/k8s.io/**" matches only excluded files (exclude: ["**/vendor/**"]) in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)` + "\n"},
		{"only files in test folders", "paths: [hack/**/crd.yaml]\n", nil, 2,
			`crdguard check: config: paths: "hack/**/crd.yaml" matches only files in test or fixture folders, which are read only where paths names the folder, in head or in base, so no CRD is ever read from it; did you mean "config/crd/**"? (config/crd holds CRDs)` + "\n"},
		{"a test folder named", "paths: [hack/e2e/**]\n", nil, 0, ""},
		{"files without a CRD", "paths: [deploy/**]\n", nil, 2,
			`crdguard check: config: paths: ["deploy/**"] match YAML or JSON files in head or base, but none of them holds a CustomResourceDefinition, so every run would compare nothing; did you mean "config/crd/**"? (config/crd holds CRDs)` + "\n"},
		{"the right folder, no CRD changed", "paths: [config/crd/**]\n", nil, 0, ""},
		{"a CRD with an escaped kind", "paths: [zzz-escaped-kind/**]\n", nil, 0, ""},
		{"escapes without a CRD", "paths: [zzz-escapes-only/**]\n", nil, 2,
			`crdguard check: config: paths: ["zzz-escapes-only/**"] match YAML or JSON files in head or base, but none of them holds a CustomResourceDefinition, so every run would compare nothing; did you mean "zzz-escaped-kind/**"? (zzz-escaped-kind holds CRDs)` + "\n"},
		{"a typo in --paths", "paths: [config/crd/**]\n", []string{"--paths", "config/crds/**"}, 2, typo},
		{"--paths over a typo", "paths: [config/crds/**]\n", []string{"--paths", "deploy/**,config/crd/**"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "crdguard.yaml")
			if err := os.WriteFile(config, []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"check", "--repo", repo.Dir, "--base", "main", "--head", "HEAD", "--config", config}, tc.flags...)
			code, stdout, stderr := runCLI(t, args...)
			if code != tc.code || stderr != tc.stderr {
				t.Fatalf("exit %d, want %d\nstderr %q\nwant   %q\n%s", code, tc.code, stderr, tc.stderr, stdout)
			}
		})
	}
}

// TestReadingFailureIsNotARule: a CRD input crdguard could not read fails the run whatever the
// configuration says of rules — invalid-crd off or lowered, warn mode, ratcheting — with the same
// error as without it; a file that paths excludes is never read, so it says nothing.
func TestReadingFailureIsNotARule(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(plain)
	broken := brokenForms[0] // YAML that does not parse
	for _, config := range []string{
		"rules:\n  invalid-crd: off\n",
		"rules:\n  invalid-crd: info\n",
		"mode: warn\n",
		"ratcheting: true\nfailMode: open\nrules:\n  invalid-crd: warning\n",
	} {
		for _, brokenSide := range []string{"base", "head"} {
			t.Run(strings.ReplaceAll(config, "\n", " ")+brokenSide, func(t *testing.T) {
				oldText, newText := broken.broken(text), text
				want := "error invalid-crd widgets.example.com old.yaml:6 base: " + broken.problem + baseUnread
				if brokenSide == "head" {
					oldText, newText = text, broken.broken(text)
					want = "error invalid-crd widgets.example.com new.yaml:6 head: " + broken.problem + refused
				}
				oldFile, newFile := writePair(t, oldText, newText)
				cfg := filepath.Join(filepath.Dir(oldFile), "crdguard.yaml")
				if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
					t.Fatal(err)
				}
				code, stdout, stderr := runCLI(t, "diff", "--config", cfg, "--format", "json", oldFile, newFile)
				if code != 1 || stderr != "" {
					t.Fatalf("exit %d, want 1\n%s%s", code, stdout, stderr)
				}
				if got := strings.Join(findingLines(t, stdout), "\n"); got != want {
					t.Fatalf("findings\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
	// The tightening twin: a file outside paths is never read, so its state says nothing.
	repo := gittest.New(t)
	repo.Write("config/crd/widgets.yaml", plain)
	repo.Write("deploy/crds/widgets.yaml", plain)
	repo.Branch("main", repo.Commit("base"))
	repo.Write("deploy/crds/widgets.yaml", []byte(broken.broken(text)))
	repo.Commit("head")
	cfg := filepath.Join(t.TempDir(), "crdguard.yaml")
	if err := os.WriteFile(cfg, []byte("paths: [config/crd/**]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "check", "--repo", repo.Dir, "--base", "main", "--head", "HEAD", "--config", cfg, "--format", "json")
	if got := findingLines(t, stdout); code != 0 || stderr != "" || len(got) != 0 {
		t.Fatalf("exit %d, findings %q\n%s", code, got, stderr)
	}
}

// TestDiffSARIFPaths: `diff --format sarif` names files given by absolute paths outside the
// working directory with absolute file:// URIs (no uriBaseId: SARIF1004), and files given
// relative to it relative to %SRCROOT%.
func TestDiffSARIFPaths(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	newText, err := os.ReadFile("../../testdata/rules/field-removed/leaf/new.yaml")
	if err != nil {
		t.Fatal(err)
	}
	oldFile, newFile := writePair(t, string(plain), string(newText))
	uris := func(args ...string) []string {
		t.Helper()
		code, stdout, stderr := runCLI(t, append([]string{"diff", "--format", "sarif"}, args...)...)
		if code != 1 || stderr != "" {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		var log struct {
			Runs []struct {
				Results []struct {
					Locations []struct {
						PhysicalLocation struct {
							ArtifactLocation struct {
								URI       string `json:"uri"`
								URIBaseID string `json:"uriBaseId"`
							} `json:"artifactLocation"`
						} `json:"physicalLocation"`
					} `json:"locations"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(stdout), &log); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range log.Runs[0].Results {
			a := r.Locations[0].PhysicalLocation.ArtifactLocation
			out = append(out, a.URIBaseID+" "+a.URI)
		}
		return out
	}
	if got, want := uris(oldFile, newFile), " file://"+filepath.ToSlash(oldFile); len(got) != 1 || got[0] != want {
		t.Fatalf("absolute paths: %q, want [%q]", got, want)
	}
	t.Chdir(filepath.Dir(oldFile))
	if got, want := uris("old.yaml", "new.yaml"), "%SRCROOT% old.yaml"; len(got) != 1 || got[0] != want {
		t.Fatalf("relative paths: %q, want [%q]", got, want)
	}
}

// TestFoldersBrokenOnBothSides: a file that two compared folders both hold and that neither can
// read is the head's invalid-crd and a notice for the base, as in git mode — not "did not parse
// in base and is fixed in head", which it said before (issue 46); over the size limit the same.
func TestFoldersBrokenOnBothSides(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const verdict = "0 CRDs compared: 1 breaking change, 0 warnings\n" +
		"verdict: fail — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason\n"
	for _, tc := range []struct{ name, base, want string }{
		{"does not parse", string(plain) + "  bad: [unclosed\n",
			"widgets.example.com: 1 breaking change\n" +
				"  error   - invalid-crd   new/crds.yaml:54\n" +
				"          YAML does not parse: line 54: did not find expected ',' or ']': the API server would refuse it; fix the document\n" +
				"notice: base: old/crds.yaml:54: YAML does not parse: line 54: did not find expected ',' or ']'\n" + verdict},
		{"over the size limit", string(plain) + "# " + strings.Repeat("x", 16<<20) + "\n",
			"(unnamed document): 1 breaking change\n" +
				"  error   - invalid-crd   new/crds.yaml:1\n" +
				"          file is larger than the 16 MiB limit and was not read: the API server would refuse it; fix the document\n" +
				"notice: base: old/crds.yaml:1: file is larger than the 16 MiB limit and was not read\n" + verdict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			for name, text := range map[string]string{"old/crds.yaml": tc.base, "new/crds.yaml": tc.base + "# edited\n"} {
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runCLI(t, "diff", "old", "new")
			if code != 1 || stderr != "" || stdout != tc.want {
				t.Errorf("exit %d, stderr %q, stdout\n%s\nwant\n%s", code, stderr, stdout, tc.want)
			}
		})
	}
}
