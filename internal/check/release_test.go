package check

import "testing"

// Releases on release branches: v1.0.1 got a field backported on release-1.0 that v1.1.0 (cut
// from main) lacks. Upgrading v1.0.1 → v1.1.0 loses it, so comparing the two releases reports
// the removal, which their merge base (before the backport) would miss; a branch given as base
// is still compared through the merge base, as a pull request shows it.
func TestGitReleasesAreComparedAsTheyAre(t *testing.T) {
	tr := newTestRepo(t)
	tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/new.yaml"))
	fork := tr.Commit("v1.0.0")
	tr.Tag("v1.0.0", fork)
	tr.Write("config/crd/widgets.yaml", caseFile(t, "field-removed/leaf/old.yaml")) // .spec.name backported
	backport := tr.Commit("backport .spec.name")
	tr.Branch("release-1.0", backport)
	tr.Tag("v1.0.1", backport)
	tr.Checkout(fork)
	tr.Write("config/crd/widgets.yaml", append(caseFile(t, "field-removed/leaf/new.yaml"), "# v1.1.0\n"...))
	release := tr.Commit("v1.1.0")
	tr.Tag("v1.1.0", release)
	tr.Branch("main", release)
	for _, tc := range []struct {
		base, head, want string
		release          bool
	}{
		{"v1.0.1", "v1.1.0", "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n", true},
		{"refs/tags/v1.0.1", release.String(), "field-removed widgets.example.com v1 .spec.name config/crd/widgets.yaml:32 base\n", true},
		// Twins: a branch on either side is compared through the merge base (v1.0.0), as a pull
		// request would be.
		{"release-1.0", "v1.1.0", "", false},
		{"v1.0.1", "main", "", false},
	} {
		t.Run(tc.base+"..."+tc.head, func(t *testing.T) {
			res := tr.check(GitOptions{Base: tc.base, Head: tc.head})
			assertFindings(t, res, tc.want)
			wantBase := backport.String()
			wantMergeBase := fork.String()
			if tc.release {
				wantMergeBase = wantBase
			}
			if res.Release != tc.release || res.Base != wantBase || res.MergeBase != wantMergeBase {
				t.Errorf("release %t base %s merge base %s, want %t %s %s", res.Release, res.Base, res.MergeBase, tc.release, wantBase, wantMergeBase)
			}
		})
	}
}

// A version that stops being served and that no commit of the history stored (cert-manager's
// v1beta1 in v1.6, with a conversion webhook) has no schema that matters: only the end of serving
// is reported. Its twin without that history is in testdata/rules/field-removed.
func TestGitUnservedNeverStored(t *testing.T) {
	const dir = "field-removed/unserved-version-without-history/"
	tr := newTestRepo(t)
	tr.Write("config/crd/widgets.yaml", caseFile(t, dir+"old.yaml"))
	tr.Tag("v1.5.0", tr.Commit("v1.5.0"))
	tr.Branch("main", tr.Commit("base"))
	tr.Write("config/crd/widgets.yaml", caseFile(t, dir+"new.yaml"))
	tr.Commit("stop serving v1beta1")
	res := tr.check(GitOptions{Base: "main"})
	assertFindings(t, res, "served-version-removed widgets.example.com v1beta1  config/crd/widgets.yaml:21 head\n")
	want := "read the storage history of widgets.example.com (every file that held it, by metadata.name): 1 release tag and 2 commits were read to learn which of its versions were ever stored"
	if len(res.Notices) != 1 || res.Notices[0] != want {
		t.Errorf("notices %q, want %q", res.Notices, want)
	}
}
