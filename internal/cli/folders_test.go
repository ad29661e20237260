package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrokenFileInFolder: in folders given to diff, a file that does not parse and does not look
// like a CRD is invalid-crd at the parser's line where a CRD is at stake (the other folder has a
// CRD at the same path, or its text names a CRD the other folder defines and this one reads
// nowhere), never crd-removed or crd-added; elsewhere it says nothing, and a CRD that is really
// removed stays crd-removed.
func TestBrokenFileInFolder(t *testing.T) {
	plain, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	widgets := string(plain)
	const (
		notYAML  = "hello: [\nthis is: not YAML\n"
		problem  = "YAML does not parse: line 3: did not find expected ',' or ']'"
		removed  = "error crd-removed widgets.example.com widgets.yaml:4 base: CRD widgets.example.com was removed: deleting a CRD from a cluster deletes every object of it; keep the CRD, or make sure its removal is intended and documented"
		named    = "metadata:\n  name: widgets.example.com\nspec: [\n"
		namedErr = "YAML does not parse: line 4: did not find expected node content"
	)
	values := "replicas: [1\n" // a broken Helm values file
	// A Helm template whose text has escapes and does not read as YAML, with or without its actions.
	tmpl := "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"\\x41\"\n  {{- if .Values.x }}\n  b: [\n  {{- end }}\n"
	for _, tc := range []struct {
		name     string
		old, new map[string]string // path under the folder → content
		code     int
		findings []string
	}{
		{"broken in head at the CRD's path",
			map[string]string{"crds/widgets.yaml": widgets}, map[string]string{"crds/widgets.yaml": notYAML}, 1,
			[]string{"error invalid-crd widgets.example.com widgets.yaml:3 head: " + problem + headUnread}},
		{"broken in base at the CRD's path",
			map[string]string{"crds/widgets.yaml": notYAML}, map[string]string{"crds/widgets.yaml": widgets}, 1,
			[]string{"error invalid-crd widgets.example.com widgets.yaml:3 base: " + problem + baseUnread}},
		{"binary at the CRD's path",
			map[string]string{"crds/widgets.yaml": widgets}, map[string]string{"crds/widgets.yaml": "\x00\x01"}, 1,
			[]string{"error invalid-crd widgets.example.com widgets.yaml:1 head: binary file, not YAML or JSON" + headUnread}},
		{"moved into a broken file that names it",
			map[string]string{"crds/widgets.yaml": widgets}, map[string]string{"crds/all.yaml": named}, 1,
			[]string{"error invalid-crd widgets.example.com all.yaml:4 head: " + namedErr + headUnread}},
		{"broken JSON at the CRD's path",
			map[string]string{"crds/widgets.json": widgets}, map[string]string{"crds/widgets.json": `{"apiVersion": "v1",` + "\n"}, 1,
			[]string{"error invalid-crd widgets.example.com widgets.json:2 head: YAML does not parse: line 2: did not find expected node content" + headUnread}},
		// Twins: nothing at stake.
		{"broken values file beside an unchanged CRD",
			map[string]string{"crds/widgets.yaml": widgets, "values.yaml": "replicas: 1\n"}, map[string]string{"crds/widgets.yaml": widgets, "values.yaml": values}, 0, nil},
		{"broken file naming a CRD read elsewhere",
			map[string]string{"crds/widgets.yaml": widgets}, map[string]string{"crds/widgets.yaml": widgets, "crds/notes.yaml": named}, 0, nil},
		{"a template with escapes that does not parse",
			map[string]string{"crds/widgets.yaml": widgets, "templates/cm.yaml": tmpl}, map[string]string{"crds/widgets.yaml": widgets, "templates/cm.yaml": tmpl + "# changed\n"}, 0, nil},
		{"CRD removed, a broken file elsewhere",
			map[string]string{"crds/widgets.yaml": widgets, "values.yaml": values}, map[string]string{"crds/other.yaml": "apiVersion: v1\nkind: ConfigMap\n", "values.yaml": values}, 1,
			[]string{removed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{t.TempDir(), t.TempDir()}
			for i, files := range []map[string]string{tc.old, tc.new} {
				for name, text := range files {
					p := filepath.Join(dirs[i], name)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			code, stdout, stderr := runCLI(t, "diff", "--format", "json", dirs[0], dirs[1])
			if code != tc.code || stderr != "" {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			if got := findingLines(t, stdout); strings.Join(got, "\n") != strings.Join(tc.findings, "\n") {
				t.Fatalf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.findings, "\n"))
			}
		})
	}
}
