package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
	"github.com/crdguard/crdguard/internal/validation"
)

// TestRatchetingMatchesServer confirms the rules' Ratchetable marks against the API server's
// ratcheting validator: for each tightening case, an object valid under the old schema and
// invalid under the new one is refused on create, and an update that leaves the tightened field
// unchanged passes exactly when the finding says ratcheting applies.
func TestRatchetingMatchesServer(t *testing.T) {
	many := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = "t" + strings.Repeat("x", i)
		}
		return out
	}
	labels := map[string]any{}
	for i := 0; i < 17; i++ {
		labels["k"+strings.Repeat("x", i)] = "v"
	}
	for _, tc := range []struct {
		dir  string
		spec map[string]any
	}{
		{"max-added/maximum", map[string]any{"size": int64(11)}},
		{"min-added/minimum", map[string]any{"size": int64(0)}},
		{"min-increased/minimum", map[string]any{"size": int64(1)}},
		{"min-increased/exclusive-minimum", map[string]any{"size": int64(1)}},
		{"max-decreased/exclusive-maximum", map[string]any{"size": int64(10)}},
		{"max-added/max-length", map[string]any{"name": strings.Repeat("n", 64)}},
		{"max-added/max-items", map[string]any{"tags": many(17)}},
		{"min-added/min-items", map[string]any{"tags": []any{}}},
		{"max-added/max-properties", map[string]any{"labels": labels}},
		{"enum-added/basic", map[string]any{"name": "c"}},
		{"enum-value-removed/basic", map[string]any{"name": "b"}},
		{"pattern-added/basic", map[string]any{"name": "ABC"}},
		{"format-added/basic", map[string]any{"name": "not a hostname!"}},
		{"validation-rule-added/basic", map[string]any{"size": int64(11)}},
		{"multiple-of-added/basic", map[string]any{"size": int64(3)}},
		{"multiple-of-changed/tightened", map[string]any{"size": int64(2)}},
		{"max-added/under-all-of", map[string]any{"size": int64(11)}},
		{"max-added/under-all-of-ancestor", map[string]any{"size": int64(11)}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join(casesDir, tc.dir)
			parse := func(name string) *crd.CRD {
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				cs, _ := crd.Parse(name, data)
				return cs[0]
			}
			oldCRD, newCRD := parse("old.yaml"), parse("new.yaml")
			base, err := validation.NewSchema(oldCRD, "v1")
			if err != nil {
				t.Fatal(err)
			}
			head, err := validation.NewSchema(newCRD, "v1")
			if err != nil {
				t.Fatal(err)
			}
			obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": tc.spec}
			stored := base.Create(obj)
			if len(stored.Errors) != 0 {
				t.Fatalf("object invalid under the old schema: %v", stored.Errors)
			}
			if created := head.Create(obj); len(created.Errors) == 0 {
				t.Fatal("object valid under the new schema: the case does not tighten")
			}
			oldTree, newTree := &source.Tree{}, &source.Tree{}
			oldTree.CRDs, newTree.CRDs = []*crd.CRD{oldCRD}, []*crd.CRD{newCRD}
			rule := strings.Split(tc.dir, "/")[0]
			found := false
			for _, f := range Trees(oldTree, newTree, rules.Options{}).Findings {
				if f.Rule != rule {
					continue
				}
				found = true
				// The update changes another field (outside the finding's path) and leaves the
				// tightened one as it was: a controller or GitOps tool writing an existing object.
				updated := runtime.DeepCopyJSON(obj)
				if f.Path == ".spec" {
					updated["metadata"].(map[string]any)["labels"] = map[string]any{"changed": "yes"}
				} else {
					updated["spec"].(map[string]any)["config"] = map[string]any{"mode": "changed"}
				}
				serverRatchets := len(head.Update(updated, stored.Object)) == 0
				if f.Ratchetable != serverRatchets {
					t.Errorf("%s %s: crdguard says ratchetable=%v, the API server's ratcheting lets the update pass=%v", rule, f.Path, f.Ratchetable, serverRatchets)
				}
			}
			if !found {
				t.Fatalf("%s did not fire", rule)
			}
		})
	}
}
