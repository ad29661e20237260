package rules

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/celproof"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// CEL validation rules (x-kubernetes-validations). Rules are matched by their rule text; a rule
// whose text changed in place is "changed", not removed and added.

var (
	validationRuleAdded = &Rule{
		ID: "validation-rule-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "validation-rule-removed",
		Summary: "A CEL validation rule (x-kubernetes-validations) was added.",
		Advice:  defaultRuleRatchet.Stored(breakIt) + "; clients creating such objects are rejected; check the rule against existing objects",
		Doc:     "A new CEL rule rejects every write of an object that breaks it. The API server checks a rule on the value it is written on, so validation ratcheting (Kubernetes 1.30 and later) lets a stored object that breaks it keep updating only while that whole value is unchanged (a rule on .spec fails on any change to .spec; a rule on the root, on every update); creates must always conform. A rule that uses oldSelf is checked on updates only (not on creates), and never forgiven, not even on an unchanged update or a write through /status. Make sure every object in use satisfies the rule, or express it as a transition rule that only applies to changed values. A rule that takes the place of an allOf/anyOf/oneOf/not removed in the same change, where both only test which fields are set, is judged together with it: the same acceptance is one combinator-loosened, a narrower one this error naming what it replaces (the removal is not reported again).",
	}
	validationRuleChanged = &Rule{
		ID: "validation-rule-changed", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "validation-rule-loosened",
		Summary: "The expression of a CEL validation rule changed, and crdguard could not prove it rejects nothing the old schema accepted.",
		Advice:  "objects valid under the old rule may be rejected; make sure the new rule accepts everything the old one did",
		Doc:     "crdguard evaluates the old and the new rule with the API server's CEL runtime (see \"CEL rules: proofs and examples\"). When it finds an object that the old schema accepts and the new rule rejects, and the API server's validator confirms it, the finding carries it as `example` and the message shows it on one line. When it can neither prove the change safe nor find such an object, the change stays an error (fail closed) and the message names the smallest part of the rule that changed and the values it reads that no enumeration covers.",
	}
	validationRuleRewritten = &Rule{
		ID: "validation-rule-rewritten", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A CEL rule's text changed, but it accepts exactly the objects the old schema accepted (proven).",
		Doc:     "The new expression gives the same verdict as the old one on every object the old schema allows — typically a generator emitting cheaper CEL for the same marker. crdguard proves this by evaluating both rules with the API server's CEL runtime on every combination of the data they read, when that data has a finite domain under the old schema, or else from the rules' text: both rules become the same expression once what the old schema decides is put in (a comparison with a value its enum never allowed is false).",
	}
	validationRuleLoosened = &Rule{
		ID: "validation-rule-loosened", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A CEL rule's text changed and it now accepts more, rejecting nothing the old schema accepted (proven).",
		Doc:     "Every object the old schema accepted still passes the new rule (for example a guard such as `!has(self.x) ||` was added, or \"exactly one of\" became \"at most one of\"). crdguard proves this over every combination of the data the rules read, when that data has a finite domain under the old schema, or else from the rules' text: the old rule is a disjunct of the new one, the same condition now guards the same branches with weaker ones, an all() or exists() has a weaker predicate, a bound moved in the accepting direction (`self <= 6553` → `self <= 65535`, `size(self) <= 4` → `size(self) <= 8`), a list of allowed values gained members (`self in ['Gateway', 'HTTPRoute']` → `self in ['Gateway', 'ListenerSet', 'HTTPRoute']`, `self == 'Gateway'` → `self in ['Gateway', 'ListenerSet']`), a list written as `['A', 'B'].exists(k, k == x)` or as `x == 'A' || x == 'B'` is read as `x in ['A', 'B']`, a new member may carry a check of its own (`x in ['A', 'B', 'C'] && (x != 'C' || …)`), an all() applies the old check to the items a filter() keeps (`self.all(x, q)` → `self.filter(x, p).all(x, q)`, where p cannot err), or a literal regular expression in matches() accepts every string the old one did (decided like `pattern`, see pattern-loosened).",
	}
	validationRuleImplied = &Rule{
		ID: "validation-rule-implied", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A new CEL rule that every object the old schema accepted already satisfies (proven).",
		Doc:     "The rule constrains only fields that are new in this change (so absent from every stored object), or what the old schema's required fields, enums and rules already imply. crdguard proves this by evaluating the rule on every combination of the data it reads under the old schema, or else from its text (`!has(self.newField) || …` is true on every stored object, whatever else it reads, and `!has(oldSelf.newField) || …` on every update of one; behind a guard such as `!has(self.tls) || …` the rest reads self.tls as present, and a new field with a default reads as that default, so `!has(self.tls) || !(has(self.tls.autoSNI) && self.tls.autoSNI) || …` is vacuous when autoSNI is new without a default or with default false; a uniqueness rule, `self.all(x, self.exists_one(y, y == x))` or `size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0`, on a set-type list of strings, integers or booleans, whose items the API server already keeps unique, and its key form on a map-type list, `self.all(a, self.exists_one(b, b.k == a.k))` or `size(self.filter(b, b.k == a.k)) == 1` with the equality of every list-map key), or because it restates a rule the old schema had on a node above, reached through properties (a root rule `!(self.spec.type in ['a'])` that became .spec's `!(self.type in ['a'])`: the new rule runs only where .spec is present, where the old one held), or over intervals when it only restates the old bounds (a sum of list sizes capped at what maxItems already allows).",
	}
	validationRuleRemoved = &Rule{
		ID: "validation-rule-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A CEL validation rule was removed.",
		Doc:     "Dropping a validation rule is safe for writers; readers must cope with values it used to forbid.",
	}
	validationMessageChanged = &Rule{
		ID: "validation-message-changed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A CEL rule's message, messageExpression or fieldPath changed.",
		Doc:     "Only the error a client sees changes (its wording, or the field it is reported on); what is accepted stays the same. Clients that match error messages may notice.",
	}
	validationReasonChanged = &Rule{
		ID: "validation-reason-changed", Severity: finding.Warning, Level: PropertyLevel,
		Summary: "A CEL rule's reason changed.",
		Advice:  "clients that branch on the error's reason see a different one; check that none depends on the old reason",
		Doc:     "The reason is the machine-readable cause of the error (FieldValueInvalid, FieldValueForbidden, FieldValueRequired, FieldValueDuplicate) and the HTTP status details carry it: clients and controllers may branch on it, unlike on the message. What is accepted stays the same; make sure no client depends on the old reason.",
	}
)

var celRules = []*Rule{validationRuleAdded, validationRuleChanged, validationRuleRemoved, validationRuleRewritten, validationRuleLoosened, validationRuleImplied, validationMessageChanged, validationReasonChanged}

// breakIt is the subject of validation-rule-added's advice.
const breakIt = "stored objects that break it"

// transitionAdvice is validation-rule-added's advice for a rule that uses oldSelf.
var transitionAdvice = "updates that break it are refused, even unchanged ones and writes through /status (" + RatchetTransition + "); check the rule against how clients update these objects"

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
		} else {
			n.errorChanged(o[j], r)
		}
	}
	var unmatchedOld []int
	for j, m := range matched {
		if !m && !n.settled[o[j].Rule] {
			unmatchedOld = append(unmatchedOld, j)
		}
	}
	unmatchedNew = slices.DeleteFunc(unmatchedNew, func(i int) bool { return n.settled[w[i].Rule] })
	pairs, unmatchedOld, unmatchedNew := pairRules(o, w, unmatchedOld, unmatchedNew)
	for _, p := range pairs {
		n.ruleChanged(o[p[0]], w[p[1]])
	}
	for _, i := range unmatchedNew {
		n.ruleAdded(w[i])
	}
	for _, j := range unmatchedOld {
		n.emitRule(validationRuleRemoved, finding.Base, o[j], o[j].Rule, nil, "validation rule %q of %s was removed", o[j].Rule, n.path)
	}
}

// pairRules pairs the old rules whose text is gone with the new rules that replace them, as
// (old, new) indexes; the rest were removed or added. An old rule pairs with the new one that
// shares its message (or messageExpression), else the most of its words (at least half of those
// the two use). Nothing else pairs, not even one removed and one added rule at a node: a rule
// that moved to a child node while an unrelated one was added here is not "changed" into it (the
// added rule is judged on its own against the old schema, the removal is what it is).
func pairRules(o, w apiextv1.ValidationRules, oldIdx, newIdx []int) (pairs [][2]int, leftOld, leftNew []int) {
	taken := make([]bool, len(newIdx))
	for _, i := range oldIdx {
		best, bestScore := -1, 0.5
		for k, j := range newIdx {
			if score := ruleLikeness(o[i], w[j]); !taken[k] && score >= bestScore {
				best, bestScore = k, score
				if score == 1 {
					break
				}
			}
		}
		if best < 0 {
			leftOld = append(leftOld, i)
			continue
		}
		taken[best] = true
		pairs = append(pairs, [2]int{i, newIdx[best]})
	}
	for k, j := range newIdx {
		if !taken[k] {
			leftNew = append(leftNew, j)
		}
	}
	return pairs, leftOld, leftNew
}

// ruleLikeness is how much two rules look like one rule edited: 1 when they share a message or
// messageExpression, else the share of words their expressions share, or of names alone when
// that is more (`self <= 6553` → `self <= 65535` changed a literal, nothing else).
func ruleLikeness(a, b apiextv1.ValidationRule) float64 {
	if a.Message != "" && a.Message == b.Message || a.MessageExpression != "" && a.MessageExpression == b.MessageExpression {
		return 1
	}
	return max(similarity(a.Rule, b.Rule, ruleWordRE), similarity(a.Rule, b.Rule, ruleNameRE))
}

// similarity is the share of the words (as re finds them) two rules use that both use.
func similarity(a, b string, re *regexp.Regexp) float64 {
	words := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range re.FindAllString(s, -1) {
			m[w] = true
		}
		return m
	}
	x, y := words(a), words(b)
	both := 0
	for w := range x {
		if y[w] {
			both++
		}
	}
	if all := len(x) + len(y) - both; all > 0 {
		return float64(both) / float64(all)
	}
	return 1
}

// ruleWordRE finds a rule's words: names, literals and numbers; ruleNameRE its names alone.
var (
	ruleWordRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*|'[^']*'|"[^"]*"|[0-9]+`)
	ruleNameRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

func (n *node) ruleChanged(o, w apiextv1.ValidationRule) {
	judged := n.judgeRule(&o, w)
	n.e.later(func() { n.emitChanged(o, w, judged()) })
}

func (n *node) emitChanged(o, w apiextv1.ValidationRule, res celproof.Result) {
	var f *finding.Finding
	switch res.Verdict {
	case celproof.Equivalent:
		f = n.emitRule(validationRuleRewritten, finding.Head, w, o.Rule, w.Rule, "validation rule of %s was rewritten from %q to %q: it accepts exactly what the old rule accepted, %s", n.path, o.Rule, w.Rule, proven(n.path, res))
	case celproof.Looser:
		f = n.emitRule(validationRuleLoosened, finding.Head, w, o.Rule, w.Rule, "validation rule of %s was loosened from %q to %q: it rejects no object the old schema accepted, %s", n.path, o.Rule, w.Rule, proven(n.path, res))
	default:
		f = n.emitRule(validationRuleChanged, finding.Head, w, o.Rule, w.Rule, "validation rule of %s changed from %q to %q%s", n.path, o.Rule, w.Rule, shown(res))
		f.Ratchetable = f.Ratchetable && !usesOldSelf(o) && !usesOldSelf(w)
		f.Example, f.ExampleUpdate = example(res), exampleUpdate(res)
	}
	if o.Message != w.Message || o.MessageExpression != w.MessageExpression {
		// The rule is known by another message on each side: the reports name both sides by
		// their expressions, never the old one by its expression and the new by its message.
		f.RuleMessage, f.RuleMessageExpression = "", ""
	}
}

func (n *node) ruleAdded(w apiextv1.ValidationRule) {
	judged := n.judgeRule(nil, w)
	n.e.later(func() { n.emitAdded(w, judged()) })
}

func (n *node) emitAdded(w apiextv1.ValidationRule, res celproof.Result) {
	if res.Verdict == celproof.Undecided {
		// A rule moved down from a node above, with the same meaning, rejects nothing new.
		if steps, ok := n.steps(); ok {
			if m := n.e.judge(n.version).Moved(celproof.Change{Steps: steps, After: w}); m.Verdict.Safe() {
				res = m
			}
		}
	}
	if res.Verdict.Safe() {
		n.emitRule(validationRuleImplied, finding.Head, w, nil, w.Rule, "%s has a new validation rule %q that every object the old schema accepted satisfies, %s", n.path, w.Rule, proven(n.path, res))
		return
	}
	what := fmt.Sprintf("%s has a new validation rule %q", n.path, w.Rule)
	if n.replaces != "" {
		what += fmt.Sprintf(" in place of its %s", n.replaces)
	}
	f := n.emitRule(validationRuleAdded, finding.Head, w, nil, w.Rule, "%s", what+shown(res))
	f.Ratchetable = f.Ratchetable && !usesOldSelf(w)
	if i := strings.LastIndex(f.Message, ": "+breakIt); i >= 0 && usesOldSelf(w) {
		// Checked on updates only, and never forgiven.
		f.Message = f.Message[:i+2] + transitionAdvice
	}
	f.Example, f.ExampleUpdate = example(res), exampleUpdate(res)
}

// checkLibraries reports the rules, new in this change (every rule of a new CRD or version), that
// the CEL environment of the configured kubernetesVersion cannot compile, naming what they lack
// and the version that introduced it.
func checkLibraries(e *emitter) {
	minor := e.opts.KubernetesVersion
	if minor == 0 || e.pair.New == nil {
		return
	}
	for _, v := range e.pair.New.Object.Spec.Versions {
		for _, u := range celproof.TooNew(e.pair.Old, e.pair.New, v.Name, minor) {
			path, at := ".", e.pair.New.SchemaPath(v.Name)
			for _, st := range u.Steps {
				switch st.Kind {
				case celproof.Property:
					path, at = childPath(path, st.Name), at.Join("properties", st.Name)
				case celproof.Items:
					path, at = path+"[*]", at.Join("items")
				case celproof.MapValues:
					path, at = childPath(path, "*"), at.Join("additionalProperties")
				}
			}
			what := "what it uses"
			if u.Function != "" {
				what = u.Function
			}
			at = at.Join(keywordNames[kwValidations], crd.ItemWith{Key: "rule", Value: u.Rule.Rule}, "rule")
			e.add(invalidCRD, "", "", finding.Head, at, nil, u.Rule.Rule,
				fmt.Sprintf("rule %q of %s (version %s) uses %s, which the API server accepts in new rules from Kubernetes %s on; kubernetesVersion is 1.%d", u.Rule.Rule, path, v.Name, what, u.Since, minor))
		}
	}
}

// judgeRule starts evaluating a new or changed rule against the old schema (celproof) and
// returns the wait for its result; a rule in a branch of allOf/anyOf/oneOf/not is left
// undecided.
func (n *node) judgeRule(o *apiextv1.ValidationRule, w apiextv1.ValidationRule) func() celproof.Result {
	steps, ok := n.steps()
	if !ok {
		return func() celproof.Result { return celproof.Result{} }
	}
	j, c := n.e.judge(n.version), celproof.Change{Steps: steps, Before: o, After: w}
	j.Start(c)
	return func() celproof.Result { return j.Judge(c) }
}

// steps leads from the schema root to this node; false inside a combinator branch.
func (n *node) steps() ([]celproof.Step, bool) {
	var segs []any
	for r := n.rel; r != nil; r = r.parent {
		segs = append(append([]any(nil), r.segs...), segs...)
	}
	var steps []celproof.Step
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			i++
			steps = append(steps, celproof.Step{Kind: celproof.Property, Name: segs[i].(string)})
		case "items":
			steps = append(steps, celproof.Step{Kind: celproof.Items})
		case "additionalProperties":
			steps = append(steps, celproof.Step{Kind: celproof.MapValues})
		default:
			return nil, false
		}
	}
	return steps, true
}

// judge returns the CEL judge of one version of the pair, made once.
func (e *emitter) judge(version string) *celproof.Judge {
	if e.judges == nil {
		e.judges = map[string]*celproof.Judge{}
	}
	j, ok := e.judges[version]
	if ok {
		return j
	}
	// Versions served from the same types (Gateway API's v1 and v1beta1) share one judge.
	o, w := versionSchema(e.pair.Old, version), versionSchema(e.pair.New, version)
	for _, v := range e.pair.New.Object.Spec.Versions {
		if other, ok := e.judges[v.Name]; ok && reflect.DeepEqual(versionSchema(e.pair.Old, v.Name), o) && reflect.DeepEqual(versionSchema(e.pair.New, v.Name), w) {
			j = other.As(version)
			e.judges[version] = j
			return j
		}
	}
	j = celproof.NewJudge(e.pair.Old, e.pair.New, version)
	e.judges[version] = j
	return j
}

// versionSchema is the openAPIV3Schema of a version of a CRD, or nil.
func versionSchema(c *crd.CRD, version string) *apiextv1.JSONSchemaProps {
	if v := findVersion(c.Object, version); v != nil {
		return schemaOf(v)
	}
	return nil
}

// proven says how a safe verdict was reached for the rule of the node at path at.
func proven(at string, res celproof.Result) string {
	if res.ByText {
		if len(res.Because) == 0 {
			return "proven from the rules' text"
		}
		return "proven from the rules' text and the old schema: " + strings.Join(res.Because, "; ")
	}
	if len(res.Unheld) > 0 {
		paths := make([]string, len(res.Unheld))
		for i, u := range res.Unheld {
			paths[i] = strings.TrimSuffix(at, ".") + u
		}
		if len(paths) == 1 {
			return "because the field " + paths[0] + " is new in this change and the old schema prunes it: stored objects cannot hold it"
		}
		return "because the fields " + strings.Join(paths[:len(paths)-1], ", ") + " and " + paths[len(paths)-1] + " are new in this change and the old schema prunes them: stored objects cannot hold them"
	}
	what := "objects"
	if res.Transition {
		what = "objects and updates"
	}
	if res.Objects == 1 {
		return "proven on the only object the old schema allows for the data the rules read"
	}
	return fmt.Sprintf("proven on all %d %s the old schema allows for the data the rules read", res.Objects, what)
}

// shown is the part of an unsafe verdict's message that shows the witness, or says which
// sub-expression could not be decided and why.
func shown(res celproof.Result) string {
	switch {
	case res.Verdict == celproof.Witness && res.Stored != nil:
		return ": e.g. changing " + celproof.Short(res.Stored) + " to " + celproof.Short(res.Example) + " was allowed and is now rejected"
	case res.Verdict == celproof.Witness:
		return ": e.g. " + celproof.Short(res.Example) + " was valid and is now rejected"
	}
	if res.Why != "" {
		return " (undecided: " + res.Why + ")"
	}
	return ""
}

// example is the witness of a create for the finding's example field; an update's witness (a
// transition rule) takes two objects and goes to exampleUpdate.
func example(res celproof.Result) json.RawMessage {
	if res.Verdict != celproof.Witness || res.Stored != nil {
		return nil
	}
	return finding.Value(res.Example)
}

// exampleUpdate is the witness of an update (a transition rule): the object as stored, and as
// written.
func exampleUpdate(res celproof.Result) *finding.Update {
	if res.Verdict != celproof.Witness || res.Stored == nil {
		return nil
	}
	return &finding.Update{Old: finding.Value(res.Stored), New: finding.Value(res.Example)}
}

// errorChanged classifies what changed of a rule whose text stayed: the reason clients branch
// on, or only the wording and field of the error.
func (n *node) errorChanged(o, w apiextv1.ValidationRule) {
	if !eqPtr(o.Reason, w.Reason) {
		n.emitRule(validationReasonChanged, finding.Head, w, o.Reason, w.Reason, "the reason reported by rule %q of %s changed from %s to %s", w.Rule, n.path, reasonName(o.Reason), reasonName(w.Reason))
	}
	o.Reason, w.Reason = nil, nil
	if !reflect.DeepEqual(o, w) {
		n.emitRule(validationMessageChanged, finding.Head, w, errorText(o), errorText(w), "the error reported by rule %q of %s changed", w.Rule, n.path)
	}
}

// reasonName is a reason as the API server reports it; unset means FieldValueInvalid.
func reasonName(r *apiextv1.FieldValueErrorReason) string {
	if r == nil {
		return string(apiextv1.FieldValueInvalid) + " (default)"
	}
	return string(*r)
}

// errorText is what a rule reports besides its reason: message, messageExpression, fieldPath.
func errorText(r apiextv1.ValidationRule) map[string]string {
	out := map[string]string{}
	for k, v := range map[string]string{"message": r.Message, "messageExpression": r.MessageExpression, "fieldPath": r.FieldPath} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func (n *node) ruleAt(side finding.Side, rule string) crd.Path {
	return n.at(side, keywordNames[kwValidations], crd.ItemWith{Key: "rule", Value: rule}, "rule")
}

// emitRule adds a finding about one CEL rule of the node, at the rule's line on that side; the
// rule's text is its subject, since a node can gain or lose several rules at once, and its
// message (or messageExpression) is what release notes call it by.
func (n *node) emitRule(r *Rule, side finding.Side, rule apiextv1.ValidationRule, before, after any, format string, args ...any) *finding.Finding {
	f := n.emit(r, side, n.ruleAt(side, rule.Rule), before, after, format, args...)
	f.Subject = rule.Rule
	f.RuleMessage, f.RuleMessageExpression = rule.Message, rule.MessageExpression
	return f
}

// usesOldSelf reports whether a rule is a transition rule, which ratcheting does not cover.
func usesOldSelf(r apiextv1.ValidationRule) bool {
	return oldSelfRE.MatchString(r.Rule) || r.OptionalOldSelf != nil && *r.OptionalOldSelf
}
