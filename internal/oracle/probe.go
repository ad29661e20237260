package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// Case is one CRD change to try: Old is applied, Object created, then New applied (nil New
// deletes the CRD; nil Old creates New only).
type Case struct {
	Name     string
	Old, New *apiextv1.CustomResourceDefinition
	Object   map[string]any
	// Touch are paths (.spec.name) of fields the change concerns; an update changes each.
	Touch []string
	// NewDoc is New as written (JSON values), with keys the API types drop: it is sent once
	// more with strict field validation, as kubectl apply does.
	NewDoc map[string]any
	// UpdateTo is, for the witness of an update (a transition rule), what the object is changed
	// into after the CRD change; the server must refuse it.
	UpdateTo map[string]any
}

// Evidence is what the server did; an empty field means nothing happened there.
type Evidence struct {
	// CRDChange is the API server's answer to the CRD update (or create, or delete).
	CRDChange string
	// Read is how the object reads after the change compared with before (pruned, defaulted),
	// or why it cannot be read.
	Read string
	// OtherVersions is what changed when the object is read through the other served versions.
	OtherVersions string
	// Update is the error of writing the object back unchanged (what a controller does).
	Update string
	// Stored is what the object lost in etcd after that write.
	Stored string
	// Touch is the error of an update that changes a field the CRD change concerns.
	Touch string
	// Create is the error of creating the same object fresh.
	Create string
	// Fresh is how a freshly created copy differs from the object as it read before the change.
	Fresh string
	// Status is the error of updating the object's status through /status.
	Status string
	// Selector is what went wrong listing with a field selector on each field the old CRD made
	// selectable: an error, or the object missing from the list.
	Selector string
	// Strict is the API server's answer to the new CRD as written, sent with strict field
	// validation (kubectl apply's default) as a dry run after the change.
	Strict string
	// UpdateTo is the error of changing the object into Case.UpdateTo.
	UpdateTo string
	// Setup is set when the case could not be set up (the old CRD or the object was refused).
	Setup string
}

// Breaks reports whether the server showed a failure or a loss.
func (e Evidence) Breaks() bool {
	return e.CRDChange != "" || e.Strict != "" || e.Read != "" || e.OtherVersions != "" || e.Update != "" || e.Stored != "" ||
		e.Touch != "" || e.Create != "" || e.Fresh != "" || e.Status != "" || e.Selector != "" || e.UpdateTo != ""
}

// Lines renders the evidence for docs/proof.md.
func (e Evidence) Lines() []string {
	var out []string
	for _, x := range []struct{ k, v string }{
		{"setup", e.Setup}, {"CRD change", e.CRDChange}, {"kubectl apply (strict field validation)", e.Strict}, {"read", e.Read}, {"other versions", e.OtherVersions},
		{"unchanged update", e.Update}, {"stored in etcd", e.Stored}, {"update of the changed field", e.Touch}, {"update to the example", e.UpdateTo},
		{"fresh create", e.Create},
		{"fresh object", e.Fresh}, {"status update", e.Status}, {"field selector", e.Selector},
	} {
		if x.v != "" {
			out = append(out, x.k+": "+x.v)
		}
	}
	return out
}

const namespace = "default"

// Run tries every case on the server: all old CRDs first, then all objects (the server's first
// create after a CRD is established waits 2 s, so creates run concurrently), then every change
// and the probes.
func (s *Server) Run(ctx context.Context, cases []Case) []Evidence {
	ev := make([]Evidence, len(cases))
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	each := func(f func(i int)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 16)
		for i := range cases {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				f(i)
			}()
		}
		wg.Wait()
	}
	before := make([]map[string]map[string]any, len(cases)) // version → object as read
	each(func(i int) {
		c := cases[i]
		if c.Old == nil {
			return
		}
		old := withSentinel(c.Old, 1)
		if _, err := crds.Create(ctx, old, metav1.CreateOptions{}); err != nil {
			ev[i].Setup = "old CRD refused: " + err.Error()
			return
		}
		if err := s.waitEstablished(ctx, c.Old.Name); err != nil {
			ev[i].Setup = err.Error()
		}
	})
	each(func(i int) {
		c := cases[i]
		if c.Old == nil || ev[i].Setup != "" || c.Object == nil {
			return
		}
		if _, err := s.resource(c.Old, c.Object).Create(ctx, &unstructured.Unstructured{Object: c.Object}, metav1.CreateOptions{}); err != nil {
			ev[i].Setup = "object refused under the old CRD: " + err.Error()
			return
		}
		before[i] = s.readAll(ctx, c.Old, c.Object)
		if s.stored(ctx, c.Old, c.Object) == nil {
			ev[i].Setup = "the object is not where the probes read etcd: " + s.key(c.Old, c.Object)
		}
	})
	each(func(i int) {
		c := cases[i]
		if ev[i].Setup != "" {
			return
		}
		ev[i].CRDChange = s.change(ctx, c)
		if ev[i].CRDChange == "" {
			ev[i].Strict = s.strict(ctx, c)
		}
		if ev[i].CRDChange == "" && c.New == nil && c.Object != nil {
			ev[i].Read = s.waitGone(ctx, c.Old, c.Object)
			return
		}
		if ev[i].CRDChange != "" || c.New == nil || c.Object == nil || c.Old == nil {
			return
		}
		if err := s.waitServed(ctx, c.New, c.Object); err != nil {
			ev[i].Setup = err.Error()
			return
		}
		s.probe(ctx, c, before[i], &ev[i])
	})
	return ev
}

// change applies the new side of a case and returns the server's refusal, if any.
func (s *Server) change(ctx context.Context, c Case) string {
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	var err error
	switch {
	case c.Old == nil:
		_, err = crds.Create(ctx, withSentinel(c.New, 2), metav1.CreateOptions{})
	case c.New == nil:
		err = crds.Delete(ctx, c.Old.Name, metav1.DeleteOptions{})
	default:
		var cur *apiextv1.CustomResourceDefinition
		if cur, err = crds.Get(ctx, c.Old.Name, metav1.GetOptions{}); err == nil {
			n := withSentinel(c.New, 2)
			n.ResourceVersion = cur.ResourceVersion
			_, err = crds.Update(ctx, n, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// strict sends the new CRD as written once more, as a dry run with strict field validation, and
// returns the server's refusal, if any.
func (s *Server) strict(ctx context.Context, c Case) string {
	if c.NewDoc == nil || c.New == nil {
		return ""
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// The server's controllers update the CRD's status meanwhile: retry on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := s.Dynamic.Resource(crds).Get(ctx, c.New.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		doc := &unstructured.Unstructured{Object: copyJSON(c.NewDoc)}
		doc.SetName(c.New.Name)
		_ = unstructured.SetNestedField(doc.Object, c.New.Spec.Group, "spec", "group")
		doc.SetResourceVersion(cur.GetResourceVersion())
		_, err = s.Dynamic.Resource(crds).Update(ctx, doc, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		return err
	})
	if err != nil {
		return err.Error()
	}
	return ""
}

// probe records what happens to the object after the change.
func (s *Server) probe(ctx context.Context, c Case, before map[string]map[string]any, ev *Evidence) {
	version := objectVersion(c.Object)
	after := s.readAll(ctx, c.New, c.Object)
	cur, ok := after[version]
	switch {
	case !ok:
		ev.Read = "the object cannot be read through " + version + ": " + fmt.Sprint(after["error:"+version]["error"])
	default:
		ev.Read = diff(before[version], cur)
	}
	var others []string
	for v, obj := range after {
		if strings.HasPrefix(v, "error:") || v == version {
			continue
		}
		ref := before[v]
		if ref == nil {
			// A version new in this change: the object should read through it as it did
			// through its own version before.
			ref = before[version]
		}
		if d := diff(ref, obj); d != "" && ref != nil {
			others = append(others, v+": "+d)
		}
	}
	sort.Strings(others)
	ev.OtherVersions = strings.Join(others, "; ")
	if ok {
		res := s.resource(c.New, c.Object)
		u := &unstructured.Unstructured{Object: cur}
		if _, err := res.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			ev.Update = err.Error()
		} else if stored := s.stored(ctx, c.New, c.Object); stored != nil {
			if lost := lostFields(c.Object, stored); lost != "" {
				ev.Stored = lost
			}
		}
		for _, path := range c.Touch {
			latest, err := res.Get(ctx, name(c.Object), metav1.GetOptions{})
			if err != nil {
				break
			}
			if !touch(latest.Object, path) {
				continue
			}
			if _, err := res.Update(ctx, latest, metav1.UpdateOptions{}); err != nil {
				ev.Touch = err.Error()
				break
			}
		}
		if c.UpdateTo != nil {
			ev.UpdateTo = s.updateTo(ctx, c)
		}
		if st, has := c.Object["status"]; has && st != nil {
			latest, err := res.Get(ctx, name(c.Object), metav1.GetOptions{})
			if err == nil {
				_ = unstructured.SetNestedField(latest.Object, "Probed", "status", "phase")
				if _, err := res.UpdateStatus(ctx, latest, metav1.UpdateOptions{}); err != nil {
					ev.Status = err.Error()
				}
			}
		}
	}
	if ok {
		ev.Selector = s.selectors(ctx, c)
	}
	fresh := copyJSON(c.Object)
	fresh["metadata"] = map[string]any{"name": name(c.Object) + "-fresh", "namespace": namespace}
	res := s.resource(c.New, fresh)
	created, err := res.Create(ctx, &unstructured.Unstructured{Object: fresh}, metav1.CreateOptions{})
	if err != nil {
		ev.Create = err.Error()
	} else if d := diff(before[version], created.Object); d != "" {
		ev.Fresh = d
	}
}

// updateTo changes the object into the update witness and returns the server's refusal, if any.
func (s *Server) updateTo(ctx context.Context, c Case) string {
	res := s.resource(c.New, c.Object)
	latest, err := res.Get(ctx, name(c.Object), metav1.GetOptions{})
	if err != nil {
		return "the object cannot be read: " + err.Error()
	}
	u := &unstructured.Unstructured{Object: copyJSON(c.UpdateTo)}
	u.SetName(latest.GetName())
	u.SetNamespace(latest.GetNamespace())
	u.SetResourceVersion(latest.GetResourceVersion())
	if _, err := res.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		return err.Error()
	}
	return ""
}

// selectors lists the objects with a field selector on each field the old CRD's version made
// selectable, set to the object's value, and says where the object was not returned.
func (s *Server) selectors(ctx context.Context, c Case) string {
	version := objectVersion(c.Object)
	var problems []string
	for _, v := range c.Old.Spec.Versions {
		if v.Name != version {
			continue
		}
		for _, f := range v.SelectableFields {
			fields := strings.Split(strings.TrimPrefix(f.JSONPath, "."), ".")
			value, found, _ := unstructured.NestedString(c.Object, fields...)
			if !found {
				continue
			}
			selector := strings.Join(fields, ".") + "=" + value
			list, err := s.resource(c.New, c.Object).List(ctx, metav1.ListOptions{FieldSelector: selector})
			switch {
			case err != nil:
				problems = append(problems, selector+": "+err.Error())
			case !listed(list, name(c.Object)):
				problems = append(problems, selector+": the object is not listed")
			}
		}
	}
	return strings.Join(problems, "; ")
}

func listed(list *unstructured.UnstructuredList, name string) bool {
	for _, it := range list.Items {
		if it.GetName() == name {
			return true
		}
	}
	return false
}

// readAll reads the object through every served version of the CRD, keyed by version; errors
// are kept under "error:<version>".
func (s *Server) readAll(ctx context.Context, crd *apiextv1.CustomResourceDefinition, obj map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural}
		var u *unstructured.Unstructured
		var err error
		if crd.Spec.Scope == apiextv1.NamespaceScoped {
			u, err = s.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name(obj), metav1.GetOptions{})
		} else {
			u, err = s.Dynamic.Resource(gvr).Get(ctx, name(obj), metav1.GetOptions{})
		}
		if err != nil {
			out["error:"+v.Name] = map[string]any{"error": err.Error()}
			continue
		}
		out[v.Name] = u.Object
	}
	if _, ok := out[objectVersion(obj)]; !ok {
		if _, failed := out["error:"+objectVersion(obj)]; !failed {
			out["error:"+objectVersion(obj)] = map[string]any{"error": "version " + objectVersion(obj) + " is not served"}
		}
	}
	return out
}

// resource is the dynamic client for obj's version of a CRD.
func (s *Server) resource(crd *apiextv1.CustomResourceDefinition, obj map[string]any) resourceClient {
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: objectVersion(obj), Resource: crd.Spec.Names.Plural}
	if crd.Spec.Scope == apiextv1.NamespaceScoped {
		return s.Dynamic.Resource(gvr).Namespace(namespace)
	}
	return s.Dynamic.Resource(gvr)
}

// resourceClient is the part of the dynamic client the probes use.
type resourceClient interface {
	Create(ctx context.Context, obj *unstructured.Unstructured, options metav1.CreateOptions, subresources ...string) (*unstructured.Unstructured, error)
	Update(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions, subresources ...string) (*unstructured.Unstructured, error)
	UpdateStatus(ctx context.Context, obj *unstructured.Unstructured, options metav1.UpdateOptions) (*unstructured.Unstructured, error)
	Get(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (*unstructured.Unstructured, error)
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// stored reads the object as etcd holds it (JSON), below the API server.
func (s *Server) stored(ctx context.Context, crd *apiextv1.CustomResourceDefinition, obj map[string]any) map[string]any {
	resp, err := s.Etcd.Get(ctx, s.key(crd, obj))
	if err != nil || len(resp.Kvs) == 0 {
		return nil
	}
	var out map[string]any
	if json.Unmarshal(resp.Kvs[0].Value, &out) != nil {
		return nil
	}
	return out
}

func (s *Server) waitEstablished(ctx context.Context, crdName string) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := s.CRDs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crdName, metav1.GetOptions{})
		if err == nil {
			for _, cond := range c.Status.Conditions {
				if cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue {
					return nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s was not established within a minute", crdName)
}

// waitServed waits until the server serves the new CRD: its sentinel printer column (one per
// generation) appears in a table listing. After a CRD update the server swaps its storage
// asynchronously, with no public sync point.
func (s *Server) waitServed(ctx context.Context, crd *apiextv1.CustomResourceDefinition, obj map[string]any) error {
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && (version == "" || v.Name == objectVersion(obj)) {
			version = v.Name
		}
	}
	path := "/apis/" + crd.Spec.Group + "/" + version + "/"
	if crd.Spec.Scope == apiextv1.NamespaceScoped {
		path += "namespaces/" + namespace + "/"
	}
	path += crd.Spec.Names.Plural
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		cols, err := s.tableColumns(ctx, path)
		if err == nil && slicesContains(cols, sentinelName(2)) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the new CRD %s was not served within a minute", crd.Name)
}

func (s *Server) tableColumns(ctx context.Context, path string) ([]string, error) {
	hc, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(s.Config.Host, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var table struct {
		ColumnDefinitions []struct {
			Name string `json:"name"`
		} `json:"columnDefinitions"`
	}
	if err := json.Unmarshal(body, &table); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range table.ColumnDefinitions {
		out = append(out, c.Name)
	}
	return out, nil
}

func sentinelName(gen int) string { return fmt.Sprintf("Crdguard-Probe-%d", gen) }

// withSentinel returns a copy of a CRD whose versions carry a printer column naming the step.
func withSentinel(c *apiextv1.CustomResourceDefinition, gen int) *apiextv1.CustomResourceDefinition {
	out := c.DeepCopy()
	out.ResourceVersion = ""
	out.Status = apiextv1.CustomResourceDefinitionStatus{}
	for i := range out.Spec.Versions {
		out.Spec.Versions[i].AdditionalPrinterColumns = append(out.Spec.Versions[i].AdditionalPrinterColumns,
			apiextv1.CustomResourceColumnDefinition{Name: sentinelName(gen), Type: "string", JSONPath: ".metadata.name"})
	}
	return out
}

func objectVersion(obj map[string]any) string {
	av, _ := obj["apiVersion"].(string)
	_, v, _ := strings.Cut(av, "/")
	return v
}

func name(obj map[string]any) string {
	n, _, _ := unstructured.NestedString(obj, "metadata", "name")
	return n
}

func copyJSON(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// diff lists how spec and status differ between two readings of an object.
func diff(before, after map[string]any) string {
	if before == nil || after == nil {
		return ""
	}
	var out []string
	for _, k := range []string{"spec", "status"} {
		walkDiff("."+k, before[k], after[k], &out)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func walkDiff(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			av, ain := am[k]
			bv, bin := bm[k]
			switch {
			case ain && !bin:
				*out = append(*out, fmt.Sprintf("%s.%s was dropped (was %s)", path, k, short(av)))
			case !ain && bin:
				*out = append(*out, fmt.Sprintf("%s.%s appeared (%s)", path, k, short(bv)))
			default:
				walkDiff(path+"."+k, av, bv, out)
			}
		}
		return
	}
	if reflect.DeepEqual(normalize(a), normalize(b)) {
		return
	}
	switch {
	case a == nil:
		*out = append(*out, fmt.Sprintf("%s appeared (%s)", path, short(b)))
	case b == nil:
		*out = append(*out, fmt.Sprintf("%s was dropped (was %s)", path, short(a)))
	default:
		*out = append(*out, fmt.Sprintf("%s changed from %s to %s", path, short(a), short(b)))
	}
}

// lostFields lists the spec fields of the original object that etcd no longer holds.
func lostFields(original, stored map[string]any) string {
	var out []string
	walkDiff(".spec", original["spec"], stored["spec"], &out)
	var lost []string
	for _, d := range out {
		if strings.Contains(d, "was dropped") {
			lost = append(lost, d)
		}
	}
	sort.Strings(lost)
	return strings.Join(lost, ", ")
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// touch changes the scalar at a dotted path (.spec.name) and reports whether there was one.
func touch(obj map[string]any, path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "."), ".")
	m := obj
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return false
		}
		m = next
	}
	last := parts[len(parts)-1]
	switch v := m[last].(type) {
	case string:
		m[last] = v + "x"
	case int64:
		m[last] = v + 1
	case float64:
		m[last] = v + 1
	case bool:
		m[last] = !v
	default:
		return false
	}
	return true
}

// waitGone waits for the object to disappear after its CRD was deleted.
func (s *Server) waitGone(ctx context.Context, crd *apiextv1.CustomResourceDefinition, obj map[string]any) string {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := s.Etcd.Get(ctx, s.key(crd, obj))
		if err == nil && len(resp.Kvs) == 0 {
			return "deleting the CRD deleted the object: it is gone from etcd"
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ""
}

// key is where etcd holds a custom resource: the server's prefix, group, plural, namespace, name.
func (s *Server) key(crd *apiextv1.CustomResourceDefinition, obj map[string]any) string {
	parts := []string{"/", s.Prefix, crd.Spec.Group, crd.Spec.Names.Plural}
	if crd.Spec.Scope == apiextv1.NamespaceScoped {
		parts = append(parts, namespace)
	}
	return path.Join(append(parts, name(obj))...)
}
