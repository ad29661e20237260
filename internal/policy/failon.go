package policy

import (
	"fmt"

	"github.com/crdguard/crdguard/internal/finding"
)

// FailOn is the lowest severity that fails a run (the CLI's --fail-on, the Action's fail-on).
type FailOn struct {
	at    finding.Severity
	never bool
}

// ParseFailOn reads "error", "warning" or "never".
func ParseFailOn(s string) (FailOn, error) {
	switch s {
	case "error":
		return FailOn{at: finding.Error}, nil
	case "warning":
		return FailOn{at: finding.Warning}, nil
	case "never":
		return FailOn{never: true}, nil
	}
	return FailOn{}, fmt.Errorf("%q is not allowed (allowed: error, warning, never)", s)
}

// Fails reports whether any finding is at or above the threshold.
func (f FailOn) Fails(fs []finding.Finding) bool {
	if f.never {
		return false
	}
	for _, x := range fs {
		if x.Severity >= f.at {
			return true
		}
	}
	return false
}
