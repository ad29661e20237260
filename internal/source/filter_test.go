package source

import "testing"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"config/crd/**", "config/crd/bases/a.yaml", true},
		{"config/crd/**", "config/crd/a.yaml", true},
		{"config/crd/**", "config/rbac/a.yaml", false},
		{"**/testdata/**", "internal/x/testdata/crd.yaml", true},
		{"**/testdata/**", "testdata/crd.yaml", true},
		{"**/testdata/**", "internal/x/crd.yaml", false},
		{"config/*.yaml", "config/a.yaml", true},
		{"config/*.yaml", "config/sub/a.yaml", false},
		{"vendor", "vendor/github.com/x/crd.yaml", true},
		{"**/*.json", "a/b/c.json", true},
		{"**/*.json", "a/b/c.yaml", false},
		{"[", "x", false},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	f := Filter{Paths: []string{"config/**", "charts/**"}, Exclude: []string{"**/testdata/**"}}
	for name, want := range map[string]bool{
		"config/crd/a.yaml":          true,
		"config/crd/testdata/a.yaml": false,
		"charts/x/crds/a.yml":        true,
		"docs/a.yaml":                false,
		"config/crd/README.md":       false,
	} {
		if got := f.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if err := (Filter{Paths: []string{"[x"}}).Validate(); err == nil {
		t.Error("bad glob accepted")
	}
}
