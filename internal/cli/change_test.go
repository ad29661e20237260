package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// diffChanges runs crdguard diff with JSON output and gives each finding as "rule crd path
// change builtin".
func diffChanges(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"diff", "--format", "json", "--fail-on", "never"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Findings []struct{ Rule, CRD, Path, Change, Builtin string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, strings.TrimSpace(strings.Join([]string{f.Rule, f.CRD, f.Path, f.Change, f.Builtin}, " ")))
	}
	return got
}

// A v1beta1 schema typed for v1 is one change of the CRD, at every node it typed, each still an
// error of its own; nodes typed within v1 are changes of their own.
func TestDiffGroupsV1beta1Typing(t *testing.T) {
	const cases = "../../testdata/rules/type-changed/"
	dir := cases + "v1beta1-schema-typed-for-v1/"
	got := diffChanges(t, dir+"old.yaml", dir+"new.yaml")
	const crd, id = "cephclusters.example.com", "c36a8e84ae83"
	var want []string
	for _, p := range []string{".spec", ".spec.mon", ".spec.mon.volumeClaimTemplate", ".spec.dashboard", ".spec.dashboard.port", ".spec.storage", ".spec.storage.nodes"} {
		want = append(want, "type-changed "+crd+" "+p+" "+id)
		if p == ".spec.mon.volumeClaimTemplate" {
			want = append(want, "preserve-unknown-fields-added "+crd+" "+p+" 211e15ad15c0")
		}
	}
	want = append(want, "preserve-unknown-fields-removed "+crd+"  53fbc87c3b03")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	dir = cases + "untyped-nodes-typed-within-v1/"
	got = diffChanges(t, dir+"old.yaml", dir+"new.yaml")
	if len(got) != 2 || strings.Fields(got[0])[3] == strings.Fields(got[1])[3] {
		t.Fatalf("typed within v1: want two changes, got\n%s", strings.Join(got, "\n"))
	}
}
