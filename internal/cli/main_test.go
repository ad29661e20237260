package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

const example = "../../testdata/examples/widgets/"

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	badConfig := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badConfig, []byte("failmode: open\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unknownRule := filepath.Join(dir, "rule.yaml")
	if err := os.WriteFile(unknownRule, []byte("rules:\n  no-such-rule: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	warnOnly := filepath.Join(dir, "warn.yaml")
	if err := os.WriteFile(warnOnly, []byte("mode: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rules := "../../testdata/rules/"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"breaking example", []string{"diff", example + "old.yaml", example + "new.yaml"}, 1, "field-removed .spec.legacyName", ""},
		{"flags after arguments", []string{"diff", example + "old.yaml", example + "new.yaml", "--fail-on", "never"}, 0, "5 breaking changes, 1 warning", ""},
		{"description only", []string{"diff", rules + "description-changed/basic/old.yaml", rules + "description-changed/basic/new.yaml"}, 0, "0 breaking changes, 0 warnings, 1 safe change", ""},
		{"warning does not fail by default", []string{"diff", rules + "map-type-changed/basic/old.yaml", rules + "map-type-changed/basic/new.yaml"}, 0, "map-type-changed", ""},
		{"fail on warning", []string{"diff", "--fail-on", "warning", rules + "map-type-changed/basic/old.yaml", rules + "map-type-changed/basic/new.yaml"}, 1, "map-type-changed", ""},
		{"warn mode", []string{"diff", "--config", warnOnly, example + "old.yaml", example + "new.yaml"}, 0, "0 breaking changes, 6 warnings", ""},
		{"invalid CRD is a finding", []string{"diff", rules + "invalid-crd/malformed-yaml/old.yaml", rules + "invalid-crd/malformed-yaml/new.yaml"}, 1, "invalid-crd", ""},
		{"missing file", []string{"diff", example + "old.yaml", "nope.yaml"}, 2, "", "reading nope.yaml"},
		{"one argument", []string{"diff", example + "old.yaml"}, 2, "", "want OLD and NEW, got 1"},
		{"bad flag", []string{"diff", "--colour", example + "old.yaml", example + "new.yaml"}, 2, "", "crdguard diff: unknown flag --colour (crdguard --help lists the flags)"},
		{"bad fail-on", []string{"diff", "--fail-on", "sometimes", example + "old.yaml", example + "new.yaml"}, 2, "", `--fail-on: "sometimes" is not allowed`},
		{"bad format", []string{"diff", "--format", "xml", example + "old.yaml", example + "new.yaml"}, 2, "", `unknown format "xml"`},
		{"unknown config key", []string{"diff", "--config", badConfig, example + "old.yaml", example + "new.yaml"}, 2, "", ": line 1: unknown key failmode (did you mean failMode?)"},
		{"unknown rule in config", []string{"diff", "--config", unknownRule, example + "old.yaml", example + "new.yaml"}, 2, "", `unknown rule ID "no-such-rule"`},
		{"missing config", []string{"diff", "--config", filepath.Join(dir, "none.yaml"), example + "old.yaml", example + "new.yaml"}, 2, "", "none.yaml"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"no command", nil, 2, "", "Usage:"},
		{"help", []string{"--help"}, 0, "crdguard diff", ""},
		{"rules", []string{"rules"}, 0, "stored-version-removed", ""},
		{"rules markdown", []string{"rules", "--format", "markdown"}, 0, "| `field-removed` | error | property |", ""},
		{"rules bad format", []string{"rules", "--format", "pdf"}, 2, "", `unknown format "pdf"`},
		// A library package's test binary records no dependencies: .ci/run checks the versions
		// the real binary prints against go.mod.
		{"version", []string{"version"}, 0, "k8s.io/apiextensions-apiserver: ", ""},
		{"sarif", []string{"diff", "--format", "sarif", example + "old.yaml", example + "new.yaml"}, 1, `"ruleId": "field-removed"`, ""},
		{"rdjson", []string{"diff", "--format", "rdjson", example + "old.yaml", example + "new.yaml"}, 1, `"value": "field-removed"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}

func TestJSONOutputContract(t *testing.T) {
	code, stdout, _ := runCLI(t, "diff", "--format", "json", example+"old.yaml", example+"new.yaml")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
		Summary  map[string]int   `json:"summary"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Summary["crds"] != 1 || doc.Summary["error"] != 5 || doc.Summary["warning"] != 1 || doc.Summary["info"] != 2 {
		t.Fatalf("summary %v", doc.Summary)
	}
	for _, f := range doc.Findings {
		for _, k := range []string{"rule", "severity", "crd", "version", "path", "message", "before", "after", "location"} {
			if _, ok := f[k]; !ok {
				t.Errorf("finding lacks %q: %v", k, f)
			}
		}
	}
	first := doc.Findings[0]
	loc := first["location"].(map[string]any)
	// Sorted by file, then line: new.yaml comes before old.yaml.
	if first["rule"] != "required-added" || first["path"] != ".spec.size" || loc["file"] != example+"new.yaml" || loc["line"] != json.Number("27") || loc["side"] != "head" {
		t.Fatalf("first finding %v", first)
	}
}

func TestDeterministicOutput(t *testing.T) {
	_, a, _ := runCLI(t, "diff", "--format", "json", example+"old.yaml", example+"new.yaml")
	_, b, _ := runCLI(t, "diff", "--format", "json", example+"old.yaml", example+"new.yaml")
	if a != b {
		t.Fatal("two runs differ")
	}
}
