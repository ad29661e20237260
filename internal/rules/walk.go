package rules

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/k8stypes"
)

// propertyChecks run on every paired schema node, in this order: a check may stop the walk
// below a node (a type change makes everything under it moot).
var propertyChecks = []func(*node){
	checkIntOrString, checkType, checkFields, checkNullable, checkDefault, checkEnum,
	checkFormat, checkPattern, checkBounds, checkMovedToRules, checkValidations, checkLists, checkCombinators, checkDocs,
}

// node is one schema node present on both sides, with the bookkeeping that makes the walk fail
// closed: diff has a bit per keyword that differs, judged a bit per keyword a check classified.
type node struct {
	e        *emitter
	version  string
	old, new *apiextv1.JSONSchemaProps
	path     string
	rel      *relStep
	// inBranch marks a branch of allOf/anyOf/oneOf/not of a node (same path). The API server
	// ratchets per node: an unchanged value forgives every error of its node, branches
	// included, so constraints in a branch of the node itself still ratchet.
	inBranch bool
	// underBranch marks nodes reached through the properties, items or map values of such a
	// branch: their errors belong to the ancestor that holds the combinator, which only ratchets
	// when that whole ancestor is unchanged, so crdguard does not count on it.
	underBranch bool
	diff        keywordSet
	judged      keywordSet
	stop        bool
	// parent is the node this one is a property, items, values or branch of (nil at the root);
	// places remembers what built-in type each side's node is (see builtin.go).
	parent *node
	places [2]*k8stypes.Place
	// enumMovedFrom is, on the items of a list whose enum moved to them in this change, the
	// list's old enum (see enumMoved); itemsEnumMoved marks that list.
	enumMovedFrom  []apiextv1.JSON
	itemsEnumMoved bool
	// settled are the texts of rules added or removed here that were judged together with the
	// node's combinators (checkMovedToRules), and are not reported on their own.
	settled map[string]bool
	// replaces names the combinators (and removed rules) that the rules added here replace, in a
	// change that tightens the node (see checkMovedToRules): their errors say so, and the
	// combinators' removal is not reported on its own.
	replaces string
	// branchesSettled marks the combinators whose branches a check judged as a whole with the
	// node (enumCombinators): the walker does not pair them.
	branchesSettled keywordSet
}

// relStep is one step of a schema node's YAML path below openAPIV3Schema; the chain is only
// turned into a path when a finding needs a line.
type relStep struct {
	parent *relStep
	segs   []any
	// headSegs, when set, are the steps on the new side (a combinator branch paired with one at
	// another index); segs are then the old side's.
	headSegs []any
}

func (r *relStep) appendTo(p crd.Path, side finding.Side) crd.Path {
	if r == nil {
		return p
	}
	if side == finding.Head && r.headSegs != nil {
		return append(r.parent.appendTo(p, side), r.headSegs...)
	}
	return append(r.parent.appendTo(p, side), r.segs...)
}

// compareSchemas walks the schemas of one version present on both sides.
func compareSchemas(e *emitter, version string, old, new *apiextv1.JSONSchemaProps) {
	walk(&node{e: e, version: version, old: old, new: new, path: "."})
	e.settle()
}

func walk(n *node) {
	n.old, n.new = withoutInert(n.old), withoutInert(n.new)
	n.diff = diffKeywords(n.old, n.new)
	for _, check := range propertyChecks {
		check(n)
		if n.stop {
			return
		}
	}
	n.walkChildren()
	if left := n.diff &^ n.judged; left != 0 {
		n.unknown(left)
	}
}

// withoutInert is s without the keywords that apply to no value its type allows: properties,
// required and additionalProperties are checked (and pruned by) only on objects, items only on
// arrays. A hand-written v1beta1 schema that gives a list properties instead of items
// (racks: {type: array, properties: {name: …}}), or an object items, constrains nothing with
// them, so writing them properly in v1 removes no field and changes nothing there; the new
// items schema is judged on its own. s itself is returned when nothing is inert.
func withoutInert(s *apiextv1.JSONSchemaProps) *apiextv1.JSONSchemaProps {
	if s.Type == "" {
		return s
	}
	objectKeywords := s.Type != "object" && (s.Properties != nil || s.Required != nil || s.AdditionalProperties != nil)
	items := s.Type != "array" && s.Items != nil
	if !objectKeywords && !items {
		return s
	}
	c := *s
	if objectKeywords {
		c.Properties, c.Required, c.AdditionalProperties = nil, nil, nil
	}
	if items {
		c.Items = nil
	}
	return &c
}

func (n *node) walkChildren() {
	o, w := n.old, n.new
	names := make([]string, 0, len(o.Properties))
	for name := range o.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	added := make([]string, 0)
	for name := range w.Properties {
		if _, ok := o.Properties[name]; !ok {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	renamed := n.renames(names, added)
	for _, name := range names {
		if nw, ok := w.Properties[name]; ok {
			ol := o.Properties[name]
			n.child(childPath(n.path, name), &ol, &nw, false, "properties", name)
		} else {
			n.fieldRemoved(name, renamed[name])
		}
	}
	for _, name := range added {
		if !slices.Contains(slices.Collect(maps.Values(renamed)), name) { // else the removal names it
			n.fieldAdded(name)
		}
	}
	n.judge(kwProperties)

	if o.Items != nil && w.Items != nil && o.Items.Schema != nil && w.Items.Schema != nil {
		n.child(n.path+"[*]", o.Items.Schema, w.Items.Schema, false, "items")
		n.judge(kwItems)
	}
	if o.AdditionalProperties != nil && w.AdditionalProperties != nil &&
		o.AdditionalProperties.Schema != nil && w.AdditionalProperties.Schema != nil {
		n.child(childPath(n.path, "*"), o.AdditionalProperties.Schema, w.AdditionalProperties.Schema, false, "additionalProperties")
		n.judge(kwAdditionalProperties)
	}
	for _, c := range []struct {
		kw       keyword
		old, new []apiextv1.JSONSchemaProps
	}{{kwAllOf, o.AllOf, w.AllOf}, {kwAnyOf, o.AnyOf, w.AnyOf}, {kwOneOf, o.OneOf, w.OneOf}} {
		if len(c.old) != len(c.new) || n.branchesSettled&(1<<c.kw) != 0 {
			continue // branches added or removed: left to unknown-change; or judged whole
		}
		for i, j := range pairBranches(c.old, c.new) {
			n.childAt(n.path, &c.old[i], &c.new[j], true, []any{keywordNames[c.kw], i}, []any{keywordNames[c.kw], j})
		}
		n.judge(c.kw)
	}
	if o.Not != nil && w.Not != nil {
		n.child(n.path, o.Not, w.Not, true, "not")
		n.judge(kwNot)
	}
}

// pairBranches pairs the branches of an allOf, anyOf or oneOf of equal length: for old branch i,
// the new branch it is compared with. The order of branches means nothing to the API server
// (v1 writes an int-or-string as anyOf [integer, string] where v1beta1 generators wrote
// [string, integer]), so a branch equal to one on the other side is paired with it wherever it
// stands, and the rest are paired in their order.
func pairBranches(old, new []apiextv1.JSONSchemaProps) []int {
	pairs := make([]int, len(old))
	taken := make([]bool, len(new))
	for i := range old {
		pairs[i] = -1
		for j := range new {
			if !taken[j] && reflect.DeepEqual(old[i], new[j]) {
				pairs[i], taken[j] = j, true
				break
			}
		}
	}
	next := 0
	for i := range old {
		if pairs[i] >= 0 {
			continue
		}
		for taken[next] {
			next++
		}
		pairs[i], taken[next] = next, true
	}
	return pairs
}

func (n *node) child(path string, old, new *apiextv1.JSONSchemaProps, branch bool, segs ...any) {
	n.childAt(path, old, new, branch, segs, segs)
}

// childAt is child where the node stands at other YAML steps on the new side (a branch that
// moved within its combinator).
func (n *node) childAt(path string, old, new *apiextv1.JSONSchemaProps, branch bool, segs, headSegs []any) {
	rel := &relStep{parent: n.rel, segs: segs}
	if !reflect.DeepEqual(segs, headSegs) {
		rel.headSegs = headSegs
	}
	c := &node{e: n.e, version: n.version, old: old, new: new, path: path, rel: rel, parent: n}
	if n.itemsEnumMoved && len(segs) == 1 && segs[0] == "items" {
		c.enumMovedFrom = n.old.Enum
	}
	if branch {
		c.inBranch, c.underBranch = true, n.underBranch
	} else {
		c.underBranch = n.underBranch || n.inBranch
	}
	walk(c)
}

// judge marks keywords as classified.
func (n *node) judge(kws ...keyword) {
	for _, k := range kws {
		n.judged |= 1 << k
	}
}

// changed reports whether a keyword differs between the two sides.
func (n *node) changed(k keyword) bool { return n.diff&(1<<k) != 0 }

// at is the YAML path of this node (plus segs) on one side.
func (n *node) at(side finding.Side, segs ...any) crd.Path {
	p := n.rel.appendTo(n.e.doc(side).SchemaPath(n.version), side)
	return append(p, segs...)
}

// emit adds a property-level finding at this node's path.
func (n *node) emit(r *Rule, side finding.Side, at crd.Path, before, after any, format string, args ...any) *finding.Finding {
	return n.emitAt(r, n.path, side, at, before, after, format, args...)
}

// emitAt adds a property-level finding at another path (a child property).
func (n *node) emitAt(r *Rule, path string, side finding.Side, at crd.Path, before, after any, format string, args ...any) *finding.Finding {
	f := n.e.add(r, n.version, path, side, at, before, after, fmt.Sprintf(format, args...))
	f.Ratchetable = r.Ratchetable && !n.underBranch
	if r.Ratchetable {
		// A list item or a combinator's branch: a node above reports the error, and forgives
		// it only while it is unchanged as a whole.
		f.Message = reratchet(f.Message, ValueRatchet("the value"), n.ratchet(ValueRatchet("the value")))
		f.Message = reratchet(f.Message, defaultRuleRatchet, n.ratchet(RuleRatchet(n.path)))
	}
	if f.Builtin = n.builtinName(path, side); f.Builtin != "" && r != upstreamDefaultAdded {
		// The message names the built-in type field once, after the path: one change of an
		// embedded type reads as that type's change wherever it is shown.
		if i := strings.Index(f.Message, path); i >= 0 {
			i += len(path)
			f.Message = f.Message[:i] + " (" + f.Builtin + ")" + f.Message[i:]
		}
	}
	return f
}

// keyAt is the YAML path of one of this node's keywords on a side, or of the node itself when
// that side does not have it.
func (n *node) keyAt(side finding.Side, k keyword) crd.Path {
	return n.at(side, keywordNames[k])
}

// sideOf returns Head when the new side has the keyword (it adds or changes it) and Base when
// only the old one does (it removes it).
func sideOf(hasNew bool) finding.Side {
	if hasNew {
		return finding.Head
	}
	return finding.Base
}

var plainName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// childPath appends a property name to a path: .spec.size, or .spec["a.b"] where the name is
// not a plain identifier. "*" stands for the values of a map.
func childPath(parent, name string) string {
	if name != "*" && !plainName.MatchString(name) {
		return strings.TrimSuffix(parent, ".") + "[" + strconv.Quote(name) + "]"
	}
	if parent == "." {
		return "." + name
	}
	return parent + "." + name
}
