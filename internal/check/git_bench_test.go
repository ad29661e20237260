package check

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/source"
)

// uniqueName renames a corpus CRD so that copies of it are distinct CRDs.
func uniqueName(data []byte, i int) []byte {
	return bytes.Replace(data, []byte("\n  name: "), []byte(fmt.Sprintf("\n  name: c%04d.", i)), 1)
}

// BenchmarkGitCheck1000 is the repository: 1,000 real CRDs (copies of the corpus), and
// a head commit that changes 10 of them with real upgrades.
func BenchmarkGitCheck1000(b *testing.B) {
	pairs := loadCorpus(b)
	repo := gittest.New(b)
	for i := 0; i < 1000; i++ {
		repo.Write(fmt.Sprintf("config/crd/%04d.yaml", i), uniqueName(pairs[i%len(pairs)].old, i))
	}
	repo.Write("README.md", []byte("bench\n"))
	repo.Branch("main", repo.Commit("1000 CRDs"))
	for i := 0; i < 1000; i += 100 {
		repo.Write(fmt.Sprintf("config/crd/%04d.yaml", i), uniqueName(pairs[i%len(pairs)].new, i))
	}
	repo.Commit("upgrade 10 CRDs")
	r, err := source.OpenRepo(repo.Dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Git(r, GitOptions{Base: "main"})
		if err != nil {
			b.Fatal(err)
		}
		if res.CRDs != 10 {
			b.Fatalf("compared %d CRDs, want 10", res.CRDs)
		}
	}
}
