package rules

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// Value rules: defaults, enums, formats and patterns. Tightenings of enum, format and pattern are
// value validations that Kubernetes ≥ 1.30 ratchets for existing objects; defaults are not.

var (
	defaultAdded = &Rule{
		ID: "default-added", Severity: finding.Error, Level: PropertyLevel, Twin: "default-removed",
		Summary: "A default was added.",
		Advice:  "every stored object that omits the field reads back with the default and the controller acts on it; make sure that value is what old objects meant",
		Doc:     "The API server applies defaults when it reads objects from etcd, so adding a default changes what every existing object that omits the field means, at once and without a write. Make sure the default matches the behaviour of an unset field, or introduce the default in a new API version.",
	}
	defaultChanged = &Rule{
		ID: "default-changed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "A default value changed.",
		Advice:  "stored objects that omitted the field now read back with the new value; keep the old default, or set the old value explicitly in existing objects first",
		Doc:     "Defaults are applied when objects are read, so changing one silently changes the meaning of every stored object that omitted the field. Keep the old default; to change behaviour, add a new field or a new API version.",
	}
	defaultRespelled = &Rule{
		ID: "default-respelled", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A duration default was rewritten the way Go writes the same duration.",
		Doc:     "A default such as `1h` that became `1h0m0s` (or back) is one duration spelled two ways: the second is exactly what Go's time.Duration prints for the first, which is how controller-gen writes the default of a metav1.Duration field. Stored objects that omit the field read back with the new spelling, and a controller reading the field as a duration sees the same value. Any other change of a default, including another spelling of the same duration (`60m`), stays `default-changed`.",
	}
	defaultRemoved = &Rule{
		ID: "default-removed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "A default was removed.",
		Advice:  "objects that relied on it now read back without the field; keep the default, or make the controller treat an unset field the same way",
		Doc:     "Objects created after the default was dropped no longer get the value, and objects whose default was never persisted read back without it. Keep the default, or make sure consumers treat the unset field exactly as the old default.",
	}
	enumAdded = &Rule{
		ID: "enum-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "enum-removed",
		Summary: "An enum restriction was added to a property that had none.",
		Advice:  ValueRatchet("the value").Stored("stored objects with other values") + "; clients sending them are rejected; list every value in use, or validate in the controller instead",
		Doc:     "Restricting a free-form property to an enum refuses every value outside the list. " + ratchetValueDoc + " Include every value in use.",
	}
	enumRemoved = &Rule{
		ID: "enum-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An enum restriction was removed.",
		Doc:     "Any value is now accepted: safe for writers; readers must cope with new values. An enum moved from a list to its items is judged as one change: an enum of strings written on the list itself refused every list, so the items' enum refuses nothing stored (this finding); when the list's enum allowed lists with an item the items' enum lacks, it is enum-added with such a list as the example.",
	}
	enumValueRemoved = &Rule{
		ID: "enum-value-removed", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "enum-value-added",
		Summary: "An allowed enum value was removed.",
		Advice:  ValueRatchet("the value").Stored("stored objects using this value") + "; clients sending it are rejected; keep the value (deprecate it in the description)",
		Doc:     "A removed enum value can no longer be set. " + ratchetValueDoc + " Keep the value and document it as deprecated.",
	}
	enumValueAdded = &Rule{
		ID: "enum-value-added", Severity: finding.Info, Level: PropertyLevel,
		Summary: "An enum value was added.",
		Doc:     "Accepting one more value is safe for writers; controllers and clients that switch over the values should handle the new one.",
	}
	formatAdded = &Rule{
		ID: "format-added", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true, Twin: "format-removed",
		Summary: "A format was added.",
		Advice:  "values that do not match the format are rejected; validate in the controller or add the format in a new version",
		Doc:     "A format (date-time, uri, int32, …) makes the API server reject values that do not match it. " + ratchetValueDoc,
	}
	formatChanged = &Rule{
		ID: "format-changed", Severity: finding.Error, Level: PropertyLevel, Ratchetable: true,
		Summary: "A format changed.",
		Advice:  "values valid under the old format may be rejected; keep the old format",
		Doc:     "Changing a format changes which values are accepted; values valid before may be rejected now.",
	}
	formatRemoved = &Rule{
		ID: "format-removed", Severity: finding.Info, Level: PropertyLevel,
		Summary: "A format was removed.",
		Doc:     "Accepting any value is safe for writers.",
	}
)

var valueRules = []*Rule{
	defaultAdded, defaultChanged, defaultRespelled, defaultRemoved, enumAdded, enumRemoved, enumValueRemoved, enumValueAdded,
	formatAdded, formatChanged, formatRemoved, patternAdded, patternChanged, patternLoosened, patternRemoved,
}

func checkDefault(n *node) {
	if !n.changed(kwDefault) {
		return
	}
	n.judge(kwDefault)
	o, w := n.old.Default, n.new.Default
	switch {
	case o == nil:
		if p, ok := n.upstreamDefault(w); ok {
			n.emit(upstreamDefaultAdded, finding.Head, n.keyAt(finding.Head, kwDefault), nil, rawJSON(w),
				"%s now defaults to %s, the default k8s.io/api declares for %s: the API server gives the objects built from it the same default when it creates them, so nothing changes for them",
				n.path, canonicalJSON(w.Raw), p.Name())
			return
		}
		n.emit(defaultAdded, finding.Head, n.keyAt(finding.Head, kwDefault), nil, rawJSON(w), "%s now defaults to %s", n.path, canonicalJSON(w.Raw))
	case w == nil:
		n.emit(defaultRemoved, finding.Base, n.keyAt(finding.Base, kwDefault), rawJSON(o), nil, "%s no longer defaults to %s", n.path, canonicalJSON(o.Raw))
	case goRespelled(o, w):
		n.emit(defaultRespelled, finding.Head, n.keyAt(finding.Head, kwDefault), rawJSON(o), rawJSON(w),
			"default of %s changed from %s to %s, the same duration as Go writes it: a controller reading the field as a duration sees the same value", n.path, canonicalJSON(o.Raw), canonicalJSON(w.Raw))
	default:
		n.emit(defaultChanged, finding.Head, n.keyAt(finding.Head, kwDefault), rawJSON(o), rawJSON(w), "default of %s changed from %s to %s", n.path, canonicalJSON(o.Raw), canonicalJSON(w.Raw))
	}
}

// goRespelled says two string defaults are one duration, one of them written exactly as Go's
// time.Duration prints the other: the trace of a metav1.Duration default regenerated by
// controller-gen, read by Go code that parses both alike. Other equal spellings ("60m" for
// "1h") are not taken as proof that every consumer parses durations.
func goRespelled(o, w *apiextv1.JSON) bool {
	var a, b string
	if json.Unmarshal(o.Raw, &a) != nil || json.Unmarshal(w.Raw, &b) != nil || a == b {
		return false
	}
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db && (da.String() == b || db.String() == a)
}

func checkEnum(n *node) {
	if enumCombinators(n) || !n.changed(kwEnum) {
		return
	}
	n.judge(kwEnum)
	if enumMoved(n) {
		return
	}
	o, w := n.old.Enum, n.new.Enum
	switch {
	case len(o) == 0:
		n.emit(enumAdded, finding.Head, n.keyAt(finding.Head, kwEnum), nil, enumValues(w), "%s is now restricted to %s", n.path, enumValues(w))
		return
	case len(w) == 0:
		n.emit(enumRemoved, finding.Base, n.keyAt(finding.Base, kwEnum), enumValues(o), nil, "%s is no longer restricted to an enum", n.path)
		return
	}
	newSet, oldSet := enumSet(w), enumSet(o)
	for _, v := range o {
		if c := string(canonicalJSON(v.Raw)); !newSet[c] {
			n.emit(enumValueRemoved, finding.Base, n.at(finding.Base, keywordNames[kwEnum], crd.Item{JSON: v.Raw}), json.RawMessage(c), nil, "value %s is no longer allowed for %s", c, n.path)
		}
	}
	for _, v := range w {
		if c := string(canonicalJSON(v.Raw)); !oldSet[c] {
			n.emit(enumValueAdded, finding.Head, n.at(finding.Head, keywordNames[kwEnum], crd.Item{JSON: v.Raw}), nil, json.RawMessage(c), "value %s is now allowed for %s", c, n.path)
		}
	}
	// Only the order changed: nothing to report, and nothing unknown either.
}

// enumMoved judges an enum moved from a list to its items (DESIGN §7: constraints moved between
// keywords are judged together). On the list it reports nothing and marks its items; on the
// items it reports one finding: the list's old enum allowed only the lists among its values
// (none at all, usually: an enum of strings written one level too high refuses every list), so
// the items' enum refuses nothing stored unless one of those lists holds an item it lacks — then
// an error with that list as the witness.
func enumMoved(n *node) bool {
	o, w := n.old, n.new
	if len(o.Enum) > 0 && len(w.Enum) == 0 && o.Items != nil && o.Items.Schema != nil && w.Items != nil && w.Items.Schema != nil &&
		len(o.Items.Schema.Enum) == 0 && len(w.Items.Schema.Enum) > 0 {
		n.itemsEnumMoved = true
		return true
	}
	if n.enumMovedFrom == nil || len(o.Enum) > 0 || len(w.Enum) == 0 {
		return false
	}
	allowed := enumSet(w.Enum)
	var lists, refused []any
	for _, v := range n.enumMovedFrom {
		var l []any
		if json.Unmarshal(v.Raw, &l) != nil {
			continue // not a list: no list ever equalled it
		}
		lists = append(lists, l)
		for _, item := range l {
			b, _ := json.Marshal(item)
			if !allowed[string(canonicalJSON(b))] {
				refused = append(refused, item)
			}
		}
	}
	parent := strings.TrimSuffix(n.path, "[*]")
	if len(refused) == 0 {
		why := "accepted no list at all"
		if len(lists) > 0 {
			why = "accepted only lists whose items the new enum allows"
		}
		n.emit(enumRemoved, finding.Head, n.keyAt(finding.Head, kwEnum), enumValues(n.enumMovedFrom), enumValues(w.Enum),
			"the enum of %s moved to its items (%s is now restricted to %s): the old enum %s, so nothing it accepted is refused", parent, n.path, enumValues(w.Enum), why)
		return true
	}
	var example map[string]any
	shown := ""
	if steps, ok := n.steps(); ok {
		var used any
		if example, used = n.e.judge(n.version).Refused(steps, refused, func(e *field.Error) bool { return e.Type == field.ErrorTypeNotSupported }); example != nil {
			b, _ := json.Marshal(used)
			shown = fmt.Sprintf(": e.g. an item %s was accepted and is now rejected", b)
		}
	}
	f := n.emit(enumAdded, finding.Head, n.keyAt(finding.Head, kwEnum), enumValues(n.enumMovedFrom), enumValues(w.Enum),
		"the enum of %s moved to its items (%s is now restricted to %s), which refuse an item of a list the old enum allowed%s", parent, n.path, enumValues(w.Enum), shown)
	if example != nil {
		f.Example = finding.Value(example)
	}
	return true
}

func enumSet(vs []apiextv1.JSON) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[string(canonicalJSON(v.Raw))] = true
	}
	return m
}

func enumValues(vs []apiextv1.JSON) json.RawMessage {
	raw := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		raw[i] = canonicalJSON(v.Raw)
	}
	b, _ := json.Marshal(raw)
	return b
}

func checkFormat(n *node) {
	if formatLoosened(n) {
		return
	}
	f := stringChange(n, kwFormat, n.old.Format, n.new.Format, formatAdded, formatChanged, formatRemoved)
	if f != nil && n.new.Type == "integer" && n.new.Format == "int32" {
		int32Example(n, f)
	}
}

// int32Example gives a format change to int32 on an integer its witness: a value just outside
// int32 that the old schema accepts and the API server's validator refuses for the format now.
func int32Example(n *node, f *finding.Finding) {
	steps, ok := n.steps()
	if !ok {
		return
	}
	obj, used := n.e.judge(n.version).Refused(steps, []any{int64(math.MaxInt32) + 1, int64(math.MinInt32) - 1}, func(e *field.Error) bool {
		return strings.Contains(e.Detail, "format int32")
	})
	if obj != nil {
		f.Example = finding.Value(obj)
		f.Message = strings.Replace(f.Message, ": ", fmt.Sprintf(": e.g. %d was accepted and is now rejected: ", used), 1)
	}
}

// stringChange classifies a string keyword that restricts values when set, and returns the
// finding it made (nil when the keyword did not change).
func stringChange(n *node, k keyword, o, w string, added, changed, removed *Rule) *finding.Finding {
	if !n.changed(k) {
		return nil
	}
	n.judge(k)
	name := keywordNames[k]
	switch {
	case o == "":
		return n.emit(added, finding.Head, n.keyAt(finding.Head, k), nil, w, "%s now has %s %s", n.path, name, written(w))
	case w == "":
		return n.emit(removed, finding.Base, n.keyAt(finding.Base, k), o, nil, "%s no longer has %s %s", n.path, name, written(o))
	default:
		return n.emit(changed, finding.Head, n.keyAt(finding.Head, k), o, w, "%s of %s changed from %s to %s", name, n.path, written(o), written(w))
	}
}

// orNil turns an empty string into a JSON null for before/after.
func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func quoteOr(s, empty string) string {
	if s == "" {
		return empty
	}
	return written(s)
}

// written quotes a string of the CRD (a pattern, a format, an example value) as its author wrote
// it: strconv.Quote would double every backslash of a regex (`\\d` for `\d`). Only a string that
// holds a double quote or a character that does not print is quoted the Go way, so that where the
// string ends stays unambiguous.
func written(s string) string {
	for _, r := range s {
		if r == '"' || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return `"` + s + `"`
}
