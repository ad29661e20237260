package check

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
	"github.com/crdguard/crdguard/internal/rules"
)

// One change made the same way in three copies of a CRD that differ elsewhere (config/crd, a
// bundle after a Namespace, a kustomize base whose copy carries a label of its own) is one
// finding naming the three places, not one finding per copy that differs (issue 46): the first
// two are the same text and were already compared once, the third is compared on its own and
// finds the same change. A change only one copy makes stays a finding of that copy alone.
func TestCopiesThatDifferElsewhereAreOneFinding(t *testing.T) {
	old, new := caseFile(t, "field-removed/leaf/old.yaml"), caseFile(t, "field-removed/leaf/new.yaml")
	namespace := []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: widgets\n---\n")
	labelled := func(crd []byte) []byte {
		return bytes.Replace(crd, []byte("metadata:\n"), []byte("metadata:\n  labels:\n    app.kubernetes.io/part-of: widgets\n"), 1)
	}
	// The kustomize copy also loses .spec.size in head: a change of its own.
	sizeGone := func(crd []byte) []byte {
		return bytes.Replace(crd, []byte("              size:\n                type: integer\n"), nil, 1)
	}
	if bytes.Equal(sizeGone(new), new) || bytes.Equal(labelled(old), old) {
		t.Fatal("the case's edits no longer apply to field-removed/leaf")
	}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, files := range []map[string][]byte{
		{"config/crd/w.yaml": old, "deploy/bundle.yaml": append(append([]byte{}, namespace...), old...), "deploy/kustomize/base/crds.yaml": labelled(old)},
		{"config/crd/w.yaml": new, "deploy/bundle.yaml": append(append([]byte{}, namespace...), new...), "deploy/kustomize/base/crds.yaml": sizeGone(labelled(new))},
	} {
		for name, data := range files {
			writeFile(t, filepath.Join(dirs[i], name), data)
		}
	}
	res := Trees(readTree(t, dirs[0]), readTree(t, dirs[1]), rules.Options{})
	var got []string
	for _, f := range res.Findings {
		if f.Severity < finding.Warning {
			continue
		}
		line := fmt.Sprintf("%s %s %s:%d %s", f.Rule, f.Path, f.Location.File, f.Location.Line, f.Location.Side)
		for _, l := range f.Locations {
			line += fmt.Sprintf(" [%s:%d %s]", l.File, l.Line, l.Side)
		}
		got = append(got, strings.ReplaceAll(line, dirs[0]+"/", ""))
	}
	want := []string{
		"field-removed .spec.name config/crd/w.yaml:32 base [config/crd/w.yaml:32 base] [deploy/bundle.yaml:37 base] [deploy/kustomize/base/crds.yaml:34 base]",
		"field-removed .spec.size deploy/kustomize/base/crds.yaml:32 base",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
