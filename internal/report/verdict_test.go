package report

import (
	"testing"

	"github.com/crdguard/crdguard/internal/policy"
)

// A failing verdict says how to acknowledge in the run's own terms: a label only where there is
// a pull request to label, the queue's pull request in a merge queue, an ignore entry elsewhere
// (a push, two releases compared with check).
func TestVerdictHintByRun(t *testing.T) {
	s := Summary{CRDs: 1, Error: 2}
	for _, tc := range []struct{ run, want string }{
		{policy.PullRequestRun, "verdict: fail — fix the changes above, or acknowledge them: one change by a maintainer's reply `/crdguard acknowledge <reason>` to its comment, or an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason; all of them with the label approved on the pull request"},
		{policy.MergeGroupRun, "verdict: fail — fix the changes above, or acknowledge them on their pull request (a maintainer's reply `/crdguard acknowledge <reason>`, or the label approved) and queue it again, or with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason"},
		{policy.PushRun, "verdict: fail — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason"},
		{"", "verdict: fail — fix the changes above, or acknowledge them with an ignore entry in .crdguard.yaml naming the change (change: its ID) with a reason"},
	} {
		if got := (Verdict{Fails: true, Label: "approved", Run: tc.run}).Line(s); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.run, got, tc.want)
		}
	}
	if got := (Verdict{Fails: true, Acknowledged: true, Label: "approved", Run: policy.MergeGroupRun}).Line(s); got != "verdict: pass — the breaking changes are acknowledged by the label approved" {
		t.Errorf("acknowledged: %s", got)
	}
}
