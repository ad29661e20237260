package celproof

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/validation"
)

// TestNarrowedReadsJudgeAlike evaluates every changed and added rule of the CEL rule cases, and
// of a pair whose old rule holds only through a default, on every candidate the judge tries
// (and, for transition rules, on updates between them), reading the candidates once through the
// schemas narrowed to what the node's rules read and once through the whole nodes: the outcome
// must be the same on each.
func TestNarrowedReadsJudgeAlike(t *testing.T) {
	changes, evaluated := 0, 0
	seen := map[outcome]int{}
	eachPrepared(t, []string{"read-defaults"}, func(file string, c Change, sr search) {
		changes++
		whole := *sr.e
		whole.readOld, whole.readNew = nil, nil
		cands := sr.cands[:min(len(sr.cands), 64)]
		for i, v := range cands {
			olds := []any{nil}
			if sr.transition {
				olds = append(olds, cands[(i+1)%len(cands)], v)
			}
			for _, old := range olds {
				got, want := sr.e.verdict(v, old, true), whole.verdict(v, old, true)
				evaluated++
				seen[want]++
				if got != want {
					t.Errorf("%s %s %q on %s (old %s): %v through the narrowed schemas, %v through the whole nodes",
						file, fieldPath(c.Steps), c.After.Rule, show(v), show(old), got, want)
				}
			}
		}
	})
	if changes < 40 || evaluated < 1000 || seen[tightened] == 0 || seen[loosened] == 0 || seen[unchanged] == 0 {
		t.Errorf("%d changes, %d evaluations (%v): the cases were not found", changes, evaluated, seen)
	}
}

// TestNarrowedReadsKeepOldDefaults: a field only the old rule reads keeps its default when a
// candidate is read, or the old rule refuses every candidate and the new rule looks implied.
func TestNarrowedReadsKeepOldDefaults(t *testing.T) {
	o, n := loadCRD(t, "testdata/read-defaults-old.yaml"), loadCRD(t, "testdata/read-defaults-new.yaml")
	j := NewJudge(o, n, "v1")
	spec := []Step{{Property, "spec"}}
	for rule, want := range map[string]string{
		"self.size < 5":         "{spec: {mode: Auto, size: 5}}",
		"self.config.level < 3": "{spec: {config: {level: 3}, mode: Auto}}",
	} {
		res := j.Judge(Change{Steps: spec, After: apiextv1.ValidationRule{Rule: rule}})
		if got := fmt.Sprint(res.Verdict, " ", Short(res.Example)); got != "witness "+want {
			t.Errorf("%s: %s, want witness %s", rule, got, want)
		}
	}
}

// changesOf lists, for every node of the new schema, its rules that the old node at the same
// place does not have (as checkValidations pairs them: by text, the rest in order).
func changesOf(old, new *structuralschema.Structural, steps []Step) []Change {
	if new == nil {
		return nil
	}
	var out []Change
	var oldRules apiextv1.ValidationRules
	if old != nil {
		oldRules = old.XValidations
	}
	var unmatched []apiextv1.ValidationRule
	for _, r := range oldRules {
		if index(new.XValidations, r.Rule) < 0 {
			unmatched = append(unmatched, r)
		}
	}
	for _, r := range new.XValidations {
		if index(oldRules, r.Rule) >= 0 {
			continue
		}
		c := Change{Steps: slices.Clone(steps), After: r}
		if len(unmatched) > 0 {
			c.Before, unmatched = &unmatched[0], unmatched[1:]
		}
		out = append(out, c)
	}
	for _, name := range slices.Sorted(maps.Keys(new.Properties)) {
		np := new.Properties[name]
		var op *structuralschema.Structural
		if old != nil {
			if p, ok := old.Properties[name]; ok {
				op = &p
			}
		}
		out = append(out, changesOf(op, &np, append(steps, Step{Property, name}))...)
	}
	var oldItems *structuralschema.Structural
	if old != nil {
		oldItems = old.Items
	}
	return append(out, changesOf(oldItems, new.Items, append(steps, Step{Kind: Items}))...)
}

// TestDefaultsOnlyDefaultsAlike defaults values of every node of every rule case's schemas (their
// fields present or absent, lists of one and two items, nulls) with the node's schema and with
// its defaultsOnly, and wants the same value.
func TestDefaultsOnlyDefaultsAlike(t *testing.T) {
	files, err := filepath.Glob("../../testdata/rules/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "testdata/defaults.yaml", "testdata/read-defaults-old.yaml", "testdata/read-defaults-new.yaml", "testdata/ruleset.yaml")
	values, defaulted := 0, 0
	for _, f := range files {
		if b := filepath.Base(f); b != "old.yaml" && b != "new.yaml" && !strings.HasPrefix(f, "testdata/") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := crd.Parse(f, data)
		for _, c := range cs {
			if c.Patch {
				continue
			}
			for _, v := range c.Object.Spec.Versions {
				ver, err := validation.NewVersion(c, v.Name)
				if err != nil {
					continue
				}
				eachNode(ver.Structural, func(s *structuralschema.Structural) {
					g := &gen{limit: 64, absentFirst: true}
					cands := append(g.values(readingAll(s, 3), s, false), nil, map[string]any{}, []any{nil}, []any{nil, map[string]any{}})
					for _, x := range slices.Clone(cands) {
						cands = append(cands, withNulls(x, s)...)
					}
					only := defaultsOnly(s)
					for _, x := range cands {
						want, got := copyValue(x), copyValue(x)
						structuraldefaulting.Default(want, s)
						structuraldefaulting.Default(got, only)
						values++
						if !reflect.DeepEqual(want, x) {
							defaulted++
						}
						if !reflect.DeepEqual(got, want) {
							t.Errorf("%s %s: %s defaults to %s with the schema, %s with defaultsOnly", f, v.Name, show(x), show(want), show(got))
						}
					}
				})
			}
		}
	}
	if values < 10000 || defaulted < 1000 {
		t.Errorf("%d values, %d changed by defaulting: the cases were not found", values, defaulted)
	}
}

// readingAll reads every field of s and below, to depth levels.
func readingAll(s *structuralschema.Structural, depth int) *refNode {
	r := &refNode{}
	if s == nil || depth == 0 {
		return r
	}
	for name, p := range s.Properties {
		r.field(name)
		r.fields[name] = readingAll(&p, depth-1)
		if len(p.Properties) == 0 && p.Items == nil {
			r.fields[name].value = true
		}
	}
	if s.Items != nil {
		r.elem = readingAll(s.Items, depth-1)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		r.elem = readingAll(ap.Structural, depth-1)
	}
	return r
}

// withNulls are the variants of an object value with one property null (each property of its
// schema, set or not), and of a map value with one value null.
func withNulls(x any, s *structuralschema.Structural) []any {
	m, ok := x.(map[string]any)
	if !ok {
		return nil
	}
	keys := slices.Collect(maps.Keys(s.Properties))
	for k := range m {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []any
	for _, k := range keys {
		v := copyValue(m).(map[string]any)
		v[k] = nil
		out = append(out, v)
	}
	return out
}

// eachNode calls f for s and every node below it.
func eachNode(s *structuralschema.Structural, f func(*structuralschema.Structural)) {
	if s == nil {
		return
	}
	f(s)
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		eachNode(&p, f)
	}
	eachNode(s.Items, f)
	if s.AdditionalProperties != nil {
		eachNode(s.AdditionalProperties.Structural, f)
	}
}

// TestReadingCopiesOnlyWhatItChanges reads every candidate the judge tries on the CEL rule
// cases, on a pair whose old rule holds only through a default and on one whose old rule reads
// a field the new version drops, under both sides, through
// the narrowed schemas and the whole nodes: each reading must be the candidate defaulted by the
// old node, and that pruned and defaulted by the new one (the whole nodes' defaults: defaultsOnly
// must change nothing), the candidate must come out as it went in (pruning and defaulting work
// on a copy), and where the old side neither prunes nor defaults anything the reading is the
// candidate itself, not a copy.
func TestReadingCopiesOnlyWhatItChanges(t *testing.T) {
	shared, copied := 0, 0
	eachPrepared(t, []string{"read-defaults", "read-pruned"}, func(file string, c Change, sr search) {
		for _, v := range sr.cands[:min(len(sr.cands), 64)] {
			before := copyValue(v)
			r := &reading{e: sr.e, obj: v}
			for _, whole := range []bool{false, true} {
				got, _ := r.values(oldSide, whole)
				gotNew, _ := r.values(newSide, whole)
				oldS, newS := sr.e.readOld, sr.e.readNew
				if whole {
					oldS, newS = sr.e.oldNode, sr.e.newNode
				}
				want := copyValue(v)
				structuraldefaulting.Default(want, oldS)
				wantNew := copyValue(want)
				structuralpruning.Prune(wantNew, newS, sr.e.isRoot)
				structuraldefaulting.Default(wantNew, newS)
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotNew, wantNew) {
					t.Errorf("%s %s: %s read as %s and %s, want %s and %s", file, fieldPath(c.Steps), show(before), show(got), show(gotNew), show(want), show(wantNew))
				}
				if _, isMap := v.(map[string]any); isMap {
					if reflect.ValueOf(got).Pointer() == reflect.ValueOf(v).Pointer() {
						shared++
					} else {
						copied++
					}
				}
			}
			if !reflect.DeepEqual(v, before) {
				t.Errorf("%s %s: reading changed the candidate %s into %s", file, fieldPath(c.Steps), show(before), show(v))
			}
		}
	})
	if shared == 0 || copied == 0 {
		t.Errorf("%d readings were the candidate itself, %d copies: want both", shared, copied)
	}
}

// eachPrepared calls f with every change of the CEL rule cases and of the named pairs of
// testdata (NAME-old.yaml, NAME-new.yaml) as the judge prepares it, with the new file's name.
func eachPrepared(t *testing.T, named []string, f func(file string, c Change, sr search)) {
	t.Helper()
	dirs, err := filepath.Glob("../../testdata/rules/validation-rule-*/*")
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]string
	for _, n := range named {
		pairs = append(pairs, [2]string{"testdata/" + n + "-old.yaml", "testdata/" + n + "-new.yaml"})
	}
	for _, d := range dirs {
		pairs = append(pairs, [2]string{filepath.Join(d, "old.yaml"), filepath.Join(d, "new.yaml")})
	}
	for _, p := range pairs {
		j := NewJudge(loadCRD(t, p[0]), loadCRD(t, p[1]), "v1")
		if j.err != nil {
			continue
		}
		for _, c := range changesOf(j.oldRoot, j.newRoot, nil) {
			if sr, ok := j.prepare(c); ok {
				f(p[1], c, sr)
			}
		}
	}
}
