package celproof

import (
	"regexp"
	"testing"
)

// TestShortestMatch builds strings for patterns of real CRDs and checks them with Go's regexp,
// which the API server validates patterns with.
func TestShortestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`, "1ms"},                                       // Flux intervals
		{`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`, "a"}, // Gateway API hostnames
		{`^v\d+\.\d+\.\d+$`, "v1.1.1"},
		{`^[A-Z]{2,3}-x$`, "AA-x"},
		{`(?i)^ABC$`, "abc"},
	} {
		got, ok := shortestMatch(tc.pattern)
		if !ok || got != tc.want {
			t.Errorf("shortestMatch(%q) = %q, %v; want %q", tc.pattern, got, ok, tc.want)
			continue
		}
		if !regexp.MustCompile(tc.pattern).MatchString(got) {
			t.Errorf("%q does not match %q", got, tc.pattern)
		}
	}
	for _, bad := range []string{`(`, `^a{300}$`, `[^\x00-\x{10FFFF}]`} {
		if got, ok := shortestMatch(bad); ok {
			t.Errorf("shortestMatch(%q) = %q, want no string", bad, got)
		}
	}
}
