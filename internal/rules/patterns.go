package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/strfmt"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/regexlang"
)

// Patterns are judged by the strings they accept (DESIGN §6), as the API server matches them:
// Go's RE2, a match anywhere in the string unless the pattern anchors itself.

var (
	patternAdded = &Rule{
		ID: "pattern-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "pattern-removed",
		Summary: "A regular-expression pattern was added.",
		Advice:  "values that do not match are rejected; make sure every value in use matches",
		Doc:     "A pattern makes the server reject strings that do not match it. " + ratchetValueDoc,
	}
	patternChanged = &Rule{
		ID: "pattern-changed", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "pattern-loosened",
		Summary: "A pattern changed and rejects a string the old one accepted (or crdguard could not decide).",
		Advice:  "values that matched the old pattern can be rejected; make the new pattern accept everything the old one did",
		Doc:     "crdguard compares the two regular expressions by the strings they accept, as the API server matches them (Go's RE2, a match anywhere in the string unless the pattern anchors itself). When a string that the old pattern and the node's old length bounds, enum and format (hostname, uuid) accept fails the new pattern, the message shows the shortest one, and `example` is an object with it that the API server's validator accepts under the old schema and refuses under the new one. A change it cannot decide within its bound (4096 automaton states), or one inside not or oneOf, stays an error and says so.",
	}
	patternLoosened = &Rule{
		ID: "pattern-loosened", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A pattern changed, and it still accepts every string the old one accepted (proven).",
		Doc:     "The new regular expression matches every string the old one matched (within the node's old minLength, maxLength, enum and format, for the formats the API server checks with a regular expression: hostname, uuid), as the API server matches patterns — Go's RE2, a match anywhere in the string unless the pattern anchors itself: a hostname pattern that now allows a trailing dot, a list of names with one more alternative, an anchor dropped. crdguard decides this on the two automata, not on the text. Safe for writers; readers must cope with the new values.",
	}
	patternRemoved = &Rule{
		ID: "pattern-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A pattern was removed.",
		Doc:     "Accepting any string is safe for writers.",
	}
)

func checkPattern(n *node) {
	if n.changed(kwPattern) && n.old.Pattern != "" && n.new.Pattern != "" {
		n.judge(kwPattern)
		n.patternChanged()
		return
	}
	stringChange(n, kwPattern, n.old.Pattern, n.new.Pattern, patternAdded, patternChanged, patternRemoved)
}

// patternChanged judges a pattern that was replaced by another.
func (n *node) patternChanged() {
	o, w := n.old.Pattern, n.new.Pattern
	what := fmt.Sprintf("pattern of %s changed from %s to %s", n.path, written(o), written(w))
	if n.underNegation() {
		n.emit(patternChanged, finding.Head, n.keyAt(finding.Head, kwPattern), o, w, "%s, inside not or oneOf, where accepting more can reject more", what)
		return
	}
	res, within := n.patternInclusion(o, w)
	switch res.Verdict {
	case regexlang.Included:
		n.emit(patternLoosened, finding.Head, n.keyAt(finding.Head, kwPattern), o, w, "%s, which accepts every string%s that the old one accepted", what, within)
		return
	case regexlang.Undecided:
		n.emit(patternChanged, finding.Head, n.keyAt(finding.Head, kwPattern), o, w, "%s (undecided: %s)", what, res.Why)
		return
	}
	values := make([]any, len(res.Examples))
	for i, ex := range res.Examples {
		values[i] = ex
	}
	var example json.RawMessage
	shown := fmt.Sprintf("%s matches the old pattern and not the new one", written(res.Examples[0]))
	if steps, ok := n.steps(); ok {
		pattern := " should match '" + w + "'"
		obj, used := n.e.judge(n.version).Refused(steps, values, func(e *field.Error) bool {
			return e.Type == field.ErrorTypeInvalid && strings.HasSuffix(e.Detail, pattern)
		})
		if obj != nil {
			example = finding.Value(obj)
			shown = fmt.Sprintf("%s was accepted and is now rejected", written(used.(string)))
		}
	}
	f := n.emit(patternChanged, finding.Head, n.keyAt(finding.Head, kwPattern), o, w, "%s: e.g. %s", what, shown)
	f.Example = example
}

// formatPatterns are the regular expressions the API server's string formats require (kube-openapi
// strfmt: a hostname also has length limits, which the witnesses' confirmation checks).
var formatPatterns = map[string]string{
	"hostname": strfmt.HostnamePattern,
	"uuid":     strfmt.UUIDPattern,
	"uuid3":    strfmt.UUID3Pattern,
	"uuid4":    strfmt.UUID4Pattern,
	"uuid5":    strfmt.UUID5Pattern,
}

// patternInclusion decides whether the new pattern accepts every string the old node accepted:
// the old enum's strings when it has one, else every string the old pattern (and the pattern
// of the old format, when it has one) matches within the old length bounds. within says which
// bounds the proof used, for the message.
func (n *node) patternInclusion(o, w string) (res regexlang.Result, within string) {
	b := regexlang.Bounds{Max: -1}
	if n.old.MinLength != nil {
		b.Min = int(min(*n.old.MinLength, 1<<20))
	}
	if n.old.MaxLength != nil {
		b.Max = int(min(*n.old.MaxLength, 1<<20))
	}
	if len(n.old.Enum) > 0 {
		return enumInclusion(n.old.Enum, o, w, b), " of the old enum"
	}
	format := ""
	if f := n.old.Format; formatPatterns[f] != "" && enforcedFormat(n.old.Type, f) {
		format = f
	}
	// The old bounds and format are named only when the proof needs them.
	if res = n.e.includes(o, "", w, regexlang.Bounds{Max: -1}); res.Verdict == regexlang.Included || b == (regexlang.Bounds{Max: -1}) && format == "" {
		return res, ""
	}
	res = n.e.includes(o, format, w, b)
	switch {
	case b.Min > 0 && b.Max >= 0:
		within = fmt.Sprintf(" of %d to %d characters", b.Min, b.Max)
	case b.Max >= 0:
		within = fmt.Sprintf(" of at most %d characters", b.Max)
	case b.Min > 0:
		within = fmt.Sprintf(" of at least %d characters", b.Min)
	}
	switch {
	case format != "" && within == "":
		within = " of format " + format
	case format != "":
		within += " and format " + format
	}
	return res, within
}

// enumInclusion checks the old enum's strings one by one: the old schema accepts no other.
func enumInclusion(enum []apiextv1.JSON, o, w string, b regexlang.Bounds) regexlang.Result {
	ro, err1 := regexp.Compile(o)
	rw, err2 := regexp.Compile(w)
	if err1 != nil || err2 != nil {
		return regexlang.Result{Why: "a pattern does not compile"}
	}
	var res regexlang.Result
	for _, v := range enum {
		var s string
		if json.Unmarshal(v.Raw, &s) != nil {
			continue // not a string: the pattern does not apply
		}
		l := utf8.RuneCountInString(s)
		if ro.MatchString(s) && l >= b.Min && (b.Max < 0 || l <= b.Max) && !rw.MatchString(s) {
			res.Examples = append(res.Examples, s)
		}
	}
	if len(res.Examples) == 0 {
		return regexlang.Result{Verdict: regexlang.Included}
	}
	res.Verdict = regexlang.Witness
	return res
}

// underNegation reports whether the node is, or lies below, a branch of not or oneOf: there a
// pattern that accepts more can make the whole schema accept less.
func (n *node) underNegation() bool {
	for r := n.rel; r != nil; r = r.parent {
		for _, s := range r.segs {
			if s == keywordNames[kwNot] || s == keywordNames[kwOneOf] {
				return true
			}
		}
	}
	return false
}

// patternMemo remembers the pattern comparisons of one pair (its versions often share their
// schemas) and bounds their total work, so that a CRD full of patterns built to blow up the
// automata cannot stall a run: past the budget, changed patterns stay undecided errors.
type patternMemo struct {
	results map[patternKey]regexlang.Result
	steps   int
}

type patternKey struct {
	old, format, new string
	bounds           regexlang.Bounds
}

// maxPatternSteps is the budget of one pair: eight comparisons that reach the bound.
const maxPatternSteps = 8 * regexlang.MaxSteps

// includes compares two patterns once per pair, within the pair's budget; the old strings
// also meet format, when it is not empty.
func (e *emitter) includes(o, format, w string, b regexlang.Bounds) regexlang.Result {
	if e.regex == nil {
		e.regex = &patternMemo{results: map[patternKey]regexlang.Result{}}
	}
	key := patternKey{o, format, w, b}
	if res, ok := e.regex.results[key]; ok {
		return res
	}
	if e.regex.steps > maxPatternSteps {
		return regexlang.Result{Why: fmt.Sprintf("the pattern comparisons of this CRD have spent their budget of %d steps", maxPatternSteps)}
	}
	var where []string
	if format != "" {
		where = []string{formatPatterns[format]}
	}
	res := regexlang.IncludesWhere(o, where, w, b)
	e.regex.steps += res.Steps
	e.regex.results[key] = res
	return res
}
