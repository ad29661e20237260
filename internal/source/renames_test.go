package source

import (
	"fmt"
	"math/rand"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// randomFile is n lines of pseudo-random YAML-ish text.
func randomFile(rng *rand.Rand, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%*skey%d: value-%d\n", rng.Intn(4)*2, "", rng.Intn(1000), rng.Intn(100000))
	}
	return lines
}

// mutate replaces about pct percent of the lines and appends a few.
func mutate(rng *rand.Rand, lines []string, pct int) []string {
	out := append([]string{}, lines...)
	for i := range out {
		if rng.Intn(100) < pct {
			out[i] = fmt.Sprintf("changed%d: %d\n", rng.Intn(1000), rng.Intn(100000))
		}
	}
	return append(out, randomFile(rng, rng.Intn(5))...)
}

// gitRenames runs git diff -M between two commits and returns "from -> to" for each rename.
func gitRenames(t *testing.T, dir, base, head string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "-c", "diff.renameLimit=1000", "diff", "-M", "--name-status", base, head).Output()
	if err != nil {
		t.Fatalf("git diff: %v", err)
	}
	var pairs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 3 && strings.HasPrefix(f[0], "R") {
			pairs = append(pairs, f[1]+" -> "+f[2])
		}
	}
	sort.Strings(pairs)
	return pairs
}

// TestRenamesMatchGit moves files between folders with every degree of change, competing
// candidates and shared base names, and pairs them as git diff -M does.
func TestRenamesMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 25; round++ {
		repo := gittest.New(t)
		var deleted, added []Blob
		n := 3 + rng.Intn(6)
		for i := 0; i < n; i++ {
			orig := randomFile(rng, 10+rng.Intn(60))
			name := fmt.Sprintf("f%d.yaml", i)
			if rng.Intn(3) == 0 {
				name = "crd.yaml" // a base name several files share
			}
			from := fmt.Sprintf("old%d/%s", i, name)
			repo.Write(from, []byte(strings.Join(orig, "")))
			deleted = append(deleted, Blob{Path: from, Data: []byte(strings.Join(orig, ""))})
			for k := 0; k < 1+rng.Intn(2); k++ { // one or two descendants
				to := fmt.Sprintf("new%d%d/%s", i, k, name)
				if rng.Intn(2) == 0 {
					to = fmt.Sprintf("new%d%d/g%d.yaml", i, k, rng.Intn(3))
				}
				if rng.Intn(4) == 0 && len(added) > 0 {
					continue
				}
				data := strings.Join(mutate(rng, orig, []int{0, 20, 35, 45, 55, 70}[rng.Intn(6)]), "")
				added = append(added, Blob{Path: to, Data: []byte(data)})
			}
		}
		base := repo.Commit("base")
		for i := range deleted {
			repo.Remove(deleted[i].Path)
		}
		seen := map[string]bool{}
		kept := added[:0]
		for _, b := range added {
			if !seen[b.Path] {
				seen[b.Path] = true
				repo.Write(b.Path, b.Data)
				kept = append(kept, b)
			}
		}
		added = kept
		head := repo.Commit("move")
		sort.Slice(added, func(i, j int) bool { return added[i].Path < added[j].Path })
		sort.Slice(deleted, func(i, j int) bool { return deleted[i].Path < deleted[j].Path })

		renames, complete := Renames(deleted, added)
		if !complete {
			t.Fatal("rename limit reached on a handful of files")
		}
		var got []string
		for _, r := range renames {
			got = append(got, deleted[r.From].Path+" -> "+added[r.To].Path)
		}
		sort.Strings(got)
		want := gitRenames(t, repo.Dir, base.String(), head.String())
		t.Logf("round %d: %d deleted, %d added, %d renames", round, len(deleted), len(added), len(want))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("round %d: pairs differ from git\n got %q\nwant %q", round, got, want)
		}
	}
}

// TestRenamesSimilarity pins the 50 % bar on a file moved with about 55 % of it kept, which
// go-git's 60 % default would leave as a deletion and an addition.
func TestRenamesSimilarity(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	orig := randomFile(rng, 100)
	for _, tc := range []struct {
		keep int
		want bool
	}{{55, true}, {45, false}, {100, true}} {
		moved := append(append([]string{}, orig[:tc.keep]...), randomFile(rng, 100-tc.keep)...)
		renames, _ := Renames([]Blob{{Path: "a/crd.yaml", Data: []byte(strings.Join(orig, ""))}},
			[]Blob{{Path: "b/other.yaml", Data: []byte(strings.Join(moved, ""))}})
		if got := len(renames) == 1; got != tc.want {
			t.Errorf("%d %% kept: paired %v, want %v (%v)", tc.keep, got, tc.want, renames)
		}
	}
}

// TestRenamesLimit: beyond git's rename limit only identical files pair, and the caller learns
// that pairing was incomplete.
func TestRenamesLimit(t *testing.T) {
	var del, add []Blob
	for i := 0; i < RenameLimit+1; i++ {
		del = append(del, Blob{Path: fmt.Sprintf("a/%d.yaml", i), Data: []byte(fmt.Sprintf("x: %d\ny: 1\n", i))})
		add = append(add, Blob{Path: fmt.Sprintf("b/%d.yml", i), Data: []byte(fmt.Sprintf("x: %d\ny: 2\n", i))})
	}
	add = append(add, Blob{Path: "c/same.yaml", Data: del[5].Data})
	renames, complete := Renames(del, add)
	if complete || len(renames) != 1 || renames[0].From != 5 || path.Base(add[renames[0].To].Path) != "same.yaml" || renames[0].Score != 100 {
		t.Fatalf("renames %v complete %v", renames, complete)
	}
}
