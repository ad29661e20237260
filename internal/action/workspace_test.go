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

// The runner starts a container action as `docker run -v <host folder>:/github/workspace -w
// /github/workspace -e GITHUB_WORKSPACE=/github/workspace`: one folder under two names. Here a
// symbolic link gives the host's folder its container name; the action runs under that name,
// and a later step, on the host, must find every file an output or input names.
func TestWorkspaceMappedAsTheRunnerMapsIt(t *testing.T) {
	pr := newPullRequest(t)
	host := pr.repo.Dir
	container := filepath.Join(t.TempDir(), "github", "workspace")
	if err := os.MkdirAll(filepath.Dir(container), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, container); err != nil {
		t.Skipf("cannot give the workspace a second name: %v", err)
	}
	pr.env["GITHUB_WORKSPACE"] = container
	pr.env["INPUT_SARIF"] = "reports/crdguard.sarif" // as a workflow writes it: workspace-relative
	t.Chdir(container)

	code, out := pr.run()
	if code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	pr.completed(pr.head)

	// The later step: its working directory is the host folder, and it has never heard of the
	// container's name for it.
	outputs := parseOutputs(t, readFile(t, pr.env["GITHUB_OUTPUT"]))
	report := outputs["report"]
	if report == "" || filepath.IsAbs(report) {
		t.Fatalf("report output %q: want a path relative to the workspace", report)
	}
	for _, f := range []string{report, "reports/crdguard.sarif"} {
		data, err := os.ReadFile(filepath.Join(host, f))
		if err != nil {
			t.Fatalf("a later step cannot open %s: %v", f, err)
		}
		if strings.Contains(string(data), container) {
			t.Errorf("%s names the container's path %s, which later steps do not have", f, container)
		}
	}
	for name, v := range outputs {
		if strings.Contains(v, container) {
			t.Errorf("output %s = %q names the container's path", name, v)
		}
	}
	if s := readFile(t, pr.env["GITHUB_STEP_SUMMARY"]); strings.Contains(s, container) {
		t.Errorf("the step summary names the container's path:\n%s", s)
	}
}

// parseOutputs reads a GITHUB_OUTPUT file (name=value lines and name<<DELIMITER blocks).
func parseOutputs(t *testing.T, s string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[name] = strings.Join(val, "\n")
		} else if name, val, ok := strings.Cut(lines[i], "="); ok {
			out[name] = val
		}
	}
	return out
}
