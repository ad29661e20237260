package rules

import (
	"os"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
)

// Gateway API v1.2 gave spec.infrastructure.labels two new rules at once: two findings of one
// rule at one path, which must keep different keys (and so fingerprints, review comments and
// baseline deduplication) — the rule's text tells them apart.
func TestRulesAtOneNodeHaveTheirOwnKeys(t *testing.T) {
	data, err := os.ReadFile("../../testdata/rules/validation-rule-added/basic/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const labels = "              labels:\n                type: object\n"
	withRules := strings.Replace(string(data), labels, labels+`                x-kubernetes-validations:
                - rule: self.all(k, k.size() <= 63)
                - rule: self.all(k, !k.startsWith('kubernetes.io/'))
`, 1)
	if withRules == string(data) {
		t.Fatal("the fixture has no spec.labels object to add rules to")
	}
	keys := map[string]int{}
	for _, f := range Compare(crd.Pair{Old: parseOne(t, "old.yaml", string(data)), New: parseOne(t, "new.yaml", withRules)}, Options{}) {
		if f.Path == ".spec.labels" {
			keys[f.Key()]++
		}
	}
	if len(keys) != 2 {
		t.Fatalf("%d distinct keys among the findings for two new rules, want 2: %v", len(keys), keys)
	}
}

// parseOne parses a document that must hold exactly one CRD and no problem.
func parseOne(t *testing.T, name, doc string) *crd.CRD {
	t.Helper()
	cs, problems := crd.Parse(name, []byte(doc))
	if len(cs) != 1 || len(problems) > 0 {
		t.Fatalf("%s: %d CRDs, %v", name, len(cs), problems)
	}
	return cs[0]
}
