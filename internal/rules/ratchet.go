package rules

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// Validation ratcheting (KEP-4008, feature gate CRDValidationRatcheting: on by default from
// Kubernetes 1.30, GA in 1.33) as k8s.io/apiextensions-apiserver implements it
// (pkg/apiserver/validation/ratcheting.go and schema/cel/validation.go): on an update, the
// errors a schema node reports are forgiven when the node's value is deep-equal to the old
// object's. What that forgives depends on the node that reports the error, so every message
// that mentions ratcheting takes its words from here, one explanation per kind of constraint.
// internal/oracle's TestRatchetingAsTheMessagesSay holds each to a real API server.
const (
	// RatchetValue explains value constraints (minimum, maxLength, enum, pattern, format, …),
	// which the field's own node reports.
	RatchetValue = "validation ratcheting"
	// RatchetRule explains CEL rules without oldSelf, which the node they are written on
	// reports: a rule on .spec fails when any of .spec changes.
	RatchetRule = "validation ratcheting: a CEL rule is checked on the value it is written on"
	// RatchetRootRule explains CEL rules on the root, which no update leaves unchanged (CEL
	// rules see the whole object on /status writes too).
	RatchetRootRule = "validation ratcheting never forgives a rule on the root"
	// RatchetTransition explains rules that use oldSelf, which the server never forgives (and
	// checks on /status writes too, since CEL rules see the whole object).
	RatchetTransition = "validation ratcheting does not forgive rules that use oldSelf"
	// RatchetRequired explains required, which the parent object's node reports.
	RatchetRequired = "validation ratcheting: required is checked on the parent object"
	// RatchetRoot explains required at the root, which no update leaves unchanged.
	RatchetRoot = "validation ratcheting never forgives a missing required field at the root"
	// RatchetBranch explains what an allOf, anyOf, oneOf or not requires of a field below the
	// node that holds it: that node reports it.
	RatchetBranch = "validation ratcheting: an allOf, anyOf, oneOf or not is checked on the object holding it"
	// RatchetList explains constraints inside the items of a list that is not a map list: the
	// server does not pair such items with the old ones, so the list reports them.
	RatchetList = "validation ratcheting: items of a list that is not a map list are checked with the whole list"
)

// Ratchet is what validation ratcheting leaves of one constraint for a stored object that breaks
// it: which of its updates still pass, and why.
type Ratchet struct {
	// while is the value whose change makes the update fail; empty: every update fails, but
	// those through /status (which validate .status only, but for CEL rules) unless status.
	while string
	why   string
	// status: /status writes fail too.
	status bool
}

// ratchetValueDoc is what the docs of value constraints say of ratcheting.
const ratchetValueDoc = "Validation ratcheting (Kubernetes 1.30 and later) lets a stored object keep such a value while its updates leave the value as it is (the whole list, for an item of a list that is not a map list; the whole object holding it, for what an allOf, anyOf, oneOf or not of an ancestor requires), but creates and writes of such values fail."

// ValueRatchet is the ratcheting of a value constraint on the value at path ("the value" when
// the message names the field already).
func ValueRatchet(path string) Ratchet { return Ratchet{while: path, why: RatchetValue} }

// RuleRatchet is the ratcheting of a CEL rule without oldSelf written on the node at path.
func RuleRatchet(path string) Ratchet {
	if path == "." {
		return Ratchet{why: RatchetRootRule, status: true}
	}
	return Ratchet{while: path, why: RatchetRule}
}

// RequiredRatchet is the ratcheting of a required field of the object at parent (. for the
// root).
func RequiredRatchet(parent string) Ratchet {
	if parent == "." || parent == "" {
		return Ratchet{why: RatchetRoot}
	}
	return Ratchet{while: parent, why: RatchetRequired}
}

// BranchRatchet is the ratcheting of what an allOf, anyOf, oneOf or not of the node at holder
// requires of a field below it.
func BranchRatchet(holder string) Ratchet { return Ratchet{while: holder, why: RatchetBranch} }

// ListRatchet is the ratcheting of a constraint inside the items of the list at path, which is
// not a map list.
func ListRatchet(path string) Ratchet { return Ratchet{while: path, why: RatchetList} }

// Stored says what happens to the stored objects of subject ("stored objects without it"):
// "… keep updating only while .spec is unchanged (validation ratcheting forgives …)".
func (r Ratchet) Stored(subject string) string { return subject + " " + r.predicate() }

// Object is Stored for one object ("this object keeps updating only while …").
func (r Ratchet) Object(subject string) string {
	p := r.predicate()
	verb, _, _ := strings.Cut(p, " ")
	return subject + " " + verb + "s" + strings.TrimPrefix(p, verb)
}

func (r Ratchet) predicate() string {
	switch {
	case r.while != "":
		return "keep updating only while " + r.while + " is unchanged (" + r.why + ")"
	case r.status:
		return "fail every update, through /status too (" + r.why + ")"
	default:
		return "fail every update except through /status (" + r.why + ")"
	}
}

// defaultRuleRatchet is what validation-rule-added's advice says before the rule's node is known.
var defaultRuleRatchet = RuleRatchet("the value it is on")

// defaultRequiredRatchet is what required-added's advice says before the parent is known.
var defaultRequiredRatchet = RequiredRatchet("its parent")

// advise replaces a rule's advice at the end of a finding's message with advice for this case.
func advise(f *finding.Finding, r *Rule, advice string) {
	if msg, ok := strings.CutSuffix(f.Message, ": "+r.Advice); ok {
		f.Message = msg + ": " + advice
	}
}

// reratchet replaces, in a finding's message, what its rule's advice says of ratcheting (was)
// with what holds for this finding (now).
func reratchet(msg string, was, now Ratchet) string {
	return strings.Replace(msg, was.predicate(), now.predicate(), 1)
}

// ratchet is what validation ratcheting forgives of the errors this node reports (own is the
// usual case: the node's value unchanged): the shallowest of the list that does not pair its
// items with the old ones (not a map list) which the node lies in an item of, and the node
// whose allOf, anyOf, oneOf or not holds the branch the node lies under (the nearest), as
// k8s.io/apiserver's CorrelatedObject decides.
func (n *node) ratchet(own Ratchet) Ratchet {
	var chain []*node
	for m := n; m != nil; m = m.parent {
		chain = append(chain, m)
	}
	holder := -1
	for i, m := range chain {
		if m.inBranch && m.parent != nil && i > 0 {
			holder = i
			break
		}
	}
	for i := len(chain) - 1; i > 0; i-- {
		list, item := chain[i], chain[i-1]
		if i <= holder {
			break // the combinator is shallower
		}
		if item.path == list.path+"[*]" && derefOr(list.new.XListType, "atomic") != "map" {
			return ListRatchet(list.path)
		}
	}
	if n.underBranch && holder > 0 {
		return BranchRatchet(chain[holder].path)
	}
	return own
}
