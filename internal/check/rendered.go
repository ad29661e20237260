package check

import (
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// notRendered turns what each side could not render into chart-not-rendered errors, and names
// the CRDs it leaves unknown on each side: those of the chart on the other side (or of the
// template, or the file, at the same place), and those the template names. An unknown CRD is
// neither added nor removed. A problem the head has just as the base had it is reported once,
// on the head.
func notRendered(old, new *source.Tree) (fs []finding.Finding, baseUnknown, headUnknown map[string]bool) {
	baseUnknown, headUnknown = map[string]bool{}, map[string]bool{}
	same := func(a, b source.ChartProblem) bool {
		return old.Rel(a.File) == new.Rel(b.File) && a.Line == b.Line && a.Message == b.Message
	}
	for _, side := range []struct {
		t, other *source.Tree
		side     finding.Side
		unknown  map[string]bool
	}{{old, new, finding.Base, baseUnknown}, {new, old, finding.Head, headUnknown}} {
		for _, p := range side.t.NotRendered {
			for _, n := range p.Names {
				side.unknown[n] = true
			}
			for _, c := range side.other.CRDs {
				if side.t.InUnrenderedChart(side.other, c.File) || source.SameInput(side.t, p.File, side.other, c.File) {
					side.unknown[c.Name] = true
				}
			}
			reported := false
			if side.side == finding.Base {
				for _, q := range new.NotRendered {
					reported = reported || same(p, q)
				}
			}
			if !reported {
				fs = append(fs, rules.NotRendered(p, side.side))
			}
		}
	}
	return fs, baseUnknown, headUnknown
}
