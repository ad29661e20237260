package fakegithub

import (
	"os/exec"
	"testing"
)

// FilesFromGit is GitHub's view of a pull request's diff, computed by git itself rather than by
// crdguard: files moved with at least 50 % similarity are paired (GitHub's and git's default,
// where go-git's is 60 %), with three lines of context. The test is skipped without git.
func FilesFromGit(t testing.TB, dir, base, head string) map[string]*Lines {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to compute GitHub's view of the diff")
	}
	out, err := exec.Command("git", "-C", dir, "diff", "-M50%", "-U3", "--no-color", base, head).Output()
	if err != nil {
		t.Fatalf("git diff %s %s: %v", base, head, err)
	}
	return FilesFromUnifiedDiff(string(out))
}
