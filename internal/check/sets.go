package check

import (
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// pairSets says, for each compared pair, which named value sets of its chart it stands for: a
// chart compared under several sets is several deliveries, and what one set's rendering changes
// is reported for that set. A pair with both sides stands for its own set and those of its
// identical copies (copyOf; a copy stands for what its original stands for), on either side; a
// pair with one
// side (a CRD new or gone) for every set that rendered the CRD from that file on that side,
// since pairing keeps one such pair per name. Pairs rendered with no named set have none.
func pairSets(old, new *source.Tree, pairs []crd.Pair, copyOf []int) [][]string {
	sets := make([][]string, len(pairs))
	for i, p := range pairs {
		switch {
		case copyOf[i] >= 0:
		case p.Old == nil:
			sets[i] = new.SetsOf(p.New.Name, p.New.File)
		case p.New == nil:
			sets[i] = old.SetsOf(p.Old.Name, p.Old.File)
		default:
			for j, q := range pairs {
				if j == i || copyOf[j] == i {
					// Paired by path, both sides of a chart's rendering have the same set; a
					// rendering compared with a plain file names its set all the same.
					sets[i] = append(sets[i], new.Delivery(q.New), old.Delivery(q.Old))
				}
			}
		}
	}
	for i, j := range copyOf {
		if j >= 0 {
			sets[i] = sets[j]
		}
	}
	return sets
}

// nameSets starts the message of each finding of a compared pair with the value sets the pair
// stands for (source.SetPrefix).
func nameSets(sets [][]string, perPair [][]finding.Finding) {
	for i, fs := range perPair {
		prefix := source.SetPrefix(sets[i])
		for k := range fs {
			fs[k].Message = prefix + fs[k].Message
		}
	}
}
