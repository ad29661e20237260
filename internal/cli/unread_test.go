package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestUnreadableNeverPasses: whatever makes a CRD file unreadable, on either side, with the other
// side readable, `diff` never exits 0 and reports exactly one invalid-crd error at that file;
// the other side's CRD is never taken for added or removed.
func TestUnreadableNeverPasses(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(plain)
	for _, tc := range []struct {
		name, broken string
		line         int
	}{
		{"YAML that does not parse", strings.Replace(text, "  group: example.com\n", "  group: [example.com\n", 1), 6},
		{"a document that does not decode", strings.Replace(text, "served: true", "served: maybe", 1), 19},
		{"a merge key on a scalar", strings.Replace(text, "  scope: Namespaced\n", "  scope: Namespaced\n  <<: 5\n", 1), 17},
		{"a templated schema", strings.Replace(text, "              size:\n", "{{- if .Values.size }}\n              size:\n{{- end }}\n", 1), 30},
		{"a binary file named as the input", "apiVersion: apiextensions.k8s.io/v1\x00kind: CustomResourceDefinition\n", 1},
	} {
		for _, brokenSide := range []string{"base", "head"} {
			t.Run(tc.name+" in "+brokenSide, func(t *testing.T) {
				dir := t.TempDir()
				oldFile, newFile := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
				oldText, newText := tc.broken, text
				if brokenSide == "head" {
					oldText, newText = text, tc.broken
				}
				for f, data := range map[string]string{oldFile: oldText, newFile: newText} {
					if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				code, stdout, stderr := runCLI(t, "diff", "--format", "json", oldFile, newFile)
				if code == 0 {
					t.Fatalf("exit 0 with an unreadable %s\n%s%s", brokenSide, stdout, stderr)
				}
				if code == 2 {
					return // a tool failure that names the file fails the run too
				}
				brokenFile := "old.yaml"
				if brokenSide == "head" {
					brokenFile = "new.yaml"
				}
				got := findingLines(t, stdout)
				want := []string{"error invalid-crd " + brokenFile + ":" + strconv.Itoa(tc.line) + " " + brokenSide}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// findingLines renders a JSON report's findings as
// "severity rule file:line side", file names without their folder.
func findingLines(t *testing.T, stdout string) []string {
	t.Helper()
	var doc struct {
		Findings []struct {
			Rule, Severity string
			Location       struct {
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
		out = append(out, f.Severity+" "+f.Rule+" "+filepath.Base(f.Location.File)+":"+strconv.Itoa(f.Location.Line)+" "+f.Location.Side)
	}
	return out
}
