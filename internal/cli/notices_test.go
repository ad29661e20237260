package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// A file crdguard skips is noticed once per run: a manifest past the size limit, deleted in the
// pull request, was read for the comparison with the merge base and again for the baseline,
// and its notice came out once for each (twice on the old code).
func TestNoticeOncePerFileAndCause(t *testing.T) {
	repo := gittest.New(t)
	cases := "../../testdata/rules/field-removed/leaf/"
	repo.Copy("config/crd/widgets.yaml", cases+"old.yaml")
	big := "a: " + strings.Repeat("x", 17<<20) + "\n"
	repo.Write("big.yaml", []byte(big))
	base := repo.Commit("base")
	repo.Branch("main", base)
	repo.Tag("v1.0.0", base)
	repo.Copy("config/crd/widgets.yaml", cases+"new.yaml")
	repo.Remove("big.yaml")
	repo.Commit("remove a field")

	code, stdout, stderr := runCLI(t, "check", "--repo", repo.Dir, "--base", "main", "--baseline", "v1.0.0", "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc struct{ Notices []string }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if want := []string{"big.yaml: skipped, larger than 16 MiB"}; !slices.Equal(doc.Notices, want) {
		t.Fatalf("notices %q, want %q", doc.Notices, want)
	}
}
