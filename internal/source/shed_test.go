package source

import (
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/gittest"
)

// TestChangedTreesShed: a git comparison holds neither the YAML trees of its changed files'
// definitions nor what kustomize read and made once each side's kustomizations are built (the
// peak of argo-workflows v4.0.0 → v4.1.0: 100 MB of trees and 40 MB of copied files held
// while kustomize built four 2.8 MB definitions again); a tree comes back from the text when a
// line is asked for, at the same line, and what the builds installed is still known.
func TestChangedTreesShed(t *testing.T) {
	old, new := widgetsMaximumLowered(t)
	cmp := changedWidgets(t, "config/crd/kustomization.yaml", "resources:\n- widgets.yaml\npatches:\n- target: {kind: CustomResourceDefinition}\n  patch: |-\n    - op: add\n      path: /spec/names/categories/-\n      value: widgets\n")
	for _, side := range []struct {
		name string
		tree *Tree
		text []byte
	}{{"base", cmp.Old, old}, {"head", cmp.New, new}} {
		if side.tree.kz != nil {
			t.Errorf("%s: the kustomize file system and builds are held after the builds", side.name)
		}
		if !side.tree.Installs("config/crd/kustomization.yaml", "widgets.example.com") {
			t.Errorf("%s: what the kustomization installs was lost", side.name)
		}
		if len(side.tree.CRDs) != 1 {
			t.Fatalf("%s: %d CRDs, want 1", side.name, len(side.tree.CRDs))
		}
		c := side.tree.CRDs[0]
		if c.PatchedBy != "config/crd/kustomization.yaml" || !slices.Equal(c.Object.Spec.Names.Categories, []string{"all", "widgets"}) {
			t.Errorf("%s: the definition is not the one the kustomization builds (patched by %q, categories %q)", side.name, c.PatchedBy, c.Object.Spec.Names.Categories)
		}
		if held(c) {
			t.Errorf("%s: the changed file's YAML tree is held", side.name)
		}
		fresh, _ := crd.Parse(c.File, side.text)
		for _, at := range []crd.Path{{"spec", "names", "kind"}, c.VersionPath("v1").Join("schema", "openAPIV3Schema")} {
			if got, want := c.LineOf(at), fresh[0].LineOf(at); got != want || want < 2 {
				t.Errorf("%s: %v at line %d, want %d", side.name, at, got, want)
			}
		}
	}
}

// TestChangedTreesKeptWithoutBuilds: where no kustomization is built above a changed
// definition, its tree is kept: dropping it would only read it twice (kyverno v1.18.0 →
// v1.19.0: 16% more CPU time for nothing).
func TestChangedTreesKeptWithoutBuilds(t *testing.T) {
	cmp := changedWidgets(t, "hack/kustomization.yaml", "resources:\n- job.yaml\n")
	for _, tree := range []*Tree{cmp.Old, cmp.New} {
		if len(tree.CRDs) != 1 || !held(tree.CRDs[0]) {
			t.Errorf("%d CRDs, the changed file's tree dropped where nothing is built", len(tree.CRDs))
		}
	}
}

// changedWidgets compares a commit whose config/crd/widgets.yaml lowers a maximum with its
// parent, in a repository that also holds a kustomization (name and text).
func changedWidgets(t *testing.T, kustomization, text string) *Comparison {
	t.Helper()
	dir, base, head := widgetsRepo(t, kustomization, text)
	return compareCommits(t, dir, base, head)
}

// widgetsRepo is a repository whose head commit's config/crd/widgets.yaml lowers a maximum,
// beside a kustomization (name and text).
func widgetsRepo(t *testing.T, kustomization, text string) (dir string, base, head plumbing.Hash) {
	t.Helper()
	old, new := widgetsMaximumLowered(t)
	repo := gittest.New(t)
	repo.Write(kustomization, []byte(text))
	repo.Write("config/crd/widgets.yaml", old)
	base = repo.Commit("base")
	repo.Write("config/crd/widgets.yaml", new)
	return repo.Dir, base, repo.Commit("head")
}

// widgetsMaximumLowered are the two sides of the sample-invalid/maximum-lowered rule case.
func widgetsMaximumLowered(t *testing.T) (old, new []byte) {
	t.Helper()
	old, err1 := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/old.yaml")
	new, err2 := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/new.yaml")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return old, new
}

// held reports whether a definition holds its YAML tree (not dropped by crd.Shed).
func held(c *crd.CRD) bool {
	return !reflect.ValueOf(c).Elem().FieldByName("root").IsNil()
}

// TestChangedBlobsReadOnce: a changed definition that kustomize builds is read from git once
// per side, for the diff: the builds are served the same text (argo-workflows v4.0.0 →
// v4.1.0 resolved its 2.8 MB definitions' deltas a second time for them, a quarter of the
// run's CPU time).
func TestChangedBlobsReadOnce(t *testing.T) {
	dir, base, head := widgetsRepo(t, "config/crd/kustomization.yaml", "resources:\n- widgets.yaml\n")
	reads := map[string]int{}
	cmp := compareCounting(t, dir, base, head, reads)
	if !cmp.New.Installs("config/crd/kustomization.yaml", "widgets.example.com") {
		t.Error("the kustomization was not built")
	}
	if n := reads["config/crd/widgets.yaml"]; n != 2 {
		t.Errorf("the changed definition was read %d times from git, want 2 (once per side)", n)
	}
}
