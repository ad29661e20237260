package policy

import (
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// FuzzParse: any configuration either parses into a usable policy or is an error; never a panic.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "mode: warn\n", "failMode: open\nratcheting: true\n", "rules:\n  field-added: off\n",
		"ignore:\n  - {crd: a, version: v1, path: .spec, rule: field-removed, reason: r}\n",
		"paths: [\"config/**\"]\nexclude: [x]\nsamples: [y]\nbaselines: [v1]\nacknowledgeLabel: ok\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		c.Apply([]finding.Finding{{Rule: "field-removed", Severity: finding.Error, CRD: "a", Version: "v1", Path: ".spec"}})
	})
}
