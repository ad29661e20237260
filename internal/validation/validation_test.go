package validation

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
)

func parse(t testing.TB, path string) *crd.CRD {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cs, problems := crd.Parse(filepath.Base(path), data)
	if len(cs) != 1 {
		t.Fatalf("%s: %v", path, problems)
	}
	return cs[0]
}

const cases = "../../testdata/rules/"

func TestCreateErrorsAreLocated(t *testing.T) {
	for _, tc := range []struct {
		file, field, text string
		line              int
	}{
		{"invalid-crd/cel-does-not-compile/new.yaml", "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule", "compilation failed", 50},
		{"invalid-crd/default-fails-its-schema/new.yaml", "spec.validation.openAPIV3Schema.properties[spec].properties[size].default", "must be of type integer", 32},
		{"invalid-crd/schema-not-structural/new.yaml", "spec.validation.openAPIV3Schema.properties[spec].properties[name].type", "must not be empty", 32},
	} {
		errs, err := Create(parse(t, cases+tc.file))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range errs {
			if e.Field == tc.field {
				found = true
				if e.Line != tc.line || !strings.Contains(e.Message, tc.text) {
					t.Errorf("%s: line %d %q, want line %d containing %q", tc.file, e.Line, e.Message, tc.line, tc.text)
				}
			}
		}
		if !found {
			t.Errorf("%s: no error at %s in %v", tc.file, tc.field, errs)
		}
	}
}

func TestRealCRDsAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/kubernetes-sigs__gateway-api/*/*/new.yaml")
	if len(files) == 0 {
		t.Skip("corpus not available")
	}
	for _, f := range files[:min(len(files), 12)] {
		c := parse(t, f)
		errs, err := Create(c)
		if err != nil || len(errs) != 0 {
			t.Errorf("%s: %v %v", f, err, errs)
		}
		old := parse(t, filepath.Join(filepath.Dir(f), "old.yaml"))
		if errs, err := Update(old, c); err != nil || len(errs) != 0 {
			t.Errorf("%s update: %v %v", f, err, errs)
		}
	}
}

func largestCorpusCRD(b *testing.B) *crd.CRD {
	b.Helper()
	f := "../../../shared/corpus/kubernetes-sigs__gateway-api/httproutes.gateway.networking.k8s.io/v1.5.0__v1.6.0/new.yaml"
	if _, err := os.Stat(f); err != nil {
		b.Skip("corpus not available")
	}
	return parse(b, f)
}

// BenchmarkCRDValidation is the API server's create validation of the largest real CRD
// (Gateway API HTTPRoute, many CEL rules).
func BenchmarkCRDValidation(b *testing.B) {
	c := largestCorpusCRD(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Create(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchemaConstruction builds the custom resource validator of one version.
func BenchmarkSchemaConstruction(b *testing.B) {
	c := largestCorpusCRD(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewSchema(c, "v1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObjectValidation validates one HTTPRoute as a create.
func BenchmarkObjectValidation(b *testing.B) {
	s, err := NewSchema(largestCorpusCRD(b), "v1")
	if err != nil {
		b.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "r", "namespace": "default"},
		"spec": map[string]any{
			"parentRefs": []any{map[string]any{"name": "gw"}},
			"hostnames":  []any{"example.com"},
			"rules": []any{map[string]any{
				"matches":     []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": "/"}}},
				"backendRefs": []any{map[string]any{"name": "svc", "port": int64(80)}},
			}},
		}}
	if c := s.Create(obj); len(c.Errors) != 0 {
		b.Fatalf("the sample route is invalid: %v", c.Errors)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Create(obj)
	}
}

// TestUnchangedRulesAreNotRecompiled: an update compiles the CEL rules of a version only when
// one of them, its subtree or its enclosing bounds changed.
func TestUnchangedRulesAreNotRecompiled(t *testing.T) {
	broken := parse(t, cases+"invalid-crd/cel-does-not-compile/new.yaml")
	redocumented := parse(t, cases+"invalid-crd/cel-does-not-compile/new.yaml")
	spec := redocumented.Object.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Description = "now documented"
	redocumented.Object.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	for _, tc := range []struct {
		name     string
		old      *crd.CRD
		compiled bool
	}{
		{"same rules", broken, false},
		{"only a description differs", redocumented, false},
		{"the rule changed", parse(t, cases+"invalid-crd/cel-does-not-compile/old.yaml"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs, err := Update(tc.old, broken)
			if err != nil {
				t.Fatal(err)
			}
			compiled := false
			for _, e := range errs {
				compiled = compiled || strings.Contains(e.Message, "compilation failed")
			}
			if compiled != tc.compiled {
				t.Errorf("compile error reported: %v, want %v (%v)", compiled, tc.compiled, errs)
			}
		})
	}
}

// TestReachingValidator: a validator built for one object runs the rules that object reaches,
// exactly as the full validator does.
func TestReachingValidator(t *testing.T) {
	c := parse(t, cases+"validation-rule-changed/basic/new.yaml")
	v, err := NewVersion(c, "v1")
	if err != nil {
		t.Fatal(err)
	}
	full, err := NewSchema(c, "v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []map[string]any{{"size": int64(6)}, {"size": int64(5)}, {}} { // rule: self.size <= 5
		obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "a", "namespace": "default"}, "spec": spec}
		reaching, err := v.Reaching(obj)
		if err != nil {
			t.Fatal(err)
		}
		got, want := fmt.Sprint(reaching.Create(obj).Errors), fmt.Sprint(full.Create(obj).Errors)
		if got != want {
			t.Errorf("%v: reaching validator says %s, full validator %s", spec, got, want)
		}
		if (spec["size"] != int64(5)) != (want != "[]") {
			t.Errorf("%v: the full validator says %s", spec, want)
		}
	}
}

// TestRepeatedVersionCompiledOnce: a version whose schema repeats an earlier one's is not
// compiled again, so its CEL errors are reported once.
func TestRepeatedVersionCompiledOnce(t *testing.T) {
	c := parse(t, cases+"invalid-crd/cel-does-not-compile/new.yaml")
	again := *c.Object.Spec.Versions[0].DeepCopy()
	again.Name, again.Storage = "v2", false
	// A third, different version keeps the API server from hoisting one shared schema.
	other := *again.DeepCopy()
	other.Name = "v3"
	other.Schema.OpenAPIV3Schema.Description = "different"
	delete(other.Schema.OpenAPIV3Schema.Properties, "status")
	c.Object.Spec.Versions = append(c.Object.Spec.Versions, again, other)
	errs, err := Create(c)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range errs {
		if strings.Contains(e.Message, "compilation failed") {
			n++
		}
	}
	if n != 2 { // v1 (v2 repeats it) and v3
		t.Errorf("%d compile errors, want 2: %v", n, errs)
	}
}

// TestConversionLeavesTheCRDAlone runs everything that converts a CRD (create and update
// validation, validators, quiet validators and the objects they check) on the rule cases, the
// hard pairs and a CRD with what the conversion's callers edit (a rule's messageExpression, a
// webhook without a port, which the v1 defaults fill in; the parser fills it in already), and requires every CRD to be as it
// was: the conversion shares parts of the CRD's schemas with the result (see internal), which
// must stay read-only.
func TestConversionLeavesTheCRDAlone(t *testing.T) {
	dirs, _ := filepath.Glob(cases + "*/*")
	if len(dirs) == 0 {
		t.Fatal("no rule cases found")
	}
	perf, _ := filepath.Glob("../../../shared/perf/*")
	pairs := map[string][2][]*crd.CRD{}
	for _, dir := range append(dirs, perf...) {
		var sides [2][]*crd.CRD
		for i, name := range []string{"old.yaml", "new.yaml"} {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				sides[i], _ = crd.Parse(name, data)
			}
		}
		pairs[dir] = sides
	}
	edited := parse(t, cases+"conversion-webhook-added/basic/new.yaml")
	edited.Object.Spec.Conversion.Webhook.ClientConfig.Service.Port = nil
	root := edited.Object.Spec.Versions[0].Schema.OpenAPIV3Schema
	root.XValidations = append(root.XValidations, apiextv1.ValidationRule{Rule: "true", MessageExpression: "'never'"})
	pairs["edited"] = [2][]*crd.CRD{{edited}, {edited}}
	for dir, sides := range pairs {
		var all []*crd.CRD
		var before []*apiextv1.CustomResourceDefinition
		for _, c := range append(sides[0], sides[1]...) {
			all = append(all, c)
			before = append(before, c.Object.DeepCopy())
		}
		for _, n := range sides[1] {
			_, _ = Create(n)
			for _, o := range sides[0] {
				if o.Name == n.Name {
					_, _ = Update(o, n)
				}
			}
		}
		for _, c := range all {
			for _, v := range c.Object.Spec.Versions {
				obj := map[string]any{"apiVersion": c.Object.Spec.Group + "/" + v.Name, "kind": c.Object.Spec.Names.Kind, "metadata": map[string]any{"name": "x"}, "spec": map[string]any{}}
				for _, newSchema := range []func(*crd.CRD, string) (*Schema, error){NewSchema, NewQuietSchema} {
					if s, err := newSchema(c, v.Name); err == nil {
						created := s.Create(obj)
						_ = s.Update(created.Object, created.Object)
					}
				}
			}
		}
		for i, c := range all {
			if !reflect.DeepEqual(c.Object, before[i]) {
				t.Errorf("%s: %s changed by its validation", dir, c.Name)
			}
		}
	}
}
