package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
)

// CRD-level rules: identity, scope and names of the whole resource.

var (
	crdRemoved = &Rule{
		ID: "crd-removed", Severity: finding.Error, Level: CRDLevel, Twin: "crd-added",
		Summary: "A CRD was removed.",
		Advice:  "deleting a CRD from a cluster deletes every object of it; keep the CRD, or make sure its removal is intended and documented",
		Doc:     "When a CRD disappears from the manifests, tools that sync them (kubectl apply --prune, GitOps controllers, Helm) delete it from the cluster, and the API server then deletes every custom resource of that kind. Keep the CRD (stop serving its versions instead), or make the removal an explicit, acknowledged release step.",
	}
	crdRemovedFromBundle = &Rule{
		ID: "crd-removed-from-bundle", Severity: finding.Warning, Level: CRDLevel,
		Summary: "A CRD left a file or kustomization that ships it with other objects, while another copy still ships it.",
		Advice:  "keep the CRD in the bundle, or tell the users who apply it to install the CRD from its other copy and to stop pruning CRDs",
		Doc:     "Users apply an install bundle (Argo CD's install.yaml and namespace-install.yaml, a release YAML, a file of several CRDs) or a kustomization as a whole, and often with pruning: kubectl apply --prune, Argo CD and Flux delete what the applied set no longer holds. A CRD that leaves such a file, or a kustomization that stops listing its file, is therefore deleted from their clusters, and with it every object of that kind, although the project still ships it elsewhere (config/crd, a crds/ folder). The finding names the bundle, the CRD and where it still ships. When no copy is left anywhere, the CRD is crd-removed (error) instead. Keep the CRD in the bundle, or make the move an explicit, documented release step.",
	}
	crdLeftRepository = &Rule{
		ID: CRDLeftRepository, Severity: finding.Warning, Level: CRDLevel,
		Summary: "A CRD left the repository, or its kustomization, for a remote resource that crdguard does not fetch.",
		Advice:  "run crdguard in the repository the CRD now comes from, between the release shipped before and the one the remote names, or review that upgrade by hand",
		Doc:     "A kustomization that installed a CRD file now lists a remote resource (https://github.com/org/repo/config/crd?ref=v1, github.com/org/repo//config/crd?ref=v1, a git URL) and the file is gone, or a chart now takes the CRD from a dependency fetched from a chart repository: the CRD is still installed, from outside the repository. The same holds when the kustomization swaps the CRD's file (or its folder) for a remote resource while the file stays in the repository: `kubectl apply -k` installs the CRD from the remote now, so this is this warning, not `crd-removed-from-bundle`. Likewise a chart that stops rendering a CRD while its release (the top chart) gains a dependency from a chart repository in the same change: that chart may render the CRD in the same release, and helm upgrade then keeps it, so this is this warning, not `helm-crd-left-release`. crdguard reads only the compared commits and fetches nothing, so it neither calls the CRD removed (deleting a CRD deletes every object of it, which is not what happens) nor compares it: one warning per CRD names the remote and says that the CRD is not checked. Run crdguard in the repository the remote comes from, between the release the project used to ship and the one the remote names, or review that upgrade by hand.",
	}
	crdAdded = &Rule{
		ID: CRDAdded, Severity: finding.Info, Level: CRDLevel,
		Summary: "A CRD was added.",
		Doc:     "A new CRD cannot break existing objects or clients.",
	}
	scopeChanged = &Rule{
		ID: "scope-changed", Severity: finding.Error, Level: CRDLevel, Refused: true,
		Summary: "The scope changed between Namespaced and Cluster.",
		Advice:  "the API server refuses this update, and every client URL and stored object key would change; create a new CRD instead",
		Doc:     "The scope is immutable: the API server rejects the update, and even if the CRD were recreated, every object's storage key and every client's URL would change. Create a new CRD (a new group or kind) and migrate objects to it.",
	}
	namesChanged = &Rule{
		ID: "names-changed", Severity: finding.Error, Level: CRDLevel,
		Summary: "kind, listKind or singular changed (error); a shortName or category was removed (warning).",
		Advice:  "clients, RBAC rules and manifests that use the old name stop working; keep the old names",
		Doc:     "Clients address objects by kind, generated clients by listKind, kubectl by singular, short names and categories. Changing kind, listKind or singular breaks them all (error); removing a short name or category breaks kubectl scripts and 'kubectl get <category>' (warning). Keep the old names, or add new ones next to them.",
	}
	namesAdded = &Rule{
		ID: "names-added", Severity: finding.Info, Level: CRDLevel,
		Summary: "A shortName or category was added.",
		Doc:     "Adding short names or categories is safe, as long as they do not collide with other resources.",
	}
	invalidCRD = &Rule{
		ID: InvalidCRD, Severity: finding.Error, Level: CRDLevel, Refused: true,
		Summary: "The CRD does not parse, has a key the CRD API does not define, or fails the API server's own validation.",
		Advice:  "the API server would refuse it; fix the document",
		Doc:     "A document that claims to be a CustomResourceDefinition but does not parse, does not decode, or fails the API server's validation would be refused by the cluster, so nothing else about it can be checked. A key the CRD API does not define (a typo such as x-kubernetes-preserve-unknown-field, or a field of a newer Kubernetes) is refused by kubectl apply's strict field validation and silently dropped by other clients: it never does what its author meant, and a change to it would be invisible; the finding names the key, its line and the nearest known key. Only what the change introduces or makes worse is reported: a problem the base already had, unchanged, is not. With kubernetesVersion set, every CEL rule new in the change (all rules of a new CRD or version, and rewritten ones) that the API server of that Kubernetes version would refuse is reported too (a 1.N server compiles new rules with the CEL environment of 1.(N-1)), naming the function and the first version that accepts it, and so are selectableFields when that version predates them (before 1.30 the API has no such field). Fix the reported line. An input crdguard could not read at all (it does not parse or decode, or is past the limits on hostile input) is a reading failure, not a judgement: no rules setting (off, a lower severity) or warn mode lowers or hides it; only an ignore entry with a reason acknowledges it.",
	}
	duplicateCRD = &Rule{
		ID: "duplicate-crd", Severity: finding.Warning, Level: CRDLevel,
		Summary: "Two different definitions of one CRD name in the same file or the same kustomization.",
		Advice:  "only one of them can be applied; remove one",
		Doc:     "Two different documents with the same metadata.name in one file, or in the resources of one kustomization, overwrite each other when applied, in an order that depends on the tool. Copies in different places (a Helm chart and config/crd, Gateway API's standard and experimental channels, install bundles) are not duplicates: each is compared with its own counterpart. Keep one definition per CRD name in a file or kustomization.",
	}
)

// IDs of the CRD-level rules other packages look for.
const (
	// InvalidCRD is the rule for CRDs that cannot be read or would be refused.
	InvalidCRD = "invalid-crd"
	// CRDAdded is the rule for a CRD new in head.
	CRDAdded = "crd-added"
	// CRDLeftRepository is the rule for a CRD whose installer now takes it from a remote.
	CRDLeftRepository = "crd-left-repository"
)

var crdRules = []*Rule{crdRemoved, scopeChanged, namesChanged, invalidCRD, duplicateCRD, crdRemovedFromBundle, crdLeftRepository, crdAdded, namesAdded}

var namePath = crd.Path{"metadata", "name"}

// Invalid builds the invalid-crd finding for a document that could not be decoded, or that the
// API server's validation refuses.
func Invalid(p crd.Problem, side finding.Side) finding.Finding {
	return finding.Finding{
		Rule: invalidCRD.ID, Severity: invalidCRD.Severity, CRD: p.Name,
		Message:  p.Message + ": " + invalidCRD.Advice,
		Location: finding.Location{File: p.File, Line: p.Line, Side: side},
	}
}

// Unparsed builds the invalid-crd finding for a head document that does not parse or decode: a
// reading failure (Finding.Unread), with Invalid's message.
func Unparsed(p crd.Problem, side finding.Side) finding.Finding {
	f := Invalid(p, side)
	f.Unread = true
	return f
}

// Unreadable builds the invalid-crd finding for an input of one side that held a CRD and could
// not be read, so the change to that CRD cannot be checked: the run fails closed instead of
// taking the other side's copy for added or removed.
func Unreadable(p crd.Problem, side finding.Side) finding.Finding {
	what := "the base version"
	if side == finding.Head {
		what = "the new version"
	}
	name := "the CRDs in this file"
	if p.Name != "" {
		name = "CRD " + p.Name
	}
	return finding.Finding{
		Rule: invalidCRD.ID, Severity: invalidCRD.Severity, CRD: p.Name, Unread: true,
		Message:  fmt.Sprintf("%s: crdguard cannot read %s of %s, so it cannot tell what this change does to it; make the file readable, or review the change by hand and acknowledge it", p.Message, what, name),
		Location: finding.Location{File: p.File, Line: p.Line, Side: side},
	}
}

// RemovedFromBundle builds the crd-removed-from-bundle finding for a base copy of a CRD in a
// bundle (or a file a kustomization listed) that head no longer holds there, while the CRD still
// ships from the files of elsewhere. via names the kustomization that stopped listing the file
// (the finding sits at the entry's base line, viaLine), "" when the file itself dropped the CRD.
func RemovedFromBundle(gone *crd.CRD, via string, viaLine int, elsewhere []string) finding.Finding {
	what := "leaves " + gone.File + ", which shipped it with other objects in base"
	bundle := gone.File
	at := finding.Location{File: gone.File, Line: gone.LineOf(namePath), Side: finding.Base}
	ships := "ships"
	if len(elsewhere) > 1 {
		ships = "ship"
	}
	if via != "" {
		what = "is no longer installed by " + via + ", which listed " + gone.File + " in base"
		bundle = via
		at = finding.Location{File: via, Line: viaLine, Side: finding.Base}
	}
	return finding.Finding{
		Rule: crdRemovedFromBundle.ID, Severity: crdRemovedFromBundle.Severity, CRD: gone.Name,
		Message: fmt.Sprintf("CRD %s %s, while %s still %s it: %s; %s",
			gone.Name, what, strings.Join(elsewhere, ", "), ships, prunedBy("whoever applies "+bundle, gone.Object.Spec.Names.Kind), crdRemovedFromBundle.Advice),
		Location: at,
	}
}

// LeftRepository builds the crd-left-repository finding for a CRD that head holds nowhere while
// the installers of its base files now list remote resources (gone are its base copies, remotes
// the remote entries, sorted): the finding sits at the first remote entry, in head.
func LeftRepository(gone []*crd.CRD, remotes []source.Remote) finding.Finding {
	files := make([]string, 0, len(gone))
	for _, c := range gone {
		if !slices.Contains(files, c.File) {
			files = append(files, c.File)
		}
	}
	entries := make([]string, 0, len(remotes))
	for _, r := range remotes {
		entries = append(entries, fmt.Sprintf("%s (%s:%d)", r.Entry, r.File, r.Line))
	}
	return finding.Finding{
		Rule: crdLeftRepository.ID, Severity: crdLeftRepository.Severity, CRD: gone[0].Name,
		Message: fmt.Sprintf("CRD %s left the repository (%s in base) for the remote resource %s, which crdguard does not fetch: the CRD stays installed, but what this change does to it is not checked; %s",
			gone[0].Name, strings.Join(files, ", "), strings.Join(entries, ", "), crdLeftRepository.Advice),
		Location: finding.Location{File: remotes[0].File, Line: remotes[0].Line, Side: finding.Head},
	}
}

// InstalledFromRemote builds the crd-left-repository finding for a CRD whose file a
// kustomization (via) stopped listing while it gained remote resources (sorted): kubectl apply -k
// installs the CRD from the remote now, although the file stays in the repository. The finding
// sits at the first remote entry, in head.
func InstalledFromRemote(gone *crd.CRD, via string, remotes []source.Remote) finding.Finding {
	entries := make([]string, 0, len(remotes))
	for _, r := range remotes {
		entries = append(entries, fmt.Sprintf("%s (%s:%d)", r.Entry, r.File, r.Line))
	}
	return finding.Finding{
		Rule: crdLeftRepository.ID, Severity: crdLeftRepository.Severity, CRD: gone.Name,
		Message: fmt.Sprintf("CRD %s is no longer installed by %s from %s, which stays in the repository: it now lists the remote resource %s instead, which crdguard does not fetch: the CRD stays installed from there, but what this change does to it is not checked; %s",
			gone.Name, via, gone.File, strings.Join(entries, ", "), crdLeftRepository.Advice),
		Location: finding.Location{File: remotes[0].File, Line: remotes[0].Line, Side: finding.Head},
	}
}

// prunedBy says what applying a bundle with pruning does to a CRD that left it; user names who
// applies it ("whoever applies install.yaml").
func prunedBy(user, kind string) string {
	return fmt.Sprintf("%s with pruning (kubectl apply --prune, Argo CD, Flux) deletes the CRD and every %s object", user, kind)
}

// Duplicate builds the duplicate-crd finding for a second definition of the same name; the
// finding sits at the second document and its message names the first.
func Duplicate(first, second *crd.CRD, side finding.Side) finding.Finding {
	return finding.Finding{
		Rule: duplicateCRD.ID, Severity: duplicateCRD.Severity, CRD: second.Name,
		Message: fmt.Sprintf("CRD %s is defined at %s:%d and again at %s:%d: %s", second.Name,
			first.File, first.LineOf(namePath), second.File, second.LineOf(namePath), duplicateCRD.Advice),
		Location: finding.Location{File: second.File, Line: second.LineOf(namePath), Side: side},
	}
}

// reportUnknownKeys makes every key of the head that the CRD API does not define an invalid-crd
// finding at its line, unless the base has the same key with the same value there: then the
// change does not touch it (and the cluster has lived with it).
func reportUnknownKeys(e *emitter) {
	var before []crd.UnknownKey
	if e.pair.Old != nil {
		before = e.pair.Old.Unknown
	}
next:
	for _, u := range e.pair.New.Unknown {
		for _, b := range before {
			if u.Same(b) {
				continue next
			}
		}
		hint := ""
		if u.Nearest != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", u.Nearest)
		}
		e.out = append(e.out, finding.Finding{
			Rule: invalidCRD.ID, Severity: invalidCRD.Severity, CRD: e.pair.Name(),
			Message:  fmt.Sprintf("unknown field %q%s: the CustomResourceDefinition API has no key %q there, so kubectl apply refuses the CRD (strict field validation) and other clients silently drop the key; whatever it was meant to do, it does nothing, and crdguard cannot check a change to it", u.Field, hint, u.Key),
			Location: finding.Location{File: e.pair.New.File, Line: u.Line, Side: finding.Head},
		})
	}
}

func compareCRD(e *emitter) {
	o, w := e.pair.Old.Object, e.pair.New.Object
	if o.Spec.Scope != w.Spec.Scope {
		e.crd(scopeChanged, finding.Head, crd.Path{"spec", "scope"}, o.Spec.Scope, w.Spec.Scope, "scope changed from %s to %s", o.Spec.Scope, w.Spec.Scope)
	}
	on, wn := o.Spec.Names, w.Spec.Names
	for _, c := range []struct{ key, old, new string }{
		{"kind", on.Kind, wn.Kind}, {"listKind", on.ListKind, wn.ListKind}, {"singular", on.Singular, wn.Singular},
	} {
		if c.old != c.new {
			e.crd(namesChanged, sideOf(c.new != ""), crd.Path{"spec", "names", c.key}, orNil(c.old), orNil(c.new), "names.%s changed from %s to %s", c.key, quoteOr(c.old, "unset"), quoteOr(c.new, "unset"))
		}
	}
	for _, c := range []struct {
		key      string
		old, new []string
	}{{"shortNames", on.ShortNames, wn.ShortNames}, {"categories", on.Categories, wn.Categories}} {
		if gone := missing(c.old, c.new); len(gone) > 0 {
			f := e.crd(namesChanged, finding.Base, crd.Path{"spec", "names", c.key, crd.StringItem(gone[0])}, gone, nil, "names.%s no longer lists %s", c.key, strings.Join(gone, ", "))
			f.Severity = finding.Warning
		}
		if added := missing(c.new, c.old); len(added) > 0 {
			e.crd(namesAdded, finding.Head, crd.Path{"spec", "names", c.key, crd.StringItem(added[0])}, nil, added, "names.%s now also lists %s", c.key, strings.Join(added, ", "))
		}
	}
	if o.Spec.PreserveUnknownFields && !w.Spec.PreserveUnknownFields && !keepsEverything(w) {
		at := crd.Path{"spec", "preserveUnknownFields"}
		what := "spec.preserveUnknownFields was turned off"
		if !e.pair.Old.Has(at) {
			what = "spec.preserveUnknownFields is no longer true (the v1beta1 CRD leaves it unset, which the API server defaults to true)"
		}
		e.crd(preserveUnknownRemoved, finding.Base, at, true, false, "%s, so unknown fields of every version will be pruned", what)
	}
}

// missing returns the items of a that b lacks, in a's order.
func missing(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// keepsEverything reports whether no version of a CRD prunes anything: every object node keeps
// unknown fields (x-kubernetes-preserve-unknown-fields) or takes any key (additionalProperties),
// the documented way to move a v1beta1 CRD to v1 without pruning. The root's metadata is the
// API server's, never pruned by the schema.
func keepsEverything(c *apiextv1.CustomResourceDefinition) bool {
	for _, v := range c.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		root := *v.Schema.OpenAPIV3Schema
		root.Properties = maps.Clone(root.Properties)
		delete(root.Properties, "metadata")
		if prunes(&root) {
			return false
		}
	}
	return true
}

// prunes reports whether the API server would drop unknown fields somewhere in s.
func prunes(s *apiextv1.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	objectLike := s.Type == "object" || s.Type == "" && len(s.Properties) > 0
	if objectLike && !isTrue(s.XPreserveUnknownFields) && s.AdditionalProperties == nil {
		return true
	}
	for _, p := range s.Properties {
		if prunes(&p) {
			return true
		}
	}
	if s.Items != nil && prunes(s.Items.Schema) {
		return true
	}
	return s.AdditionalProperties != nil && prunes(s.AdditionalProperties.Schema)
}
