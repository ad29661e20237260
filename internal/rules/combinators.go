package rules

import (
	"reflect"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/finding"
)

// Combinators: allOf, anyOf, oneOf and not. Branches that stay in place are compared one by
// one by the walker; here the branch lists grew or shrank. Only clean cases are classified —
// branches appended to or dropped from the end of an otherwise unchanged list, or the keyword
// appearing or disappearing — anything else stays unknown-change.

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
		Doc:     "Accepting more values is safe for writers; readers must cope with them.",
	}
)

var combinatorRules = []*Rule{combinatorTightened, combinatorLoosened}

func checkCombinators(n *node) {
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
		if len(c.old) == len(c.new) {
			continue // same length: the walker pairs the branches
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
