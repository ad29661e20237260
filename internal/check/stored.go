package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
	"github.com/crdguard/crdguard/internal/validation"
)

// ObjectLister reads the custom resources a cluster stores: source.Conn, or a fake in tests.
type ObjectLister interface {
	List(ctx context.Context, r source.Resource, max int, each func(obj map[string]any) error) (source.Listed, error)
}

// DefaultMaxObjects is how many stored objects of one CRD are read unless told otherwise: enough
// for most clusters, bounded so that a huge one does not hold the check for minutes.
const DefaultMaxObjects = 10000

// StoredOptions says how to read and judge the objects a cluster stores.
type StoredOptions struct {
	// Lister reads the objects.
	Lister ObjectLister
	// MaxObjects bounds the objects read per CRD; DefaultMaxObjects when 0.
	MaxObjects int
	// KubernetesVersion is the minor of the cluster's Kubernetes (config kubernetesVersion):
	// validation ratcheting applies from 1.30, and when it is not set.
	KubernetesVersion uint
}

// Stored reads the objects the cluster stores for every CRD that live (the cluster's CRDs) and
// head both define and that the change touches, and validates each as the API server would
// after the upgrade (DESIGN §6): stored-object-invalid and stored-object-pruned findings, and a
// notice per CRD with the totals. Objects are streamed, never all held. Reading errors (a
// missing permission, an unreachable server) end the check: a partial answer would pass
// objects nobody looked at.
func Stored(ctx context.Context, live, head *source.Tree, o StoredOptions) (Result, error) {
	if o.MaxObjects <= 0 {
		o.MaxObjects = DefaultMaxObjects
	}
	var r Result
	pairs, _ := source.PairTrees(live, head)
	copyOf := sameCopies(pairs)
	for i, p := range pairs {
		if copyOf[i] >= 0 || p.Old == nil || p.New == nil {
			continue // a copy is checked once; new CRDs have no objects, removed ones crd-removed covers
		}
		fs, notice, err := storedOf(ctx, p, o)
		if err != nil {
			return r, err
		}
		r.Findings = append(r.Findings, fs...)
		if notice != "" {
			r.Notices = append(r.Notices, notice)
		}
	}
	finding.Sort(r.Findings)
	return r, nil
}

// readPlan says in which version the objects of a CRD are listed (read) and judged (as).
type readPlan struct {
	read, as string
}

// planRead picks the version the head CRD would serve the objects in — its storage version, or
// its first served one — and how to get them in it: read in that version when the cluster serves
// it (the cluster converts); else, when head converts with None (which only relabels
// apiVersion), read in a version the cluster serves and relabel; else in a version both serve.
// The empty plan and a reason when none works.
func planRead(live, head *apiextv1.CustomResourceDefinition) (readPlan, string) {
	as := ""
	for _, v := range head.Spec.Versions {
		if v.Served && (as == "" || v.Storage) {
			as = v.Name
		}
	}
	if as == "" {
		return readPlan{}, "head serves no version"
	}
	if apihelpers.HasServedCRDVersion(live, as) {
		return readPlan{as, as}, ""
	}
	if c := head.Spec.Conversion; c == nil || c.Strategy == apiextv1.NoneConverter || c.Strategy == "" {
		if storage, err := apihelpers.GetCRDStorageVersion(live); err == nil && apihelpers.HasServedCRDVersion(live, storage) {
			return readPlan{storage, as}, ""
		}
		for _, v := range live.Spec.Versions {
			if v.Served {
				return readPlan{v.Name, as}, ""
			}
		}
		return readPlan{}, "the cluster serves no version of it"
	}
	for _, v := range head.Spec.Versions {
		if v.Served && apihelpers.HasServedCRDVersion(live, v.Name) {
			return readPlan{v.Name, v.Name}, ""
		}
	}
	return readPlan{}, "head serves " + as + " through a conversion webhook and the cluster serves no version head serves"
}

// storedOf checks the objects of one CRD; the notice says what was read and found.
func storedOf(ctx context.Context, p crd.Pair, o StoredOptions) ([]finding.Finding, string, error) {
	live, head := p.Old.Object, p.New.Object
	plan, why := planRead(live, head)
	if why != "" {
		return nil, fmt.Sprintf("stored objects of %s not checked: %s", p.Name(), why), nil
	}
	if plan.read == plan.as && sameVersion(live, head, plan.as) {
		return nil, "", nil // the objects read the same and pass the same validation as today
	}
	headSchema, err := validation.NewQuietSchema(p.New, plan.as)
	if err != nil {
		return nil, "", nil // a head schema the server would not accept is invalid-crd's business
	}
	j := &storedJudge{pair: p, plan: plan, head: headSchema, ratchet: o.KubernetesVersion == 0 || o.KubernetesVersion >= 30,
		transitions: mentionsOldSelf(head, plan.as), statusSubresource: hasStatus(head, plan.as)}
	res := source.Resource{Group: head.Spec.Group, Version: plan.read, Plural: live.Spec.Names.Plural}
	batch := make([]map[string]any, 0, batchSize)
	listed, err := o.Lister.List(ctx, res, o.MaxObjects, func(obj map[string]any) error {
		if batch = append(batch, obj); len(batch) == batchSize {
			j.judgeAll(batch)
			batch = batch[:0]
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	j.judgeAll(batch)
	return j.findings, j.notice(res, listed, o.MaxObjects), nil
}

// mentionsOldSelf reports whether a version's schema says oldSelf anywhere (a rule, or only a
// description: then the update check runs for nothing, which is safe).
func mentionsOldSelf(c *apiextv1.CustomResourceDefinition, version string) bool {
	s, err := apihelpers.GetSchemaForVersion(c, version)
	if err != nil {
		return true
	}
	data, err := json.Marshal(s)
	return err != nil || bytes.Contains(data, []byte("oldSelf"))
}

// hasStatus reports whether a version has the status subresource.
func hasStatus(c *apiextv1.CustomResourceDefinition, version string) bool {
	sub, err := apihelpers.GetSubresourcesForVersion(c, version)
	return err == nil && sub != nil && sub.Status != nil
}

// sameVersion reports whether two CRDs validate and prune a version alike (same schema and
// subresources).
func sameVersion(a, b *apiextv1.CustomResourceDefinition, version string) bool {
	as, err1 := apihelpers.GetSchemaForVersion(a, version)
	bs, err2 := apihelpers.GetSchemaForVersion(b, version)
	ar, err3 := apihelpers.GetSubresourcesForVersion(a, version)
	br, err4 := apihelpers.GetSubresourcesForVersion(b, version)
	return errors.Join(err1, err2, err3, err4) == nil && equality.Semantic.DeepEqual(as, bs) && equality.Semantic.DeepEqual(ar, br)
}

// storedJudge validates the objects of one CRD, many at a time, and counts them.
type storedJudge struct {
	pair    crd.Pair
	plan    readPlan
	head    *validation.Schema
	ratchet bool
	// transitions says that head has rules that may use oldSelf, which only an update runs:
	// without them an update refuses nothing a create accepts (ratcheting only forgives), so
	// objects a create accepts need no update check.
	transitions bool
	// statusSubresource: a create drops status (the status subresource writes it), so status
	// errors are never a create's.
	statusSubresource bool

	baseOnce sync.Once
	base     *validation.Schema // the cluster's schema, built when an object fails head

	findings                       []finding.Finding
	onUpdate, onCreate, prunedObjs int
}

// verdict is what one object comes to.
type verdict struct {
	findings                   []finding.Finding
	onUpdate, onCreate, pruned bool
}

// batchSize is how many objects are validated at once, in parallel: a bound on what is held.
const batchSize = 256

// judgeAll validates a batch of objects in parallel and counts them in order.
func (j *storedJudge) judgeAll(objs []map[string]any) {
	verdicts := make([]verdict, len(objs))
	source.Parallel(len(objs), func(i int) { verdicts[i] = j.judge(objs[i]) })
	for _, v := range verdicts {
		j.findings = append(j.findings, v.findings...)
		j.onUpdate += b2i(v.onUpdate)
		j.onCreate += b2i(v.onCreate)
		j.prunedObjs += b2i(v.pruned)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// judge validates one object as read from the cluster.
func (j *storedJudge) judge(obj map[string]any) verdict {
	var v verdict
	head := j.pair.New.Object
	as := head.Spec.Group + "/" + j.plan.as
	if j.plan.read != j.plan.as {
		obj["apiVersion"] = as // what None conversion does
	}
	ref := finding.ObjectRef{APIVersion: as, Kind: head.Spec.Names.Kind}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		ref.Namespace, _ = meta["namespace"].(string)
		ref.Name, _ = meta["name"].(string)
	}
	created := j.head.Create(asCreated(obj))
	var updated field.ErrorList
	if len(created.Errors) > 0 || j.transitions {
		updated = j.head.UpdateRatcheting(obj, obj, j.ratchet)
	}
	if j.statusSubresource {
		created.Errors = slices.DeleteFunc(created.Errors, func(e *field.Error) bool {
			return e.Field == "status" || strings.HasPrefix(e.Field, "status.") || strings.HasPrefix(e.Field, "status[")
		})
	}
	for _, path := range created.Pruned {
		v.findings = append(v.findings, j.finding(true, finding.Error, "."+path, ref, path, fmt.Sprintf("%s holds %s, which the head schema prunes", ref, path)))
	}
	v.pruned = len(created.Pruned) > 0
	if len(created.Errors) == 0 && len(updated) == 0 {
		return v
	}
	had := j.baseErrors(obj)
	onUpdate := map[string]bool{}
	for _, e := range updated {
		onUpdate[validation.ErrorKey(e)] = true
	}
	report := func(e *field.Error, all field.ErrorList, sev finding.Severity, when string) {
		if e.Field == notChecked && len(all) > 1 {
			return // the server's note that CEL rules waited for the other errors
		}
		if had[validation.ErrorKey(e)] {
			sev, when = finding.Warning, when+"; the installed schema already refuses it"
		}
		path := "." + e.Field
		if e.Field == notChecked {
			path = "."
		}
		v.findings = append(v.findings, j.finding(false, sev, path, ref, validation.ErrorKey(e), fmt.Sprintf("%s: %s; %s", ref, describe(e), when)))
	}
	for _, e := range updated {
		report(e, updated, finding.Error, "refused when written back unchanged")
	}
	refused := len(updated) > 0
	for _, e := range created.Errors {
		switch {
		case onUpdate[validation.ErrorKey(e)]:
		case j.ratchet && !j.head.Ratchets(e):
			// Written back unchanged it passes (the whole object is unchanged); an update that
			// changes anything around it does not.
			refused = true
			report(e, created.Errors, finding.Error, unratcheted(j.head, e))
		default:
			report(e, created.Errors, finding.Warning, "refused only when created anew, such as restored from a backup or re-created by GitOps; updates that leave it as it is pass")
		}
	}
	v.onUpdate, v.onCreate = refused, !refused
	return v
}

// unratcheted says which updates of a stored object still fail on an error that ratcheting
// forgives only while more than the failing value is unchanged, in the rules' words.
func unratcheted(head *validation.Schema, e *field.Error) string {
	if e.Type == field.ErrorTypeTypeInvalid {
		// The server forgives it while it is unchanged (internal/oracle's
		// TestRatchetingAsTheMessagesSay), but crdguard does not count on that: the server
		// cannot type the object for managedFields, so server-side apply may not take it.
		return "refused on updates that change it; " + rules.RatchetValue + " forgives an unchanged value of the wrong type, but crdguard does not count on that"
	}
	return ratchetOf(head, e).Object("it")
}

// baseErrors are the error keys the cluster's own schema gives the object today (as read,
// before relabelling), on update and on create: an object head refuses for the same reason is
// not this change's doing. The schema is built when an object first fails head.
func (j *storedJudge) baseErrors(obj map[string]any) map[string]bool {
	j.baseOnce.Do(func() {
		j.base, _ = validation.NewQuietSchema(j.pair.Old, j.plan.read) // none: nothing is subtracted
	})
	had := map[string]bool{}
	if j.base == nil {
		return had
	}
	o := runtime.DeepCopyJSON(obj)
	o["apiVersion"] = j.pair.Old.Object.Spec.Group + "/" + j.plan.read
	for _, e := range j.base.UpdateRatcheting(o, o, j.ratchet) {
		had[validation.ErrorKey(e)] = true
	}
	for _, e := range j.base.Create(asCreated(o)).Errors {
		had[validation.ErrorKey(e)] = true
	}
	return had
}

func (j *storedJudge) finding(pruned bool, sev finding.Severity, path string, ref finding.ObjectRef, subject, message string) finding.Finding {
	c := j.pair.New
	loc := finding.Location{File: c.File, Line: c.LineOf(schemaPathOf(c, j.plan.as, path)), Side: finding.Head}
	return rules.StoredFinding(pruned, sev, c.Name, j.plan.as, path, ref, subject, message, loc)
}

// notice says how many objects were read and how many fail, and whether the limit stopped it.
func (j *storedJudge) notice(r source.Resource, l source.Listed, max int) string {
	name := j.pair.Name()
	if l.Objects == 0 {
		return fmt.Sprintf("stored objects of %s: the cluster has none", name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stored objects of %s (read as %s/%s", name, r.Group, r.Version)
	if j.plan.read != j.plan.as {
		fmt.Fprintf(&b, ", judged as %s", j.plan.as)
	}
	fmt.Fprintf(&b, "): %d of %d refused on update, %d more only on create, %d of %d lose fields to pruning",
		j.onUpdate, l.Objects, j.onCreate, j.prunedObjs, l.Objects)
	if l.Truncated {
		more := "more"
		if l.Remaining > 0 {
			more = "about " + strconv.FormatInt(l.Remaining, 10) + " more"
		}
		fmt.Fprintf(&b, "; stopped at --max-objects %d, %s not checked", max, more)
	}
	return b.String()
}

// asCreated is obj as a create would send it (a restore from backup, a GitOps re-create):
// without what the server sets itself.
func asCreated(obj map[string]any) map[string]any {
	o := runtime.DeepCopyJSON(obj)
	if meta, ok := o["metadata"].(map[string]any); ok {
		for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
			delete(meta, k)
		}
	}
	return o
}

// describe words a validation error without the offending value: the field, the kind of error
// and the server's detail, in which the value is replaced where it is quoted (format errors
// quote it), so a report never shows what an object holds.
func describe(e *field.Error) string {
	detail := e.Detail
	if s, ok := e.BadValue.(string); ok && s != "" {
		detail = strings.ReplaceAll(detail, strconv.Quote(s), "<value>")
		if len(s) >= 4 { // shorter strings would mangle the words around them
			detail = strings.ReplaceAll(detail, s, "<value>")
		}
	}
	text := e.Type.String()
	if detail != "" {
		text += ": " + detail
	}
	if e.Field == "" || e.Field == notChecked {
		return text
	}
	return e.Field + ": " + text
}

// schemaPathOf is the path in a CRD document of the schema node that describes an object field
// (.spec.ports[2].name → …properties.spec.properties.ports.items.properties.name); LineOf stops
// at the deepest node that exists.
func schemaPathOf(c *crd.CRD, version, path string) crd.Path {
	p := c.SchemaPath(version)
	for _, seg := range crd.FieldPath(strings.TrimPrefix(path, ".")) {
		if _, ok := seg.(int); ok {
			p = p.Join("items")
			continue
		}
		p = p.Join("properties", seg)
	}
	return p
}
