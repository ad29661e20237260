package check

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/crdguard/crdguard/internal/crd"
	"github.com/crdguard/crdguard/internal/rules"
	"github.com/crdguard/crdguard/internal/source"
)

// specChanges change one field of CustomResourceDefinitionSpec, CustomResourceDefinitionNames
// or CustomResourceDefinitionVersion each. TestEveryFieldIsJudged fails for a field without an
// entry, so the next field Kubernetes adds to them cannot slip past crdguard unjudged.
var (
	specChanges = map[string]func(*apiextv1.CustomResourceDefinitionSpec){
		"Group": func(s *apiextv1.CustomResourceDefinitionSpec) { s.Group = "other.example.com" },
		"Names": func(s *apiextv1.CustomResourceDefinitionSpec) { s.Names.Kind = "Gadget" },
		"Scope": func(s *apiextv1.CustomResourceDefinitionSpec) { s.Scope = apiextv1.ClusterScoped },
		"Versions": func(s *apiextv1.CustomResourceDefinitionSpec) {
			s.Versions = append(s.Versions, apiextv1.CustomResourceDefinitionVersion{Name: "v2"})
		},
		"PreserveUnknownFields": func(s *apiextv1.CustomResourceDefinitionSpec) { s.PreserveUnknownFields = true },
		"Conversion": func(s *apiextv1.CustomResourceDefinitionSpec) {
			url := "https://convert.example.com"
			s.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter,
				Webhook: &apiextv1.WebhookConversion{ClientConfig: &apiextv1.WebhookClientConfig{URL: &url}, ConversionReviewVersions: []string{"v1"}}}
		},
	}
	namesChanges = map[string]func(*apiextv1.CustomResourceDefinitionNames){
		"Plural":     func(n *apiextv1.CustomResourceDefinitionNames) { n.Plural = "gadgets" },
		"Singular":   func(n *apiextv1.CustomResourceDefinitionNames) { n.Singular = "gadget" },
		"ShortNames": func(n *apiextv1.CustomResourceDefinitionNames) { n.ShortNames = []string{"gd"} },
		"Kind":       func(n *apiextv1.CustomResourceDefinitionNames) { n.Kind = "Gadget" },
		"ListKind":   func(n *apiextv1.CustomResourceDefinitionNames) { n.ListKind = "GadgetList" },
		"Categories": func(n *apiextv1.CustomResourceDefinitionNames) { n.Categories = []string{"gadgets"} },
	}
	versionChanges = map[string]func(*apiextv1.CustomResourceDefinitionVersion){
		"Name":       func(v *apiextv1.CustomResourceDefinitionVersion) { v.Name = "v2" },
		"Served":     func(v *apiextv1.CustomResourceDefinitionVersion) { v.Served = false },
		"Storage":    func(v *apiextv1.CustomResourceDefinitionVersion) { v.Storage = false },
		"Deprecated": func(v *apiextv1.CustomResourceDefinitionVersion) { v.Deprecated = true },
		"DeprecationWarning": func(v *apiextv1.CustomResourceDefinitionVersion) {
			w := "use v2"
			v.DeprecationWarning = &w
		},
		"Schema":       func(v *apiextv1.CustomResourceDefinitionVersion) { v.Schema.OpenAPIV3Schema.Description = "changed" },
		"Subresources": func(v *apiextv1.CustomResourceDefinitionVersion) { v.Subresources = nil },
		"AdditionalPrinterColumns": func(v *apiextv1.CustomResourceDefinitionVersion) {
			v.AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}
		},
		"SelectableFields": func(v *apiextv1.CustomResourceDefinitionVersion) {
			v.SelectableFields = []apiextv1.SelectableField{{JSONPath: ".spec.name"}}
		},
	}
)

// TestEveryFieldIsJudged changes each field of the CRD spec, its names and a version in turn
// and expects at least one finding: a rule, the API server's validation, or unknown-change.
func TestEveryFieldIsJudged(t *testing.T) {
	data, err := os.ReadFile("../../testdata/rules/field-added/basic/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base, problems := crd.Parse("old.yaml", data)
	if len(base) != 1 || len(problems) != 0 {
		t.Fatalf("base: %d CRDs, problems %v", len(base), problems)
	}
	check := func(t *testing.T, change func(*apiextv1.CustomResourceDefinition)) {
		t.Helper()
		obj := base[0].Object.DeepCopy()
		change(obj)
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		old, new := &source.Tree{}, &source.Tree{}
		old.AddFile("old.yaml", data, true)
		new.AddFile("new.yaml", raw, true)
		if len(new.CRDs) != 1 {
			t.Fatalf("changed CRD does not decode: %v", new.Problems)
		}
		if res := Trees(old, new, rules.Options{}); len(res.Findings) == 0 {
			t.Errorf("no finding")
		}
	}
	for _, c := range []struct {
		typ     reflect.Type
		changes int
		has     func(string) bool
		run     func(t *testing.T, field string)
	}{
		{reflect.TypeFor[apiextv1.CustomResourceDefinitionSpec](), len(specChanges), func(f string) bool { return specChanges[f] != nil },
			func(t *testing.T, f string) {
				check(t, func(o *apiextv1.CustomResourceDefinition) { specChanges[f](&o.Spec) })
			}},
		{reflect.TypeFor[apiextv1.CustomResourceDefinitionNames](), len(namesChanges), func(f string) bool { return namesChanges[f] != nil },
			func(t *testing.T, f string) {
				check(t, func(o *apiextv1.CustomResourceDefinition) { namesChanges[f](&o.Spec.Names) })
			}},
		{reflect.TypeFor[apiextv1.CustomResourceDefinitionVersion](), len(versionChanges), func(f string) bool { return versionChanges[f] != nil },
			func(t *testing.T, f string) {
				check(t, func(o *apiextv1.CustomResourceDefinition) { versionChanges[f](&o.Spec.Versions[0]) })
			}},
	} {
		if c.typ.NumField() != c.changes {
			t.Errorf("%s has %d fields, the test changes %d", c.typ.Name(), c.typ.NumField(), c.changes)
		}
		for i := range c.typ.NumField() {
			f := c.typ.Field(i).Name
			t.Run(c.typ.Name()+"."+f, func(t *testing.T) {
				if !c.has(f) {
					t.Fatalf("no change for %s.%s: add one, and the rule that judges it", c.typ.Name(), f)
				}
				c.run(t, f)
			})
		}
	}
}
