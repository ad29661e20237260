package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

func TestFailOn(t *testing.T) {
	warn := []finding.Finding{{Severity: finding.Info}, {Severity: finding.Warning}}
	errs := append(warn, finding.Finding{Severity: finding.Error})
	for _, tc := range []struct {
		failOn           string
		warnFails, error bool
	}{
		{"error", false, true},
		{"warning", true, true},
		{"never", false, false},
	} {
		f, err := ParseFailOn(tc.failOn)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Fails(warn); got != tc.warnFails {
			t.Errorf("%s: warnings fail = %v, want %v", tc.failOn, got, tc.warnFails)
		}
		if got := f.Fails(errs); got != tc.error {
			t.Errorf("%s: errors fail = %v, want %v", tc.failOn, got, tc.error)
		}
		if f.Fails(nil) {
			t.Errorf("%s: no findings fail", tc.failOn)
		}
	}
	if _, err := ParseFailOn("sometimes"); err == nil || !strings.Contains(err.Error(), `"sometimes" is not allowed (allowed: error, warning, never)`) {
		t.Errorf("ParseFailOn(sometimes) = %v", err)
	}
}

func TestFindPrefersExplicitThenDefaultFile(t *testing.T) {
	dir := t.TempDir()
	if c, err := Find("", dir); err != nil || c.AcknowledgeLabel != Default().AcknowledgeLabel {
		t.Fatalf("no file: %+v, %v", c, err)
	}
	write := func(name, body string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write(DefaultFile, "acknowledgeLabel: from-default\n")
	other := write("other.yaml", "acknowledgeLabel: from-flag\n")
	if c, err := Find("", dir); err != nil || c.AcknowledgeLabel != "from-default" {
		t.Errorf("default file: %+v, %v", c, err)
	}
	if c, err := Find(other, dir); err != nil || c.AcknowledgeLabel != "from-flag" {
		t.Errorf("explicit file: %+v, %v", c, err)
	}
	if _, err := Find(filepath.Join(dir, "missing.yaml"), dir); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing explicit file: %v", err)
	}
}
