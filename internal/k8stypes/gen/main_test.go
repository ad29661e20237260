package main

import (
	"bytes"
	"os"
	"testing"
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
