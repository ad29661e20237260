package check

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"

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
// CRD, update for a changed one) and merges its errors into the diff findings fs. Only what the
// change introduces or makes worse is invalid-crd: an error the base CRD already had is the
// cluster's current state, not this change's doing, and reporting it would make the verdict
// depend on whether something else changed too.
func serverChecks(p crd.Pair, fs []finding.Finding) []finding.Finding {
	if serverSkips(p, fs) {
		return fs
	}
	return merge(p, fs, validate(p))
}

// compareAlone is rules.Compare and serverChecks for a pair compared on its own: the API
// server's validation (up to half the time of a large CRD with CEL rules) runs beside the rules,
// on another core, and is thrown away when serverChecks would have skipped it. The findings are
// those of serverChecks(p, rules.Compare(p, opts)).
func compareAlone(p crd.Pair, opts rules.Options) []finding.Finding {
	if p.New == nil {
		return serverChecks(p, rules.Compare(p, opts))
	}
	server := make(chan validated, 1)
	go func() { server <- validate(p) }()
	fs := rules.Compare(p, opts)
	v := <-server
	if serverSkips(p, fs) {
		return fs
	}
	return merge(p, fs, v)
}

// serverSkips reports whether the server's validation can be skipped: nothing but documentation
// changed (the rules judge every schema difference), so the result would be the base's own
// errors, all subtracted by merge — and CEL compilation is the costliest check there is.
func serverSkips(p crd.Pair, fs []finding.Finding) bool {
	return p.New == nil || (p.Old != nil && onlyDocs(fs) && sameOutsideSchemas(p.Old.Object, p.New.Object))
}

// validated is what the API server's CRD validation said of a pair's new side.
type validated struct {
	errs []validation.Error
	err  error
}

// validate runs the API server's CRD validation: create for a new CRD, update for a changed one.
func validate(p crd.Pair) validated {
	var v validated
	if p.Old == nil {
		v.errs, v.err = validation.Create(p.New)
	} else {
		v.errs, v.err = validation.Update(p.Old, p.New)
	}
	return v
}

// merge adds the server's errors to the findings: those the base had too are dropped, those a
// rule already reports are added to its message, the rest are invalid-crd.
func merge(p crd.Pair, fs []finding.Finding, v validated) []finding.Finding {
	if v.err != nil {
		return append(fs, rules.Invalid(crd.Problem{File: p.New.File, Line: p.New.Line, Name: p.New.Name, Message: v.err.Error()}, finding.Head))
	}
	errs := v.errs
	if p.Old != nil && len(errs) > 0 {
		errs = introduced(p.Old, errs)
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

// introduced drops from the head's errors those the base CRD has on its own (as a create would
// see it), counted, so a second invalid value where there was one is still reported. Paid only
// when the head has errors at all.
func introduced(old *crd.CRD, errs []validation.Error) []validation.Error {
	before, err := validation.Create(old)
	if err != nil {
		return errs
	}
	had := map[string]int{}
	for _, e := range before {
		had[e.Message]++
	}
	var out []validation.Error
	for _, e := range errs {
		if had[e.Message] > 0 {
			had[e.Message]--
			continue
		}
		out = append(out, e)
	}
	return out
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

// sameOutsideSchemas reports whether two CRDs are equal apart from their versions' schemas
// (metadata, names, group, conversion, printer columns, status): the rules compare schemas
// keyword by keyword, but not everything the API server validates around them.
func sameOutsideSchemas(o, n *apiextv1.CustomResourceDefinition) bool {
	return equality.Semantic.DeepEqual(withoutSchemas(o), withoutSchemas(n))
}

// withoutSchemas is a shallow copy of a CRD whose versions have no schema.
func withoutSchemas(c *apiextv1.CustomResourceDefinition) apiextv1.CustomResourceDefinition {
	out := *c
	out.Spec.Versions = make([]apiextv1.CustomResourceDefinitionVersion, len(c.Spec.Versions))
	for i, v := range c.Spec.Versions {
		v.Schema = nil
		out.Spec.Versions[i] = v
	}
	return out
}
