package celproof

import (
	"fmt"
	"testing"

	"github.com/crdguard/crdguard/internal/validation"
)

// TestIntroduced checks the first Kubernetes minor whose API server accepts each library in a
// new rule, against what the CRD validation of apiextensions-apiserver v0.29 to v0.37 did with
// testdata/libraries.yaml: a 1.N server compiles new rules with the environment of 1.(N-1).
func TestIntroduced(t *testing.T) {
	c := loadCRD(t, "testdata/libraries.yaml")
	v, err := validation.NewVersion(c, "v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field, fn, since string
	}{
		{"quantity", "", ""}, // accepted by every minor measured
		{"ip", "isIP", "1.31"},
		{"cidr", "isCIDR", "1.31"},
		{"fmt", "", "1.32"},
		{"twovar", "all", "1.33"},
		{"semver", "isSemver", "1.34"},
		{"distinct", "distinct", "1.35"},
	} {
		steps := []Step{{Property, "spec"}, {Property, tc.field}}
		rule := walk(v.Structural, steps).XValidations[0]
		for minor := uint(29); minor <= 37; minor++ {
			fn, since, tooNew := Introduced(v.Structural, steps, rule, minor)
			want := tc.since != "" && minor < parseMinor(t, tc.since)
			if tooNew != want || want && (since != tc.since || tc.fn != "" && fn != tc.fn) {
				t.Errorf("%s at 1.%d: %q, %q, %v; want refused %v (%q, since %s)", tc.field, minor, fn, since, tooNew, want, tc.fn, tc.since)
			}
		}
	}
}

func parseMinor(t *testing.T, v string) uint {
	t.Helper()
	var major, minor uint
	if _, err := fmt.Sscanf(v, "%d.%d", &major, &minor); err != nil {
		t.Fatal(err)
	}
	return minor
}
