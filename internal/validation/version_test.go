package validation

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/crdguard/crdguard/internal/crd"
)

// TestVersionConvertsItsOwn checks, on every CRD of the rule cases and of the hard pairs, that a
// Version converts its own version and no other, and that what it validates with — the
// structural schema, the OpenAPI schema, the subresources, the group, kind and scope — is
// exactly what the conversion of the whole CRD gives for that version.
func TestVersionConvertsItsOwn(t *testing.T) {
	files, _ := filepath.Glob(cases + "*/*/*.yaml")
	perf, _ := filepath.Glob("../../../shared/perf/*/*.yaml")
	versions := 0
	for _, f := range append(files, perf...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cs, _ := crd.Parse(filepath.Base(f), data)
		for _, c := range cs {
			whole, err := internal(c)
			if err != nil {
				continue
			}
			for _, cv := range c.Object.Spec.Versions {
				want, _ := apiextensions.GetSchemaForVersion(whole, cv.Name)
				if want == nil || want.OpenAPIV3Schema == nil {
					continue
				}
				ws, err := structuralschema.NewStructural(want.OpenAPIV3Schema)
				if err != nil {
					continue // no structural schema
				}
				v, err := NewVersion(c, cv.Name)
				if err != nil {
					t.Errorf("%s %s: %v", f, cv.Name, err)
					continue
				}
				versions++
				for _, other := range v.in.Spec.Versions {
					if other.Name != cv.Name {
						t.Errorf("%s %s: the version %s was converted too", f, cv.Name, other.Name)
					}
				}
				wantSub, _ := apiextensions.GetSubresourcesForVersion(whole, cv.Name)
				gotSub, _ := apiextensions.GetSubresourcesForVersion(v.in, cv.Name)
				switch {
				case !reflect.DeepEqual(v.Structural, ws), !reflect.DeepEqual(v.openAPI, want.OpenAPIV3Schema):
					t.Errorf("%s %s: the schema differs from the whole CRD's conversion", f, cv.Name)
				case !reflect.DeepEqual(gotSub, wantSub):
					t.Errorf("%s %s: subresources %v, the whole CRD's %v", f, cv.Name, gotSub, wantSub)
				case v.in.Name != whole.Name || v.in.Spec.Group != whole.Spec.Group || !reflect.DeepEqual(v.in.Spec.Names, whole.Spec.Names) || v.in.Spec.Scope != whole.Spec.Scope:
					t.Errorf("%s %s: name, group, names or scope differ from the whole CRD's", f, cv.Name)
				}
			}
		}
	}
	if versions < 300 {
		t.Errorf("%d versions compared: the cases were not found", versions)
	}
}
