package crd

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsyaml "sigs.k8s.io/yaml"
)

// kubectlAnnotations are the annotations a client-side `kubectl apply` of a YAML document sends,
// built the way kubectl builds them (k8s.io/kubectl/pkg/util.GetModifiedConfiguration): the
// document read into an Unstructured, its last-applied annotation removed (an empty annotations
// map left where there were none), encoded with apimachinery's UnstructuredJSONScheme, and set
// as the annotation.
func kubectlAnnotations(t *testing.T, doc []byte) map[string]string {
	t.Helper()
	js, err := sigsyaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := kruntime.DecodeInto(unstructured.UnstructuredJSONScheme, js, obj); err != nil {
		t.Fatal(err)
	}
	annots := obj.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	delete(annots, LastAppliedAnnotation)
	obj.SetAnnotations(annots)
	modified, err := kruntime.Encode(unstructured.UnstructuredJSONScheme, obj)
	if err != nil {
		t.Fatal(err)
	}
	annots[LastAppliedAnnotation] = string(modified)
	return annots
}

// TestAnnotationSizeIsKubectls measures the cases' CRDs as crdguard does and as kubectl and the
// API server's validation do: the same number of bytes, on the same side of the limit.
func TestAnnotationSizeIsKubectls(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	cases := filepath.Join(filepath.Dir(here), "../../testdata/rules")
	for _, file := range []string{"size-annotation-exceeded/basic/old.yaml", "size-annotation-exceeded/basic/new.yaml", "crd-removed/basic/old.yaml", "field-removed/merge-keys-on-both-sides/new.yaml", "sample-invalid/cel-rule-added/new.yaml", "multiple-of-changed/tightened/new.yaml"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(cases, file))
			if err != nil {
				t.Fatal(err)
			}
			cs, problems := Parse(file, data)
			if len(cs) != 1 || len(problems) > 0 {
				t.Fatalf("%d CRDs, problems %v", len(cs), problems)
			}
			got, err := cs[0].AnnotationSize()
			if err != nil {
				t.Fatal(err)
			}
			annots := kubectlAnnotations(t, data)
			want := 0
			for k, v := range annots {
				want += len(k) + len(v)
			}
			if got != want {
				t.Errorf("crdguard measures %d bytes, kubectl's annotations are %d", got, want)
			}
			errs := apivalidation.ValidateAnnotations(annots, field.NewPath("metadata", "annotations"))
			if over := got > AnnotationLimit; over != (len(errs) > 0) {
				t.Errorf("crdguard: %d bytes (over the limit: %v); the API server's validation: %v", got, over, errs)
			}
		})
	}
}
