package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// FuzzCompare: two arbitrary CRD documents compare without a panic, and every finding has a
// known rule and a line inside the file it names.
func FuzzCompare(f *testing.F) {
	dirs, _ := filepath.Glob("../../testdata/rules/*/*")
	for _, d := range dirs {
		o, err1 := os.ReadFile(filepath.Join(d, "old.yaml"))
		n, err2 := os.ReadFile(filepath.Join(d, "new.yaml"))
		if err1 == nil && err2 == nil {
			f.Add(o, n)
		}
	}
	f.Fuzz(func(t *testing.T, oldData, newData []byte) {
		o, _ := crd.Parse("old.yaml", oldData)
		n, _ := crd.Parse("new.yaml", newData)
		if len(o) == 0 || len(n) == 0 {
			return
		}
		lines := map[string]int{"old.yaml": bytes.Count(oldData, []byte("\n")) + 1, "new.yaml": bytes.Count(newData, []byte("\n")) + 1}
		// Patches take part too: Compare must ignore them, never dereference their missing Object.
		for _, fd := range Compare(crd.Pair{Old: o[0], New: n[0]}, Options{}) {
			if _, ok := Lookup(fd.Rule); !ok {
				t.Fatalf("unknown rule %q", fd.Rule)
			}
			if fd.Location.Line < 1 || fd.Location.Line > lines[fd.Location.File] {
				t.Fatalf("%s at %s:%d outside the file", fd.Rule, fd.Location.File, fd.Location.Line)
			}
			if fd.Severity < finding.Info || fd.Severity > finding.Error {
				t.Fatalf("severity %v", fd.Severity)
			}
		}
	})
}
