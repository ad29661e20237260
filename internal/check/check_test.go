package check

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

func readTree(t *testing.T, path string) *source.Tree {
	t.Helper()
	tr, err := source.ReadPath(path, false)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// summary renders findings at warning or above as "rule path file:line side" lines.
func summary(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		if f.Severity > finding.Info {
			out = append(out, f.Rule+" "+f.Version+" "+f.Path+" "+filepath.Base(f.Location.File)+":"+itoa(f.Location.Line)+" "+string(f.Location.Side))
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestV1beta1ToV1(t *testing.T) {
	res := Trees(readTree(t, "../../testdata/crd/v1beta1.yaml"), readTree(t, "../../testdata/crd/v1.json"), rules.Options{})
	got := summary(res.Findings)
	// The v1beta1 document leaves preserveUnknownFields unset, which the API server defaults to
	// true: the v1 CRD prunes what objects stored so far kept.
	want := []string{"max-decreased v1 .spec.size v1.json:20 head", "preserve-unknown-fields-removed   v1beta1.yaml:6 base"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestDirectoriesPairByName: a CRD that moved to another file (and into a multi-document file)
// is a change, not a removal and an addition.
func TestDirectoriesPairByName(t *testing.T) {
	oldDir, newDir := t.TempDir(), t.TempDir()
	crdText, err := os.ReadFile("../../testdata/rules/field-removed/leaf/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	changed, err := os.ReadFile("../../testdata/rules/field-removed/leaf/new.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(dir, name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(oldDir, "config/crd/widgets.yaml", crdText)
	write(oldDir, "README.md", []byte("not yaml"))
	write(newDir, "deploy/all.yaml", append([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n---\n"), changed...))
	write(newDir, ".hidden/copy.yaml", changed) // hidden folders are not read
	res := Trees(readTree(t, oldDir), readTree(t, newDir), rules.Options{})
	got := summary(res.Findings)
	if len(got) != 1 || got[0] != "field-removed v1 .spec.name widgets.yaml:32 base" {
		t.Fatalf("got %q", got)
	}
	if res.CRDs != 1 {
		t.Fatalf("CRDs = %d", res.CRDs)
	}
}

// Templates are read as the YAML they render to where the template only fills in values outside
// the schema; a templated schema or name is skipped with a notice naming the side, the file and
// the line; a template expression is never invalid-crd.
func TestTemplates(t *testing.T) {
	read := func(t *testing.T, rel string) string {
		t.Helper()
		data, err := os.ReadFile("../../testdata/rules/" + rel)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	old, new := read(t, "field-removed/leaf/old.yaml"), read(t, "field-removed/leaf/new.yaml")
	labels := "metadata:\n  labels:\n    app: '{{ template \"chart.name\" . }}'\n    app.kubernetes.io/instance: {{ .Release.Name }}\n    {{- include \"labels\" . | nindent 4 }}\n    cluster.x-k8s.io/provider: ${PROVIDER_NAME}\n  annotations:\n    cert-manager.io/inject-ca-from: ${NAMESPACE:=system}/serving-cert\n"
	helm := func(crd string) string {
		return "{{- if .Values.crds.enabled }}\n" + strings.Replace(crd, "metadata:\n", labels, 1) + "{{- end }}\n"
	}
	schemaTemplated := strings.Replace(new, "              size:\n", "{{- if .Values.size }}\n              size:\n{{- end }}\n", 1)
	// A template outside any chart cannot be rendered: chart-not-rendered on each side that is
	// one, and the other side's CRD is neither added nor removed (before: actions were set aside
	// and the rest read, and a templated schema was skipped with a notice).
	for _, tc := range []struct {
		name, old, new, want, notices string
	}{
		{"plain", old, new, "field-removed v1 .spec.name old.yaml:32 base", ""},
		{"helm and envsubst outside the schema", helm(old), helm(new), "chart-not-rendered   new.yaml:1 head\nchart-not-rendered   old.yaml:1 base", ""},
		{"schema templated in head", old, schemaTemplated, "chart-not-rendered   new.yaml:30 head", ""},
		{"schema templated in base", schemaTemplated, new, "chart-not-rendered   old.yaml:30 base", ""},
		{"schema templated on both sides", schemaTemplated, schemaTemplated, "chart-not-rendered   new.yaml:30 head\nchart-not-rendered   old.yaml:30 base", ""},
		{"a multi-line licence comment on top", "{{- /*\nCopyright The Authors.\nLicensed under the Apache License.\n*/ -}}\n" + old, "{{- /*\nCopyright The Authors.\nLicensed under the Apache License.\n*/ -}}\n" + new, "chart-not-rendered   new.yaml:1 head\nchart-not-rendered   old.yaml:1 base", ""},
		{"labels written by an include", strings.Replace(old, "metadata:\n", "metadata:\n  labels: {{- include \"common.labels.standard\" ( dict \"context\" $ ) | nindent 4 }}\n", 1), strings.Replace(new, "metadata:\n", "metadata:\n  labels: {{- include \"common.labels.standard\" ( dict \"context\" $ ) | nindent 4 }}\n", 1), "chart-not-rendered   new.yaml:4 head\nchart-not-rendered   old.yaml:4 base", ""},
		{"name templated", old, strings.Replace(new, "name: widgets.example.com", "name: {{ .Values.name }}", 1), "chart-not-rendered   new.yaml:1 head", ""},
		// Plain YAML is plain: {{ }} in a string or a comment is text.
		{"template syntax in a description", old + "    # {{ comment }}\n", strings.Replace(new, "type: string\n", "type: string\n                description: use {{ .Values }} here\n", 1), "field-removed v1 .spec.name old.yaml:32 base", ""},
		{"a quoted template in a plain file", old, strings.Replace(new, "type: string\n", "type: string\n                description: \"{{ .Values.x }}\"\n", 1), "field-removed v1 .spec.name old.yaml:32 base", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n := &source.Tree{}, &source.Tree{}
			o.AddFile("old.yaml", []byte(tc.old), false)
			n.AddFile("new.yaml", []byte(tc.new), false)
			res := Trees(o, n, rules.Options{})
			if got := strings.Join(summary(res.Findings), "\n"); got != tc.want {
				t.Errorf("findings %q, want %q", got, tc.want)
			}
			if got := strings.Join(res.Notices, "\n"); got != tc.notices {
				t.Errorf("notices %q, want %q", got, tc.notices)
			}
		})
	}
}

func TestBrokenHeadIsNotRemoval(t *testing.T) {
	old := readTree(t, "../../testdata/rules/invalid-crd/malformed-yaml/old.yaml")
	new := readTree(t, "../../testdata/rules/invalid-crd/malformed-yaml/new.yaml")
	res := Trees(old, new, rules.Options{})
	if got := summary(res.Findings); len(got) != 1 || got[0] != "invalid-crd   new.yaml:7 head" {
		t.Fatalf("got %q", got)
	}
	if res.Findings[0].CRD != "widgets.example.com" {
		t.Fatalf("invalid-crd names %q", res.Findings[0].CRD)
	}
}

// TestOutputIsDeterministic runs one input many times and compares the bytes: the API server
// reports invalid label values in map order, all on the labels line, so only a total order over
// the findings keeps the report stable.
func TestOutputIsDeterministic(t *testing.T) {
	dir := filepath.Join(casesDir, "invalid-crd", "invalid-label-values")
	fs, first := runCase(t, dir)
	if len(fs) < 4 {
		t.Fatalf("want several findings on one line, got %d", len(fs))
	}
	for i := range 40 {
		if _, again := runCase(t, dir); string(again) != string(first) {
			t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i+2, again, first)
		}
	}
}
