package source

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsOLMManifest(t *testing.T) {
	for name, want := range map[string]bool{
		"bundle/manifests/widgets-operator.clusterserviceversion.yaml":       true,
		"config/manifests/bases/widgets-operator.clusterserviceversion.yaml": true,
		"0.1.0/manifests/Widgets.ClusterServiceVersion.yml":                  true,
		"bundle/manifests/widgets.clusterserviceversion.json":                true,
		"bundle/manifests/example.com_widgets.yaml":                          false,
		"docs/clusterserviceversion.md":                                      false,
		"clusterserviceversion.yaml.tmpl":                                    false,
	} {
		if got := IsOLMManifest(name); got != want {
			t.Errorf("IsOLMManifest(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestDirOLMBundle: the first shipped ClusterServiceVersion of a folder, never one in a test
// folder or a hidden one.
func TestDirOLMBundle(t *testing.T) {
	root := t.TempDir()
	write := func(name string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("kind: ClusterServiceVersion\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string) {
		t.Helper()
		got, err := DirOLMBundle(root)
		if err != nil {
			t.Fatal(err)
		}
		if want != "" {
			want = filepath.ToSlash(root) + "/" + want
		}
		if got != want {
			t.Errorf("DirOLMBundle = %q, want %q", got, want)
		}
	}
	write("test/e2e/bundle/manifests/op.clusterserviceversion.yaml")
	write(".cache/manifests/op.clusterserviceversion.yaml")
	check("")
	write("bundle/manifests/op.clusterserviceversion.yaml")
	write("config/manifests/bases/op.clusterserviceversion.yaml")
	check("bundle/manifests/op.clusterserviceversion.yaml")
}
