package source

import "testing"

// Only folder names make a file a test input or a negative example; a shipped CRD in a folder
// or file that merely carries such a word ships.
func TestPathFacts(t *testing.T) {
	for _, tc := range []struct {
		rel  string
		want Facts
	}{
		{"config/crd/bases/fixtures.yaml", Facts{}},
		{"config/crd/bases/example.com_tests.yaml", Facts{}},
		{"charts/x/crds/crd.yaml", Facts{}},
		{"charts/test-operator/crds/crd.yaml", Facts{}},
		{"testing/crd.yaml", Facts{}},
		{"contest/crd.yaml", Facts{}},
		{"test/e2e/crds/crd.yaml", Facts{Test: "test"}},
		{"tests/crd.yaml", Facts{Test: "tests"}},
		{"pkg/x/testdata/crd.yaml", Facts{Test: "pkg/x/testdata"}},
		{"e2e/crd.yaml", Facts{Test: "e2e"}},
		{"integration/fixtures/gateway.yaml", Facts{Test: "integration/fixtures"}},
		{"src/__fixtures__/crd.json", Facts{Test: "src/__fixtures__"}},
		{"kuttl/00-install.yaml", Facts{Test: "kuttl"}},
		{"chainsaw/crd.yaml", Facts{Test: "chainsaw"}},
		{"hack/cel-tests/crd.yaml", Facts{Test: "hack/cel-tests", Negative: "hack/cel-tests"}},
		{"hack/validation_tests/x.yaml", Facts{Test: "hack/validation_tests", Negative: "hack/validation_tests"}},
		{"hack/e2e-fixtures/x.yaml", Facts{Test: "hack/e2e-fixtures"}},
		{"-tests/x.yaml", Facts{}},
		{"hack/invalid-examples/v1/httproute.yaml", Facts{Negative: "hack/invalid-examples"}},
		{"examples/negative/x.yaml", Facts{Negative: "examples/negative"}},
		{"crd.yaml", Facts{}},
		{"releases/v1.2.0/install.yaml", Facts{Release: "1.2.0"}},
		{"releases/widgets-1.26.0-rc1.yaml", Facts{Release: "1.26.0-rc1"}},
		{"dist/v0.3/crds.yaml", Facts{Release: "0.3"}},
		{"deploy/release/1.4.1/bundle.yaml", Facts{Release: "1.4.1"}},
		{"releases/install.yaml", Facts{}},
		{"releases/k8s1.30/x.yaml", Facts{}},
		{"config/crd/v1.2.0/widgets.yaml", Facts{}},
	} {
		if got := PathFacts(tc.rel); got != tc.want {
			t.Errorf("PathFacts(%q) = %+v, want %+v", tc.rel, got, tc.want)
		}
	}
}

func TestReleaseAtMost(t *testing.T) {
	for _, tc := range []struct {
		v, other string
		want     bool
	}{
		{"1.2.0", "1.2.0", true},
		{"1.1.9", "1.2.0", true},
		{"1.2.0", "1.1.9", false},
		{"1.26.0-rc1", "1.26.0", true},
		{"1.26.0", "1.26.0-rc1", false},
		{"0.9", "1.0.0", true},
		{"1.10.0", "1.9.0", false},
		{"x", "1.0.0", false},
	} {
		if got := ReleaseAtMost(tc.v, tc.other); got != tc.want {
			t.Errorf("ReleaseAtMost(%q, %q) = %v, want %v", tc.v, tc.other, got, tc.want)
		}
	}
}
