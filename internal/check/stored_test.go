package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crdguard/crdguard/internal/change"
	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/source"
	"github.com/crdguard/crdguard/internal/validation"
)

// storedFile lists the objects of a YAML file as a cluster would: every object of the resource's
// group and kind, in the version asked for (as None conversion relabels it). Tests against the
// API server itself are in internal/cli (TestStoredObjects…).
type storedFile []byte

func (f storedFile) List(_ context.Context, r source.Resource, max int, each func(map[string]any) error) (source.Listed, error) {
	var l source.Listed
	for _, o := range crd.ParseObjects("stored.yaml", f) {
		group, _, _ := strings.Cut(o.APIVersion, "/")
		if group != r.Group || strings.ToLower(o.Kind)+"s" != r.Plural {
			continue
		}
		if l.Objects == max {
			l.Truncated = true
			return l, nil
		}
		obj := runtime.DeepCopyJSON(o.Data)
		obj["apiVersion"] = r.Group + "/" + r.Version
		l.Objects++
		if err := each(obj); err != nil {
			return l, err
		}
	}
	return l, nil
}

// repeated lists one object n times under different names, as a cluster with n alike objects.
type repeated struct {
	obj map[string]any
	n   int
}

func (r repeated) List(_ context.Context, _ source.Resource, max int, each func(map[string]any) error) (source.Listed, error) {
	for i := range min(r.n, max) {
		o := runtime.DeepCopyJSON(r.obj)
		o["metadata"].(map[string]any)["name"] = fmt.Sprintf("route-%05d", i)
		if err := each(o); err != nil {
			return source.Listed{Objects: i}, err
		}
	}
	return source.Listed{Objects: min(r.n, max)}, nil
}

// BenchmarkStoredHTTPRoutes is the validation half of the stored-object check (no API server):
// 1,000 typical HTTPRoutes against Gateway API v1.6.0, installed v1.5.0.
func BenchmarkStoredHTTPRoutes(b *testing.B) {
	const dir = "../../../shared/corpus/kubernetes-sigs__gateway-api/httproutes.gateway.networking.k8s.io/v1.5.0__v1.6.0/"
	old, err := source.ReadPath(dir+"old.yaml", false)
	if err != nil {
		b.Skip("corpus not available")
	}
	head, err := source.ReadPath(dir+"new.yaml", false)
	if err != nil {
		b.Fatal(err)
	}
	route := map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "r", "namespace": "team-a"},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "gateway"}},
			"hostnames":  []any{"app.example.com"},
			"rules": []any{
				map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/api"}}, map[string]any{"headers": []any{map[string]any{"name": "x-canary", "value": "yes"}}}},
					"filters":     []any{map[string]any{"type": "RequestHeaderModifier", "requestHeaderModifier": map[string]any{"set": []any{map[string]any{"name": "x-route", "value": "r"}}}}},
					"backendRefs": []any{map[string]any{"name": "api", "port": int64(8080), "weight": int64(90)}, map[string]any{"name": "api-canary", "port": int64(8080), "weight": int64(10)}},
				},
				map[string]any{
					"matches":     []any{map[string]any{"path": map[string]any{"type": "Exact", "value": "/healthz"}}},
					"backendRefs": []any{map[string]any{"name": "health", "port": int64(80)}},
				},
			},
		},
	}
	for b.Loop() {
		res, err := Stored(context.Background(), old, head, StoredOptions{Lister: repeated{route, 1000}})
		if err != nil || len(res.Findings) != 0 {
			b.Fatal(err, res.Findings)
		}
	}
}

// TestDescribeHidesValues: the words of a stored object's error never carry its value, which the
// API server quotes in format errors.
func TestDescribeHidesValues(t *testing.T) {
	for _, tc := range []struct {
		err  *field.Error
		want string
	}{
		{field.Invalid(field.NewPath("spec", "host"), "secret.example!", `spec.host in body must be of type hostname: "secret.example!"`),
			`spec.host: Invalid value: spec.host in body must be of type hostname: <value>`},
		{field.Invalid(field.NewPath("spec", "size"), int64(8), "spec.size in body should be less than or equal to 5"),
			"spec.size: Invalid value: spec.size in body should be less than or equal to 5"},
		{field.NotSupported(field.NewPath("spec", "mode"), "secret", []string{"a", "b"}),
			`spec.mode: Unsupported value: supported values: "a", "b"`},
		{field.Invalid(field.NewPath("spec", "tag"), "sec", `tag "sec" is bad`), `spec.tag: Invalid value: tag <value> is bad`},
		{field.Duplicate(field.NewPath("spec", "ports").Index(1), map[string]any{"secret": 1}), "spec.ports[1]: Duplicate value"},
		{field.Invalid(nil, nil, "some validation rules were not checked"), "Invalid value: some validation rules were not checked"},
	} {
		if got := describe(tc.err); got != tc.want {
			t.Errorf("describe(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestStoredRatchetingMatchesServer holds Schema.Ratchets, which decides between a create-only
// warning and an update error, to the API server's ratcheting: for each create error of a stored
// object, an update that changes another spec field (spec.config) and leaves the failing one as
// it is passes exactly when Ratchets says so.
func TestStoredRatchetingMatchesServer(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		ratchet bool
	}{
		{"stored-object-invalid/maximum-lowered", true},
		{"stored-object-invalid/under-all-of", true},
		{"stored-object-invalid/under-all-of-ancestor", false},
		{"stored-object-invalid/required-added", false},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join(casesDir, tc.dir)
			data, err := os.ReadFile(filepath.Join(dir, "new.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			cs, _ := crd.Parse("new.yaml", data)
			head, err := validation.NewQuietSchema(cs[0], "v1")
			if err != nil {
				t.Fatal(err)
			}
			stored, err := os.ReadFile(filepath.Join(dir, "stored.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			failing := 0
			for _, o := range crd.ParseObjects("stored.yaml", stored) {
				errs := head.Create(o.Data).Errors
				for _, e := range errs {
					if e.Field == notChecked && len(errs) > 1 {
						continue // a summary without a field, which judge leaves out next to the others
					}
					failing++
					updated := runtime.DeepCopyJSON(o.Data)
					updated["spec"].(map[string]any)["config"] = map[string]any{"mode": "changed"}
					passes := true
					for _, u := range head.Update(updated, o.Data) {
						passes = passes && validation.ErrorKey(u) != validation.ErrorKey(e)
					}
					if got := head.Ratchets(e); got != passes || got != tc.ratchet {
						t.Errorf("%s: Ratchets = %v, the server's update passes = %v, want %v", e, got, passes, tc.ratchet)
					}
				}
			}
			if failing == 0 {
				t.Fatal("no stored object fails head")
			}
		})
	}
}

// TestStoredFindingsAreChangesOfTheirOwn: two stored objects failing at the same field are two
// changes (internal/change), as two samples are: each names its own object.
func TestStoredFindingsAreChangesOfTheirOwn(t *testing.T) {
	dir := filepath.Join(casesDir, "stored-object-invalid/required-added")
	fs, _ := runCase(t, dir)
	var stored []finding.Finding
	for _, f := range fs {
		if f.Rule == "stored-object-invalid" {
			g := f
			g.Stored = &finding.ObjectRef{APIVersion: f.Stored.APIVersion, Kind: f.Stored.Kind, Namespace: f.Stored.Namespace, Name: "other"}
			stored = append(stored, f, g)
		}
	}
	if len(stored) != 2 || change.ID(&stored[0]) == change.ID(&stored[1]) {
		t.Fatalf("%d stored findings, change IDs equal: %v", len(stored), len(stored) == 2)
	}
}
