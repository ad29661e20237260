package source

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/gittest"
)

// TestUnchangedCopiesReadOnce: release copies of a changed CRD that are one blob are read and
// parsed once, each copy under its own name (40 copies of a 60-CRD bundle held 40 parses,
// 1.1 GB); a copy in another blob that defines the same (v3: a comment more) keeps one Object
// with them; a copy that defines something else (v4: a label) is its own, holding the schema it
// has in common with them once. Their YAML trees are dropped and read again, from git, when a
// line is asked for.
func TestUnchangedCopiesReadOnce(t *testing.T) {
	old, new := widgetsMaximumLowered(t)
	repo := gittest.New(t)
	repo.Write("config/crd/widgets.yaml", old)
	repo.Write("releases/v1/widgets.yaml", old)
	repo.Write("releases/v2/widgets.yaml", old)
	repo.Write("releases/v3/widgets.yaml", append(append([]byte{}, old...), "# v3\n"...))
	repo.Write("releases/v4/widgets.yaml", bytes.Replace(old, []byte("metadata:\n"), []byte("metadata:\n  labels: {v: \"4\"}\n"), 1))
	base := repo.Commit("base")
	repo.Write("config/crd/widgets.yaml", new)
	head := repo.Commit("head")
	cmp := compareCommits(t, repo.Dir, base, head)
	for _, side := range []struct {
		name string
		crds []*crd.CRD
	}{{"base", cmp.Old.CRDs}, {"head", cmp.New.CRDs}} {
		var files []string
		for _, c := range side.crds {
			files = append(files, c.File)
		}
		want := []string{"releases/v1/widgets.yaml", "releases/v2/widgets.yaml", "releases/v3/widgets.yaml", "releases/v4/widgets.yaml", "config/crd/widgets.yaml"}
		if len(files) != len(want) {
			t.Fatalf("%s: CRDs from %q, want %q", side.name, files, want)
		}
		for i := range want {
			if files[i] != want[i] {
				t.Fatalf("%s: CRDs from %q, want %q", side.name, files, want)
			}
		}
		v1, v2, v3, v4, cfg := side.crds[0], side.crds[1], side.crds[2], side.crds[3], side.crds[4]
		if v1.Object != v2.Object || !v1.SameText(v2) || v1.Line != v2.Line {
			t.Errorf("%s: the copies of one blob were read twice", side.name)
		}
		if v3 == v1 || v3.Object != v1.Object || !v3.SameText(v1) {
			t.Errorf("%s: the copy in another blob that defines the same keeps an Object of its own", side.name)
		}
		if v4.Object == v1.Object || v4.SameText(v1) || v4.Object.Labels["v"] != "4" {
			t.Errorf("%s: the copy that defines something else shares another's Object", side.name)
		}
		if props := func(c *crd.CRD) unsafe.Pointer {
			return reflect.ValueOf(c.Object.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties).UnsafePointer()
		}; props(v4) != props(v1) || props(v1) == nil {
			t.Errorf("%s: the copy that defines something else holds a schema of its own where it has the same", side.name)
		}
		// Read again from git: the line of a key in a shed copy is the line in its file.
		at := crd.Path{"spec", "names", "kind"}
		for _, c := range []struct {
			*crd.CRD
			more int // lines above the key that cfg lacks
		}{{v1, 0}, {v3, 0}, {v4, 1}} {
			if got, want := c.LineOf(at), cfg.LineOf(at)+c.more; got != want {
				t.Errorf("%s: %s: spec.names.kind at line %d, want %d", side.name, c.File, got, want)
			}
		}
	}
}

// compareCommits is what CompareWorking finds between two commits of the repository in dir,
// with no filter and no working tree.
func compareCommits(t *testing.T, dir string, base, head plumbing.Hash) *Comparison {
	t.Helper()
	return compareCounting(t, dir, base, head, nil)
}

// compareCounting is compareCommits counting the blobs read into reads (nil: not counted).
func compareCounting(t *testing.T, dir string, base, head plumbing.Hash, reads map[string]int) *Comparison {
	t.Helper()
	r, err := OpenRepo(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err1 := r.Commit(base.String())
	h, err2 := r.Commit(head.String())
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	r.blobReads = reads
	cmp, err := r.CompareWorking(b, h, Filter{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cmp
}
