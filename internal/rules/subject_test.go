package rules

import (
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
)

// Gateway API v1.2 gave spec.infrastructure.labels two new rules at once: two findings of one
// rule at one path, which must keep different keys (and so fingerprints, review comments and
// baseline deduplication) — the rule's text tells them apart.
func TestRulesAtOneNodeHaveTheirOwnKeys(t *testing.T) {
	const doc = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
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
              labels:
                type: object
                maxProperties: 8
                additionalProperties: {type: string, maxLength: 63}
RULES`
	parse := func(name, rules string) *crd.CRD {
		t.Helper()
		cs, problems := crd.Parse(name, []byte(strings.Replace(doc, "RULES", rules, 1)))
		if len(cs) != 1 || len(problems) > 0 {
			t.Fatalf("%s: %d CRDs, %v", name, len(cs), problems)
		}
		return cs[0]
	}
	old := parse("old.yaml", "")
	new := parse("new.yaml", `                x-kubernetes-validations:
                - rule: self.all(k, k.size() <= 63)
                - rule: self.all(k, !k.startsWith('kubernetes.io/'))`)
	keys := map[string]int{}
	for _, f := range Compare(crd.Pair{Old: old, New: new}, Options{}) {
		if f.Path == ".spec.labels" {
			keys[f.Key()]++
		}
	}
	if len(keys) != 2 {
		t.Fatalf("%d distinct keys among the findings for two new rules, want 2: %v", len(keys), keys)
	}
}
