package check

import (
	"path/filepath"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/policy"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// TestRatchetingExceptions: with ratcheting on, value tightenings drop to warnings except for
// constraints that a combinator (allOf/anyOf/oneOf/not) of an ancestor places on the field and
// for CEL rules that use oldSelf; structural changes never drop.
func TestRatchetingExceptions(t *testing.T) {
	cfg, err := policy.Parse([]byte("ratcheting: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		rule string
		want finding.Severity
	}{
		{"max-added/maximum", "max-added", finding.Warning},
		{"min-increased/minimum", "min-increased", finding.Warning},
		{"enum-value-removed/basic", "enum-value-removed", finding.Warning},
		{"pattern-changed/basic", "pattern-changed", finding.Warning},
		{"format-added/basic", "format-added", finding.Warning},
		{"validation-rule-added/basic", "validation-rule-added", finding.Warning},
		{"max-added/under-all-of", "max-added", finding.Warning},
		{"max-added/under-all-of-ancestor", "max-added", finding.Error},
		{"validation-rule-added/transition-rule", "validation-rule-added", finding.Error},
		{"field-removed/leaf", "field-removed", finding.Error},
		{"required-added/existing-field", "required-added", finding.Error},
		{"type-changed/scalar", "type-changed", finding.Error},
		{"default-added/basic", "default-added", finding.Error},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join(casesDir, tc.dir)
			old, _ := source.ReadPath(filepath.Join(dir, "old.yaml"), false)
			new, _ := source.ReadPath(filepath.Join(dir, "new.yaml"), false)
			out := cfg.Apply(Trees(old, new, rules.Options{}).Findings)
			found := false
			for _, f := range out.Findings {
				if f.Rule == tc.rule {
					found = true
					if f.Severity != tc.want {
						t.Errorf("%s is %s with ratcheting, want %s", f.Rule, f.Severity, tc.want)
					}
				}
			}
			if !found {
				t.Fatalf("%s did not fire", tc.rule)
			}
		})
	}
}
