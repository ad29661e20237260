package rules

import (
	"fmt"

	"github.com/crdguard/crdguard/internal/celproof"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
)

// Options carries what a comparison knows beyond the two documents.
type Options struct {
	// StoredVersions are, by CRD name, versions that count as stored although the old CRD does
	// not say so: the storage versions of baselines, or a live cluster's status.storedVersions.
	StoredVersions map[string][]string
	// KubernetesVersion is the minor (1.N) of the oldest Kubernetes the CRDs must install on;
	// new and changed CEL rules that its CEL environment cannot compile are invalid-crd. Zero:
	// judged by the environment of the API server crdguard links.
	KubernetesVersion uint
	// DeprecatedSince says, by CRD name and version, since which release or commit a version has
	// been deprecated, when the history was read (git mode).
	DeprecatedSince map[string]map[string]string
	// StoredIn says, by CRD name and version, which earlier release or commit stored a version
	// (git mode reads the history when a version is removed); such versions count as stored.
	StoredIn map[string]map[string]string
	// HistoryRead lists the CRDs whose whole history was read: a removed version none of it
	// stored is then known to be safe to remove.
	HistoryRead map[string]bool
	// OLM says the CRDs are delivered through OLM v1: each changed CRD also gets the verdict of
	// operator-controller's upgrade preflight (OLM).
	OLM bool
}

// Compare classifies every difference between the two sides of a pair. A patch is not a
// definition and has nothing to compare: pairing never passes one, and Compare ignores a pair
// with a patch on either side.
func Compare(p crd.Pair, opts Options) []finding.Finding {
	e := &emitter{pair: p, opts: opts}
	switch {
	case p.Old == nil && p.New == nil, p.Old != nil && p.Old.Patch, p.New != nil && p.New.Patch:
		return nil
	case p.Old == nil:
		e.crd(crdAdded, finding.Head, namePath, nil, nil, "CRD %s is new", p.New.Name)
		reportUnknownKeys(e)
		checkLibraries(e)
		newCRDSelectableFields(e)
		checkSizes(e)
	case p.New == nil:
		e.crd(crdRemoved, finding.Base, namePath, p.Old.Name, nil, "CRD %s was removed", p.Old.Name)
	default:
		compareCRD(e)
		compareVersions(e, opts)
		reportUnknownKeys(e)
		checkLibraries(e)
		checkSizes(e)
	}
	return e.out
}

// emitter builds findings for one pair, with locations resolved in the right file.
type emitter struct {
	pair   crd.Pair
	out    []finding.Finding
	judges map[string]*celproof.Judge
	opts   Options
	regex  *patternMemo
	// renamesOff keeps a removed and an added property apart (renames): set where two versions
	// of one CRD are compared, whose every difference conversion-missing lists.
	renamesOff bool
	// pending are the findings the walk left to emit once their judgements (CEL rules, judged
	// in the background) are made, each with the place in out where the walk met it.
	pending []deferred
}

// deferred is a finding left for later, and where it goes among the others.
type deferred struct {
	at   int
	emit func()
}

// later defers emitting a finding until the walk is over, so that the walk goes on while what
// the finding says is worked out.
func (e *emitter) later(emit func()) { e.pending = append(e.pending, deferred{len(e.out), emit}) }

// settle emits what the walk deferred, each where the walk met it: the findings come out in
// the order they would have without deferring (the first of them name a served version's
// differences in its conversion-missing message).
func (e *emitter) settle() {
	pending, rest := e.pending, e.out
	e.pending, e.out = nil, make([]finding.Finding, 0, len(rest)+len(pending))
	from := 0
	for _, d := range pending {
		e.out = append(e.out, rest[from:d.at]...)
		from = d.at
		d.emit()
	}
	e.out = append(e.out, rest[from:]...)
}

// doc returns the document on one side.
func (e *emitter) doc(side finding.Side) *crd.CRD {
	if side == finding.Base {
		return e.pair.Old
	}
	return e.pair.New
}

func (e *emitter) add(r *Rule, version, path string, side finding.Side, at crd.Path, before, after any, what string) *finding.Finding {
	d := e.doc(side)
	msg := what
	if r.Advice != "" {
		msg += ": " + r.Advice
	}
	e.out = append(e.out, finding.Finding{
		Rule:     r.ID,
		Severity: r.Severity,
		CRD:      e.pair.Name(),
		Version:  version,
		Path:     path,
		Message:  msg,
		Before:   finding.Value(before),
		After:    finding.Value(after),
		Location: finding.Location{File: d.File, Line: d.LineOf(at), Side: side},
	})
	return &e.out[len(e.out)-1]
}

// crd adds a CRD-level finding.
func (e *emitter) crd(r *Rule, side finding.Side, at crd.Path, before, after any, format string, args ...any) *finding.Finding {
	return e.add(r, "", "", side, at, before, after, fmt.Sprintf(format, args...))
}

// version adds a version-level finding.
func (e *emitter) version(r *Rule, version string, side finding.Side, at crd.Path, before, after any, format string, args ...any) *finding.Finding {
	return e.add(r, version, "", side, at, before, after, fmt.Sprintf(format, args...))
}
