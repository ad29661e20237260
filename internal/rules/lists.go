package rules

import (
	"strings"

	"github.com/crdguard/crdguard/internal/finding"
)

// List and map semantics for server-side apply: how lists and maps are merged between field
// managers.

var (
	listTypeChanged = &Rule{
		ID: "list-type-changed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "x-kubernetes-list-type changed.",
		Advice:  "server-side apply now merges the list item by item instead of replacing it whole, so field managers keep or drop each other's items differently, and " + refusesRepeats + "; keep the list type",
		Doc:     "The list type (atomic, set, map) decides how server-side apply merges the list between field managers: an atomic list is one value, which a manager applying it replaces whole, while the items of a set or a map (by its keys) are merged and owned one by one. A set or a map also refuses repeated items (the API server checks that on an update only when the old object had none, so stored objects that hold repeats keep updating, but creates and clean objects refuse them); an atomic list refuses nothing. Changing the type breaks apply for existing managers. An absent list type means atomic. When the map keys come or go with the type (atomic to map), it is one finding whose before and after carry both keywords; an atomic list that becomes a set or a map carries an example, two items the old list accepted and the server now refuses as duplicates. Keep the list type, or change it only in a new version.",
	}
	listMapKeysChanged = &Rule{
		ID: "list-map-keys-changed", Severity: finding.Error, Level: PropertyLevel,
		Summary: "x-kubernetes-list-map-keys changed.",
		Advice:  "server-side apply identifies list items by different keys, and items that share the new keys are refused as duplicates, except in updates of objects that already hold some; keep the keys",
		Doc:     "The map keys identify items of a map-type list for server-side apply. Changing them changes which items are considered the same, breaks apply for existing field managers and can make stored lists invalid (duplicate keys, or keys that are not required). Reported when the list stays a map; keys that change with the list type are part of list-type-changed. Keep the keys.",
	}
	mapTypeChanged = &Rule{
		ID: "map-type-changed", Severity: finding.Warning, Level: PropertyLevel,
		Summary: "x-kubernetes-map-type changed.",
		Advice:  "server-side apply now merges this object differently (granular or atomic); check the field managers that write it",
		Doc:     "The map type (granular or atomic) decides whether server-side apply merges an object's keys between managers or replaces it whole. Changing it does not invalidate data, but managers that relied on the old merge behaviour may overwrite each other. An absent map type means granular.",
	}
)

var listRules = []*Rule{listTypeChanged, listMapKeysChanged, mapTypeChanged}

// refusesRepeats is what a set or map list refuses that an atomic one accepted: the API server
// validates list sets and maps on an update only when the old object passed (the customresource
// strategy's ValidateUpdate).
const refusesRepeats = "the list refuses repeated items, except in updates of objects that already hold some"

// listTypeAdvice is list-type-changed's advice for a change of type: to atomic refuses nothing
// and only changes apply; between set and map, items are told apart differently.
func listTypeAdvice(before, after string) string {
	switch {
	case after == "atomic":
		return "an atomic list refuses nothing, but server-side apply now treats the list as one value: a field manager applying its own items conflicts with the others, and a forced apply replaces their items; keep the list type"
	case before != "atomic":
		return "server-side apply tells the items apart differently (a set by their value, a map by its keys), and " + refusesRepeats + "; keep the list type"
	}
	return listTypeChanged.Advice
}

func checkLists(n *node) {
	o, w := n.old, n.new
	typeChanged := false
	if n.changed(kwListType) {
		n.judge(kwListType)
		before, after := derefOr(o.XListType, "atomic"), derefOr(w.XListType, "atomic")
		if typeChanged = before != after; typeChanged {
			side := sideOf(w.XListType != nil)
			if n.changed(kwListMapKeys) {
				// One change of the list: its type and the keys that come or go with it.
				n.judge(kwListMapKeys)
				f := n.emit(listTypeChanged, side, n.keyAt(side, kwListType), listSemantics(before, o.XListMapKeys), listSemantics(after, w.XListMapKeys),
					"list type of %s changed from %s to %s", n.path, describeList(before, o.XListMapKeys), describeList(after, w.XListMapKeys))
				duplicateExample(n, f, before, w.XListMapKeys)
				advise(f, listTypeChanged, listTypeAdvice(before, after))
			} else {
				f := n.emit(listTypeChanged, side, n.keyAt(side, kwListType), before, after, "list type of %s changed from %s to %s", n.path, before, after)
				duplicateExample(n, f, before, nil)
				advise(f, listTypeChanged, listTypeAdvice(before, after))
			}
		}
	}
	if n.changed(kwListMapKeys) && !typeChanged {
		n.judge(kwListMapKeys)
		side := sideOf(len(w.XListMapKeys) > 0)
		n.emit(listMapKeysChanged, side, n.keyAt(side, kwListMapKeys), o.XListMapKeys, w.XListMapKeys, "list map keys of %s changed from %v to %v", n.path, o.XListMapKeys, w.XListMapKeys)
	}
	if n.changed(kwMapType) {
		n.judge(kwMapType)
		before, after := derefOr(o.XMapType, "granular"), derefOr(w.XMapType, "granular")
		side := sideOf(w.XMapType != nil)
		switch upstream := n.upstreamAtomic(); {
		case before == after:
		case after == "atomic" && upstream != "":
			n.emit(upstreamMapTypeAdded, side, n.keyAt(side, kwMapType), before, after,
				"map type of %s changed from %s to atomic, as k8s.io/api declares %s: server-side apply treats it as one value, as it does in every built-in API that embeds it; nothing is refused", n.path, before, upstream)
		default:
			n.emit(mapTypeChanged, side, n.keyAt(side, kwMapType), before, after, "map type of %s changed from %s to %s", n.path, before, after)
		}
	}
}

// listSemantics is a list's type and keys as the schema writes them, for the before and after
// of a list type change that moves the keys too.
func listSemantics(listType string, keys []string) map[string]any {
	m := map[string]any{"x-kubernetes-list-type": listType}
	if len(keys) > 0 {
		m["x-kubernetes-list-map-keys"] = keys
	}
	return m
}

// describeList is a list type in words: atomic, set, map keyed by name, map keyed by
// containerPort and protocol.
func describeList(listType string, keys []string) string {
	if len(keys) == 0 {
		return listType
	}
	return listType + " keyed by " + joinAnd(keys)
}

// joinAnd joins words as a sentence does: a, a and b, a, b and c.
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func derefOr(s *string, def string) string {
	if s == nil || *s == "" {
		return def
	}
	return *s
}

// duplicateExample gives an atomic list that becomes a set or a map its witness: two equal
// items (for a map, sharing every key), which the old list accepted and the API server now
// refuses as duplicates. A set that becomes a map refuses fewer lists of equal items than it
// did; its witness would need items equal in their keys only, so it goes without one.
func duplicateExample(n *node, f *finding.Finding, before string, keys []string) {
	if before != "atomic" {
		return
	}
	steps, ok := n.steps()
	if !ok {
		return
	}
	obj := n.e.judge(n.version).Duplicates(steps, keys)
	if obj == nil {
		return
	}
	f.Example = finding.Value(obj)
	what := "two equal items were"
	if len(keys) > 0 {
		what = "two items with the same " + joinAnd(keys) + " were"
	}
	if i := strings.LastIndex(f.Message, ": "+listTypeChanged.Advice); i >= 0 {
		f.Message = f.Message[:i] + ": e.g. " + what + " accepted and are now rejected as duplicates" + f.Message[i:]
	}
}
