package source

import (
	"os"
	"reflect"
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
)

// TestAddFilesParsesOneTextOnce: two files of a tree with the same text are parsed once; the
// second's definitions are the first's under its own name and path facts, sharing documents
// and Objects. A file that holds anything besides definitions (a problem) is parsed on its
// own, so that what it says names its own file.
func TestAddFilesParsesOneTextOnce(t *testing.T) {
	text, err := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets.example.com\nspec: [\n")
	tr, other := &Tree{}, &Tree{}
	AddFiles([]File{
		{Tree: tr, Name: "config/crd/widgets.yaml", Data: text},
		{Tree: tr, Name: "test/e2e/widgets.yaml", Data: text},
		{Tree: other, Name: "config/crd/widgets.yaml", Data: text},
		{Tree: tr, Name: "a/broken.yaml", Data: broken},
		{Tree: tr, Name: "b/broken.yaml", Data: broken},
	})
	if len(tr.CRDs) != 2 || len(other.CRDs) != 1 {
		t.Fatalf("%d and %d definitions, want 2 and 1", len(tr.CRDs), len(other.CRDs))
	}
	first, copied := tr.CRDs[0], tr.CRDs[1]
	if first.File != "config/crd/widgets.yaml" || copied.File != "test/e2e/widgets.yaml" {
		t.Fatalf("definitions of %s and %s", first.File, copied.File)
	}
	if copied.Object != first.Object || !copied.SameText(first) || copied.Line != first.Line {
		t.Error("the second file's text was parsed again")
	}
	if other.CRDs[0].Object == first.Object {
		t.Error("a file of another tree was taken for a copy")
	}
	at := crd.Path{"spec", "versions", "0", "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "maximum"}
	if l := copied.LineOf(at); l != first.LineOf(at) || l < 2 {
		t.Errorf("maximum at line %d in the copy, %d in the first", l, first.LineOf(at))
	}
	if got, want := tr.Facts("test/e2e/widgets.yaml"), PathFacts("test/e2e/widgets.yaml"); !reflect.DeepEqual(got, want) || got.Ships() {
		t.Errorf("the copy's facts %+v, want its own path's %+v", got, want)
	}
	var problems []string
	for _, p := range tr.Problems {
		problems = append(problems, p.File)
	}
	if want := []string{"a/broken.yaml", "b/broken.yaml"}; !reflect.DeepEqual(problems, want) {
		t.Errorf("problems in %q, want %q", problems, want)
	}
}
