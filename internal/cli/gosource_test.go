package cli

import (
	"strings"
	"testing"
)

// crdguard diff of two checkouts of a kubebuilder project names the Go line of each finding,
// under the directory given, on the side it is in.
func TestDiffNamesGoSources(t *testing.T) {
	const dir = "../../testdata/repos/gotypes/"
	code, out, errOut := runCLI(t, "diff", dir+"old", dir+"new")
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "Go source") {
			got = append(got, strings.TrimSpace(line))
		}
	}
	want := []string{
		"Go source " + dir + "new/api/v1/widget_types.go:11 (head)",
		"Go source " + dir + "new/api/v1/widget_types.go:22 (head)",
		"Go source " + dir + "old/api/v1/widget_types.go:17 (base)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), out)
	}
}

// crdguard diff of two checkouts whose CRDs are generated without descriptions recognises a
// lone name by its Go field's type (corev1.LocalObjectReference): k8s.io/api's default on it is
// upstream-default-added in every CRD and at every path, one change, the same change as where
// the field's doc tells the type.
func TestDiffRecognisesBuiltinByGoType(t *testing.T) {
	const cases = "../../testdata/rules/upstream-default-added/"
	dir := cases + "go-local-object-reference-without-descriptions/"
	got := diffChanges(t, dir+"old", dir+"new")
	const id = "5fa39c271b22"
	want := []string{
		"upstream-default-added gadgets.example.com .spec.connectionSecret.name " + id + " LocalObjectReference.name",
		"upstream-default-added widgets.example.com .spec.connectionSecret.name " + id + " LocalObjectReference.name",
		"upstream-default-added widgets.example.com .spec.pullSecrets[*].name " + id + " LocalObjectReference.name",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	dir = cases + "local-object-reference-under-a-field-comment/"
	got = diffChanges(t, dir+"old.yaml", dir+"new.yaml")
	want = []string{"upstream-default-added widgets.example.com .spec.connectionSecret.name " + id + " LocalObjectReference.name"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("documented: got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
