package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goreleaserConfig is the part of .goreleaser.yaml these tests hold to the build script.
type goreleaserConfig struct {
	Version int `yaml:"version"`
	Builds  []struct {
		Main    string   `yaml:"main"`
		Binary  string   `yaml:"binary"`
		Env     []string `yaml:"env"`
		Flags   []string `yaml:"flags"`
		Ldflags []string `yaml:"ldflags"`
		Goos    []string `yaml:"goos"`
		Goarch  []string `yaml:"goarch"`
	} `yaml:"builds"`
	DockersV2 []struct {
		Dockerfile string   `yaml:"dockerfile"`
		Platforms  []string `yaml:"platforms"`
		Tags       []string `yaml:"tags"`
	} `yaml:"dockers_v2"`
}

// TestReleaseBuildMatchesScript keeps the release binaries and the image's binary built as
// .ci/build-binary.sh builds the binary CI tests: same package, environment, flags and ldflags
// (the script's version variables are GoReleaser's tag and commit), and the release image on the
// base and with the entrypoint of the Dockerfile `uses: ./` builds.
func TestReleaseBuildMatchesScript(t *testing.T) {
	var cfg goreleaserConfig
	readYAML(t, "../../.goreleaser.yaml", &cfg)
	if cfg.Version != 2 || len(cfg.Builds) != 1 || len(cfg.DockersV2) != 1 {
		t.Fatalf("want GoReleaser v2 with one build and one image, got %+v", cfg)
	}
	b := cfg.Builds[0]

	script := readFile(t, "../../.ci/build-binary.sh")
	m := regexp.MustCompile(`(?m)^(\w+=\S+) go build ((?:-\S+ )*)\\\n\s+-ldflags="([^"]*)" \\\n\s+-o "\$out" (\S+)$`).FindStringSubmatch(script)
	if m == nil {
		t.Fatalf(".ci/build-binary.sh: no `ENV go build FLAGS \\ -ldflags=\"…\" \\ -o \"$out\" PACKAGE` in\n%s", script)
	}
	scriptLdflags := strings.NewReplacer("${CRDGUARD_VERSION:-}", "v{{ .Version }}", "${CRDGUARD_COMMIT:-}", "{{ .FullCommit }}").Replace(m[3])
	for _, c := range []struct{ what, script, release string }{
		{"package", m[4], b.Main},
		{"environment", m[1], strings.Join(b.Env, " ")},
		{"flags", strings.TrimSpace(m[2]), strings.Join(b.Flags, " ")},
		{"ldflags", scriptLdflags, strings.Join(b.Ldflags, " ")},
	} {
		if c.script != c.release {
			t.Errorf("%s: .ci/build-binary.sh has %q, .goreleaser.yaml %q", c.what, c.script, c.release)
		}
	}
	if b.Binary != "crdguard" || !slices.Equal(b.Goos, []string{"linux", "darwin", "windows"}) || !slices.Equal(b.Goarch, []string{"amd64", "arm64"}) {
		t.Errorf("release binaries: %s for %v × %v", b.Binary, b.Goos, b.Goarch)
	}
	if d := cfg.DockersV2[0]; !slices.Equal(d.Platforms, []string{"linux/amd64", "linux/arm64"}) || len(d.Tags) != 3 {
		t.Errorf("image: platforms %v, tags %v", d.Platforms, d.Tags)
	}

	test, release := readFile(t, "../../Dockerfile"), readFile(t, "../../"+cfg.DockersV2[0].Dockerfile)
	for _, re := range []string{`(?m)^FROM (\S+)$`, `(?m)^ENTRYPOINT (.+)$`} {
		want := regexp.MustCompile(re).FindAllStringSubmatch(test, -1)
		got := regexp.MustCompile(re).FindAllStringSubmatch(release, -1)
		if len(want) == 0 || len(got) != 1 || got[0][1] != want[len(want)-1][1] {
			t.Errorf("%s: Dockerfile has %q, %s %q", re, want, cfg.DockersV2[0].Dockerfile, got)
		}
	}
	if !strings.Contains(test, "sh .ci/build-binary.sh /crdguard") {
		t.Error("the Dockerfile does not build with .ci/build-binary.sh")
	}
}

// TestReleaseScript cuts a release in a scratch repository: the tag's commit is HEAD with only
// action.yml's image rewritten, the branch and working tree stay as they were, and wrong
// versions, existing tags and an action.yml without `image: Dockerfile` are refused.
func TestReleaseScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	script, err := filepath.Abs("../../.ci/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	action := readFile(t, "../../action.yml")
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := runIn(dir, nil, "git", args...)
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(out)
	}
	git("init", "-q", "-b", "main")
	git("config", "user.email", "ci@example.com")
	git("config", "user.name", "ci")
	if err := os.WriteFile(filepath.Join(dir, "action.yml"), []byte(action), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("readme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "base")
	head := git("rev-parse", "HEAD")

	for _, c := range []struct {
		version, owner string
		ok             bool
		stderr         string
	}{
		{"1.2.3", "", false, "not a release version"},
		{"v1.2", "", false, "not a release version"},
		{"v1.2.3; rm -rf /", "", false, "not a release version"},
		{"v1.2.3", "", true, ""},
		{"v1.2.3", "", false, "tag v1.2.3 exists already"},
		{"v1.3.0-rc.1", "someone", true, ""},
	} {
		env := []string{"CRDGUARD_OWNER=" + c.owner}
		if c.owner == "" {
			env = nil
		}
		out, err := runIn(dir, env, "sh", script, c.version)
		if (err == nil) != c.ok || !strings.Contains(out, c.stderr) {
			t.Errorf("release.sh %s: err %v, output\n%s", c.version, err, out)
		}
	}

	for _, c := range []struct{ tag, image string }{
		{"v1.2.3", "docker://ghcr.io/crdguard/crdguard:v1.2.3"},
		{"v1.3.0-rc.1", "docker://ghcr.io/someone/crdguard:v1.3.0-rc.1"},
	} {
		want := strings.Replace(action, "\n  image: Dockerfile\n", "\n  image: "+c.image+"\n", 1)
		if want == action {
			t.Fatal("action.yml has no line '  image: Dockerfile'")
		}
		if got := git("show", c.tag+":action.yml") + "\n"; got != want {
			t.Errorf("%s: action.yml is\n%s", c.tag, got)
		}
		if parent := git("rev-parse", c.tag+"^{commit}^"); parent != head {
			t.Errorf("%s: the release commit's parent is %s, want HEAD %s", c.tag, parent, head)
		}
		if changed := git("diff", "--name-only", head, c.tag); changed != "action.yml" {
			t.Errorf("%s: the release commit changes %q", c.tag, changed)
		}
	}
	if git("rev-parse", "HEAD") != head || git("status", "--porcelain") != "" {
		t.Error("the release script moved HEAD or touched the working tree")
	}

	// A HEAD whose action.yml already runs an image (a release commit) cannot be released again.
	git("checkout", "-q", "v1.2.3")
	if out, err := runIn(dir, nil, "sh", script, "v1.2.4"); err == nil || !strings.Contains(out, "exactly one line '  image: Dockerfile'") {
		t.Errorf("release from a release commit: err %v, output\n%s", err, out)
	}
}

// TestVersionFromRelease: the variables release builds set are what `crdguard version` prints.
func TestVersionFromRelease(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123456789abcdef01234567"
	var out bytes.Buffer
	if code := runVersion(&out); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(out.String(), "crdguard v1.2.3\ncommit: 0123456789abcdef0123456789abcdef01234567\n") {
		t.Errorf("version output:\n%s", out.String())
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(readFile(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// runIn runs a command in dir with git's identity and config isolated from the machine's.
func runIn(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=ci", "GIT_AUTHOR_EMAIL=ci@example.com", "GIT_COMMITTER_NAME=ci", "GIT_COMMITTER_EMAIL=ci@example.com")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestActionsPinned: every action a workflow uses is pinned by a full commit SHA, with the
// version it is in a comment (what Dependabot updates together); only the local action is not.
func TestActionsPinned(t *testing.T) {
	files, err := filepath.Glob("../../.github/workflows/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows: %v", err)
	}
	uses := regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(.*)$`)
	pinned := regexp.MustCompile(`^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)
	n := 0
	for _, f := range files {
		for _, m := range uses.FindAllStringSubmatch(readFile(t, f), -1) {
			n++
			if ref := strings.TrimSpace(m[1]); ref != "./" && !pinned.MatchString(ref) {
				t.Errorf("%s: uses %q: pin it as owner/repo@<40-hex SHA> # vX.Y.Z", filepath.Base(f), ref)
			}
		}
	}
	if n < 10 {
		t.Errorf("found only %d uses: lines", n)
	}
}
