package check

import (
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/validation"
)

// covered maps API server update errors to the diff rule that already reports the same change:
// the server's words are added to that finding instead of a second one.
var covered = []struct {
	field, rule string
}{
	{"spec.scope", "scope-changed"},
	{"status.storedVersions", "stored-version-removed"},
	{"spec.names", "names-changed"},
	{"spec.preserveUnknownFields", "preserve-unknown-fields-removed"},
}

// serverChecks runs the API server's CRD validation on the new side of a pair (create for a new
// CRD, update for a changed one) and merges its errors into the diff findings fs.
func serverChecks(p crd.Pair, fs []finding.Finding) []finding.Finding {
	if p.New == nil || (p.Old != nil && onlyDocs(fs)) {
		// Nothing but documentation changed (the rules judge every difference): the cluster
		// accepted this CRD already, and CEL compilation is the costliest check there is.
		return fs
	}
	var errs []validation.Error
	var err error
	if p.Old == nil {
		errs, err = validation.Create(p.New)
	} else {
		errs, err = validation.Update(p.Old, p.New)
	}
	if err != nil {
		return append(fs, rules.Invalid(crd.Problem{File: p.New.File, Line: p.New.Line, Name: p.New.Name, Message: err.Error()}, finding.Head))
	}
next:
	for _, e := range errs {
		for _, c := range covered {
			if !e.Is(c.field) {
				continue
			}
			for i := range fs {
				if fs[i].Rule == c.rule && fs[i].CRD == p.New.Name {
					fs[i].Message += " (the API server: " + e.Message + ")"
					continue next
				}
			}
		}
		fs = append(fs, rules.Invalid(crd.Problem{File: p.New.File, Line: e.Line, Name: p.New.Name, Message: e.Message}, finding.Head))
	}
	return fs
}

// onlyDocs reports whether a pair's findings are all documentation changes (or there are none).
func onlyDocs(fs []finding.Finding) bool {
	for _, f := range fs {
		if f.Rule != "description-changed" {
			return false
		}
	}
	return true
}
