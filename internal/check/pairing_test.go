package check

import (
	"testing"

	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/source"
)

// Where copies of a CRD live decides what they are compared with (repository shapes seen in real
// projects: e2e manifests beside config/crd, vendored CRDs, release bundles kept per version).
func TestGitCopiesByPlace(t *testing.T) {
	base, changed := "field-removed/leaf/old.yaml", "field-removed/leaf/new.yaml"
	historic := "enum-value-removed/basic/new.yaml" // an older widgets, far from base
	for _, tc := range []struct {
		name   string
		before map[string]string // path → case file
		after  map[string]string // path → case file; "" deletes
		want   string
	}{
		{
			// The CRD leaves config/crd; an e2e copy of it stays. It is removed, not changed into
			// the fixture.
			name:   "release copy removed, test copy left",
			before: map[string]string{"config/crd/widgets.yaml": base, "test/e2e/manifests/widgets.yaml": base},
			after:  map[string]string{"config/crd/widgets.yaml": ""},
			want:   "crd-removed widgets.example.com   config/crd/widgets.yaml:4 base\n",
		},
		{
			name:   "release copy moved into a test folder",
			before: map[string]string{"config/crd/widgets.yaml": base},
			after:  map[string]string{"config/crd/widgets.yaml": "", "test/e2e/manifests/widgets.yaml": changed},
			want:   "crd-removed widgets.example.com   config/crd/widgets.yaml:4 base\n",
		},
		{
			// Twin: a fixture that changes beside an unchanged release copy is compared with its
			// own old self.
			name:   "test copy changed",
			before: map[string]string{"config/crd/widgets.yaml": base, "test/e2e/widgets.yaml": base},
			after:  map[string]string{"test/e2e/widgets.yaml": changed},
			want:   "field-removed widgets.example.com v1 .spec.name test/e2e/widgets.yaml:32 base\n",
		},
		{
			// A historical bundle file added for a release candidate is a new copy, not a change
			// to the current definition.
			name:   "new historical bundle",
			before: map[string]string{"releases/widgets-1.25.0.yaml": base},
			after:  map[string]string{"releases/widgets-1.26.0-rc1.yaml": changed},
			want:   "",
		},
		{
			// Twin: the current definition itself changes.
			name:   "current definition changed",
			before: map[string]string{"releases/widgets-1.25.0.yaml": base, "config/crd/widgets.yaml": base},
			after:  map[string]string{"config/crd/widgets.yaml": changed},
			want:   "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n",
		},
		{
			// A past release's bundle committed beside a move of the current definition is new
			// there: the moved copy takes the place of the one that left, and the removed
			// field is found at its old line.
			name:   "historical release file beside a move",
			before: map[string]string{"config/crd/widgets.yaml": base, "releases/v1.0.0/install.yaml": base},
			after:  map[string]string{"config/crd/widgets.yaml": "", "src/crds/widgets.yaml": changed, "releases/v0.9.0/install.yaml": historic},
			want:   "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n",
		},
		{
			// Twin: a release file newer than every other one is the upgrade itself.
			name:   "newest release file beside a move",
			before: map[string]string{"releases/v1.0.0/install.yaml": base, "config/crd/widgets.yaml": base},
			after:  map[string]string{"config/crd/widgets.yaml": "", "releases/v1.1.0/install.yaml": historic},
			want:   "enum-added widgets.example.com v1 .spec.name releases/v1.1.0/install.yaml:34 head\n",
		},
		{
			// A CRD promoted into the standard channel: the new, smaller copy there is new in
			// that bundle, never compared with the experimental copy, which is unchanged.
			name:   "promoted into a second bundle",
			before: map[string]string{"config/crd/experimental-install.yaml": base},
			after:  map[string]string{"config/crd/standard-install.yaml": changed},
			want:   "",
		},
		{
			// vendor/ is excluded by default: a vendored CRD that changes is not the project's.
			name:   "vendored copy",
			before: map[string]string{"config/crd/widgets.yaml": base, "vendor/example.com/api/widgets.yaml": base},
			after:  map[string]string{"vendor/example.com/api/widgets.yaml": changed},
			want:   "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			for p, f := range tc.before {
				tr.Write(p, caseFile(t, f))
			}
			tr.Branch("main", tr.Commit("base"))
			for p, f := range tc.after {
				if f == "" {
					tr.Remove(p)
				} else {
					tr.Write(p, caseFile(t, f))
				}
			}
			tr.Commit("change")
			res := tr.check(GitOptions{Base: "main", Filter: source.Filter{Exclude: policy.DefaultExclude}})
			assertFindings(t, res, tc.want)
		})
	}
}
