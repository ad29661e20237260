package rules

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
)

// A CRD full of patterns built to blow up the automata spends the pair's budget, after which
// the remaining changed patterns stay errors without being compared — even a plain loosening
// (p11). A comparison repeated in another place (p01 repeats p00) is made once and costs nothing.
func TestPatternBudget(t *testing.T) {
	data, err := os.ReadFile("../../testdata/rules/pattern-changed/basic/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const name = "              name:\n                type: string\n                pattern: ^[a-z]+$\n"
	parse := func(file, last string) *crd.CRD {
		t.Helper()
		var b strings.Builder
		for i := range 12 {
			// Distinct patterns, each past the bound: .{0,100} ten times over.
			p := fmt.Sprintf(`^(.{0,100}){0,10}z%s%s$`, strings.Repeat("q", max(i-1, 0)), last)
			if i == 11 {
				p = "^a" + strings.TrimSuffix(last, "z") + "$"
			}
			fmt.Fprintf(&b, "              p%02d:\n                type: string\n                pattern: '%s'\n", i, p)
		}
		doc := strings.Replace(string(data), name, b.String(), 1)
		if doc == string(data) {
			t.Fatal("the fixture has no spec.name to replace")
		}
		return parseOne(t, file, doc)
	}
	// old: …z$ and ^a$; new: …z?$ and ^a?$, all loosenings.
	var got []string
	for _, f := range Compare(crd.Pair{Old: parse("old.yaml", ""), New: parse("new.yaml", "?")}, Options{}) {
		_, why, _ := strings.Cut(f.Message, "(undecided: ")
		why, _, _ = strings.Cut(why, ")")
		got = append(got, fmt.Sprintf("%s %s %s: %s", f.Path, f.Rule, f.Severity, why))
	}
	bound := "comparing the patterns takes more than 4096 states or 2097152 steps"
	budget := "the pattern comparisons of this CRD have spent their budget of 16777216 steps"
	var want []string
	for i := range 12 {
		why := bound
		if i >= 9 {
			why = budget
		}
		want = append(want, fmt.Sprintf(".spec.p%02d pattern-changed error: %s", i, why))
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
