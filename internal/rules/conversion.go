package rules

import (
	"fmt"
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
		loses := false
		for _, d := range now {
			if !before[d] {
				fresh = append(fresh, d)
				loses = loses || d.rule == fieldRemoved.ID
			}
		}
		if len(fresh) == 0 {
			continue
		}
		paths := make([]string, len(fresh))
		for i, d := range fresh {
			switch d.rule {
			case fieldRemoved.ID:
				paths[i] = d.path + " (only in " + storage + ")"
			case fieldAdded.ID:
				paths[i] = d.path + " (only in " + served + ")"
			default:
				paths[i] = d.path + " (" + d.rule + ")"
			}
		}
		shown := paths
		more := ""
		if len(shown) > 3 {
			shown, more = shown[:3], fmt.Sprintf(" and %d more", len(paths)-3)
		}
		f := e.version(conversionMissing, served, finding.Head, e.pair.New.VersionPath(served), storage, served,
			"served version %s differs from storage version %s at %s%s while conversion strategy is None", served, storage, strings.Join(shown, ", "), more)
		if loses {
			f.Severity = finding.Error
			f.Message += "; writes through " + served + " delete fields of the storage version"
		}
	}
}

// servedDiffs lists the differences (other than documentation) between two versions' schemas of
// one CRD, by rule and path.
func servedDiffs(c *crd.CRD, from, to string) []servedDiff {
	fs, ts := schemaOf(findVersion(c.Object, from)), schemaOf(findVersion(c.Object, to))
	if fs == nil || ts == nil {
		return nil
	}
	scratch := &emitter{pair: crd.Pair{Old: c, New: c}}
	compareSchemas(scratch, from, fs, ts)
	var out []servedDiff
	for _, f := range scratch.out {
		if f.Rule != descriptionChanged.ID && f.Rule != validationMessageChanged.ID {
			out = append(out, servedDiff{f.Rule, f.Path})
		}
	}
	return out
}
