package source

import (
	"os"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/gittest"
)

// TestUnchangedCopiesReadOnce: release copies of a changed CRD that are one blob are read and
// parsed once, each copy under its own name (40 copies of a 60-CRD bundle held 40 parses,
// 1.1 GB); a copy that differs is read on its own.
func TestUnchangedCopiesReadOnce(t *testing.T) {
	old, err1 := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/old.yaml")
	new, err2 := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/new.yaml")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	repo := gittest.New(t)
	repo.Write("config/crd/widgets.yaml", old)
	repo.Write("releases/v1/widgets.yaml", old)
	repo.Write("releases/v2/widgets.yaml", old)
	repo.Write("releases/v3/widgets.yaml", append(append([]byte{}, old...), "# v3\n"...))
	base := repo.Commit("base")
	repo.Write("config/crd/widgets.yaml", new)
	head := repo.Commit("head")
	r, err := OpenRepo(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err1 := r.Commit(base.String())
	h, err2 := r.Commit(head.String())
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cmp, err := r.CompareWorking(b, h, Filter{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		name string
		crds []*crd.CRD
	}{{"base", cmp.Old.CRDs}, {"head", cmp.New.CRDs}} {
		var files []string
		for _, c := range side.crds {
			files = append(files, c.File)
		}
		want := []string{"releases/v1/widgets.yaml", "releases/v2/widgets.yaml", "releases/v3/widgets.yaml", "config/crd/widgets.yaml"}
		if len(files) != len(want) {
			t.Fatalf("%s: CRDs from %q, want %q", side.name, files, want)
		}
		for i := range want {
			if files[i] != want[i] {
				t.Fatalf("%s: CRDs from %q, want %q", side.name, files, want)
			}
		}
		v1, v2, v3 := side.crds[0], side.crds[1], side.crds[2]
		if v1.Object != v2.Object || !v1.SameText(v2) || v1.Line != v2.Line {
			t.Errorf("%s: the copies of one blob were read twice", side.name)
		}
		if v3.Object == v1.Object {
			t.Errorf("%s: the copy that differs was not read on its own", side.name)
		}
	}
}
