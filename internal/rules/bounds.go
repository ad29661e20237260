package rules

import (
	"strconv"

	"github.com/crdguard/crdguard/internal/finding"
)

// Bounds: minimum, minLength, minItems, minProperties (with exclusiveMinimum) and their maximum
// counterparts. Raising a lower bound or lowering an upper bound is a value tightening that
// Kubernetes ≥ 1.30 ratchets for existing objects.

const boundAdvice = "stored objects outside the new bound fail validation on their next update (unless ratcheting applies) and clients sending such values are rejected; loosen the bound, or tighten it only in a new version"

var (
	minAdded = &Rule{
		ID: "min-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "min-removed",
		Summary: "A lower bound (minimum, minLength, minItems, minProperties) was added.",
		Advice:  boundAdvice,
		Doc:     "A new lower bound rejects values below it: stored objects that hold them fail their next update unless validation ratcheting applies (Kubernetes ≥ 1.30, not under not/oneOf/anyOf/allOf), and creates with such values fail always. Check what values are in use, or enforce the bound in the controller instead.",
	}
	minIncreased = &Rule{
		ID: "min-increased", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "min-decreased",
		Summary: "A lower bound was raised (or made exclusive).",
		Advice:  boundAdvice,
		Doc:     "Raising a lower bound rejects values that were valid: stored objects that hold them fail their next update unless ratcheting applies, and clients that send them are refused.",
	}
	minDecreased = &Rule{
		ID: "min-decreased", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A lower bound was lowered.",
		Doc:     "Accepting smaller values is safe for writers; readers must cope with them.",
	}
	minRemoved = &Rule{
		ID: "min-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A lower bound was removed.",
		Doc:     "Dropping a lower bound is safe for writers; readers must cope with smaller values.",
	}
	maxAdded = &Rule{
		ID: "max-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "max-removed",
		Summary: "An upper bound (maximum, maxLength, maxItems, maxProperties) was added.",
		Advice:  boundAdvice,
		Doc:     "A new upper bound rejects values above it: stored objects that hold them fail their next update unless validation ratcheting applies, and creates with such values fail always. Upper bounds are often added to fit CEL cost budgets: pick a bound above every value in use.",
	}
	maxDecreased = &Rule{
		ID: "max-decreased", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "max-increased",
		Summary: "An upper bound was lowered (or made exclusive).",
		Advice:  boundAdvice,
		Doc:     "Lowering an upper bound rejects values that were valid: stored objects that hold them fail their next update unless ratcheting applies, and clients that send them are refused.",
	}
	maxIncreased = &Rule{
		ID: "max-increased", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An upper bound was raised.",
		Doc:     "Accepting larger values is safe for writers; readers must cope with them.",
	}
	maxRemoved = &Rule{
		ID: "max-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An upper bound was removed.",
		Doc:     "Dropping an upper bound is safe for writers; readers must cope with larger values. Note that CEL cost estimates grow with unbounded lists and strings.",
	}
)

var boundRules = []*Rule{minAdded, minIncreased, minDecreased, minRemoved, maxAdded, maxDecreased, maxIncreased, maxRemoved}

// bound is one bound keyword's value on one side; exclusive only applies to minimum/maximum.
type bound struct {
	set       bool
	value     float64
	exclusive bool
}

func floatBound(v *float64, exclusive bool) bound {
	if v == nil {
		return bound{}
	}
	return bound{set: true, value: *v, exclusive: exclusive}
}

func intBound(v *int64) bound {
	if v == nil {
		return bound{}
	}
	return bound{set: true, value: float64(*v)}
}

func (b bound) json() any {
	if !b.set {
		return nil
	}
	return b.value
}

func (b bound) String() string {
	s := strconv.FormatFloat(b.value, 'g', -1, 64)
	if b.exclusive {
		s += " (exclusive)"
	}
	return s
}

func checkBounds(n *node) {
	o, w := n.old, n.new
	lower := []struct {
		kw, excl keyword
		old, new bound
	}{
		{kwMinimum, kwExclusiveMinimum, floatBound(o.Minimum, o.ExclusiveMinimum), floatBound(w.Minimum, w.ExclusiveMinimum)},
		{kwMinLength, noKeyword, intBound(o.MinLength), intBound(w.MinLength)},
		{kwMinItems, noKeyword, intBound(o.MinItems), intBound(w.MinItems)},
		{kwMinProperties, noKeyword, intBound(o.MinProperties), intBound(w.MinProperties)},
	}
	for _, b := range lower {
		boundChange(n, b.kw, b.excl, b.old, b.new, false)
	}
	upper := []struct {
		kw, excl keyword
		old, new bound
	}{
		{kwMaximum, kwExclusiveMaximum, floatBound(o.Maximum, o.ExclusiveMaximum), floatBound(w.Maximum, w.ExclusiveMaximum)},
		{kwMaxLength, noKeyword, intBound(o.MaxLength), intBound(w.MaxLength)},
		{kwMaxItems, noKeyword, intBound(o.MaxItems), intBound(w.MaxItems)},
		{kwMaxProperties, noKeyword, intBound(o.MaxProperties), intBound(w.MaxProperties)},
	}
	for _, b := range upper {
		boundChange(n, b.kw, b.excl, b.old, b.new, true)
	}
}

// boundChange classifies one bound keyword. excl is the matching exclusive flag (noKeyword for none): a
// flag flip with the same value tightens or loosens the bound just as a value change does.
func boundChange(n *node, kw, excl keyword, o, w bound, upper bool) {
	if !n.changed(kw) && (excl == noKeyword || !n.changed(excl)) {
		return
	}
	n.judge(kw)
	if excl != noKeyword {
		n.judge(excl)
	}
	if o == w {
		return // only an exclusive flag without a bound changed: no effect
	}
	name := keywordNames[kw]
	added, tighter, looser, removed := minAdded, minIncreased, minDecreased, minRemoved
	if upper {
		added, tighter, looser, removed = maxAdded, maxDecreased, maxIncreased, maxRemoved
	}
	key := kw
	if !n.changed(kw) {
		key = excl // same value, only exclusiveness changed: point at the flag
	}
	switch {
	case !o.set:
		n.emit(added, finding.Head, n.keyAt(finding.Head, key), nil, w.json(), "%s of %s set to %s", name, n.path, w)
	case !w.set:
		n.emit(removed, finding.Base, n.keyAt(finding.Base, kw), o.json(), nil, "%s %s of %s was removed", name, o, n.path)
	case tightens(o, w, upper):
		n.emit(tighter, finding.Head, n.keyAt(finding.Head, key), o.json(), w.json(), "%s of %s changed from %s to %s", name, n.path, o, w)
	default:
		n.emit(looser, finding.Head, n.keyAt(finding.Head, key), o.json(), w.json(), "%s of %s changed from %s to %s", name, n.path, o, w)
	}
}

// tightens reports whether bound w accepts less than o.
func tightens(o, w bound, upper bool) bool {
	if o.value != w.value {
		return (w.value < o.value) == upper
	}
	return w.exclusive && !o.exclusive
}
