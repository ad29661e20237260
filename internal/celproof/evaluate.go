package celproof

import (
	"slices"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
)

// evaluator runs the rules of one node on candidate values.
type evaluator struct {
	j                *Judge
	isRoot           bool
	oldNode, newNode *structuralschema.Structural
	// readOld and readNew are the nodes narrowed to what any rule of either reads (see
	// readSchemas); nil when some rule does not parse.
	readOld, readNew *structuralschema.Structural
	// defaults are the schemas candidates are defaulted with: of the narrowed nodes and of the
	// whole ones, old and new (see defaultsOnly), made when first needed.
	defaults [2][2]*structuralschema.Structural
	// old holds every rule of the old node; beforeRule the changed rule alone (nil: added), at
	// index before among old's rules; after the new rule alone. old and beforeRule are compiled
	// when first run: most candidates pass the new rule, and then neither is.
	old, beforeRule func() *nodeProgram
	after           *nodeProgram
	before          int
}

// outcome is what one candidate shows about the change.
type outcome int

const (
	// unchanged: the old schema rejects the candidate, or the new rule decides it as the old
	// rules did (or the difference does not matter any more).
	unchanged outcome = iota
	// loosened: the old schema rejects the candidate only through the changed rule, and the
	// new rule accepts it.
	loosened
	// tightened: the old schema accepts the candidate and the new rule rejects it.
	tightened
	// undecidable: a rule could not be evaluated.
	undecidable
)

// verdict evaluates a candidate (obj, updating old when old is not nil) as the API server reads
// it under each schema. The new rule runs first and alone: only when it rejects the candidate,
// or when a loosening is still worth knowing (wantLooser), do the old rules run — most
// candidates pass, and a node can carry dozens of rules.
func (e *evaluator) verdict(obj, old any, wantLooser bool) outcome {
	r := &reading{e: e, obj: obj, old: old}
	failed, ok := e.after.evalRead(r, newSide)
	if !ok {
		return undecidable
	}
	newOK := !failed[0]
	if newOK {
		if e.beforeRule == nil || !wantLooser {
			return unchanged
		}
		// Looser only if the old rule rejected it: usually it did not, and one rule says so.
		if failed, ok = e.beforeRule().evalRead(r, oldSide); !ok {
			return undecidable
		} else if !failed[0] {
			return unchanged
		}
	}
	failed, ok = e.old().evalRead(r, oldSide)
	if !ok {
		return undecidable
	}
	for i, f := range failed {
		if f && i != e.before {
			return unchanged // not an object the old schema accepts
		}
	}
	oldOK := e.before < 0 || !failed[e.before]
	switch {
	case oldOK && !newOK:
		return tightened
	case !oldOK && newOK:
		return loosened
	}
	return unchanged
}

// The sides of a reading.
const (
	oldSide = 0
	newSide = 1
)

// reading is one candidate as the API server hands it to the rules under each schema: defaulted
// under the old one, then pruned and defaulted under the new one (which reads objects stored
// under the old). It is read through the narrowed schemas (readSchemas), and through the whole
// nodes only for a program that needs them, each at most once.
type reading struct {
	e        *evaluator
	obj, old any
	// read[whole] holds obj and old as read under each side, once read.
	read [2]*[2][2]any
}

// values are obj and old as the side's schema hands them to the rules, read through the whole
// nodes (whole) or through the narrowed ones.
func (r *reading) values(side int, whole bool) (obj, old any) {
	w := 0
	if whole || r.e.readOld == nil {
		w = 1
	}
	if r.read[w] == nil {
		oldS, newS := r.e.oldNode, r.e.newNode
		if w == 0 {
			oldS, newS = r.e.readOld, r.e.readNew
		}
		d := &r.e.defaults[w]
		if d[oldSide] == nil {
			d[oldSide], d[newSide] = defaultsOnly(oldS), defaultsOnly(newS)
		}
		v := &[2][2]any{}
		v[oldSide][0], v[oldSide][1] = r.e.read(nil, d[oldSide], r.obj), r.e.read(nil, d[oldSide], r.old)
		v[newSide][0], v[newSide][1] = r.e.read(newS, d[newSide], v[oldSide][0]), r.e.read(newS, d[newSide], v[oldSide][1])
		r.read[w] = v
	}
	return r.read[w][side][0], r.read[w][side][1]
}

// evalRead is eval on a reading. A program compiled against the whole node is one whose rules
// do not all parse, and then neither do the node's, so the reading is through the whole nodes
// too; a program that falls back to the whole node (a rule that did not compile against the
// narrowed one) gets the values read through the whole nodes.
func (p *nodeProgram) evalRead(r *reading, side int) (failed []bool, ok bool) {
	return p.evalOn(func(whole bool) (any, any) { return r.values(side, whole) })
}

// read is the value as the API server hands it to the rules under a schema: pruned by it (for
// the new schema, which reads objects stored under the old one; nil: not pruned) and defaulted
// (by its defaultsOnly). v is copied before either changes it; where nothing would (not pruned,
// no default below the node: defaultsOnly's empty schema), v itself is the reading — the rules
// only read it, and a reading lives as long as the one verdict on its candidate.
func (e *evaluator) read(prune, defaults *structuralschema.Structural, v any) any {
	if v == nil {
		return nil
	}
	if prune == nil && noDefaults(defaults) {
		return v
	}
	v = copyValue(v)
	if prune != nil {
		structuralpruning.Prune(v, prune, e.isRoot)
	}
	structuraldefaulting.Default(v, defaults)
	return v
}

// defaultsOnly is the part of s that defaulting acts on: the nodes with a default and the
// paths to them, each kept with its nullable and its default. Defaulting sets a missing (or
// null, not nullable) property, item or map value from its schema's default and goes down into
// what is set; where no default lies below, it changes nothing, but it still walks every
// property of the schema at every object of the value (copying each), which on a large node
// was most of what reading a candidate cost. A structural schema has properties or
// additionalProperties, never both, so a property dropped here is not taken for a map value.
func defaultsOnly(s *structuralschema.Structural) *structuralschema.Structural {
	if s == nil || !hasDefault(s) {
		return &structuralschema.Structural{}
	}
	return defaultsOf(*s)
}

// defaultsOf is defaultsOnly of a node with a default at or below it. Nodes are passed by
// value: a property taken by address from the map in a recursive walk is copied to the heap
// (on httproutes, a megabyte a run between this and hasDefault).
func defaultsOf(s structuralschema.Structural) *structuralschema.Structural {
	out := &structuralschema.Structural{Generic: structuralschema.Generic{Nullable: s.Nullable, Default: s.Default}}
	for name, p := range s.Properties {
		if hasDefaultAt(p) {
			if out.Properties == nil {
				out.Properties = map[string]structuralschema.Structural{}
			}
			out.Properties[name] = *defaultsOf(p)
		}
	}
	if hasDefault(s.Items) {
		out.Items = defaultsOf(*s.Items)
	}
	if ap := s.AdditionalProperties; ap != nil && hasDefault(ap.Structural) {
		out.AdditionalProperties = &structuralschema.StructuralOrBool{Bool: ap.Bool, Structural: defaultsOf(*ap.Structural)}
	}
	return out
}

// noDefaults reports whether d, made by defaultsOnly, is its empty schema: defaulting by it sets
// nothing anywhere.
func noDefaults(d *structuralschema.Structural) bool {
	return d.Default.Object == nil && d.Properties == nil && d.Items == nil && d.AdditionalProperties == nil
}

// hasDefault reports whether s or a node below it has a default.
func hasDefault(s *structuralschema.Structural) bool {
	return s != nil && hasDefaultAt(*s)
}

// hasDefaultAt is hasDefault of a node passed by value (see defaultsOf).
func hasDefaultAt(s structuralschema.Structural) bool {
	if s.Default.Object != nil || hasDefault(s.Items) || s.AdditionalProperties != nil && hasDefault(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaultAt(p) {
			return true
		}
	}
	return false
}

// readSchemas are the old and new nodes at path narrowed to what any rule of either node reads
// (nil, nil when one does not parse), made once per path. Defaulting and pruning walk every
// property of a node, so a candidate is read through these. Every program of the node sees no
// more than they keep: its schema is narrowed to what some of those rules read, and narrowing
// keeps more for a reading that selects more. A value a program sees is therefore read alike
// through these and through the whole nodes: the same defaults apply to it, along the same
// path, on both sides; what these drop, or leave unpruned, no program sees.
func (j *Judge) readSchemas(path string, oldNode, newNode *structuralschema.Structural) (oldS, newS *structuralschema.Structural) {
	s := remember(&j.mu, j.readAs, path, func() [2]*structuralschema.Structural {
		read, parsed := j.readWith(slices.Concat(oldNode.XValidations, newNode.XValidations), &constants{}, true)
		if !parsed {
			return [2]*structuralschema.Structural{}
		}
		return [2]*structuralschema.Structural{narrow(oldNode, read), narrow(newNode, read)}
	})
	return s[0], s[1]
}
