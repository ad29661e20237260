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
