package check

import (
	"fmt"
	"slices"
	"testing"
)

// A sample the base schema already refused is the change's problem only where the change
// touches it: an untouched file gets one notice, an edited one keeps its warning.
func TestGitSamplesAlreadyInvalid(t *testing.T) {
	const sample = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: huge\n  namespace: default\nspec:\n  size: %d\n"
	for _, tc := range []struct {
		name    string
		edit    bool
		want    string
		notices []string
	}{
		{"untouched", false, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n",
			[]string{"1 sample problem(s) in files this change does not touch were not reported: those samples were already invalid under the base schema"}},
		{"edited in the change", true, "max-decreased widgets.example.com v1 .spec.size config/crd/widgets.yaml:32 head\n" +
			"sample-invalid widgets.example.com v1 .spec.size config/samples/widget.yaml:7 head\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestRepo(t)
			tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/old.yaml"))
			tr.Write("config/samples/widget.yaml", []byte(fmt.Sprintf(sample, 50)))
			tr.Branch("main", tr.Commit("base"))
			tr.Write("config/crd/widgets.yaml", caseFile(t, "sample-invalid/maximum-lowered/new.yaml"))
			if tc.edit {
				tr.Write("config/samples/widget.yaml", []byte(fmt.Sprintf(sample, 60)))
			}
			tr.Commit("lower the maximum")
			res := tr.check(GitOptions{Base: "main"})
			assertFindings(t, res, tc.want)
			if !slices.Equal(res.Notices, tc.notices) {
				t.Errorf("notices %q, want %q", res.Notices, tc.notices)
			}
		})
	}
}
