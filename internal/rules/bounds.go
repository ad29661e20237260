package rules

import (
	"fmt"
	"math"
	"strconv"

	"github.com/crdguard/crdguard/internal/finding"
)

// Bounds: minimum, minLength, minItems, minProperties (with exclusiveMinimum) and their maximum
// counterparts. Raising a lower bound or lowering an upper bound is a value tightening that
// Kubernetes ≥ 1.30 ratchets for existing objects.

var boundAdvice = ValueRatchet("the value").Stored("stored objects outside the new bound") + "; clients sending such values are rejected; loosen the bound, or tighten it only in a new version"

var (
	minAdded = &Rule{
		ID: "min-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "min-removed",
		Summary: "A lower bound (minimum, minLength, minItems, minProperties) was added.",
		Advice:  boundAdvice,
		Doc:     "A new lower bound rejects values below it. " + ratchetValueDoc + " Check what values are in use, or enforce the bound in the controller instead.",
	}
	minIncreased = &Rule{
		ID: "min-increased", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "min-decreased",
		Summary: "A lower bound was raised (or made exclusive).",
		Advice:  boundAdvice,
		Doc:     "Raising a lower bound rejects values that were valid. " + ratchetValueDoc,
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
		Doc:     "A new upper bound rejects values above it. " + ratchetValueDoc + " Upper bounds are often added to fit CEL cost budgets: pick a bound above every value in use.",
	}
	maxDecreased = &Rule{
		ID: "max-decreased", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "max-increased",
		Summary: "An upper bound was lowered (or made exclusive).",
		Advice:  boundAdvice,
		Doc:     "Lowering an upper bound rejects values that were valid. " + ratchetValueDoc,
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

var (
	multipleOfAdded = &Rule{
		ID: "multiple-of-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "multiple-of-removed",
		Summary: "multipleOf was added.",
		Advice:  "numbers that are not multiples are refused; make sure every value in use is one",
		Doc:     "multipleOf rejects numbers that are not multiples of it. " + ratchetValueDoc,
	}
	multipleOfChanged = &Rule{
		ID: "multiple-of-changed", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true,
		Summary: "multipleOf changed (info when the new value divides the old one, which only loosens it).",
		Advice:  "values that were multiples of the old number may not be multiples of the new one",
		Doc:     "Changing multipleOf changes which numbers are valid. When the new value divides the old one (4 → 2), every old value stays valid and the finding is info; otherwise (2 → 4, 2 → 3) values in use may be refused.",
	}
	multipleOfRemoved = &Rule{
		ID: "multiple-of-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "multipleOf was removed.",
		Doc:     "Accepting any number is safe for writers.",
	}
)

var boundRules = []*Rule{minAdded, minIncreased, minDecreased, minRemoved, maxAdded, maxDecreased, maxIncreased, maxRemoved,
	multipleOfAdded, multipleOfChanged, multipleOfRemoved}

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

// String renders the bound for messages, marking an exclusive one.
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
	checkMultipleOf(n)
}

func checkMultipleOf(n *node) {
	if !n.changed(kwMultipleOf) {
		return
	}
	n.judge(kwMultipleOf)
	o, w := n.old.MultipleOf, n.new.MultipleOf
	switch {
	case o == nil:
		n.emit(multipleOfAdded, finding.Head, n.keyAt(finding.Head, kwMultipleOf), nil, *w, "%s must now be a multiple of %v", n.path, *w)
	case w == nil:
		n.emit(multipleOfRemoved, finding.Base, n.keyAt(finding.Base, kwMultipleOf), *o, nil, "%s no longer has to be a multiple of %v", n.path, *o)
	default:
		f := n.emit(multipleOfChanged, finding.Head, n.keyAt(finding.Head, kwMultipleOf), *o, *w, "multipleOf of %s changed from %v to %v", n.path, *o, *w)
		if q := *o / *w; *w != 0 && q == math.Trunc(q) {
			f.Severity, f.Ratchetable = finding.Info, false
			f.Message = fmt.Sprintf("multipleOf of %s changed from %v to %v, which divides it: every old value stays valid", n.path, *o, *w)
		}
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
	var f *finding.Finding
	switch {
	case !o.set:
		f = n.emit(added, finding.Head, n.keyAt(finding.Head, key), nil, w.json(), "%s of %s set to %s", name, n.path, w)
	case !w.set:
		f = n.emit(removed, finding.Base, n.keyAt(finding.Base, kw), o.json(), nil, "%s %s of %s was removed", name, o, n.path)
	case tightens(o, w, upper):
		f = n.emit(tighter, finding.Head, n.keyAt(finding.Head, key), o.json(), w.json(), "%s of %s changed from %s to %s", name, n.path, o, w)
	default:
		f = n.emit(looser, finding.Head, n.keyAt(finding.Head, key), o.json(), w.json(), "%s of %s changed from %s to %s", name, n.path, o, w)
	}
	if t := n.new.Type; t != "" && t == n.old.Type && !appliesTo(kw, t) {
		// The API server checks this keyword only on values of other types: written on a
		// node of this type it refuses nothing, before or after.
		f.Severity, f.Ratchetable = finding.Info, false
		f.Message = fmt.Sprintf("%s of %s changed from %s to %s, which the API server does not check on a value of type %s: it refuses nothing", name, n.path, orUnset(o), orUnset(w), t)
	}
}

// tightens reports whether bound w accepts less than o.
func tightens(o, w bound, upper bool) bool {
	if o.value != w.value {
		return (w.value < o.value) == upper
	}
	return w.exclusive && !o.exclusive
}

// appliesTo reports whether the API server's schema validation checks a bound keyword on a
// value of this type: numbers' bounds on integers and numbers, lengths on strings, item counts
// on arrays, property counts on objects (kube-openapi's validators each apply to one kind).
func appliesTo(kw keyword, typ string) bool {
	switch kw {
	case kwMinimum, kwMaximum, kwExclusiveMinimum, kwExclusiveMaximum:
		return typ == "integer" || typ == "number"
	case kwMinLength, kwMaxLength:
		return typ == "string"
	case kwMinItems, kwMaxItems:
		return typ == "array"
	case kwMinProperties, kwMaxProperties:
		return typ == "object"
	}
	return true
}

func orUnset(b bound) string {
	if !b.set {
		return "unset"
	}
	return b.String()
}
