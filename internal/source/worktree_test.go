package source

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/gittest"
)

// Uncommitted manifests are found: edited, deleted and new files; not ignored ones, files that
// are not manifests, paths the filter leaves out, or files edited back to what is committed.
func TestWorkingChanges(t *testing.T) {
	repo := gittest.New(t)
	crd := func(s string) []byte { return []byte("kind: CustomResourceDefinition\nname: " + s + "\n") }
	repo.Write("config/other.yaml", []byte("kind: ConfigMap\n"))
	repo.Write(".gitignore", []byte("build/\n*.tmp.yaml\n"))
	repo.Write("config/crd/a.yaml", crd("a1"))
	repo.Write("config/crd/b.yaml", crd("b1"))
	repo.Write("config/crd/same.yaml", crd("same"))
	repo.Write("config/samples/x.yaml", crd("x1"))
	repo.Write("main.go", []byte("package main\n"))
	// Over the size limit: committed and unchanged, and committed then edited past the limit.
	big := append(crd("big"), bytes.Repeat([]byte("# padding\n"), MaxFileSize/10+1)...)
	repo.Write("config/crd/big.yaml", big)
	repo.Write("config/crd/big-edited.yaml", big)
	head := repo.Commit("base")
	repo.Write("config/crd/big-edited.yaml", append(big, "# edited\n"...))

	repo.Write("config/crd/a.yaml", crd("a2"))                // edited
	repo.Remove("config/crd/b.yaml")                          // deleted
	repo.Write("config/crd/c.yaml", crd("c1"))                // new, not ignored
	repo.Write("config/crd/same.yaml", crd("same2"))          // edited…
	repo.Write("config/crd/same.yaml", crd("same"))           // …and back
	repo.Write("config/crd/d.tmp.yaml", crd("d1"))            // ignored
	repo.Write("build/out.yaml", crd("o1"))                   // ignored folder
	repo.Write("config/samples/x.yaml", crd("x2"))            // excluded
	repo.Write("config/other.yaml", []byte("kind: Secret\n")) // no CRD on either side
	repo.Write("main.go", []byte("package main // edited\n")) // not a manifest
	repo.Write("vendor/mod/.git/HEAD", []byte("ref: x\n"))    // a nested repository…
	repo.Write("vendor/mod/crd.yaml", crd("nested"))          // …is not ours

	r, err := OpenRepo(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.repo.CommitObject(head)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.WorkingChanges(c, Filter{Exclude: []string{"config/samples/**"}})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for name, data := range got {
		text, _, _ := strings.Cut(string(data), "\n#")
		lines = append(lines, name+"="+strings.TrimPrefix(strings.TrimSpace(text), "kind: CustomResourceDefinition\nname: "))
	}
	sort.Strings(lines)
	if want := "config/crd/a.yaml=a2 config/crd/b.yaml= config/crd/big-edited.yaml=big config/crd/c.yaml=c1"; strings.Join(lines, " ") != want {
		t.Errorf("working changes %q, want %q", lines, want)
	}
	if got["config/crd/b.yaml"] != nil {
		t.Error("a deleted file must map to nil")
	}

}
