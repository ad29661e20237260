package policy

import (
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// No message leaves the policy longer than finding.MaxMessage (2,000 bytes), whatever a rule or
// the API server wrote (a 61 KB Go struct once); one at the bound is left whole.
func TestMessagesBounded(t *testing.T) {
	long := "spec.versions[0].schema: Invalid value: " + strings.Repeat("apiextensions.JSONSchemaProps{...} ", 1900)
	at := strings.Repeat("m", finding.MaxMessage)
	in := []finding.Finding{
		{Rule: "invalid-crd", Severity: finding.Error, CRD: "a.example.com", Message: long},
		{Rule: "field-removed", Severity: finding.Error, CRD: "b.example.com", Message: at},
	}
	out := Default().Apply(in).Findings
	if want := long[:finding.MaxMessage-len("…")] + "…"; out[0].Message != want {
		t.Errorf("message of %d bytes became %d bytes: %.60q…", len(long), len(out[0].Message), out[0].Message)
	}
	if out[1].Message != at {
		t.Errorf("a message at the bound was cut to %d bytes", len(out[1].Message))
	}
}
