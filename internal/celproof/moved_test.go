package celproof

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
)

// TestMoved proves a root rule moved to .spec with the same meaning, and must leave every other
// move undecided: a different list, a transition rule, a value the new schema reads differently,
// a rule that shadows self, a rule the old schema had at no ancestor.
func TestMoved(t *testing.T) {
	dir := "../../testdata/rules/validation-rule-implied/moved-down-a-node"
	o := loadCRD(t, filepath.Join(dir, "old.yaml"))
	spec := []Step{{Property, "spec"}}
	for _, tc := range []struct {
		name, rule string
		steps      []Step
		edit       func(string) string // of new.yaml
		want       Verdict
	}{
		{"same meaning", "!(self.type in ['legacy', 'managed'])", spec, nil, Implied},
		{"same meaning, a level further down", "!(self in ['legacy', 'managed'])", []Step{{Property, "spec"}, {Property, "type"}}, nil, Implied},
		{"another list", "!(self.type in ['legacy', 'hosted'])", spec, nil, Undecided},
		{"transition rule", "!(self.type in ['legacy', 'managed']) || self == oldSelf", spec, nil, Undecided},
		{"new default", "!(self.type in ['legacy', 'managed'])", spec, func(s string) string {
			return strings.Replace(s, "maxLength: 63", "maxLength: 63\n                default: legacy", 1)
		}, Undecided},
		{"self shadowed", "['x'].all(self, !(self.type in ['legacy', 'managed']))", spec, nil, Undecided},
		{"no such rule above", "self.replicas > 0", spec, nil, Undecided},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "new.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				data = []byte(tc.edit(string(data)))
			}
			cs, _ := crd.Parse("new.yaml", data)
			if len(cs) != 1 {
				t.Fatal("new.yaml does not parse")
			}
			n := cs[0]
			got := NewJudge(o, n, "v1").Moved(Change{Steps: tc.steps, After: apiextv1.ValidationRule{Rule: tc.rule}})
			if got.Verdict != tc.want {
				t.Errorf("%q: %v (because %q), want %v", tc.rule, got.Verdict, got.Because, tc.want)
			}
		})
	}
}
