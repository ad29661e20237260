package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// Size rules: whether the CRD still fits the limits it meets on its way into a cluster. Each
// is measured as the server measures it (crd.AnnotationSize, crd.StoredSize) and reported when
// a change crosses the limit, either way.

const sizeContributors = 3

var (
	sizeAnnotationExceeded = &Rule{
		ID: "size-annotation-exceeded", Severity: finding.Warning, Level: CRDLevel, Twin: "size-annotation-fits",
		Summary: "The CRD grew past what client-side kubectl apply can store in its last-applied-configuration annotation (262,144 bytes).",
		Advice:  "apply CRDs server-side (kubectl apply --server-side; Argo CD: sync option ServerSideApply=true; Flux applies server-side already), or make the CRD smaller",
		Doc:     "Client-side `kubectl apply` (and what uses it: Argo CD's default sync, Makefiles, scripts) stores the whole applied object in the annotation kubectl.kubernetes.io/last-applied-configuration, and the API server refuses an object whose annotations together exceed 262,144 bytes: kubectl prints `The CustomResourceDefinition \"NAME\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes`. crdguard measures what kubectl would write (the document as JSON, keys sorted, with a trailing newline, plus the other annotations) before and after the change, and names the largest contributors. Apply CRDs with server-side apply, which keeps no such annotation (`kubectl apply --server-side`, Argo CD `ServerSideApply=true`; Flux already does), and tell users to; or shrink the CRD: controller-gen `crd:maxDescLen=0` drops descriptions, `+kubebuilder:validation:Schemaless` on a large embedded type drops its schema. Helm installs and upgrades without this annotation. Templated values are measured as crdguard's placeholder.",
	}
	sizeAnnotationFits = &Rule{
		ID: "size-annotation-fits", Severity: finding.Info, Level: CRDLevel,
		Summary: "The CRD shrank below what client-side kubectl apply can store in its last-applied-configuration annotation.",
		Doc:     "The last-applied-configuration annotation client-side `kubectl apply` writes fits the API server's 262,144-byte limit on annotations again: plain `kubectl apply` of the CRD works.",
	}
	sizeStorageExceeded = &Rule{
		ID: "size-storage-exceeded", Severity: finding.Error, Level: CRDLevel, Twin: "size-storage-fits", Refused: true,
		Summary: "The CRD grew past what etcd accepts in one request (1.5 MiB by default), so no client can store it.",
		Advice:  "make the CRD smaller: drop descriptions (controller-gen crd:maxDescLen=0), mark large embedded types +kubebuilder:validation:Schemaless, or serve fewer versions with whole schemas",
		Doc:     "The API server stores a CRD in etcd in one request, and etcd refuses requests above --max-request-bytes, 1.5 MiB (1,572,864 bytes) by default and on managed clusters: creating or updating the CRD fails with `etcdserver: request is too large`, whatever the client. crdguard measures the request as kube-apiserver makes it — the CRD encoded as protobuf (its storage encoding), its key and etcd's framing — checked against a real etcd through the in-process API server. That size is a lower bound: the object's managedFields, client-side apply's annotation and the status the server writes next add to it, so a CRD just below the limit can still fail. The managedFields add little, a few hundred bytes per field manager whatever the CRD's size: spec.versions is an atomic list (+listType=atomic in apiextensions v1), so every manager records the versions, schemas included, as one field. Make the CRD smaller: controller-gen `crd:maxDescLen=0` drops descriptions, `+kubebuilder:validation:Schemaless` drops the schema of a large embedded type, and every served version repeats its whole schema.",
	}
	sizeStorageFits = &Rule{
		ID: "size-storage-fits", Severity: finding.Info, Level: CRDLevel,
		Summary: "The CRD shrank: by crdguard's lower-bound measure it is no longer past what etcd accepts in one request.",
		Doc:     "The request that stores the CRD is no longer past etcd's default 1.5 MiB limit by crdguard's measure. That measure is a lower bound (managedFields and status are left out), so this says the change removed the certain failure, not that the CRD fits.",
	}
)

var (
	helmReleaseExceeded = &Rule{
		ID: "helm-release-size-exceeded", Severity: finding.Warning, Level: CRDLevel, Twin: "helm-release-size-fits",
		Summary: "A change to a chart's templated CRDs pushes the release helm stores past a Secret's 1 MiB.",
		Advice:  "move the CRDs to the chart's crds/ folder or a CRD sub-chart, or make them smaller (controller-gen crd:maxDescLen=0)",
		Doc:     "Helm 3 stores every release in a Secret (sh.helm.release.v1.NAME.vN): the chart's templates and files, its values and the rendered manifest, as JSON, gzipped and base64-encoded. A Secret holds at most 1 MiB (1,048,576 bytes), so a chart whose templated CRDs grow past it fails to install and upgrade: `Secret \"sh.helm.release.v1.NAME.v1\" is invalid: data: Too long: must have at most 1048576 bytes`. crdguard builds that JSON from the chart's files (subcharts left out, as helm leaves them out), with the manifest holding only the templated CRDs as crdguard reads them (nothing is rendered: the chart's other templates would add more), and compresses it as helm does; the size is a lower bound. kube-prometheus-stack moved its CRDs out of templates/ for this reason. Move the CRDs to crds/ or a CRD sub-chart, or shrink them.",
	}
	helmReleaseFits = &Rule{
		ID: "helm-release-size-fits", Severity: finding.Info, Level: CRDLevel,
		Summary: "A change to a chart's templated CRDs brings the release helm stores, by crdguard's lower-bound measure, back under a Secret's 1 MiB.",
		Doc:     "The release Secret helm stores for the chart is no longer past the 1 MiB limit on Secrets by crdguard's measure. That measure is a lower bound (only the templated CRDs of the rendered manifest count), so this says the change removed the certain failure, not that the release fits.",
	}
)

var sizeRules = []*Rule{sizeAnnotationExceeded, sizeAnnotationFits, sizeStorageExceeded, sizeStorageFits, helmReleaseExceeded, helmReleaseFits}

// releaseSizes reports the charts whose release Secret, measured before and after a change to
// their templated CRDs (changed: by chart on each side, the first changed CRD of the head),
// crosses the Secret limit.
func releaseSizes(old, new *source.Tree, changed []templatedChange) []finding.Finding {
	var out []finding.Finding
	done := map[string]bool{}
	for _, c := range changed {
		if done[c.newChart] {
			continue
		}
		done[c.newChart] = true
		after, ok, err := new.ReleaseSize(c.newChart)
		if err != nil || !ok {
			continue // the chart's files cannot be read: nothing to measure, and the rules say the rest
		}
		before := -1
		if c.oldChart != "" {
			if before, ok, err = old.ReleaseSize(c.oldChart); err != nil || !ok {
				continue
			}
		}
		switch {
		case after > source.ReleaseLimit && before <= source.ReleaseLimit:
			from := fmt.Sprintf("is at least %s bytes", crd.Bytes(after))
			if before >= 0 {
				from = fmt.Sprintf("grows from at least %s to at least %s bytes", crd.Bytes(before), crd.Bytes(after))
			}
			msg := fmt.Sprintf("the release Secret helm stores for chart %s (gzip and base64 of the release JSON; the rendered manifest counted with its templated CRDs only) %s, past the 1,048,576 bytes a Secret holds: helm install and upgrade fail with \"data: Too long: must have at most 1048576 bytes\"", c.newChart, from)
			if cs := c.crd.Contributors(sizeContributors); len(cs) > 0 {
				msg += fmt.Sprintf("; largest contributors to CRD %s: %s", c.crd.Name, strings.Join(cs, "; "))
			}
			out = append(out, helmFinding(helmReleaseExceeded, c.crd, finding.Head, namePath, source.SetPrefix(c.sets)+msg))
		case before > source.ReleaseLimit && after <= source.ReleaseLimit:
			out = append(out, helmFinding(helmReleaseFits, c.crd, finding.Head, namePath, source.SetPrefix(c.sets)+fmt.Sprintf("the release Secret helm stores for chart %s shrinks from at least %s to at least %s bytes, no longer past the 1,048,576 bytes a Secret holds by this lower bound (the rendered manifest counted with its templated CRDs only: the chart's other templates may still take it over)", c.newChart, crd.Bytes(before), crd.Bytes(after))))
		}
	}
	return out
}

// templatedChange is a CRD of a chart's templates/ that a change touched.
type templatedChange struct {
	crd                *crd.CRD
	oldChart, newChart string
	// sets are the value sets the CRD's pair stands for.
	sets []string
}

// sizeLimit is one limit and how a CRD is measured against it.
type sizeLimit struct {
	exceeded, fits *Rule
	limit          int
	measure        func(*crd.CRD) (int, error)
	// bounds brackets measure cheaply (see crd.AnnotationBounds); ok false when it cannot.
	bounds func(*crd.CRD) (lo, hi int, ok bool)
	// what names the measure (with its verb's ending: "the annotations … grow"), past says
	// what fails beyond the limit, within what works again below it; atLeast marks a measure
	// that is a lower bound ("at least ").
	what, s, past, within, atLeast string
}

var sizeLimits = []sizeLimit{
	{
		exceeded: sizeAnnotationExceeded, fits: sizeAnnotationFits, limit: crd.AnnotationLimit,
		measure: (*crd.CRD).AnnotationSize, bounds: (*crd.CRD).AnnotationBounds,
		what: "the annotations client-side kubectl apply leaves on it (last-applied-configuration included)", s: "",
		past:   "past the API server's limit of 262,144 bytes: kubectl apply fails with \"metadata.annotations: Too long: must have at most 262144 bytes\"",
		within: "within the API server's limit of 262,144 bytes: client-side kubectl apply works again",
	},
	{
		exceeded: sizeStorageExceeded, fits: sizeStorageFits, limit: crd.StorageLimit,
		measure: (*crd.CRD).StoredSize, bounds: (*crd.CRD).StoredBounds,
		what: "the request that stores it in etcd (protobuf, as kube-apiserver stores it, without the managedFields and status the server adds)", s: "s",
		past:    "past etcd's default request limit of 1,572,864 bytes (1.5 MiB): the API server refuses it with \"etcdserver: request is too large\"",
		within:  "no longer past etcd's default request limit of 1,572,864 bytes (1.5 MiB) by this lower bound; managedFields and status may still take it over",
		atLeast: "at least ",
	},
}

// checkSizes reports a CRD that crosses a size limit, at its name on the side that is over.
// A CRD read from a cluster is not measured: what it holds (status, managedFields) is not what
// a client sends.
func checkSizes(e *emitter) {
	if e.pair.New == nil || live(e.pair.New) || e.pair.Old != nil && live(e.pair.Old) {
		return
	}
	for _, l := range sizeLimits {
		if l.settled(e.pair.Old, e.pair.New) {
			continue
		}
		after, err := l.measure(e.pair.New)
		if err != nil {
			continue // a document without text or object: nothing a client would send
		}
		before := -1
		if e.pair.Old != nil {
			if before, err = l.measure(e.pair.Old); err != nil {
				continue
			}
		}
		if e.pair.Old == nil && after > l.limit && overElsewhere(l, e.pair.Elsewhere) {
			continue // a new copy of a CRD the base already ships past the limit: nothing new
		}
		switch {
		case after > l.limit && before <= l.limit:
			from := fmt.Sprintf("measure%s %s%s bytes in the new CRD", l.s, l.atLeast, crd.Bytes(after))
			var old any
			switch {
			case len(e.pair.Elsewhere) > 0:
				from = fmt.Sprintf("measure%s %s%s bytes in this new copy, while the base's copies of it fit", l.s, l.atLeast, crd.Bytes(after))
			case before >= 0:
				from = fmt.Sprintf("grow%s from %s%s to %s%s bytes", l.s, l.atLeast, crd.Bytes(before), l.atLeast, crd.Bytes(after))
				old = before
			}
			msg := fmt.Sprintf("CRD %s: %s %s, %s", e.pair.New.Name, l.what, from, l.past)
			if c := e.pair.New.Contributors(sizeContributors); len(c) > 0 {
				msg += "; largest contributors: " + strings.Join(c, "; ")
			}
			e.crd(l.exceeded, finding.Head, namePath, old, after, "%s", msg)
		case before > l.limit && after <= l.limit:
			e.crd(l.fits, finding.Head, namePath, before, after, "CRD %s: %s shrink%s from %s%s to %s%s bytes, %s", e.pair.New.Name, l.what, l.s, l.atLeast, crd.Bytes(before), l.atLeast, crd.Bytes(after), l.within)
		}
	}
}

// settled reports whether the bounds alone show that no finding is due: both sides within the
// limit, or both over it (a new CRD: within). Otherwise the sizes are measured exactly.
func (l sizeLimit) settled(old, new *crd.CRD) bool {
	nlo, nhi, ok := l.bounds(new)
	if !ok {
		return false
	}
	if old == nil {
		return nhi <= l.limit
	}
	olo, ohi, ok := l.bounds(old)
	return ok && (nhi <= l.limit && ohi <= l.limit || nlo > l.limit && olo > l.limit)
}

// overElsewhere reports whether one of the base's copies of a CRD is already past a limit;
// measured only when a new copy is past it, which is rare.
func overElsewhere(l sizeLimit, copies []*crd.CRD) bool {
	return slices.ContainsFunc(copies, func(c *crd.CRD) bool {
		if lo, hi, ok := l.bounds(c); ok && (lo > l.limit || hi <= l.limit) {
			return lo > l.limit
		}
		n, err := l.measure(c)
		return err == nil && n > l.limit
	})
}

// live reports whether a CRD was read from a cluster (kube://NAME).
func live(c *crd.CRD) bool { return strings.HasPrefix(c.File, "kube://") }
