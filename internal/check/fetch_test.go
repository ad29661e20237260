package check

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
	"github.com/crdguard/crdguard/internal/source"
)

// topicMark numbers the fast-import marks of topic commits apart from main's.
const topicMark = 100000

// history is a bare "origin" with a long main branch and a pull request branched off it, built
// by git itself (fast-import), as GitHub would serve it: any reachable SHA may be fetched, and
// partial clones are allowed.
type history struct {
	origin, main, head, mergeBase string
}

// newHistory builds main with n commits (the CRD in the first, a labels file and a log file
// changed by every later one, every tenth a merge of a topic branch) and a pull request branch, one commit removing a field, that
// starts behind commits before main's tip.
func newHistory(t *testing.T, n, behind int) history {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git builds the history and serves it over file://")
	}
	var b strings.Builder
	blob := func(path string, data []byte) {
		fmt.Fprintf(&b, "M 644 inline %s\ndata %d\n%s\n", path, len(data), data)
	}
	commit := func(ref string, mark int, from int, msg string) {
		fmt.Fprintf(&b, "commit %s\nmark :%d\ncommitter T <t@example.com> %d +0000\ndata %d\n%s\n", ref, mark, 1700000000+mark*60, len(msg), msg)
		if from > 0 {
			fmt.Fprintf(&b, "from :%d\n", from)
		}
	}
	for i := 1; i <= n; i++ {
		if i%10 == 0 {
			// Every tenth change is merged from a topic branch, as projects with pull requests
			// do: a shallow history then has boundary commits that are second parents.
			commit("refs/heads/topic", topicMark+i, i-2, fmt.Sprintf("topic %d", i))
			blob(fmt.Sprintf("docs/%d.md", i), []byte("topic\n"))
		}
		commit("refs/heads/main", i, 0, fmt.Sprintf("change %d", i))
		if i%10 == 0 {
			fmt.Fprintf(&b, "merge :%d\n", topicMark+i)
		}
		if i == 1 {
			blob("crds/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml"))
		}
		blob(".github/labels.yaml", []byte(fmt.Sprintf("- name: area/%d\n", i)))
		blob("CHANGELOG", []byte(fmt.Sprintf("change %d\n", i)))
	}
	commit("refs/heads/pr", n+1, n-behind, "remove .spec.name")
	blob("crds/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	b.WriteString("done\n")

	origin := filepath.Join(t.TempDir(), "origin.git")
	gitRun(t, "", "init", "-q", "--bare", origin)
	cmd := exec.Command("git", "-C", origin, "fast-import", "--quiet", "--done")
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	gitRun(t, origin, "config", "uploadpack.allowAnySHA1InWant", "true")
	gitRun(t, origin, "config", "uploadpack.allowFilter", "true")
	return history{origin: origin, main: gitRun(t, origin, "rev-parse", "main"), head: gitRun(t, origin, "rev-parse", "pr"),
		mergeBase: gitRun(t, origin, "rev-parse", fmt.Sprintf("main~%d", behind))}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Clones as actions/checkout makes them: the history crdguard needs is fetched into a temporary
// store, the findings are those of a full clone, and the clone's .git is left byte for byte as
// it was (the action runs as root: anything it wrote there would be root-owned).
func TestGitShallowAndPartialClones(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		behind  int
		clone   []string
		fetches bool
	}{
		// actions/checkout's default: one commit; the merge base is 3 commits behind main.
		{name: "depth 1, merge base 3 behind", n: 700, behind: 3, clone: []string{"--depth", "1"}, fetches: true},
		// A long-lived branch: deepening has to go past 500 commits.
		{name: "depth 1, merge base 650 behind", n: 700, behind: 650, clone: []string{"--depth", "1"}, fetches: true},
		// A blobless clone has every commit but the blobs of its checkout only.
		{name: "partial clone", n: 50, behind: 3, clone: []string{"--filter=blob:none"}, fetches: true},
		{name: "full clone", n: 50, behind: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t, tc.n, tc.behind)
			clone := filepath.Join(t.TempDir(), "clone")
			gitRun(t, "", append(append([]string{"clone", "-q", "--branch", "pr"}, tc.clone...), "file://"+h.origin, clone)...)
			before := gittest.Snapshot(t, filepath.Join(clone, ".git"))

			repo, err := source.OpenRepo(clone)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { repo.Close() })
			res, err := Git(repo, GitOptions{Base: h.main, Head: h.head})
			if err != nil {
				t.Fatal(err)
			}
			assertFindings(t, res, "field-removed widgets.example.com v1 .spec.name crds/widgets.yaml:32 base\n")
			if res.MergeBase != h.mergeBase {
				t.Errorf("merge base %s, want %s", res.MergeBase, h.mergeBase)
			}
			if fetched := len(repo.Fetched) > 0; fetched != tc.fetches {
				t.Errorf("fetched %v, want fetching: %v", repo.Fetched, tc.fetches)
			}
			t.Logf("fetched %d commits, notices %v", len(repo.Fetched), res.Notices)
			if err := repo.Close(); err != nil {
				t.Fatal(err)
			}
			gittest.AssertUntouched(t, filepath.Join(clone, ".git"), before)
		})
	}
}

// A commit the remote does not have: the advice fits where crdguard runs.
func TestMissingCommitAdvice(t *testing.T) {
	h := newHistory(t, 5, 1)
	clone := filepath.Join(t.TempDir(), "clone")
	gitRun(t, "", "clone", "-q", "--depth", "1", "--branch", "pr", "file://"+h.origin, clone)
	missing := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		inActions bool
		advice    string
	}{
		{false, "run `git fetch origin " + missing + "` and try again"},
		{true, "check out with full history (actions/checkout: fetch-depth: 0)"},
	} {
		repo, err := source.OpenRepo(clone)
		if err != nil {
			t.Fatal(err)
		}
		repo.InActions = tc.inActions
		_, err = Git(repo, GitOptions{Base: missing, Head: h.head})
		// The remote's reason follows "fetching from origin:" (git-upload-pack's "not our ref", or a
		// broken pipe when it hangs up first).
		if err == nil || !strings.Contains(err.Error(), tc.advice) || !strings.Contains(err.Error(), "(fetching from origin: ") {
			t.Errorf("in actions %v: error %v, want %q and the remote's reason", tc.inActions, err, tc.advice)
		}
		repo.Close()
	}
}

// A fork's head that the remote does not serve by SHA is fetched as refs/pull/N/head. The
// origin serves by SHA only the tips of its refs (allowTipSHA1InWant), and the pull request moved
// on after the run's event: the commit wanted is one behind the tip of refs/pull/42/head, on no
// branch.
func TestForkHeadThroughPullRef(t *testing.T) {
	h := newHistory(t, 20, 3)
	gitRun(t, h.origin, "config", "uploadpack.allowAnySHA1InWant", "false")
	gitRun(t, h.origin, "config", "uploadpack.allowTipSHA1InWant", "true")
	moved := gitRun(t, h.origin, "commit-tree", h.head+"^{tree}", "-p", h.head, "-m", "later push")
	gitRun(t, h.origin, "update-ref", "refs/pull/42/head", moved)
	gitRun(t, h.origin, "update-ref", "-d", "refs/heads/pr")
	gitRun(t, h.origin, "update-ref", "refs/pull/44/head", h.main) // force-pushed away from the commit
	for _, tc := range []struct {
		name string
		pr   int
		// err is the whole error; "" for success.
		err string
	}{
		{name: "through refs/pull/42/head", pr: 42},
		{name: "no pull request: by SHA only", pr: 0,
			err: "head: commit " + h.head + ": what the comparison needs is not in this clone and could not be fetched (fetching from origin: NOT-OUR-REF); check out with full history (actions/checkout: fetch-depth: 0)"},
		{name: "no such pull request", pr: 43,
			err: "head: commit " + h.head + ": what the comparison needs is not in this clone and could not be fetched (fetching from origin: by SHA: NOT-OUR-REF; as refs/pull/43/head: couldn't find remote ref \"refs/pull/43/head\"); check out with full history (actions/checkout: fetch-depth: 0)"},
		{name: "pull request force-pushed away from the commit", pr: 44,
			err: "head: commit " + h.head + ": what the comparison needs is not in this clone and could not be fetched (fetching from origin: by SHA: NOT-OUR-REF; as refs/pull/44/head: it does not hold " + h.head + " within 50 commits of its tip (the pull request's head moved on, or the commit is not in it)); check out with full history (actions/checkout: fetch-depth: 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clone := filepath.Join(t.TempDir(), "clone")
			gitRun(t, "", "clone", "-q", "--depth", "1", "--branch", "main", "file://"+h.origin, clone)
			before := gittest.Snapshot(t, filepath.Join(clone, ".git"))
			repo, err := source.OpenRepo(clone)
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			repo.InActions, repo.PullRequest = true, tc.pr
			res, err := Git(repo, GitOptions{Base: h.main, Head: h.head})
			if tc.err != "" {
				if got := notOurRef(err); got != tc.err {
					t.Fatalf("error\n%s\nwant\n%s", got, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertFindings(t, res, "field-removed widgets.example.com v1 .spec.name crds/widgets.yaml:32 base\n")
			if res.MergeBase != h.mergeBase {
				t.Errorf("merge base %s, want %s", res.MergeBase, h.mergeBase)
			}
			if err := repo.Close(); err != nil {
				t.Fatal(err)
			}
			gittest.AssertUntouched(t, filepath.Join(clone, ".git"), before)
		})
	}
}

// notOurRef writes git-upload-pack's refusal of an unadvertised SHA, whose wording depends on
// the git version (and can be a broken pipe when it hangs up first), as NOT-OUR-REF.
func notOurRef(err error) string {
	if err == nil {
		return "<nil>"
	}
	return regexp.MustCompile(`\(fetching from origin: (by SHA: )?[^;)]*`).ReplaceAllString(err.Error(), "(fetching from origin: ${1}NOT-OUR-REF")
}
