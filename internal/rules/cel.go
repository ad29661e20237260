package rules

import (
	"reflect"
	"regexp"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// CEL validation rules (x-kubernetes-validations). Rules are matched by their rule text; a rule
// whose text changed in place is "changed", not removed and added.

var (
	validationRuleAdded = &Rule{
		ID: "validation-rule-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "validation-rule-removed",
		Summary: "A CEL validation rule (x-kubernetes-validations) was added.",
		Advice:  "stored objects that violate it cannot be updated (unless ratcheting applies) and clients creating such objects are rejected; check the rule against existing objects",
		Doc:     "A new CEL rule rejects every write of an object that violates it. With validation ratcheting (Kubernetes ≥ 1.30) an update that leaves the field untouched still passes, unless the rule uses oldSelf (transition rules are not ratcheted); creates must always conform. Make sure every object in use satisfies the rule, or express the rule as a transition rule that only applies to changed values.",
	}
	validationRuleChanged = &Rule{
		ID: "validation-rule-changed", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true,
		Summary: "The expression of a CEL validation rule changed.",
		Advice:  "objects valid under the old rule may be rejected; make sure the new rule accepts everything the old one did",
		Doc:     "crdguard cannot prove that a new CEL expression accepts everything the old one did, so a changed rule text (or optionalOldSelf) is treated as a tightening. If the new rule is strictly looser, acknowledge the finding.",
	}
	validationRuleRemoved = &Rule{
		ID: "validation-rule-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A CEL validation rule was removed.",
		Doc:     "Dropping a validation rule is safe for writers; readers must cope with values it used to forbid.",
	}
	validationMessageChanged = &Rule{
		ID: "validation-message-changed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A CEL rule's message, messageExpression, reason or fieldPath changed.",
		Doc:     "Only the error a client sees changes; what is accepted stays the same. Clients that match error messages may notice.",
	}
)

var celRules = []*Rule{validationRuleAdded, validationRuleChanged, validationRuleRemoved, validationMessageChanged}

var oldSelfRE = regexp.MustCompile(`\boldSelf\b`)

func checkValidations(n *node) {
	if !n.changed(kwValidations) {
		return
	}
	n.judge(kwValidations)
	o, w := n.old.XValidations, n.new.XValidations
	oldByRule := make(map[string]int, len(o))
	for i, r := range o {
		oldByRule[r.Rule] = i
	}
	matched := make([]bool, len(o))
	var unmatchedNew []int
	for i, r := range w {
		j, ok := oldByRule[r.Rule]
		if !ok || matched[j] {
			unmatchedNew = append(unmatchedNew, i)
			continue
		}
		matched[j] = true
		if !eqPtr(r.OptionalOldSelf, o[j].OptionalOldSelf) {
			n.ruleChanged(o[j], r)
		} else if !reflect.DeepEqual(r, o[j]) { // same text: only the reported error differs
			n.emit(validationMessageChanged, finding.Head, n.ruleAt(finding.Head, r.Rule), o[j].Message, r.Message, "the error reported by rule %q of %s changed", r.Rule, n.path)
		}
	}
	var unmatchedOld []int
	for j, m := range matched {
		if !m {
			unmatchedOld = append(unmatchedOld, j)
		}
	}
	// Rules whose text changed in place pair up in order; the rest were added or removed.
	for len(unmatchedOld) > 0 && len(unmatchedNew) > 0 {
		n.ruleChanged(o[unmatchedOld[0]], w[unmatchedNew[0]])
		unmatchedOld, unmatchedNew = unmatchedOld[1:], unmatchedNew[1:]
	}
	for _, i := range unmatchedNew {
		f := n.emit(validationRuleAdded, finding.Head, n.ruleAt(finding.Head, w[i].Rule), nil, w[i].Rule, "%s has a new validation rule %q", n.path, w[i].Rule)
		f.Ratchetable = f.Ratchetable && !usesOldSelf(w[i])
	}
	for _, j := range unmatchedOld {
		n.emit(validationRuleRemoved, finding.Base, n.ruleAt(finding.Base, o[j].Rule), o[j].Rule, nil, "validation rule %q of %s was removed", o[j].Rule, n.path)
	}
}

func (n *node) ruleChanged(o, w apiextv1.ValidationRule) {
	f := n.emit(validationRuleChanged, finding.Head, n.ruleAt(finding.Head, w.Rule), o.Rule, w.Rule, "validation rule of %s changed from %q to %q", n.path, o.Rule, w.Rule)
	f.Ratchetable = f.Ratchetable && !usesOldSelf(o) && !usesOldSelf(w)
}

func (n *node) ruleAt(side finding.Side, rule string) crd.Path {
	return n.at(side, keywordNames[kwValidations], crd.ItemWith{Key: "rule", Value: rule}, "rule")
}

// usesOldSelf reports whether a rule is a transition rule, which ratcheting does not cover.
func usesOldSelf(r apiextv1.ValidationRule) bool {
	return oldSelfRE.MatchString(r.Rule) || r.OptionalOldSelf != nil && *r.OptionalOldSelf
}
