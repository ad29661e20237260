package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestMapListToAtomicAsTheMessageSays holds list-type-changed's message for a map list that
// becomes atomic to a real API server: the atomic list refuses no stored object, but
// server-side apply now treats it as one value, so a field manager that applies its own items
// conflicts with the manager that set the others, and a forced apply replaces their items.
func TestMapListToAtomicAsTheMessageSays(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	const ports = `          spec:
            type: object
            properties:
              ports:
                type: array
                items:
                  type: object
                  required: [containerPort]
                  properties:
                    containerPort: {type: integer}
                    name: {type: string}
%s`
	old := ratchetCRD(t, "lists.example.com", "        properties:\n"+fmt.Sprintf(ports, "                x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys: [containerPort]\n"))
	nu := ratchetCRD(t, "lists.example.com", "        properties:\n"+fmt.Sprintf(ports, ""))
	s := Start(t)
	ctx := context.Background()
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, withSentinel(old, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.waitEstablished(ctx, old.Name); err != nil {
		t.Fatal(err)
	}
	obj := func(items ...string) map[string]any {
		var ps []any
		for _, it := range items {
			var p map[string]any
			_ = json.Unmarshal([]byte(it), &p)
			ps = append(ps, p)
		}
		return map[string]any{"apiVersion": "lists.example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": namespace}, "spec": map[string]any{"ports": ps}}
	}
	res := s.Dynamic.Resource(schema.GroupVersionResource{Group: "lists.example.com", Version: "v1", Resource: "widgets"}).Namespace(namespace)
	apply := func(manager string, force bool, items ...string) error {
		body, _ := json.Marshal(obj(items...))
		_, err := res.Patch(ctx, "w", types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: manager, Force: &force})
		return err
	}
	names := func() string {
		u, err := res.Get(ctx, "w", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		ps, _ := u.Object["spec"].(map[string]any)["ports"].([]any)
		for _, p := range ps {
			out = append(out, p.(map[string]any)["name"].(string))
		}
		return strings.Join(out, ",")
	}
	if err := apply("controller", false, `{"containerPort": 80, "name": "http"}`); err != nil {
		t.Fatal(err)
	}
	if err := apply("sidecar", false, `{"containerPort": 9090, "name": "metrics"}`); err != nil {
		t.Fatalf("a map list merges the items of two managers: %v", err)
	}
	if got := names(); got != "http,metrics" {
		t.Fatalf("before the change the list holds %s, want http,metrics", got)
	}
	if err := s.replaceCRD(ctx, nu, obj()); err != nil {
		t.Fatal(err)
	}
	u, err := res.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Errorf("the atomic list refuses the stored object: %v", err)
	}
	err = apply("sidecar", false, `{"containerPort": 9090, "name": "metrics"}`, `{"containerPort": 9091, "name": "debug"}`)
	if !apierrors.IsConflict(err) {
		t.Errorf("applying its own items after the change: %v, want a conflict", err)
	}
	if err := apply("sidecar", true, `{"containerPort": 9090, "name": "metrics"}`, `{"containerPort": 9091, "name": "debug"}`); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "metrics,debug" {
		t.Errorf("after a forced apply the list holds %s, want metrics,debug (the controller's item replaced)", got)
	}
}
