package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// The workspace as actions/checkout leaves it (one commit deep) and as the runner mounts it (the
// action runs as root, the workspace belongs to the runner's user): crdguard fetches what it
// lacks without writing into .git, its files belong to the workspace's owner, and the outputs
// name paths later steps can open.
func TestShallowWorkspaceIsLeftIntact(t *testing.T) {
	pr := newPullRequest(t)
	origin := filepath.Join(t.TempDir(), "origin.git")
	gitCmd(t, "clone", "-q", "--bare", pr.repo.Dir, origin)
	gitCmd(t, "-C", origin, "config", "uploadpack.allowAnySHA1InWant", "true")
	ws := filepath.Join(t.TempDir(), "workspace")
	gitCmd(t, "clone", "-q", "--depth", "1", "--branch", "pr", "file://"+origin, ws)
	const owner = 4242
	if os.Geteuid() == 0 {
		if err := os.Chown(ws, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	pr.env["GITHUB_WORKSPACE"] = ws
	sarif := filepath.Join(t.TempDir(), "out", "crdguard.sarif") // absolute: used as given
	pr.env["INPUT_SARIF"] = sarif
	before := gittest.Snapshot(t, filepath.Join(ws, ".git"))

	code, out := pr.run()
	if code != ExitFindings || !strings.Contains(out, "review: 2 inline") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if cr := pr.completed(pr.head); cr.Conclusion != "failure" || len(cr.Annotations) != 2 {
		t.Fatalf("check run %+v", cr)
	}
	gittest.AssertUntouched(t, filepath.Join(ws, ".git"), before)
	if outputs := readFile(t, pr.env["GITHUB_OUTPUT"]); !strings.Contains(outputs, "report<<") || !strings.Contains(outputs, "\n"+ReportFile+"\n") {
		t.Errorf("the report output is not the workspace-relative path:\n%s", outputs)
	}
	if s := readFile(t, sarif); !strings.Contains(s, `"ruleId"`) {
		t.Errorf("SARIF log at %s:\n%s", sarif, s)
	}
	info, err := os.Stat(filepath.Join(ws, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("report mode %v", info.Mode())
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 && st.Uid != owner {
		t.Errorf("report owned by %d, want the workspace's owner %d", st.Uid, owner)
	}
}

func gitCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
