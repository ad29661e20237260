package source

import (
	"os"
	"reflect"
	"testing"
	"unsafe"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/gittest"
)

// TestComparisonSharesSubtrees: the definitions of a comparison hold what they have in common
// once — a bundle's copy and the kustomize build of the file it copies, the two sides where
// the change leaves a subtree alone — and each still says what its text says.
func TestComparisonSharesSubtrees(t *testing.T) {
	old, err1 := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/old.yaml")
	new, err2 := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/new.yaml")
	webhook, err3 := os.ReadFile("../../testdata/repos/kubebuilder/old/config/crd/patches/webhook_in_widgets.yaml")
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	repo := gittest.New(t)
	repo.Write("config/crd/kustomization.yaml", []byte("resources: [bases/widgets.yaml]\npatches:\n- path: patches/webhook.yaml\n"))
	repo.Write("config/crd/patches/webhook.yaml", webhook)
	repo.Write("config/crd/bases/widgets.yaml", old)
	repo.Write("deploy/install.yaml", old)
	base := repo.Commit("base")
	repo.Write("config/crd/bases/widgets.yaml", new)
	repo.Write("deploy/install.yaml", new)
	head := repo.Commit("head")
	cmp := compareCommits(t, repo.Dir, base, head)
	defs := func(tr *Tree) (built, bundle *crd.CRD) {
		t.Helper()
		for _, c := range tr.CRDs {
			switch {
			case c.File == "config/crd/bases/widgets.yaml" && c.PatchedBy == "config/crd/kustomization.yaml":
				built = c
			case c.File == "deploy/install.yaml":
				bundle = c
			}
		}
		if built == nil || bundle == nil {
			t.Fatalf("no kustomize build and bundle copy among %d definitions", len(tr.CRDs))
		}
		return built, bundle
	}
	oldBuilt, oldBundle := defs(cmp.Old)
	newBuilt, newBundle := defs(cmp.New)
	for _, c := range []struct {
		def  *crd.CRD
		text []byte
	}{{oldBundle, old}, {newBundle, new}} {
		if fresh := crd.Read(c.def.File, c.text, false).CRDs; len(fresh) != 1 || !reflect.DeepEqual(c.def.Object, fresh[0].Object) {
			t.Errorf("%s: no longer what its text says once shared", c.def.File)
		}
	}
	if newBuilt.Object.Spec.Conversion.Strategy != apiextv1.WebhookConverter {
		t.Errorf("the build lost its patch: conversion %+v", newBuilt.Object.Spec.Conversion)
	}
	props := func(c *crd.CRD, name string) unsafe.Pointer {
		p := c.Object.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties[name]
		return reflect.ValueOf(p.Properties).UnsafePointer()
	}
	for _, tc := range []struct {
		what string
		a, b *crd.CRD
		prop string
		want bool
	}{
		{"the bundle's copy and the build of the file (head)", newBundle, newBuilt, "spec", true},
		{"the bundle's copy and the build of the file (base)", oldBundle, oldBuilt, "spec", true},
		{"status, which the change leaves alone, on both sides", oldBundle, newBundle, "status", true},
		{"spec, whose maximum the change lowers, on both sides", oldBundle, newBundle, "spec", false},
	} {
		if got := props(tc.a, tc.prop) == props(tc.b, tc.prop); got != tc.want {
			t.Errorf("%s: %s's properties held once: %v, want %v", tc.what, tc.prop, got, tc.want)
		}
	}
}
