package rules

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// Combinators: allOf, anyOf, oneOf and not. Branches that stay in place are compared one by
// one by the walker; here the branch lists grew or shrank. Combinators whose branches only
// require fields are decided over which fields are set (presenceLoosened); otherwise only clean
// cases are classified — branches appended to or dropped from the end of an otherwise
// unchanged list, or the keyword appearing or disappearing — anything else stays unknown-change.

var (
	combinatorTightened = &Rule{
		ID: "combinator-tightened", Severity: finding.Error, Level: PropertyLevel, Twin: "combinator-loosened",
		Summary: "An allOf/anyOf/oneOf/not now accepts fewer values (added, allOf or oneOf branch added, anyOf or oneOf branch removed).",
		Advice:  "objects that were valid can be refused; check every value in use against the new branches",
		Doc:     "allOf, anyOf, oneOf and not combine constraints. Adding one, adding an allOf branch, removing an anyOf branch, or adding or removing a oneOf branch (an object may now match two branches, or none) makes fewer values valid. Stored objects that no longer match fail their next update and creates with them fail. The constraints in the branches often apply to child fields, where ratcheting does not help. Check the values in use, or loosen instead.",
	}
	combinatorLoosened = &Rule{
		ID: "combinator-loosened", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An allOf/anyOf/oneOf/not now accepts more values (removed, anyOf branch added, allOf branch removed).",
		Doc:     "Accepting more values is safe for writers; readers must cope with them. Combinators whose branches only require fields, or combine such branches (exactly one of s3, gs, host becoming at least one of them but never s3 with gs; Istio's \"at most one of\", a oneOf whose first branch is a not of an anyOf), are proven by trying every choice of which of those fields an object sets: every choice the old node accepted must still be accepted. A field new in this change is set in no object the old schema accepted, where the old node drops unknown fields and the new one gives the field no default. Constraints moved between keywords at one node are judged together: a oneOf of such branches replaced by the CEL rule that says the same (`has(self.a) != has(self.b)`) is one combinator-loosened naming both sides, proven over the same choices; a rule that refuses more is validation-rule-added with its witness.",
	}
)

var combinatorRules = []*Rule{combinatorTightened, combinatorLoosened}

func checkCombinators(n *node) {
	if all := keywordSet(1<<kwAllOf | 1<<kwAnyOf | 1<<kwOneOf | 1<<kwNot); n.judged&all == all || presenceLoosened(n) {
		return
	}
	for _, c := range []struct {
		kw               keyword
		old, new         []apiextv1.JSONSchemaProps
		addTightens      bool // a branch appended makes fewer values valid
		removeTightens   bool // a branch dropped makes fewer values valid
		presenceTightens bool
	}{
		{kwAllOf, n.old.AllOf, n.new.AllOf, true, false, true},
		{kwAnyOf, n.old.AnyOf, n.new.AnyOf, false, true, true},
		{kwOneOf, n.old.OneOf, n.new.OneOf, true, true, true},
	} {
		if len(c.old) == len(c.new) || n.judged&(1<<c.kw) != 0 {
			continue // same length: the walker pairs the branches; judged: another rule's finding
		}
		name := keywordNames[c.kw]
		switch {
		case len(c.old) == 0:
			n.combinator(c.kw, true, "%s now has %s with %d branches", n.path, name, len(c.new))
		case len(c.new) == 0:
			n.combinator(c.kw, false, "%s no longer has %s", n.path, name)
		case len(c.new) > len(c.old) && reflect.DeepEqual(c.old, c.new[:len(c.old)]):
			n.combinator(c.kw, c.addTightens, "%s of %s has %d more branch(es)", name, n.path, len(c.new)-len(c.old))
		case len(c.new) < len(c.old) && reflect.DeepEqual(c.new, c.old[:len(c.new)]):
			n.combinator(c.kw, c.removeTightens, "%s of %s has %d fewer branch(es)", name, n.path, len(c.old)-len(c.new))
		}
	}
	if (n.old.Not == nil) != (n.new.Not == nil) {
		if n.new.Not != nil {
			n.combinator(kwNot, true, "%s now has not", n.path)
		} else {
			n.combinator(kwNot, false, "%s no longer has not", n.path)
		}
	}
}

func (n *node) combinator(k keyword, tightens bool, format string, args ...any) {
	n.judge(k)
	side := finding.Head
	r := combinatorTightened
	if !tightens {
		r = combinatorLoosened
	}
	if !n.e.doc(finding.Head).Has(n.at(finding.Head, keywordNames[k])) {
		side = finding.Base
	}
	f := n.emit(r, side, n.keyAt(side, k), nil, nil, format, args...)
	f.Ratchetable = false
}

// presenceLoosened proves a change of combinators whose branches only require fields (the
// usual "exactly one of s3, gs, host" shape, or Istio's "at most one of": a oneOf whose first
// branch is a not of an anyOf) from which of those fields an object sets: when every choice of
// set fields that the old node accepts (its own required fields included) is accepted by the new
// combinators, nothing the old schema accepted is refused by them. A field the old node does not
// declare (new in this change, where the old node prunes what it does not know) is set in no
// object the old schema accepted. It reports that as one combinator-loosened and judges every
// combinator keyword of the node; otherwise it says nothing. Branch lists of equal length are
// paired by the walker instead.
func presenceLoosened(n *node) bool {
	o, w := n.old, n.new
	if reflect.DeepEqual(combinatorsOf(o), combinatorsOf(w)) {
		return false
	}
	var names []string
	if !presenceOnly(o, &names, 0) || !presenceOnly(w, &names, 0) || len(names) == 0 || len(names) > maxPresenceFields {
		return false
	}
	if len(o.AllOf) == len(w.AllOf) && len(o.AllOf) > 0 || len(o.AnyOf) == len(w.AnyOf) && len(o.AnyOf) > 0 ||
		len(o.OneOf) == len(w.OneOf) && len(o.OneOf) > 0 || o.Not != nil && w.Not != nil {
		return false
	}
	var unset []string // fields no object the old schema accepted sets
	if dropsUnknown(n.e.pair.Old, o) {
		for _, name := range names {
			_, declared := o.Properties[name]
			// A default puts the field in every object the new schema reads.
			if p, ok := w.Properties[name]; !declared && (!ok || p.Default == nil) {
				unset = append(unset, name)
			}
		}
	}
	if !everyChoice(names, unset, func(present func(string) bool) bool {
		return !allSet(o.Required, present) || !combinatorsAccept(o, present) || combinatorsAccept(w, present)
	}) {
		return false
	}
	first, found := kwOneOf, false
	for _, k := range []keyword{kwAllOf, kwAnyOf, kwOneOf, kwNot} {
		n.judge(k)
		if !found && n.e.doc(finding.Head).Has(n.at(finding.Head, keywordNames[k])) {
			first, found = k, true
		}
	}
	why := ""
	if len(unset) > 0 {
		why = "; " + strings.Join(unset, ", ") + " " + map[bool]string{true: "is", false: "are"}[len(unset) == 1] + " new, set in no object the old schema accepted"
	}
	n.combinator(first, false, "the allOf/anyOf/oneOf/not of %s changed, and every object they accepted is still accepted (proven over which of %s are set%s)", n.path, strings.Join(names, ", "), why)
	return true
}

// everyChoice reports whether ok holds for every choice of which of names an object sets, none
// of unset among them. A field names does not list counts as set: the node's own required
// fields that no branch names are set in every object it accepts, whatever the branches ask.
func everyChoice(names, unset []string, ok func(present func(string) bool) bool) bool {
	for set := 0; set < 1<<len(names); set++ {
		present := func(name string) bool {
			i := slices.Index(names, name)
			return i < 0 || set&(1<<i) != 0
		}
		if !slices.ContainsFunc(unset, present) && !ok(present) {
			return false
		}
	}
	return true
}

// dropsUnknown reports whether the API server drops the fields a node of c does not declare
// from every object it stores: not where the node keeps unknown fields or is a map, nor
// anywhere in a CRD that does not prune (v1beta1's preserveUnknownFields).
func dropsUnknown(c *crd.CRD, s *apiextv1.JSONSchemaProps) bool {
	return !c.Object.Spec.PreserveUnknownFields && !isTrue(s.XPreserveUnknownFields) && s.AdditionalProperties == nil
}

// maxPresenceFields bounds the fields whose presence is enumerated (2^12 choices).
const maxPresenceFields = 12

type combinators struct {
	allOf, anyOf, oneOf []apiextv1.JSONSchemaProps
	not                 *apiextv1.JSONSchemaProps
}

func combinatorsOf(s *apiextv1.JSONSchemaProps) combinators {
	return combinators{s.AllOf, s.AnyOf, s.OneOf, s.Not}
}

// presenceOnly reports whether every combinator branch of s, and of its branches below, only
// requires fields, adding the names they require to names.
func presenceOnly(s *apiextv1.JSONSchemaProps, names *[]string, depth int) bool {
	c := combinatorsOf(s)
	branches := slices.Concat(c.allOf, c.anyOf, c.oneOf)
	if c.not != nil {
		branches = append(branches, *c.not)
	}
	if depth > maxPresenceDepth && len(branches) > 0 {
		return false
	}
	for _, b := range branches {
		rest := b
		rest.Required, rest.AllOf, rest.AnyOf, rest.OneOf, rest.Not = nil, nil, nil, nil, nil
		if len(b.Required) == 0 && reflect.DeepEqual(combinatorsOf(&b), combinators{}) || !reflect.DeepEqual(rest, apiextv1.JSONSchemaProps{}) || !presenceOnly(&b, names, depth+1) {
			return false
		}
		for _, r := range b.Required {
			if !slices.Contains(*names, r) {
				*names = append(*names, r)
			}
		}
	}
	return true
}

// maxPresenceDepth bounds how deep branches within branches are followed.
const maxPresenceDepth = 4

func allSet(required []string, present func(string) bool) bool {
	for _, r := range required {
		if !present(r) {
			return false
		}
	}
	return true
}

// combinatorsAccept evaluates the combinators of s, all of whose branches only require fields
// (presenceOnly), for an object that sets exactly the present fields.
func combinatorsAccept(s *apiextv1.JSONSchemaProps, present func(string) bool) bool {
	holds := func(b apiextv1.JSONSchemaProps) bool {
		return allSet(b.Required, present) && combinatorsAccept(&b, present)
	}
	for _, b := range s.AllOf {
		if !holds(b) {
			return false
		}
	}
	if len(s.AnyOf) > 0 && !slices.ContainsFunc(s.AnyOf, holds) {
		return false
	}
	if len(s.OneOf) > 0 {
		matched := 0
		for _, b := range s.OneOf {
			if holds(b) {
				matched++
			}
		}
		if matched != 1 {
			return false
		}
	}
	return s.Not == nil || !holds(*s.Not)
}

// enumCombinators judges a node whose enum moved between the node itself and the branches of
// its allOf or anyOf (an enum rewritten as an allOf of the same enum twice, or moved into an
// anyOf), when every such branch is an enum and nothing else: the values accepted are the
// node's enum, intersected with each allOf branch's, intersected with the union of the anyOf
// branches'. Same values: one combinator-loosened saying so; more: enum-value-added; fewer:
// enum-value-removed (or enum-added where nothing was restricted), errors the API server does
// not ratchet under a combinator. It judges enum, allOf and anyOf together; otherwise it says
// nothing.
func enumCombinators(n *node) bool {
	o, w := n.old, n.new
	if !enumOnly(o.AllOf) || !enumOnly(o.AnyOf) || !enumOnly(w.AllOf) || !enumOnly(w.AnyOf) ||
		len(o.AllOf)+len(o.AnyOf)+len(w.AllOf)+len(w.AnyOf) == 0 ||
		reflect.DeepEqual(o.AllOf, w.AllOf) && reflect.DeepEqual(o.AnyOf, w.AnyOf) {
		return false
	}
	before, after := acceptedEnum(o), acceptedEnum(w)
	n.judge(kwEnum, kwAllOf, kwAnyOf)
	n.branchesSettled |= 1<<kwAllOf | 1<<kwAnyOf
	var removed, added []string
	for v := range before {
		if after != nil && !after[v] {
			removed = append(removed, v)
		}
	}
	for v := range after {
		if before != nil && !before[v] {
			added = append(added, v)
		}
	}
	slices.Sort(removed)
	slices.Sort(added)
	side := finding.Head
	key := n.keyAt(finding.Head, kwAllOf)
	if len(w.AllOf) == 0 {
		key = n.keyAt(finding.Head, kwAnyOf)
	}
	if len(w.AllOf)+len(w.AnyOf) == 0 {
		key = n.keyAt(finding.Head, kwEnum)
	}
	var f *finding.Finding
	switch {
	case before == nil && after != nil:
		f = n.emit(enumAdded, side, key, nil, setValues(after), "%s is now restricted to %s (its enum and the enums of its allOf/anyOf together)", n.path, setValues(after))
	case len(removed) > 0:
		f = n.emit(enumValueRemoved, side, key, setValues(before), setValues(after), "%s no longer allows %s: the enum moved between %s and its allOf/anyOf, which together now allow %s", n.path, strings.Join(removed, ", "), n.path, setValues(after))
	case len(added) > 0 || before != nil && after == nil:
		n.emit(enumValueAdded, side, key, setValues(before), setValues(after), "%s now allows more values: the enum moved between %s and its allOf/anyOf, which together allow %s", n.path, n.path, orAny(after))
	default:
		n.emit(combinatorLoosened, side, key, setValues(before), setValues(after), "the enum of %s moved between the node and its allOf/anyOf, and they accept the same values %s", n.path, setValues(after))
	}
	if f != nil {
		f.Ratchetable = false
	}
	return true
}

// enumOnly reports whether every branch is an enum and nothing else (descriptions aside).
func enumOnly(branches []apiextv1.JSONSchemaProps) bool {
	for _, b := range branches {
		rest := b
		rest.Enum, rest.Description = nil, ""
		if len(b.Enum) == 0 || !reflect.DeepEqual(rest, apiextv1.JSONSchemaProps{}) {
			return false
		}
	}
	return true
}

// acceptedEnum is the set of values (canonical JSON) a node's enum and the enums of its allOf
// and anyOf branches (enumOnly) accept together; nil when they restrict nothing.
func acceptedEnum(s *apiextv1.JSONSchemaProps) map[string]bool {
	var set map[string]bool
	restrict := func(vs map[string]bool) {
		if set == nil {
			set = vs
			return
		}
		for v := range set {
			if !vs[v] {
				delete(set, v)
			}
		}
	}
	if len(s.Enum) > 0 {
		restrict(enumSet(s.Enum))
	}
	for _, b := range s.AllOf {
		restrict(enumSet(b.Enum))
	}
	if len(s.AnyOf) > 0 {
		union := map[string]bool{}
		for _, b := range s.AnyOf {
			for v := range enumSet(b.Enum) {
				union[v] = true
			}
		}
		restrict(union)
	}
	return set
}

// setValues is a set of canonical JSON values as one sorted JSON list.
func setValues(set map[string]bool) json.RawMessage {
	if set == nil {
		return nil
	}
	vs := make([]string, 0, len(set))
	for v := range set {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return json.RawMessage("[" + strings.Join(vs, ",") + "]")
}

func orAny(set map[string]bool) string {
	if set == nil {
		return "any value"
	}
	return string(setValues(set))
}
