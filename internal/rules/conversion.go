package rules

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// servedDiff is one difference between the storage version's schema and another served version's
// schema in the same CRD.
type servedDiff struct {
	rule, path string
}

// checkConversionMissing compares every served version with the storage version (the crdify
// "served versions" scope) in the new CRD, and reports only differences that the old CRD did not
// already have.
func checkConversionMissing(e *emitter) {
	o, w := e.pair.Old.Object, e.pair.New.Object
	if strategy(o) == apiextv1.WebhookConverter && len(servedVersions(w)) > 1 {
		return // conversion-webhook-removed already says it
	}
	storage := storageVersion(w)
	if storage == "" {
		return
	}
	for _, served := range servedVersions(w) {
		if served == storage {
			continue
		}
		now := servedDiffs(e.pair.New, storage, served)
		if len(now) == 0 {
			continue
		}
		before := map[servedDiff]bool{}
		if ov := findVersion(o, served); ov != nil && ov.Served && strategy(o) == apiextv1.NoneConverter {
			if os := storageVersion(o); os != "" && os != served {
				for _, d := range servedDiffs(e.pair.Old, os, served) {
					before[d] = true
				}
			}
		}
		var fresh []servedDiff
		for _, d := range now {
			if !before[d] {
				fresh = append(fresh, d)
			}
		}
		if len(fresh) == 0 {
			continue
		}
		reportConversionMissing(e, storage, served, fresh)
	}
}

// reportConversionMissing reports one served version whose new differences from the storage
// version are fresh. The severity follows the risk to stored data: error when a write through
// the served version deletes a field stored objects may already have (it is in the base's
// storage schema, or the version is new, so no client has been limited to it so far), or when
// the storage version moved to one that lacks a field of the old storage version; warning
// when it only loses fields this change adds, or only validations differ.
func reportConversionMissing(e *emitter, storage, served string, fresh []servedDiff) {
	ov := findVersion(e.pair.Old.Object, served)
	newVersion := ov == nil || !ov.Served
	oldStorage := storageVersion(e.pair.Old.Object)
	baseStorage := schemaOf(findVersion(e.pair.Old.Object, oldStorage))
	var stored, added, dropped []string
	var paths []string
	times := map[string]int{}
	for _, d := range fresh {
		if times[servedDifference(d, 1)]++; times[servedDifference(d, 1)] == 1 {
			paths = append(paths, servedDifference(d, 1))
		}
	}
	for i, p := range paths {
		for _, d := range fresh {
			if n := times[p]; n > 1 && servedDifference(d, 1) == p {
				paths[i] = servedDifference(d, n)
				break
			}
		}
	}
	for _, d := range fresh {
		switch d.rule {
		case fieldRemoved.ID:
			if newVersion || hasPath(baseStorage, d.path) {
				stored = append(stored, d.path)
			} else {
				added = append(added, d.path)
			}
		case fieldAdded.ID:
			// Objects stored through the old storage version may hold it; the new storage version
			// lacks it, so their next write prunes it, whichever version the write comes through.
			if oldStorage != storage && hasPath(baseStorage, d.path) {
				dropped = append(dropped, d.path)
			}
		}
	}
	shown := paths
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("%d more differences", len(paths)-3))
	}
	what := fmt.Sprintf("served version %s %s, unlike the storage version %s, while conversion strategy is None", served, joinAnd(shown), storage)
	f := e.version(conversionMissing, served, finding.Head, e.pair.New.VersionPath(served), storage, served, "%s", what)
	if keptAsUnknown(e.pair.New, storage, served, fresh) {
		// The advice (objects are pruned to the version's schema) does not hold here.
		f.Severity = finding.Info
		f.Message = what + ", but no value is lost: each field only one of them declares is under an object that keeps unknown fields in both, and accepts any object where declared, so reads and writes through either version keep it"
		return
	}
	switch {
	case len(stored) > 0:
		f.Severity = finding.Error
		f.Message += "; writes through " + served + " delete " + strings.Join(stored, ", ") + ", which stored objects may already have"
	case len(dropped) > 0:
		f.Severity = finding.Error
		f.Message += "; objects stored as " + oldStorage + " may hold " + strings.Join(dropped, ", ") + ", which the new storage version " + storage + " lacks, so their next write deletes it"
	case len(added) > 0:
		f.Message += "; writes through " + served + " delete only fields new in this change (" + strings.Join(added, ", ") + "), which no stored object has yet"
	}
}

// keptAsUnknown reports whether every difference between the storage and a served version is a
// field only one of them declares that both keep anyway: its parent keeps unknown fields in both
// schemas, and where declared it keeps every key and value and checks nothing but being an
// object, so neither version prunes it (the version that declares a field prunes by that field's
// own schema, even under a parent that keeps unknown fields). A validation difference is never
// kept: one version refuses what the other stores.
func keptAsUnknown(c *crd.CRD, storage, served string, diffs []servedDiff) bool {
	schemas := [2]*apiextv1.JSONSchemaProps{schemaOf(findVersion(c.Object, storage)), schemaOf(findVersion(c.Object, served))}
	for _, d := range diffs {
		if d.rule != fieldUnlisted.ID && d.rule != fieldAdded.ID {
			return false
		}
		declared := 0
		for _, s := range schemas {
			node, parent := locate(s, d.path)
			if parent == nil || !(c.Object.Spec.PreserveUnknownFields || isTrue(parent.XPreserveUnknownFields)) {
				return false
			}
			if node != nil {
				if !acceptsAnyObject(c, node) {
					return false
				}
				declared++
			}
		}
		if declared != 1 {
			return false
		}
	}
	return true
}

// acceptsAnyObject reports whether a schema keeps every key and value of an object and checks
// nothing else: no keyword but its documentation, type object (or none) and unknown fields kept.
func acceptsAnyObject(c *crd.CRD, s *apiextv1.JSONSchemaProps) bool {
	if !keepsEveryValue(c, s) {
		return false
	}
	rest := *s
	rest.Description, rest.Title, rest.Example, rest.ExternalDocs = "", "", nil, nil
	rest.Type, rest.XPreserveUnknownFields = "", nil
	return reflect.DeepEqual(rest, apiextv1.JSONSchemaProps{})
}

// servedDifference says how a served version differs from the storage version at one place, in
// the served version's words ("lacks .spec.labels", "has another upper bound at .spec.size"),
// from the rule that compares the storage version's schema with it; n times at that place ("lacks
// 3 CEL rules at .spec").
func servedDifference(d servedDiff, n int) string {
	if verb, ok := servedVerbs[d.rule]; ok {
		return verb + " " + d.path
	}
	for _, suffix := range []string{"-added", "-removed", "-changed", "-increased", "-decreased", "-loosened", "-tightened", "-rewritten", "-implied", "-respelled", "-unenforced", "-unlisted"} {
		stem, ok := strings.CutSuffix(d.rule, suffix)
		if !ok {
			continue
		}
		noun, ok := servedNouns[stem]
		if !ok {
			break
		}
		nouns := fmt.Sprintf("%d %ss", n, noun)
		switch {
		case suffix == "-added" && n > 1:
			return "has " + nouns + " at " + d.path
		case suffix == "-added":
			article := "a "
			if strings.ContainsAny(noun[:1], "aeiouAEIOUx") {
				article = "an "
			}
			return "has " + article + noun + " at " + d.path
		case suffix == "-removed" && n > 1:
			return "lacks " + nouns + " at " + d.path
		case suffix == "-removed":
			return "lacks the " + noun + " at " + d.path
		case comparative[suffix] != "" && n > 1:
			return fmt.Sprintf("has %d %s %ss at %s", n, comparative[suffix], noun, d.path)
		case comparative[suffix] != "":
			return "has a " + comparative[suffix] + " " + noun + " at " + d.path
		case n > 1:
			return fmt.Sprintf("has %d other %ss at %s", n, noun, d.path)
		default:
			return "has another " + noun + " at " + d.path
		}
	}
	return "differs at " + d.path
}

// comparative says which way a served version's bound differs from the storage version's, so
// that the message says which of the two is stricter: a lower upper bound, a higher lower bound.
var comparative = map[string]string{"-increased": "higher", "-decreased": "lower", "-tightened": "stricter", "-loosened": "looser"}

// servedVerbs phrase the differences that are about the place itself.
var servedVerbs = map[string]string{
	"field-removed": "lacks", "field-unlisted": "lacks", "field-added": "has", "required-added": "requires", "required-removed": "does not require",
	"nullable-added": "allows null at", "nullable-removed": "does not allow null at",
	"enum-value-added": "allows more values at", "enum-value-removed": "allows fewer values at",
}

// servedNouns name what a rule's ID (without its -added, -removed, … suffix) is about.
var servedNouns = map[string]string{
	"validation-rule": "CEL rule", "min": "lower bound", "max": "upper bound", "multiple-of": "multipleOf",
	"preserve-unknown-fields": "x-kubernetes-preserve-unknown-fields", "int-or-string": "x-kubernetes-int-or-string",
	"additional-properties": "additionalProperties", "embedded-resource": "x-kubernetes-embedded-resource",
	"list-type": "list type", "list-map-keys": "list map keys", "map-type": "map type", "combinator": "allOf, anyOf, oneOf or not",
	"upstream-default": "default", "default": "default", "type": "type", "enum": "enum", "format": "format", "pattern": "pattern",
	"field": "field", "validation-reason": "CEL rule reason",
}

// servedDiffs lists the differences (other than documentation) between two versions' schemas of
// one CRD, by rule and path.
func servedDiffs(c *crd.CRD, from, to string) []servedDiff {
	fs, ts := schemaOf(findVersion(c.Object, from)), schemaOf(findVersion(c.Object, to))
	if fs == nil || ts == nil {
		return nil
	}
	scratch := &emitter{pair: crd.Pair{Old: c, New: c}, renamesOff: true}
	compareSchemas(scratch, from, fs, ts)
	var out []servedDiff
	for _, f := range scratch.out {
		if f.Rule != descriptionChanged.ID && f.Rule != validationMessageChanged.ID {
			out = append(out, servedDiff{f.Rule, f.Path})
		}
	}
	return out
}

// hasPath reports whether a schema describes the property at a finding path (.spec.a,
// .spec.list[*].b, .spec.map.*, .spec["a.b"]).
func hasPath(s *apiextv1.JSONSchemaProps, path string) bool {
	node, _ := locate(s, path)
	return node != nil
}

// locate finds the schema of the property at a finding path and of its parent; the parent is
// found even when the property itself is not declared, and is nil when the path breaks earlier.
func locate(s *apiextv1.JSONSchemaProps, path string) (node, parent *apiextv1.JSONSchemaProps) {
	rest := strings.TrimPrefix(path, ".")
	for s != nil && rest != "" {
		parent = s
		switch {
		case strings.HasPrefix(rest, "[*]"):
			if s.Items == nil {
				return nil, parentIf(rest[3:] == "", s)
			}
			s, rest = s.Items.Schema, rest[3:]
		case strings.HasPrefix(rest, "["):
			q, err := strconv.QuotedPrefix(rest[1:])
			name, uerr := strconv.Unquote(q)
			if err != nil || uerr != nil || !strings.HasPrefix(rest[1+len(q):], "]") {
				return nil, nil
			}
			s, rest = property(s, name), rest[1+len(q)+1:]
		default:
			rest = strings.TrimPrefix(rest, ".")
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			name := rest[:end]
			if name == "*" {
				if s.AdditionalProperties == nil {
					return nil, parentIf(rest[end:] == "", s)
				}
				s = s.AdditionalProperties.Schema
			} else {
				s = property(s, name)
			}
			rest = rest[end:]
		}
	}
	if rest != "" {
		return nil, nil
	}
	return s, parent
}

func parentIf(last bool, s *apiextv1.JSONSchemaProps) *apiextv1.JSONSchemaProps {
	if last {
		return s
	}
	return nil
}

func property(s *apiextv1.JSONSchemaProps, name string) *apiextv1.JSONSchemaProps {
	p, ok := s.Properties[name]
	if !ok {
		return nil
	}
	return &p
}
