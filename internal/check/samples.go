package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
	"github.com/crdguard/crdguard/internal/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// samples validates custom resources against the base and head schemas of the CRDs that
// changed: what was valid and is refused now (sample-invalid), and what head silently drops
// (sample-pruned).
func samples(pairs []crd.Pair, new *source.Tree) ([]finding.Finding, []string) {
	type key struct{ group, kind string }
	changed := map[key]crd.Pair{}
	for _, p := range pairs {
		if p.New == nil {
			continue
		}
		// Samples are checked against the definition the repository ships, not a draft of
		// the same CRD in a docs, design or test folder.
		k := key{p.New.Object.Spec.Group, p.New.Object.Spec.Names.Kind}
		if had, ok := changed[k]; !ok || draft(new, had.New.File) && !draft(new, p.New.File) {
			changed[k] = p
		}
	}
	var objs []*crd.Object
	skippedTests, skippedNegative := 0, 0
	// Only objects found in a repository or folder: a file named on the command line is the
	// user's own choice.
	found := new.Root != "" || new.Changed != nil
	for _, o := range new.Objects {
		switch facts := new.Facts(o.File); {
		case !found:
		case !facts.Ships():
			skippedTests++ // fixtures of test suites (e2e, kuttl, chainsaw) are not samples
			continue
		case facts.Negative != "":
			skippedNegative++ // examples written to be refused (hack/invalid-examples)
			continue
		}
		objs = append(objs, o)
	}
	// The samples of one CRD version are validated together, against schemas built for them and
	// let go after: a release with many changed CRDs and samples of each held every schema to
	// the end (argo-workflows v4.0.0 → v4.1.0: 110 MB of validators at the run's peak).
	type version struct {
		pair    crd.Pair
		version string
		objects []int // indexes into objs
	}
	var versions []*version
	type versionKey struct {
		key
		version string
	}
	at := map[versionKey]*version{}
	for i, o := range objs {
		group, v, ok := strings.Cut(o.APIVersion, "/")
		if !ok || o.Name == "" {
			// Without a name or generateName no client can create it: a file that only looks
			// like an object (cluster-api's clusterctl metadata.yaml), not a sample.
			continue
		}
		p, ok := changed[key{group, o.Kind}]
		if !ok || !hasVersion(p.New, v) {
			continue
		}
		k := versionKey{key{group, o.Kind}, v}
		if at[k] == nil {
			at[k] = &version{pair: p, version: v}
			versions = append(versions, at[k])
		}
		at[k].objects = append(at[k].objects, i)
	}
	perObject := make([][]finding.Finding, len(objs))
	stale := 0
	for _, v := range versions {
		head, err := newSchema(v.pair.New, v.version)
		if err != nil {
			continue // an invalid schema is invalid-crd's business
		}
		var base *validation.Schema
		switch p := v.pair; {
		case p.Old == p.New:
			base = head // an unchanged copy on both sides
		case p.Old != nil && hasVersion(p.Old, v.version):
			if base, err = newSchema(p.Old, v.version); err != nil {
				base = nil
			}
		}
		for _, i := range v.objects {
			fs, already := sampleFindings(v.pair.New.Name, v.version, objs[i], base, head, found)
			stale += already
			perObject[i] = fs
		}
	}
	var out []finding.Finding
	for _, fs := range perObject {
		out = append(out, fs...)
	}
	var notices []string
	if skippedTests > 0 {
		notices = append(notices, fmt.Sprintf("%d object(s) in test folders were not validated as samples", skippedTests))
	}
	if skippedNegative > 0 {
		notices = append(notices, fmt.Sprintf("%d object(s) in folders of examples written to be refused (invalid, negative, *-tests) were not validated as samples", skippedNegative))
	}
	if stale > 0 {
		notices = append(notices, fmt.Sprintf("%d sample problem(s) were not reported: the base schema already refused those samples with the same errors", stale))
	}
	return out, notices
}

// newSchema builds the schemas samples are validated against (a test watches how long they are
// held).
var newSchema = validation.NewSchema

// notChecked is how a field.Error without a field prints its field: the API server's "some
// validation rules were not checked" note has none.
const notChecked = "<nil>"

func hasVersion(c *crd.CRD, v string) bool {
	for _, x := range c.Object.Spec.Versions {
		if x.Name == v {
			return true
		}
	}
	return false
}

// sampleFindings validates one sample. An error the base schema gave the same sample at the same
// field, of the same type, is not this change's doing, edited sample or not: already counts
// those left out. Unless found: a sample named on the command line keeps them as warnings.
func sampleFindings(crdName, version string, o *crd.Object, base, head *validation.Schema, found bool) (out []finding.Finding, already int) {
	now := head.Create(o.Data)
	now.Errors = schemaErrors(now.Errors)
	var before validation.Created
	if base != nil {
		before = base.Create(o.Data)
		before.Errors = schemaErrors(before.Errors)
	}
	loc := func(path string) finding.Location {
		return finding.Location{File: o.File, Line: o.LineOf(crd.FieldPath(path)), Side: finding.Head}
	}
	object := o.Kind + "/" + o.Name
	if meta, ok := o.Data["metadata"].(map[string]any); ok {
		if ns, ok := meta["namespace"].(string); ok && ns != "" {
			object = o.Kind + "/" + ns + "/" + o.Name
		}
	}
	for _, path := range now.Pruned {
		if base == nil || slices.Contains(before.Pruned, path) {
			continue // head drops nothing that base kept
		}
		out = append(out, rules.SampleFinding(true, finding.Error, crdName, version, "."+path, object,
			fmt.Sprintf("%s %q sets %s, which the head schema prunes", o.Kind, o.Name, path), loc(path)))
	}
	if len(now.Errors) == 0 {
		return out, 0
	}
	was := map[string]bool{}
	for _, e := range before.Errors {
		was[validation.ErrorKey(e)] = true
	}
	validBefore := base != nil && len(before.Errors) == 0
	var storedErrs, unchangedErrs map[string]bool
	if validBefore {
		// The sample as the base schema stored it (pruned, defaulted): what a cluster holds of
		// an object created from it before the upgrade.
		storedErrs, unchangedErrs = map[string]bool{}, map[string]bool{}
		for _, e := range schemaErrors(head.Create(before.Object).Errors) {
			storedErrs[validation.ErrorKey(e)] = true
		}
		for _, e := range head.Update(before.Object, before.Object) {
			unchangedErrs[validation.ErrorKey(e)] = true
		}
	}
	for _, e := range now.Errors {
		if e.Field == notChecked && len(now.Errors) > 1 {
			continue // the server's note that CEL rules waited for the other errors, not a field
		}
		if was[validation.ErrorKey(e)] && found {
			already++
			continue
		}
		sev := finding.Warning // invalid before for other reasons, or a sample of a new version
		if validBefore {
			sev = finding.Error
		}
		path := "." + e.Field
		if e.Field == notChecked {
			path = "."
		}
		note := ""
		if validBefore {
			note = rules.SampleStoredNote + storedNote(e, head, base, storedErrs, unchangedErrs)
		}
		out = append(out, rules.SampleFinding(false, sev, crdName, version, path, object,
			fmt.Sprintf("%s %q: %s%s", o.Kind, o.Name, e.Error(), note), loc(e.Field)))
	}
	return out, already
}

// storedNote says what the error means for objects like the sample that a cluster stored before
// the upgrade (after rules.SampleStoredNote, "stored objects "), in the words the rules use for
// the same constraint (rules.Ratchet): none holds what fails when the base schema drops it (a
// field new in this change); otherwise which of their updates still pass.
func storedNote(e *field.Error, head, base *validation.Schema, storedErrs, unchangedErrs map[string]bool) string {
	key := validation.ErrorKey(e)
	switch {
	case !storedErrs[key] && !base.Describes(e.Field):
		return "cannot hold ." + e.Field + ", which is new in this change"
	case !storedErrs[key]:
		return "cannot hold what fails here: the base schema drops it"
	case unchangedErrs[key]:
		return "like this one can no longer be updated, not even unchanged"
	}
	return ratchetOf(head, e).Stored("like this one")
}

// ratchetOf is what validation ratcheting forgives of an error of a stored object, in the words
// the rules use for the same constraint: the node that reports it (the parent object for a
// missing required field) forgives it while unchanged, unless a list that does not pair its
// items or an allOf, anyOf, oneOf or not above reports it instead.
func ratchetOf(head *validation.Schema, e *field.Error) rules.Ratchet {
	target := e.Field
	if e.Type == field.ErrorTypeRequired {
		target = parentField(e.Field)
	}
	switch at, by := head.ForgivenWhile(target); {
	case by == validation.ByList:
		return rules.ListRatchet(fieldPath(at))
	case by == validation.ByCombinator:
		return rules.BranchRatchet(fieldPath(at))
	case e.Type == field.ErrorTypeRequired:
		return rules.RequiredRatchet(fieldPath(target))
	default:
		return rules.ValueRatchet(fieldPath(e.Field))
	}
}

// fieldPath is a field of an error (spec.size) as crdguard's paths write it (.spec.size; . for
// the root).
func fieldPath(f string) string {
	if f == "" || f == notChecked {
		return "."
	}
	return "." + f
}

// parentField is the object a field of an error belongs to: spec.config for spec.config.level,
// spec.items[0] for spec.items[0].name, "" for the root.
func parentField(f string) string {
	if strings.HasSuffix(f, "]") {
		if i := strings.LastIndex(f, "["); i >= 0 {
			return f[:i]
		}
	}
	if i := strings.LastIndex(f, "."); i >= 0 {
		return f[:i]
	}
	return ""
}

// schemaErrors drops the errors no schema change can cause: the object's name and namespace
// (placeholders such as {GATEWAY_NAME} or ${NS} in samples) are checked by the API server
// whatever the CRD says.
func schemaErrors(errs field.ErrorList) field.ErrorList {
	return slices.DeleteFunc(errs, func(e *field.Error) bool {
		return e.Field == "metadata.name" || e.Field == "metadata.namespace" || e.Field == "metadata.generateName"
	})
}

// draftFolders hold CRDs that are not what a repository ships: proposals, documentation and
// test fixtures.
var draftFolders = map[string]bool{"docs": true, "doc": true, "design": true, "proposals": true, "site": true}

// draft reports whether a CRD's file is a draft's rather than the shipped definition's.
func draft(t *source.Tree, file string) bool {
	return !t.Facts(file).Ships() || source.InFolder(t.Rel(file), draftFolders)
}
