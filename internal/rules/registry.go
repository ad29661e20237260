// Package rules classifies the differences between two versions of a CRD. Each rule is an ID, a
// default severity and a doc, defined next to the small function that emits it; the walker in
// walk.go pairs old and new schema nodes and hands every pair to the property checks, and
// whatever differs that no check judged becomes unknown-change (fail closed).
package rules

import (
	"sync"

	"github.com/crdguard/crdguard/internal/finding"
)

// Level says what a rule's findings are attached to.
type Level int

// The levels, from the whole CRD down to one schema node.
const (
	CRDLevel Level = iota
	VersionLevel
	PropertyLevel
)

var levelNames = [...]string{CRDLevel: "crd", VersionLevel: "version", PropertyLevel: "property"}

// String returns "crd", "version" or "property".
func (l Level) String() string { return levelNames[l] }

// Rule is one kind of finding.
type Rule struct {
	// ID is the stable kebab-case name users configure and scripts match on.
	ID string
	// Severity is the default severity; the policy may change it.
	Severity finding.Severity
	// Level says whether findings are about a CRD, a version or a schema node.
	Level Level
	// Summary is one sentence for tables.
	Summary string
	// Advice is appended to every message: why it breaks and what to do instead.
	Advice string
	// Doc is the full paragraph `crdguard rules` prints.
	Doc string
	// Ratchetable marks value tightenings that Kubernetes validation ratcheting rescues for
	// existing objects (DESIGN §2).
	Ratchetable bool
	// Twin names the opposite change for a tightening (its loosening), so the registry can be
	// checked for symmetry.
	Twin string
	// Refused marks the changes the API server refuses outright (the update fails, whatever
	// the objects): reports list them first among the errors (finding.Importance).
	Refused bool
}

// All returns every rule, in the order of the DESIGN tables. The slice is shared: do not modify.
func All() []*Rule { return registry() }

var registry = sync.OnceValue(func() []*Rule {
	var all []*Rule
	for _, family := range [][]*Rule{crdRules, versionRules, selectableRules, fieldRules, looseningRules, valueRules, builtinRules, boundRules, celRules, listRules, combinatorRules, docRules, sampleRules, storedRules, sizeRules, helmRules, renderedRules, olmRules, unknownRules} {
		all = append(all, family...)
	}
	return all
})

var byID = sync.OnceValue(func() map[string]*Rule {
	m := make(map[string]*Rule, len(registry()))
	for _, r := range registry() {
		m[r.ID] = r
	}
	return m
})

// Refused says whether the API server refuses outright the change a rule reports (Rule.Refused);
// false for an unknown ID.
func Refused(id string) bool {
	r, ok := Lookup(id)
	return ok && r.Refused
}

// Lookup returns the rule with this ID.
func Lookup(id string) (*Rule, bool) {
	r, ok := byID()[id]
	return r, ok
}
