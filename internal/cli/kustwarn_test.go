package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/charttest"
)

// crdguardArgs, set in the environment, makes this test binary run crdguard with those
// arguments (one a line) instead of its tests: a process of its own, with real standard output
// and standard error.
const crdguardArgs = "CRDGUARD_TEST_ARGS"

// Kustomize prints its deprecation warnings ("# Warning: 'patchesStrategicMerge' is deprecated.
// …") to the process's standard error itself, as kubectl apply -k shows them; standard output
// carries the report alone, so the JSON still parses and holds exactly the findings.
func TestKustomizeWarningsGoToStderr(t *testing.T) {
	if args := os.Getenv(crdguardArgs); args != "" {
		os.Args = append([]string{"crdguard"}, strings.Split(args, "\n")...)
		os.Exit(Main("", ""))
	}
	dir := t.TempDir()
	patch := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n  labels:\n    team: widgets\n"
	kustomization := "resources:\n- widgets.yaml\npatchesStrategicMerge:\n- team.yaml\n"
	for side, crd := range map[string]string{"old": charttest.Plain(`"d"`), "new": charttest.WithoutColor(charttest.Plain(`"d"`))} {
		charttest.Write(charttest.Folder{T: t, Dir: filepath.Join(dir, side)}, map[string]string{"kustomization.yaml": kustomization, "widgets.yaml": crd, "team.yaml": patch})
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKustomizeWarningsGoToStderr$")
	cmd.Env = append(os.Environ(), crdguardArgs+"="+strings.Join([]string{"diff", "--format", "json", filepath.Join(dir, "old"), filepath.Join(dir, "new")}, "\n"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("crdguard: %v, want exit 1\n%s%s", err, stdout.String(), stderr.String())
	}
	want := "error field-removed widgets.example.com widgets.yaml:30 base: .spec.color was removed: clients that set it are rejected or silently lose it, and stored values are pruned on the next write; keep the field and mark it deprecated, or add a new version with a conversion webhook"
	if got := strings.Join(findingLines(t, stdout.String()), "\n"); got != want {
		t.Errorf("findings\n%s\nwant\n%s", got, want)
	}
	warning := "# Warning: 'patchesStrategicMerge' is deprecated. Please use 'patches' instead. Run 'kustomize edit fix' to update your Kustomization automatically.\n"
	if got := stderr.String(); got != strings.Repeat(warning, 2) {
		t.Errorf("standard error\n%s\nwant kustomize's warning once per side", got)
	}
}
