package rules

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
)

// CEL rules are judged in the background and their findings emitted once the walk is over, each
// where the walk met it: the findings come out in walk order, which the first places named in a
// served version's conversion-missing message follow. Here .spec gains a rule, then its fields
// change, and .spec.config gains a rule before its own field changes.
func TestDeferredFindingsKeepWalkOrder(t *testing.T) {
	data, err := os.ReadFile("../../testdata/rules/validation-rule-added/basic/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	old := string(data)
	edit := func(s, from, to string) string {
		t.Helper()
		if !strings.Contains(s, from) {
			t.Fatalf("the fixture lacks %q", from)
		}
		return strings.Replace(s, from, to, 1)
	}
	changed := edit(old, "          spec:\n            type: object\n", "          spec:\n            type: object\n            x-kubernetes-validations:\n            - rule: self.size <= 10\n")
	changed = edit(changed, "              name:\n                type: string\n", "")
	changed = edit(changed, "              config:\n                type: object\n", "              config:\n                type: object\n                x-kubernetes-validations:\n                - rule: self.level >= 0\n")
	changed = edit(changed, "                  mode:\n                    type: string\n", "")
	var got []string
	for _, f := range Compare(crd.Pair{Old: parseOne(t, "old.yaml", old), New: parseOne(t, "new.yaml", changed)}, Options{}) {
		got = append(got, f.Rule+" "+f.Path)
	}
	want := []string{
		"validation-rule-added .spec",
		"validation-rule-added .spec.config",
		"field-removed .spec.config.mode",
		"field-removed .spec.name",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings in the order\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
