package action

import (
	"fmt"
	"strings"
	"testing"
)

// TestCheckRunTextHoldsTheRest: a pull request that removes 800 fields is more than a check
// run's summary holds. Every removed field is listed as a breaking change in the summary or, for
// those the summary has no room for, in the check run's text, once; the summary says the text
// continues it, and the step summary has the whole report.
func TestCheckRunTextHoldsTheRest(t *testing.T) {
	const n = 800
	field := func(i int) string { return fmt.Sprintf("%s%03d", strings.Repeat("someRatherLongFieldName", 2), i) }
	crd := func(fields int) []byte {
		var b strings.Builder
		b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n" +
			"  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n" +
			"      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              keep: {type: string}\n")
		for i := 0; i < fields; i++ {
			fmt.Fprintf(&b, "              %s: {type: string}\n", field(i))
		}
		return []byte(b.String())
	}
	pr := newPullRequestOf(t, crd(n), crd(0))
	if code, out := pr.run(); code != ExitFindings {
		t.Fatalf("exit %d\n%s", code, out)
	}
	cr := pr.completed(pr.head)
	if len(cr.Summary) > 65535 || len(cr.Text) > 65535 || !strings.HasPrefix(cr.Text, "### crdguard: continued from the summary\n") {
		t.Fatalf("summary of %d bytes, text of %d:\n%.300s", len(cr.Summary), len(cr.Text), cr.Text)
	}
	inSummary, inText := 0, 0
	for i := 0; i < n; i++ {
		line := "\n- widgets.example.com `field-removed` v1 .spec." + field(i) + "\n"
		s, x := strings.Count(cr.Summary, line), strings.Count(cr.Text, line)
		if s+x != 1 {
			t.Fatalf(".spec.%s is listed %d times in the summary and %d in the text", field(i), s, x)
		}
		inSummary += s
		inText += x
	}
	if continued := fmt.Sprintf("\nContinued below the summary (GitHub's limit of 65535 characters): %d more breaking changes;", inText); inText == 0 || !strings.Contains(cr.Summary, continued) {
		t.Errorf("%d listed in the summary, %d in the text; the summary lacks %q", inSummary, inText, continued)
	}
	if step := readFile(t, pr.env["GITHUB_STEP_SUMMARY"]); strings.Count(step, "\n| ❌ error | `field-removed` |") != n || strings.Contains(step, "Not shown here") {
		t.Errorf("the step summary (%d bytes) lacks some of the %d rows, or cuts", len(step), n)
	}
}
