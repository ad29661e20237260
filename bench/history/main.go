// Command history writes one of issue 43's synthetic histories (internal/gittest.WriteHistory,
// the repositories BenchmarkGitHistory and BenchmarkGitHistoryLargeBundle read) into a new
// repository, for run.sh to time crdguard on as a whole process.
//
//	go run ./history -shape small|large -change none|marked|stored|never-stored DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/crdguard/crdguard/internal/gittest"
)

func main() {
	shape := flag.String("shape", "small", "small: 2,000 commits, 200 tags, a 30-CRD bundle changed every 10 commits; large: a 1 MB 110-CRD bundle changed in each of 220 releases")
	change := flag.String("change", "never-stored", "none: a description changes; stored: drop v1alpha1 (stored early on); never-stored: drop v2alpha1 (never stored); marked: never-stored's change (large: stored's) with base listing the version in status.storedVersions")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: history -shape small|large -change none|marked|stored|never-stored DIR")
		os.Exit(2)
	}
	shapes := map[string]gittest.HistoryShape{
		"small": {Commits: 2000, TagEvery: 10, ChangeEvery: 10, CRDs: 30, StoredFrom: 0, StoredTo: 100},
		"large": {Commits: 220, TagEvery: 1, ChangeEvery: 1, CRDs: 110, StoredFrom: 20, StoredTo: 40},
	}
	sh, ok := shapes[*shape]
	if !ok {
		fmt.Fprintf(os.Stderr, "history: unknown shape %q\n", *shape)
		os.Exit(2)
	}
	never := "v2alpha1"
	if *shape == "large" {
		never = "v1alpha1" // stored by releases 20 to 39 only
	}
	changes := map[string]gittest.HistoryChange{
		"none":         {},
		"marked":       {Drop: never, Marked: true},
		"stored":       {Drop: "v1alpha1"},
		"never-stored": {Drop: "v2alpha1"},
	}
	ch, ok := changes[*change]
	if !ok {
		fmt.Fprintf(os.Stderr, "history: unknown change %q\n", *change)
		os.Exit(2)
	}
	if err := gittest.WriteHistory(flag.Arg(0), sh, ch); err != nil {
		fmt.Fprintf(os.Stderr, "history: %v\n", err)
		os.Exit(1)
	}
}
