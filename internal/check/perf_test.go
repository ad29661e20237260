package check

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crdguard/crdguard/internal/celproof"
)

// perfDir holds the hardest real pairs for speed; CRDGUARD_PERF overrides it.
func perfDir() string {
	if d := os.Getenv("CRDGUARD_PERF"); d != "" {
		return d
	}
	return "../../../shared/perf"
}

// BenchmarkPerfPairs compares each pair of ../shared/perf per iteration, starting cold (no
// compiled CEL programs kept from the iteration before), as a whole process would.
func BenchmarkPerfPairs(b *testing.B) {
	dirs, err := filepath.Glob(filepath.Join(perfDir(), "*", "old.yaml"))
	if err != nil || len(dirs) == 0 {
		b.Skipf("perf pairs not available: %v", err)
	}
	for _, o := range dirs {
		dir := filepath.Dir(o)
		old, err1 := os.ReadFile(o)
		new, err2 := os.ReadFile(filepath.Join(dir, "new.yaml"))
		if err1 != nil || err2 != nil {
			b.Fatalf("pair %s: %v %v", dir, err1, err2)
		}
		p := corpusPair{name: filepath.Base(dir), old: old, new: new}
		b.Run(filepath.Base(dir), func(b *testing.B) {
			b.SetBytes(corpusBytes([]corpusPair{p}))
			b.ReportAllocs()
			for b.Loop() {
				celproof.ForgetCompiled()
				comparePair(p)
			}
		})
	}
}
