package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// nameSets says, in the message of each finding of a compared pair, which named value sets of
// its chart the pair was rendered with (the pair's and those of its identical copies): a chart
// compared under several sets is several deliveries, and a change one set's rendering makes is
// reported for that set. Pairs rendered with no named set are left as they are.
func nameSets(old, new *source.Tree, pairs []crd.Pair, copyOf []int, perPair [][]finding.Finding) {
	setOf := func(p crd.Pair) string {
		if p.New != nil {
			return new.Delivery(p.New)
		}
		return old.Delivery(p.Old)
	}
	for i, fs := range perPair {
		if len(fs) == 0 || copyOf[i] >= 0 {
			continue
		}
		var sets []string
		for j, p := range pairs {
			if s := setOf(p); s != "" && (j == i || copyOf[j] == i) && !slices.Contains(sets, s) {
				sets = append(sets, s)
			}
		}
		if len(sets) == 0 {
			continue
		}
		slices.Sort(sets)
		quoted := make([]string, len(sets))
		for k, s := range sets {
			quoted[k] = fmt.Sprintf("%q", s)
		}
		what := "value set"
		if len(sets) > 1 {
			what = "value sets"
		}
		prefix := fmt.Sprintf("with %s %s: ", what, strings.Join(quoted, ", "))
		for k := range fs {
			fs[k].Message = prefix + fs[k].Message
		}
	}
}
