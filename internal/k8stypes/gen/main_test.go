package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/crdguard/crdguard/internal/k8stypes"
)

// TestCommittedDataIsCurrent regenerates the data from the module cache (offline: the modules
// are the build's own) and fails when internal/k8stypes/types.json differs: after a k8s.io/api
// upgrade, run go generate ./internal/k8stypes.
func TestCommittedDataIsCurrent(t *testing.T) {
	got, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../types.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/k8stypes/types.json is stale: run go generate ./internal/k8stypes")
	}
}

// TestWithRemoved: a removed field is added to its type with the type it used; the list is
// stale, and an error, once the linked k8s.io/api has the field or the type again.
func TestWithRemoved(t *testing.T) {
	claim := func(fields ...string) []*k8stypes.Type {
		ty := &k8stypes.Type{Key: "core/v1.PodResourceClaim", Name: "PodResourceClaim"}
		for _, f := range fields {
			ty.Fields = append(ty.Fields, k8stypes.Field{JSON: f, Shape: k8stypes.Shape{Kind: k8stypes.KindString}})
		}
		return []*k8stypes.Type{ty}
	}
	got, err := withRemoved(claim("name"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `[{"key":"core/v1.ClaimSource","name":"ClaimSource","fields":[{"json":"resourceClaimName","shape":{"kind":"string"}},{"json":"resourceClaimTemplateName","shape":{"kind":"string"}}]},` +
		`{"key":"core/v1.PodResourceClaim","name":"PodResourceClaim","fields":[{"json":"name","shape":{"kind":"string"}},{"json":"source","shape":{"kind":"object","ref":"core/v1.ClaimSource"},"removed":"v0.31.0"}]}]`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	for name, types := range map[string][]*k8stypes.Type{
		"the field again": claim("name", "source"),
		"the type again":  append(claim("name"), &k8stypes.Type{Key: "core/v1.ClaimSource"}),
		"no owner":        nil,
	} {
		if _, err := withRemoved(types); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
