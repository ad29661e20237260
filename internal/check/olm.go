package check

import (
	"maps"
	"slices"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
)

// withOLM adds OLM v1's preflight verdict on a pair to its findings: the refusals, or, when the
// preflight lets the upgrade through, a sentence on each breaking finding that OLM will not stop
// it.
func withOLM(p crd.Pair, opts rules.Options, fs []finding.Finding) []finding.Finding {
	name := p.Name()
	stored := slices.Clone(opts.StoredVersions[name])
	stored = append(stored, slices.Collect(maps.Keys(opts.StoredIn[name]))...)
	v := rules.OLM(p, stored, fs)
	if !v.Passes {
		return append(fs, v.Refusals...)
	}
	for i := range fs {
		if fs[i].Severity == finding.Error {
			fs[i].Message += rules.OLMLetsThrough
		}
	}
	return fs
}

// OLMDelivery decides whether OLM v1's preflight judges the CRDs (set: delivery.olm of the
// configuration; nil: whether bundle finds an OLM bundle) and says so in a notice when the
// repository decided.
func OLMDelivery(opts *rules.Options, set *bool, bundle func() (string, error)) ([]string, error) {
	if set != nil {
		opts.OLM = *set
		return nil, nil
	}
	csv, err := bundle()
	if err != nil || csv == "" {
		return nil, err
	}
	opts.OLM = true
	return []string{OLMNotice(csv)}, nil
}

// OLMNotice says that an OLM bundle turned on OLM v1's preflight verdict.
func OLMNotice(csv string) string {
	return csv + " is an OLM bundle's ClusterServiceVersion: each changed CRD is also judged as OLM v1's upgrade preflight judges it (" + rules.OLMFollows + "); delivery: {olm: false} in .crdguard.yaml turns this off"
}
