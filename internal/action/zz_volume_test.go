package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/github/fakegithub"
	"github.com/crdguard/crdguard/internal/gittest"
)

func TestZZVolume(t *testing.T) {
	dir := os.Getenv("VOL_REPO")
	if dir == "" {
		t.Skip()
	}
	revs := func(r string) string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", r+"^{commit}").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	base, head := revs(os.Getenv("VOL_BASE")), revs(os.Getenv("VOL_HEAD"))
	diff, _ := exec.Command("git", "-C", dir, "diff", "-U3", base+"..."+head).Output()
	srv := fakegithub.New(t, token)
	srv.Files = fakegithub.FilesFromUnifiedDiff(string(diff))
	srv.Commits = map[string]bool{base: true, head: true}
	tmp := t.TempDir()
	pr := &pullRequest{t: t, repo: &gittest.Repo{Dir: dir}, srv: srv, base: base, head: head}
	pr.env = map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": filepath.Join(tmp, "event.json"),
		"GITHUB_REPOSITORY": "octo/widgets", "GITHUB_API_URL": srv.URL, "GITHUB_WORKSPACE": dir,
		"GITHUB_OUTPUT": filepath.Join(tmp, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary"),
		"INPUT_GITHUB-TOKEN": token, "GITHUB_SHA": head,
	}
	code, out := pr.run()
	t.Logf("exit %d\n%s", code, out)
	inline, file := 0, 0
	for _, c := range srv.Comments {
		if c.SubjectType == "file" {
			file++
		} else {
			inline++
		}
	}
	body := 0
	for _, r := range srv.Reviews {
		body += strings.Count(r.Body, "crdguard:fp=")
		t.Logf("review body %d bytes", len(r.Body))
	}
	cr := srv.CheckRuns[0]
	t.Logf("comments inline %d file %d; fingerprints in bodies %d; annotations %d; requests %d", inline, file, body, len(cr.Annotations), len(srv.Requests()))
}
