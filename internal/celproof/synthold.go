package celproof

import (
	"slices"
)

// A value built from the new rule alone is often one the node's other old rules refuse:
// envoyproxy/gateway's BackendTrafficPolicy spec gained `!has(self.requestBuffer) ||
// !has(self.httpUpgrade) || self.httpUpgrade.size() == 0`, and the value that sets both fields
// has no targetRef, which an old rule of the same node demands (with its group and kind from
// two more rules). Such a value is no witness. keepOld extends the way it was built from, one
// refusing old rule at a time, with a way of making that rule true (solve, as for the new rule)
// that keeps the new rule false. Nothing here is trusted either: the result is judged and
// confirmed like every other candidate.

// maxKeepFixes bounds the ways tried to make one refusing old rule true.
const maxKeepFixes = 8

// keepOld returns the value (and stored value) built from way, extended until the node's old
// rules accept it while the new rule still refuses it; ok is false when no extension was found.
func (j *Judge) keepOld(s *synth, e *evaluator, way sol, prefer []any) (obj, old any, ok bool) {
	rules := e.oldNode.XValidations
	obj, old, ok = build(e.oldNode, way, prefer)
	for round := 0; ok && round <= len(rules); round++ {
		r := &reading{e: e, obj: obj, old: old}
		failed, fine := e.old().evalRead(r, oldSide)
		if !fine {
			return nil, nil, false
		}
		i := slices.IndexFunc(failed, func(f bool) bool { return f })
		if i == e.before && i >= 0 {
			i = slices.IndexFunc(failed[i+1:], func(f bool) bool { return f })
			if i >= 0 {
				i += e.before + 1
			}
		}
		if i < 0 {
			return obj, old, true
		}
		if i >= len(rules) || usesOldSelf(rules[i]) {
			return nil, nil, false
		}
		a, parsed := j.parse(rules[i].Rule)
		if !parsed {
			return nil, nil, false
		}
		ok = false
		for k, fix := range s.solve(toTerm(a.Expr()), true, nil) {
			if k == maxKeepFixes {
				break
			}
			cand := append(slices.Clip(way), fix...)
			v, o, built := build(e.oldNode, cand, prefer)
			if !built {
				continue
			}
			r := &reading{e: e, obj: v, old: o}
			failedNew, fine := e.after.evalRead(r, newSide)
			failedOld, fine2 := e.old().evalRead(r, oldSide)
			if fine && fine2 && failedNew[0] && i < len(failedOld) && !failedOld[i] {
				way, obj, old, ok = cand, v, o, true
				break
			}
		}
	}
	return nil, nil, false
}
