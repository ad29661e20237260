package check

import (
	"os"
	"path/filepath"
	"strconv"
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
	want := []string{"max-decreased v1 .spec.size v1.json:20 head"}
	if len(got) != len(want) || got[0] != want[0] {
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

func TestHelmTemplateIsSkipped(t *testing.T) {
	tr := &source.Tree{}
	tr.AddFile("chart/templates/crd.yaml", []byte("{{- if .Values.crds }}\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {{ .Values.name }}\n{{- end }}\n"), false)
	if len(tr.CRDs) != 0 || len(tr.Problems) != 0 || len(tr.Notices) != 1 {
		t.Fatalf("crds %d problems %v notices %v", len(tr.CRDs), tr.Problems, tr.Notices)
	}
	if want := "chart/templates/crd.yaml:1: skipped, looks like a Helm or Go template"; tr.Notices[0] != want {
		t.Fatalf("notice %q", tr.Notices[0])
	}
	// Template syntax inside a description is not a template.
	tr = &source.Tree{}
	data, _ := os.ReadFile("../../testdata/rules/field-added/basic/new.yaml")
	tr.AddFile("x.yaml", []byte(string(data)+"    # {{ comment }}\n"), false)
	if len(tr.CRDs) != 1 || len(tr.Notices) != 0 {
		t.Fatalf("crds %d notices %v", len(tr.CRDs), tr.Notices)
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
