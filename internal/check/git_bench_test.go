package check

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

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

// bigPullRequest is a dependency bump: n vendored Go files moved to a new module version (each
// slightly edited, so git's rename detection has work to do) next to one real CRD upgrade.
func bigPullRequest(tb testing.TB, n int) (*gittest.Repo, plumbing.Hash, plumbing.Hash) {
	tb.Helper()
	pairs := loadCorpus(tb)
	repo := gittest.New(tb)
	goFile := func(i int, version string) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "// Package pkg%d is vendored code, %s.\npackage pkg%d\n\n", i, version, i)
		for k := 0; k < 40; k++ {
			fmt.Fprintf(&b, "func F%d_%d(x int) int { return x*%d + %d }\n", i, k, k, i)
		}
		return b.Bytes()
	}
	for i := 0; i < n; i++ {
		repo.Write(fmt.Sprintf("vendor/example.com/lib/v1/pkg%d/pkg.go", i), goFile(i, "v1"))
	}
	repo.Write("config/crd/crd.yaml", pairs[0].old)
	base := repo.Commit("base")
	repo.Branch("main", base)
	for i := 0; i < n; i++ {
		repo.Remove(fmt.Sprintf("vendor/example.com/lib/v1/pkg%d/pkg.go", i))
		repo.Write(fmt.Sprintf("vendor/example.com/lib/v2/pkg%d/pkg.go", i), goFile(i, "v2"))
	}
	repo.Write("config/crd/crd.yaml", pairs[0].new)
	head := repo.Commit("bump lib to v2, upgrade the CRD")
	return repo, base, head
}

// BenchmarkGitBigPullRequest is issue 14's dependency bump: 3,000 Go files moved and one CRD
// changed. Its git sub-benchmark times `git diff -M --stat` on the same commits, for the
// "within 10× of git" target.
func BenchmarkGitBigPullRequest(b *testing.B) {
	repo, base, head := bigPullRequest(b, 3000)
	b.Run("crdguard", func(b *testing.B) {
		r, err := source.OpenRepo(repo.Dir)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := Git(r, GitOptions{Base: "main", Head: head.String()})
			if err != nil {
				b.Fatal(err)
			}
			if res.CRDs != 1 {
				b.Fatalf("compared %d CRDs, want 1", res.CRDs)
			}
		}
	})
	b.Run("git-diff-M-stat", func(b *testing.B) {
		if _, err := exec.LookPath("git"); err != nil {
			b.Skip("git not installed")
		}
		for b.Loop() {
			if err := exec.Command("git", "-C", repo.Dir, "diff", "-M", "--stat", base.String(), head.String()).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
