package oracle

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	sigsyaml "sigs.k8s.io/yaml"
)

// ratchetCRD is a Widget CRD of its own group whose .spec schema is the given YAML (indented
// for its place), with a status subresource.
func ratchetCRD(t *testing.T, group, spec string) *apiextv1.CustomResourceDefinition {
	t.Helper()
	doc := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
%[2]s
`, group, spec)
	var c apiextv1.CustomResourceDefinition
	if err := sigsyaml.UnmarshalStrict([]byte(doc), &c); err != nil {
		t.Fatalf("%s: %v", group, err)
	}
	return &c
}

// replaceCRD applies the new side of a CRD change (retrying while the server's controllers
// update its status) and waits until the server serves it for obj.
func (s *Server) replaceCRD(ctx context.Context, nu *apiextv1.CustomResourceDefinition, obj map[string]any) error {
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := crds.Get(ctx, nu.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n := withSentinel(nu, 2)
		n.ResourceVersion = cur.ResourceVersion
		_, err = crds.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("the new CRD: %w", err)
	}
	return s.waitServed(ctx, nu, obj)
}

// widgetProps is the old schema every case starts from: .spec with size, name and config
// (mode, level), and .status with phase.
const widgetProps = `        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              name: {type: string}
              config:
                type: object
                properties:
                  mode: {type: string}
                  level: {type: integer}
%s          status:
            type: object
            properties:
              phase: {type: string}
`

// ratchetUpdate is one write of a stored object after the CRD change.
type ratchetUpdate struct {
	name   string
	status bool // through /status
	change func(obj map[string]any)
}

var ratchetUpdates = []ratchetUpdate{
	{"unchanged", false, func(map[string]any) {}},
	{"a label", false, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, "yes", "metadata", "labels", "changed")
	}},
	{".status.phase through /status", true, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, "Ready", "status", "phase")
	}},
	{".spec.name", false, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, "renamed", "spec", "name")
	}},
	{".spec.config.mode", false, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, "slow", "spec", "config", "mode")
	}},
	{".spec.size", false, func(o map[string]any) {
		_ = unstructured.SetNestedField(o, int64(9), "spec", "size")
	}},
}

// TestRatchetingAsTheMessagesSay holds what crdguard's messages say of validation ratcheting
// (rules.Ratchet*, KEP-4008, on by default from Kubernetes 1.30) to a real API server: an
// object valid under the old schema is stored, the CRD is changed, and each kind of update is
// tried on a copy of it. The table is what the server does; the messages say the same:
//   - a value constraint (maximum) is forgiven while the update leaves the value unchanged;
//   - a CEL rule is forgiven while the value it is written on is unchanged (a rule on .spec
//     fails when any of .spec changes, a rule on .spec.size only when the size does); a rule
//     on the root never is, not even on /status writes (CEL rules see the whole object there);
//   - a rule that uses oldSelf is never forgiven, even on an unchanged update;
//   - what an allOf of an ancestor requires is forgiven while that ancestor is unchanged;
//   - a missing required field is forgiven while its parent object is unchanged, so
//     .spec.config.level survives a change of .spec.name, .spec.size does not; at the root
//     (a required .spec) no update passes, not even an unchanged one;
//   - /status writes validate .status only (OpenAPI), so a required .spec field does not stop them.
func TestRatchetingAsTheMessagesSay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	object := map[string]any{"size": int64(8), "name": "w", "config": map[string]any{"mode": "fast"}}
	cases := []struct {
		name string
		// required is the root's required list (YAML), spec replaces .spec's schema keywords.
		spec, root string
		object     map[string]any
		// refused are the updates the server refuses (by name); every other one passes.
		refused []string
	}{
		{name: "maximum", spec: "              size: {type: integer, maximum: 5}\n",
			refused: []string{".spec.size"}},
		{name: "cel-on-spec", spec: "            x-kubernetes-validations: [{rule: 'self.size <= 5'}]\n",
			refused: []string{".spec.name", ".spec.config.mode", ".spec.size"}},
		{name: "cel-on-root", root: "        x-kubernetes-validations: [{rule: 'self.spec.size <= 5'}]\n",
			refused: []string{"unchanged", "a label", ".status.phase through /status", ".spec.name", ".spec.config.mode", ".spec.size"}},
		{name: "cel-on-size", spec: "              size: {type: integer, x-kubernetes-validations: [{rule: 'self <= 5'}]}\n",
			refused: []string{".spec.size"}},
		{name: "transition", spec: "              size: {type: integer, x-kubernetes-validations: [{rule: 'self <= oldSelf && self <= 5'}]}\n",
			refused: []string{"unchanged", "a label", ".status.phase through /status", ".spec.name", ".spec.config.mode", ".spec.size"}},
		{name: "all-of-on-spec", spec: "            allOf: [{properties: {size: {maximum: 5}}}]\n",
			refused: []string{".spec.name", ".spec.config.mode", ".spec.size"}},
		{name: "required-size", spec: "            required: [size]\n",
			object:  map[string]any{"name": "w", "config": map[string]any{"mode": "fast"}},
			refused: []string{".spec.name", ".spec.config.mode"}},
		{name: "required-level", spec: "                required: [level]\n",
			refused: []string{".spec.config.mode"}},
		{name: "required-spec", root: "        required: [spec]\n",
			object:  map[string]any{},
			refused: []string{"unchanged", "a label"}},
		{name: "type", spec: "              size: {type: string}\n",
			refused: []string{".spec.size"}},
	}
	s := Start(t)
	ctx := context.Background()
	crds := s.CRDs.ApiextensionsV1().CustomResourceDefinitions()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			group := fmt.Sprintf("r%02d.example.com", i)
			old := ratchetCRD(t, group, fmt.Sprintf(widgetProps, ""))
			spec := fmt.Sprintf(widgetProps, "")
			switch {
			case strings.HasPrefix(tc.spec, "                "): // a keyword of .spec.config
				spec = strings.Replace(spec, "                  level: {type: integer}\n", "                  level: {type: integer}\n"+tc.spec, 1)
			case strings.HasPrefix(tc.spec, "              "): // a property of .spec, replaced
				prop := strings.SplitN(strings.TrimSpace(tc.spec), ":", 2)[0]
				spec = strings.Replace(spec, "              "+prop+": {type: integer}\n", tc.spec, 1)
			case tc.spec != "": // a keyword of .spec
				spec = strings.Replace(spec, "            type: object\n            properties:\n              size", "            type: object\n"+tc.spec+"            properties:\n              size", 1)
			}
			nu := ratchetCRD(t, group, tc.root+spec)
			if _, err := crds.Create(ctx, withSentinel(old, 1), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.waitEstablished(ctx, old.Name); err != nil {
				t.Fatal(err)
			}
			specValue := object
			if tc.object != nil {
				specValue = tc.object
			}
			objFor := func(n int) map[string]any {
				o := map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
					"metadata": map[string]any{"name": fmt.Sprintf("w%d", n), "namespace": namespace},
					"status":   map[string]any{"phase": "New"}}
				if tc.name != "required-spec" {
					o["spec"] = copyJSON(specValue)
				}
				return o
			}
			res := s.resource(old, objFor(0))
			for n := range ratchetUpdates {
				if _, err := res.Create(ctx, &unstructured.Unstructured{Object: objFor(n)}, metav1.CreateOptions{}); err != nil {
					t.Fatalf("object refused under the old CRD: %v", err)
				}
			}
			if err := s.replaceCRD(ctx, nu, objFor(0)); err != nil {
				t.Fatal(err)
			}
			var refused []string
			for n, u := range ratchetUpdates {
				latest, err := res.Get(ctx, fmt.Sprintf("w%d", n), metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				u.change(latest.Object)
				if u.status {
					_, err = res.UpdateStatus(ctx, latest, metav1.UpdateOptions{})
				} else {
					_, err = res.Update(ctx, latest, metav1.UpdateOptions{})
				}
				if err != nil {
					refused = append(refused, u.name)
					t.Logf("%s: %v", u.name, err)
				}
			}
			if got, want := strings.Join(refused, ", "), strings.Join(tc.refused, ", "); got != want {
				t.Errorf("the server refuses the updates of %s, want %s", got, want)
			}
		})
	}
}
