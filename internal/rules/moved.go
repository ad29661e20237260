package rules

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/celproof"
)

// Constraints moved between keywords at one node (DESIGN §7, Witnesses) are judged together: a
// oneOf of branches that only require fields, replaced in the same change by the CEL rule that
// says the same ("exactly one of", `has(self.a) != has(self.b)`), accepts and refuses the same
// objects, and judging each side alone would call the combinator loosened and the rule added.
// checkMovedToRules decides the node's old and new acceptance at once, over which of the fields
// an object sets, and reports a loosening or an equivalence as one combinator-loosened naming
// both sides. Otherwise (a tightening, or constraints it cannot read this way) it says nothing
// and each keyword is judged on its own — the rule with a witness the API server confirms.

// checkMovedToRules runs before checkValidations and checkCombinators.
func checkMovedToRules(n *node) {
	o, w := n.old, n.new
	if !n.changed(kwValidations) || combinatorsEqual(o, w) {
		return
	}
	added, removed := ruleTexts(w.XValidations, o.XValidations), ruleTexts(o.XValidations, w.XValidations)
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	var names []string
	if !presenceOnly(o, &names, 0) || !presenceOnly(w, &names, 0) {
		return
	}
	read := func(rules []string) []func(func(string) bool) bool {
		var out []func(func(string) bool) bool
		for _, r := range rules {
			fields, holds, ok := celproof.Presence(r)
			if !ok {
				return nil
			}
			for _, f := range fields {
				if !slices.Contains(names, f) {
					names = append(names, f)
				}
			}
			out = append(out, holds)
		}
		return out
	}
	was, now := read(removed), read(added)
	if was == nil && len(removed) > 0 || now == nil && len(added) > 0 || len(names) == 0 || len(names) > maxPresenceFields {
		return
	}
	// Presence is all the rules and branches see only where a field's presence is what an
	// object says: no default fills it in, no null stands for it.
	for _, name := range names {
		for _, s := range []*apiextv1.JSONSchemaProps{o, w} {
			if p, ok := s.Properties[name]; ok && (p.Default != nil || p.Nullable) {
				return
			}
		}
	}
	var unset []string // declared by neither the old node nor kept by it: set in no stored object
	if dropsUnknown(n.e.pair.Old, o) {
		for _, name := range names {
			if _, declared := o.Properties[name]; !declared {
				unset = append(unset, name)
			}
		}
	}
	all := func(fs []func(func(string) bool) bool, present func(string) bool) bool {
		for _, f := range fs {
			if !f(present) {
				return false
			}
		}
		return true
	}
	if !everyChoice(names, unset, func(present func(string) bool) bool {
		before := allSet(o.Required, present) && combinatorsAccept(o, present) && all(was, present)
		return !before || allSet(w.Required, present) && combinatorsAccept(w, present) && all(now, present)
	}) {
		// A tightening. Where the combinators are gone and rules came in their place, the node's
		// change is the rules' (dropping a combinator only loosens): one error per added rule,
		// naming what it replaces, with the witness its judgement confirms. Otherwise each
		// keyword is judged on its own.
		if len(added) > 0 && !hasCombinator(w) {
			n.judge(kwAllOf, kwAnyOf, kwOneOf, kwNot)
			n.replaces = movedSide(o, removed)
			if n.settled == nil {
				n.settled = map[string]bool{}
			}
			for _, r := range removed {
				n.settled[r] = true
			}
		}
		return
	}
	if n.settled == nil {
		n.settled = map[string]bool{}
	}
	for _, r := range slices.Concat(added, removed) {
		n.settled[r] = true
	}
	first, found := kwValidations, false
	for _, k := range []keyword{kwAllOf, kwAnyOf, kwOneOf, kwNot} {
		n.judge(k)
		if !found && (isSet(o, k) || isSet(w, k)) {
			first, found = k, true
		}
	}
	sides := movedSide
	n.combinator(first, false, "the constraints of %s on which fields are set moved: %s became %s, which accepts every object the old ones did (proven over which of %s are set)",
		n.path, sides(o, removed), sides(w, added), strings.Join(names, ", "))
}

// movedSide names the combinators of a node and the rules given: one side of a move.
func movedSide(s *apiextv1.JSONSchemaProps, rules []string) string {
	var parts []string
	for _, k := range []keyword{kwAllOf, kwAnyOf, kwOneOf, kwNot} {
		if isSet(s, k) {
			parts = append(parts, keywordNames[k])
		}
	}
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("rule %q", r))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " and ")
}

// hasCombinator reports whether the node has allOf, anyOf, oneOf or not.
func hasCombinator(s *apiextv1.JSONSchemaProps) bool {
	return slices.ContainsFunc([]keyword{kwAllOf, kwAnyOf, kwOneOf, kwNot}, func(k keyword) bool { return isSet(s, k) })
}

// ruleTexts are the rules of a whose text b does not have.
func ruleTexts(a, b apiextv1.ValidationRules) []string {
	var out []string
	for _, r := range a {
		if !slices.ContainsFunc(b, func(x apiextv1.ValidationRule) bool { return x.Rule == r.Rule }) {
			out = append(out, r.Rule)
		}
	}
	return out
}

// combinatorsEqual reports whether the node's allOf, anyOf, oneOf and not are the same.
func combinatorsEqual(o, w *apiextv1.JSONSchemaProps) bool {
	return reflect.DeepEqual(combinatorsOf(o), combinatorsOf(w))
}

// isSet reports whether the node has the combinator keyword.
func isSet(s *apiextv1.JSONSchemaProps, k keyword) bool {
	switch k {
	case kwAllOf:
		return len(s.AllOf) > 0
	case kwAnyOf:
		return len(s.AnyOf) > 0
	case kwOneOf:
		return len(s.OneOf) > 0
	}
	return s.Not != nil
}
