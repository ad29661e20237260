package source

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lcsChanges is the number of deleted plus inserted lines of a minimal diff (dynamic
// programming), to check that Myers finds a minimal one.
func lcsChanges(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return len(a) + len(b) - 2*dp[0][0]
}

func TestMyersIsMinimal(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 2000; n++ {
		a := make([]string, rng.Intn(12))
		b := make([]string, rng.Intn(12))
		for i := range a {
			a[i] = string(rune('a' + rng.Intn(4)))
		}
		for i := range b {
			b[i] = string(rune('a' + rng.Intn(4)))
		}
		x, y := make([]int, len(a)), make([]int, len(b))
		for i := range a {
			x[i] = int(a[i][0])
		}
		for i := range b {
			y[i] = int(b[i][0])
		}
		ca, cb := make([]bool, len(x)), make([]bool, len(y))
		newXdiffEnv(len(x), len(y)).recsCmp(x, 0, len(x), y, 0, len(y), true, func(i int) { ca[i] = true }, func(j int) { cb[j] = true })
		changes := 0
		var keptA, keptB []int
		for i, c := range ca {
			if c {
				changes++
			} else {
				keptA = append(keptA, x[i])
			}
		}
		for j, c := range cb {
			if c {
				changes++
			} else {
				keptB = append(keptB, y[j])
			}
		}
		if fmt.Sprint(keptA) != fmt.Sprint(keptB) {
			t.Fatalf("%v → %v: kept lines differ %v %v", a, b, keptA, keptB)
		}
		if want := lcsChanges(a, b); changes != want {
			t.Fatalf("%v → %v: %d changes, minimal is %d", a, b, changes, want)
		}
	}
}

func TestHunksSimple(t *testing.T) {
	old := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	new := strings.Replace(strings.Replace(old, "5\n", "five\n", 1), "18\n", "", 1)
	got := fmt.Sprint(Hunks([]byte(old), []byte(new)))
	if want := "[{2 7 2 7} {15 6 15 5}]"; got != want {
		t.Fatalf("hunks %s, want %s", got, want)
	}
	// Changes 6 unchanged lines apart share one hunk; 7 apart do not.
	merged := strings.Replace(strings.Replace(old, "5\n", "five\n", 1), "12\n", "twelve\n", 1)
	if got := fmt.Sprint(Hunks([]byte(old), []byte(merged))); got != "[{2 14 2 14}]" {
		t.Fatalf("merged hunks %s", got)
	}
	if got := fmt.Sprint(Hunks(nil, []byte("a\nb\n"))); got != "[{0 0 1 2}]" {
		t.Fatalf("new file %s", got)
	}
	if got := fmt.Sprint(Hunks([]byte("a\nb\n"), nil)); got != "[{1 2 0 0}]" {
		t.Fatalf("deleted file %s", got)
	}
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// gitDiff runs git diff -U3 and returns its hunk headers, parsed, and its hunks as text
// without the function context after @@ and without "\ No newline" markers.
func gitDiff(t *testing.T, oldPath, newPath string) (string, string) {
	t.Helper()
	out, _ := exec.Command("git", "diff", "--no-index", "--no-color", "-U3", oldPath, newPath).Output()
	var hs []Hunk
	var text strings.Builder
	num := func(s string, def int) int {
		if s == "" {
			return def
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	inHunk := false
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if m := hunkHeader.FindStringSubmatch(l); m != nil {
			hs = append(hs, Hunk{num(m[1], 0), num(m[2], 1), num(m[3], 0), num(m[4], 1)})
			inHunk = true
			text.WriteString(m[0] + "\n")
			continue
		}
		if inHunk && l != "" && !strings.HasPrefix(l, "\\") {
			text.WriteString(l)
		}
	}
	return fmt.Sprint(hs), text.String()
}

// TestHunksMatchGit compares the hunks and the diff text with git's on every real CRD upgrade
// of both corpora: review comments must land inside the hunks GitHub shows.
func TestHunksMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	pairs, _ := filepath.Glob("../../../shared/corpus/*/*/*/old.yaml")
	more, _ := filepath.Glob("../../../shared/corpus-more/*/*/*/old.yaml")
	pairs = append(pairs, more...)
	if len(pairs) == 0 {
		t.Skip("corpus not available")
	}
	differ := 0
	for _, oldPath := range pairs {
		newPath := filepath.Join(filepath.Dir(oldPath), "new.yaml")
		old, _ := os.ReadFile(oldPath)
		new, _ := os.ReadFile(newPath)
		wantHunks, wantText := gitDiff(t, oldPath, newPath)
		if got := fmt.Sprint(Hunks(old, new)); got != wantHunks {
			differ++
			t.Logf("%s:\n got %s\nwant %s", filepath.Dir(oldPath), got, wantHunks)
		} else if UnifiedDiff(old, new) != wantText {
			differ++
			t.Logf("%s: same hunks, different lines", filepath.Dir(oldPath))
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d pairs differ from git diff -U3", differ, len(pairs))
	}
}

func TestHeadPosition(t *testing.T) {
	old := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n")
	new := []byte("a\nb\nc\nd\ne\ng\nh\ni\nj\nk\nX\nY\nl\nm\nn\n") // f removed, X Y added
	// A property inserted above a removal in the same hunk, a removal replaced by another
	// property, and a removal at the end of the file.
	oldCRD := []byte("spec:\n  properties:\n    a:\n      type: string\n    b:\n      type: integer\n    c:\n      type: boolean\n    d:\n      type: object\n")
	newCRD := []byte("spec:\n  properties:\n    new:\n      type: number\n    a:\n      type: string\n    c:\n      type: boolean\n    e:\n      type: array\n")
	d := &Diff{}
	d.Add(NewFileDiff("old.yaml", "new.yaml", old, new))
	d.Add(LazyFileDiff("crd.yaml", "crd.yaml", oldCRD, newCRD))
	d.Add(FileDiff{From: "gone.yaml"})
	for _, tc := range []struct {
		path        string
		line        int
		wantPath    string
		wantLine    int
		wantRemoved bool
		wantExists  bool
	}{
		{"old.yaml", 1, "new.yaml", 1, false, true},
		{"old.yaml", 6, "new.yaml", 6, true, true},      // the removed line f: where it was, the kept g after it
		{"old.yaml", 13, "new.yaml", 14, false, true},   // l moved down by one (−1 +2)
		{"old.yaml", 14, "new.yaml", 15, false, true},   // after the last hunk
		{"other.yaml", 9, "other.yaml", 9, false, true}, // not in the diff: unchanged
		{"gone.yaml", 3, "", 0, true, false},
		{"crd.yaml", 3, "crd.yaml", 5, false, true}, // a: below the inserted property
		{"crd.yaml", 5, "crd.yaml", 7, true, true},  // b removed: at c, never at new or a
		{"crd.yaml", 7, "crd.yaml", 7, false, true}, // c kept
		{"crd.yaml", 9, "crd.yaml", 8, true, true},  // d replaced by e at the end: the kept line before, never e
	} {
		p, l, removed, ok := d.HeadPosition(tc.path, tc.line)
		if p != tc.wantPath || l != tc.wantLine || removed != tc.wantRemoved || ok != tc.wantExists {
			t.Errorf("HeadPosition(%s, %d) = %s, %d, %v, %v; want %s, %d, %v, %v", tc.path, tc.line, p, l, removed, ok, tc.wantPath, tc.wantLine, tc.wantRemoved, tc.wantExists)
		}
	}
	if got := UnifiedDiff(oldCRD, newCRD); got != "@@ -1,10 +1,10 @@\n spec:\n   properties:\n+    new:\n+      type: number\n     a:\n       type: string\n-    b:\n-      type: integer\n     c:\n       type: boolean\n-    d:\n-      type: object\n+    e:\n+      type: array\n" {
		t.Errorf("the hunk is not the shape this test is about:\n%s", got)
	}
	if got := d.endColumn("crd.yaml", 3); got != len("    new:")+1 {
		t.Errorf("endColumn = %d", got)
	}
}
