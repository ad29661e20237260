package check

import (
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/source"
)

// BenchmarkGitHistory is issue 43's synthetic history: 2,000 commits, 200 tags, a 30-CRD bundle
// changed every 10 commits. "stored" drops v1alpha1, stored by the first 100 commits (the
// oldest release answers, and the walk stops); "never-stored" drops v2alpha1, which no revision
// stored (every tag and commit is read to say so). "marked" is the run without history that
// the bound (the run that needs history costs at most 3x) compares with: the same
// repository and change as never-stored, with base's status.storedVersions listing v2alpha1, so
// that base answers the question and no history is read. "none" changes only a description.
func BenchmarkGitHistory(b *testing.B) {
	sh := gittest.HistoryShape{Commits: 2000, TagEvery: 10, ChangeEvery: 10, CRDs: 30, StoredFrom: 0, StoredTo: 100}
	for _, bc := range []struct {
		name string
		ch   gittest.HistoryChange
	}{{"none", gittest.HistoryChange{}}, {"marked", gittest.HistoryChange{Drop: "v2alpha1", Marked: true}}, {"stored", gittest.HistoryChange{Drop: "v1alpha1"}}, {"never-stored", gittest.HistoryChange{Drop: "v2alpha1"}}} {
		b.Run(bc.name, func(b *testing.B) {
			benchmarkHistory(b, sh, bc.ch)
		})
	}
}

// BenchmarkGitHistoryLargeBundle is the other shape: an install bundle of 1 MB (110
// CRDs) that changes in every one of 220 releases (one commit each), dropping v1alpha1, the
// storage version of releases 20 to 39: the walk reads the 21 oldest releases' bundles, about
// 21 MB, to name the release that stored it. "marked" is the same change with base's
// status.storedVersions listing v1alpha1 (no history read); "none" changes only a description.
func BenchmarkGitHistoryLargeBundle(b *testing.B) {
	sh := gittest.HistoryShape{Commits: 220, TagEvery: 1, ChangeEvery: 1, CRDs: 110, StoredFrom: 20, StoredTo: 40}
	for _, bc := range []struct {
		name string
		ch   gittest.HistoryChange
	}{{"none", gittest.HistoryChange{}}, {"marked", gittest.HistoryChange{Drop: "v1alpha1", Marked: true}}, {"stored-long-ago", gittest.HistoryChange{Drop: "v1alpha1"}}} {
		b.Run(bc.name, func(b *testing.B) {
			benchmarkHistory(b, sh, bc.ch)
		})
	}
}

func benchmarkHistory(b *testing.B, sh gittest.HistoryShape, ch gittest.HistoryChange) {
	b.Helper()
	dir := b.TempDir()
	if err := gittest.WriteHistory(dir, sh, ch); err != nil {
		b.Fatal(err)
	}
	repo, err := source.OpenRepo(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Git(repo, GitOptions{Base: "main", Head: "pr"}); err != nil {
			b.Fatal(err)
		}
	}
}
