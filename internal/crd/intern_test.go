package crd

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// release is a CRD as a release manifest holds it; the fields vary from one release to the next.
func release(t *testing.T, spec, status string) *CRD {
	t.Helper()
	doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.postgresql.cnpg.io
spec:
  group: postgresql.cnpg.io
  names: {kind: Cluster, listKind: ClusterList, plural: clusters, singular: cluster}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
` + spec + `
          status:
            type: object
            properties:
` + status
	cs := Read("releases/cnpg.yaml", []byte(doc), false).CRDs
	if len(cs) != 1 || cs[0].Object == nil {
		t.Fatalf("the release does not decode to one definition: %v", Read("releases/cnpg.yaml", []byte(doc), false).Problems)
	}
	return cs[0]
}

func properties(c *CRD, path ...string) map[string]apiextv1.JSONSchemaProps {
	s := c.Object.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, p := range path {
		next := s.Properties[p]
		s = &next
	}
	return s.Properties
}

func sameMap(a, b map[string]apiextv1.JSONSchemaProps) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

const (
	instances = `              instances:
                type: integer
                minimum: 1
              storage:
                type: object
                properties:
                  size: {type: string, description: Size of the volume.}
`
	phase = `              phase: {type: string, description: The phase.}
              conditions:
                type: array
                items:
                  type: object
                  properties:
                    type: {type: string}
                    status: {type: string, enum: ["True", "False", Unknown]}
`
)

// Each release keeps what it decoded to; what two releases have in common is held once, what
// differs (even where the table's hash does not look) is each release's own.
func TestSubtreesKeepDefinitions(t *testing.T) {
	tests := []struct {
		name             string
		a, b             [2]string // spec and status properties of two releases
		specShared       bool      // spec's property map is one map
		storageShared    bool      // spec.storage's property map is one map
		statusShared     bool
		conditionsShared bool // status.conditions' items schema is one schema
	}{
		{name: "the same release twice", a: [2]string{instances, phase}, b: [2]string{instances, phase},
			specShared: true, storageShared: true, statusShared: true, conditionsShared: true},
		{name: "one bound changed, out of the hash's sight",
			a: [2]string{instances, phase}, b: [2]string{strings.Replace(instances, "minimum: 1", "minimum: 2", 1), phase},
			storageShared: true, statusShared: true, conditionsShared: true},
		{name: "a field deep down changed",
			a: [2]string{instances, phase}, b: [2]string{strings.Replace(instances, "Size of the volume.", "The size.", 1), phase},
			statusShared: true, conditionsShared: true},
		{name: "an enum value added under items",
			a: [2]string{instances, phase}, b: [2]string{instances, strings.Replace(phase, "Unknown]", "Unknown, Degraded]", 1)},
			specShared: true, storageShared: true},
		{name: "items changed out of the hash's sight",
			a: [2]string{instances, phase}, b: [2]string{instances, strings.Replace(phase, "type: {type: string}", "type: {type: string, maxLength: 316}", 1)},
			specShared: true, storageShared: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := release(t, tc.a[0], tc.a[1]), release(t, tc.b[0], tc.b[1])
			wantA, wantB := release(t, tc.a[0], tc.a[1]).Object, release(t, tc.b[0], tc.b[1]).Object
			table := NewSubtrees()
			table.Share(a.Object)
			table.Share(b.Object)
			if !reflect.DeepEqual(a.Object, wantA) || !reflect.DeepEqual(b.Object, wantB) {
				t.Fatal("a shared definition no longer says what it decoded to")
			}
			if got := sameMap(properties(a, "spec"), properties(b, "spec")); got != tc.specShared {
				t.Errorf("spec's properties shared: %v, want %v", got, tc.specShared)
			}
			if got := sameMap(properties(a, "spec", "storage"), properties(b, "spec", "storage")); got != tc.storageShared {
				t.Errorf("spec.storage's properties shared: %v, want %v", got, tc.storageShared)
			}
			if got := sameMap(properties(a, "status"), properties(b, "status")); got != tc.statusShared {
				t.Errorf("status's properties shared: %v, want %v", got, tc.statusShared)
			}
			ia, ib := properties(a, "status")["conditions"].Items.Schema, properties(b, "status")["conditions"].Items.Schema
			if got := ia == ib; got != tc.conditionsShared {
				t.Errorf("status.conditions' items shared: %v, want %v", got, tc.conditionsShared)
			}
		})
	}
}

// Every release of every CRD of the corpus, shared in one table as a repository's release
// manifests are: each keeps exactly what it decoded to.
func TestSubtreesKeepCorpusDefinitions(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/*/*/*/*.yaml")
	if len(files) == 0 {
		t.Skip("no corpus at ../shared/corpus")
	}
	table := NewSubtrees()
	var shared, fresh []*CRD
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range Read(f, data, false).CRDs {
			if c.Object == nil {
				continue
			}
			table.Share(c.Object)
			shared = append(shared, c)
			fresh = append(fresh, Read(f, data, false).CRDs[i])
		}
	}
	for i := range shared {
		if !reflect.DeepEqual(shared[i].Object, fresh[i].Object) {
			t.Errorf("%s %s: no longer what it decoded to once shared", shared[i].File, shared[i].Name)
		}
	}
	maps := 0
	for _, ms := range table.maps {
		maps += len(ms)
	}
	if len(shared) < 200 || maps == 0 {
		t.Fatalf("%d definitions, %d distinct property maps: the corpus was not read", len(shared), maps)
	}
}
