package report

import (
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

// TestBreakingLineReadsAsASentence: a breaking change's line names the path once; what follows
// the colon reads on its own, with the built-in type's field as its subject when the message
// names one ("PodResourceClaim.source was removed", not "(PodResourceClaim.source) was
// removed").
func TestBreakingLineReadsAsASentence(t *testing.T) {
	const path = ".spec.resourceClaims[*].source"
	for _, tc := range []struct {
		name, builtin, message, want string
	}{
		{name: "built-in field", builtin: "PodResourceClaim.source", message: path + " (PodResourceClaim.source) was removed: clients that set it are rejected",
			want: "- pods.example.com `field-removed` v1 .spec.resourceClaims\\[\\*\\].source: PodResourceClaim.source was removed"},
		{name: "own field", message: path + " was removed: clients that set it are rejected",
			want: "- pods.example.com `field-removed` v1 .spec.resourceClaims\\[\\*\\].source: was removed"},
		{name: "path inside", builtin: "PodResourceClaim.source", message: "maxLength of " + path + " (PodResourceClaim.source) changed from 2 to 1: stored objects …",
			want: "- pods.example.com `field-removed` v1 .spec.resourceClaims\\[\\*\\].source: maxLength of .spec.resourceClaims\\[\\*\\].source (PodResourceClaim.source) changed from 2 to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := finding.Finding{Rule: "field-removed", Severity: finding.Error, CRD: "pods.example.com", Version: "v1", Path: path,
				Message: tc.message, Builtin: tc.builtin, Location: finding.Location{File: "crd.yaml", Line: 9, Side: finding.Base}}
			got := breakingLines(t, MarkdownWithin(Report{Findings: []finding.Finding{f}, CRDs: 1}, MaxMarkdown, "", ""))
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("breaking lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}
