package change

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

func TestSegmentsAndShape(t *testing.T) {
	for _, c := range []struct {
		path  string
		segs  []string
		shape string
	}{
		{"", nil, ""},
		{".", []string{"."}, "."},
		{".spec.ports[*].name", []string{".spec", ".ports", "[*]", ".name"}, ".name"},
		{".spec.ports[*]", []string{".spec", ".ports", "[*]"}, ".ports[*]"},
		{".spec.labels.*", []string{".spec", ".labels", ".*"}, ".labels.*"},
		{`.spec["a.b[c]"].x`, []string{".spec", `["a.b[c]"]`, ".x"}, ".x"},
		{`.spec["a\"]"]`, []string{".spec", `["a\"]"]`}, `["a\"]"]`},
	} {
		if got := Segments(c.path); !reflect.DeepEqual(got, c.segs) {
			t.Errorf("Segments(%q) = %q, want %q", c.path, got, c.segs)
		}
		if got := Shape(c.path); got != c.shape {
			t.Errorf("Shape(%q) = %q, want %q", c.path, got, c.shape)
		}
	}
}

func TestCollapse(t *testing.T) {
	for _, c := range []struct {
		paths []string
		want  string
	}{
		{[]string{".spec.a"}, ".spec.a"},
		{[]string{".spec.template.spec.containers[*].image", ".spec.template.spec.initContainers[*].image"}, ".spec.template.spec.…[*].image"},
		{[]string{".spec.a[*].x", ".spec.b[*].x", ".status.c.x"}, ".….x"},
		{[]string{".spec.a.x", ".spec.a.x.y"}, ".spec.a.x.…"},
	} {
		if got := Collapse(c.paths); got != c.want {
			t.Errorf("Collapse(%q) = %q, want %q", c.paths, got, c.want)
		}
	}
}

// One change at several paths, versions and copies shares one ID whatever the order; another
// value, another field name, another rule, another version-level subject or another sample is
// another change.
func TestAssignAndGroups(t *testing.T) {
	at := func(rule, version, path, file, after string) finding.Finding {
		return finding.Finding{Rule: rule, Severity: finding.Error, CRD: "w.example.com", Version: version, Path: path,
			Message: path + " changed", Before: finding.Value(256), After: []byte(after), Location: finding.Location{File: file, Line: len(path)}}
	}
	fs := []finding.Finding{
		at("max-decreased", "v1", ".spec.containers[*].image", "config/crd/w.yaml", "128"),
		at("max-decreased", "v2", ".spec.initContainers[*].image", "bundle/w.yaml", " 128 "),
		at("max-decreased", "v1", ".spec.containers[*].name", "config/crd/w.yaml", "128"),
		at("max-decreased", "v1", ".spec.containers[*].image", "config/crd/w.yaml", "64"),
		at("max-added", "v1", ".spec.containers[*].image", "config/crd/w.yaml", "128"),
		at("served-version-removed", "v1", "", "config/crd/w.yaml", "false"),
		at("served-version-removed", "v2", "", "config/crd/w.yaml", "false"),
		at("sample-invalid", "v1", ".spec.size", "samples/a.yaml", "null"),
		at("sample-invalid", "v1", ".spec.size", "samples/b.yaml", "null"),
	}
	fs[7].Object, fs[8].Object = "Widget/a", "Widget/b"
	fs[0].Locations = []finding.Location{fs[0].Location, {File: "deploy/w.yaml", Line: 3}}
	Assign(fs)
	reversed := append([]finding.Finding{}, fs...)
	for i, j := 0, len(reversed)-1; i < j; i, j = i+1, j-1 {
		reversed[i], reversed[j] = reversed[j], reversed[i]
	}
	Assign(reversed)
	for i := range fs {
		if fs[i].Change != reversed[len(fs)-1-i].Change || len(fs[i].Change) != 12 {
			t.Errorf("finding %d: ID %q, in reverse order %q", i, fs[i].Change, reversed[len(fs)-1-i].Change)
		}
	}
	gs := Groups(fs)
	var sizes []int
	for _, g := range gs {
		sizes = append(sizes, len(g.Places))
	}
	if want := []int{2, 1, 1, 1, 1, 1, 1, 1}; !reflect.DeepEqual(sizes, want) {
		t.Fatalf("group sizes %v, want %v", sizes, want)
	}
	g := gs[0]
	if g.First() != &fs[0] || g.Count() != 3 {
		t.Errorf("first %v, count %d", g.First(), g.Count())
	}
	if got, want := g.Where(), "3 places; .spec.…[*].image (2 paths); versions v1, v2; 3 copies: bundle/w.yaml, config/crd/w.yaml, deploy/w.yaml"; got != want {
		t.Errorf("Where = %q, want %q", got, want)
	}
	if got := gs[1].Where(); got != "" {
		t.Errorf("one place: Where = %q", got)
	}
}

// Problems of files whose CRDs are unknown (they do not parse, or cannot be read) are each their
// file's, on their side: two of them are not copies of one change; the same problem reported for
// the same file twice is one.
func TestUnnamedFileProblemsAreTheirOwn(t *testing.T) {
	problem := func(file string, side finding.Side, msg string) finding.Finding {
		return finding.Finding{Rule: "invalid-crd", Severity: finding.Error, Message: msg, Location: finding.Location{File: file, Line: 1, Side: side}}
	}
	fs := []finding.Finding{
		problem("config/a.yaml", finding.Head, "cannot read the new version of the CRDs in this file"),
		problem("config/b.yaml", finding.Base, "cannot read the base version of the CRDs in this file"),
		problem("config/c.yaml", finding.Head, "cannot read the new version of the CRDs in this file"),
		problem("config/a.yaml", finding.Head, "cannot read the new version of the CRDs in this file"),
	}
	Assign(fs)
	if fs[0].Change == fs[1].Change || fs[0].Change == fs[2].Change || fs[1].Change == fs[2].Change || fs[0].Change != fs[3].Change {
		t.Errorf("change IDs %q, %q, %q, %q: want three distinct, the first and last alike", fs[0].Change, fs[1].Change, fs[2].Change, fs[3].Change)
	}
}

// A change an embedded built-in type brings is one change across CRDs, paths and versions,
// named by type and field; the same change of a project's own field in two CRDs is two, and
// another built-in field, value or rule is another change.
func TestBuiltinChangesAcrossCRDs(t *testing.T) {
	at := func(crd, path, builtin, rule string, before, after json.RawMessage) finding.Finding {
		return finding.Finding{Rule: rule, Severity: finding.Error, CRD: crd, Version: "v1", Path: path, Builtin: builtin,
			Message: path + " changed", Before: before, After: after, Location: finding.Location{File: crd + ".yaml", Line: len(path)}}
	}
	atomic := json.RawMessage(`{"x-kubernetes-list-type":"atomic"}`)
	keyed := json.RawMessage(`{"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"]}`)
	fs := []finding.Finding{
		at("jobs.example.com", ".spec.template.spec.containers[*].env", "Container.env", "list-type-changed", atomic, keyed),
		at("workflows.example.com", ".spec.templates[*].container.env", "Container.env", "list-type-changed", atomic, keyed),
		at("jobs.example.com", ".spec.template.spec.initContainers[*].env", "Container.env", "list-type-changed", atomic, keyed),
		at("jobs.example.com", ".spec.sidecar.env", "", "list-type-changed", atomic, keyed),
		at("workflows.example.com", ".spec.sidecar.env", "", "list-type-changed", atomic, keyed),
		at("jobs.example.com", ".spec.template.spec.containers[*].envFrom", "Container.envFrom", "list-type-changed", atomic, keyed),
		at("jobs.example.com", ".spec.template.spec.containers[*].ports", "Container.ports", "list-type-changed", json.RawMessage(`"atomic"`), json.RawMessage(`"set"`)),
		at("jobs.example.com", ".spec.template.spec.containers[*].name", "Container.name", "default-added", nil, json.RawMessage(`"x"`)),
	}
	Assign(fs)
	gs := Groups(fs)
	var sizes []int
	for _, g := range gs {
		sizes = append(sizes, len(g.Places))
	}
	if want := []int{3, 1, 1, 1, 1, 1}; !reflect.DeepEqual(sizes, want) {
		t.Fatalf("group sizes %v, want %v", sizes, want)
	}
	var titles []string
	for _, g := range gs {
		titles = append(titles, g.Title())
	}
	want := []string{"Container.env: atomic → map, keyed by name", "", "", "Container.envFrom: atomic → map, keyed by name",
		"Container.ports: atomic → set", `Container.name: default-added, "x"`}
	if !reflect.DeepEqual(titles, want) {
		t.Errorf("titles %q, want %q", titles, want)
	}
	if got, want := gs[0].Where(), "3 places; .spec.….env (3 paths); 2 CRDs: jobs.example.com, workflows.example.com; 2 copies: jobs.example.com.yaml, workflows.example.com.yaml"; got != want {
		t.Errorf("Where = %q, want %q", got, want)
	}
}

// Findings with one cause in a CRD (its v1beta1 schema typed for v1) are one change of that
// CRD at every path, whatever type each node got; another CRD's, or a typing without the
// cause, are changes of their own.
func TestCausedChangesPerCRD(t *testing.T) {
	at := func(crd, path, after, cause string) finding.Finding {
		return finding.Finding{Rule: "type-changed", Severity: finding.Error, CRD: crd, Version: "v1", Path: path, Cause: cause,
			Message: path + " typed", After: json.RawMessage(after), Location: finding.Location{File: crd + ".yaml", Line: len(path)}}
	}
	fs := []finding.Finding{
		at("a.example.com", ".spec", `"object"`, finding.CauseV1Typed),
		at("a.example.com", ".spec.mon", `"object"`, finding.CauseV1Typed),
		at("a.example.com", ".spec.storage.nodes", `"array"`, finding.CauseV1Typed),
		at("b.example.com", ".spec", `"object"`, finding.CauseV1Typed),
		at("a.example.com", ".spec.port", `"integer"`, ""),
		at("a.example.com", ".spec.count", `"integer"`, ""),
	}
	Assign(fs)
	var sizes []int
	for _, g := range Groups(fs) {
		sizes = append(sizes, len(g.Places))
	}
	if want := []int{3, 1, 1, 1}; !reflect.DeepEqual(sizes, want) {
		t.Fatalf("group sizes %v, want %v", sizes, want)
	}
}
