package crd

import (
	"os"
	"strings"
	"testing"
)

// TestShedAndSameText: copies of one document at different places of different files are the
// same text, before and after their trees are dropped and read again, and a copy with one
// value changed is not; lines come back as they were.
func TestShedAndSameText(t *testing.T) {
	lazyDoc1 := widgets(t)
	above := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n"
	changed := strings.Replace(lazyDoc1, "maximum: 10", "maximum: 11", 1)
	read := func(t *testing.T, file, text string, shed bool) *CRD {
		t.Helper()
		crds, problems := Parse(file, []byte(text))
		if len(crds) != 1 || len(problems) != 0 {
			t.Fatalf("%s: %d CRDs, problems %v", file, len(crds), problems)
		}
		if shed {
			Shed(file, func() ([]byte, error) { return []byte(text), nil }, crds)
			if crds[0].root != nil {
				t.Fatalf("%s: the tree was kept", file)
			}
		}
		return crds[0]
	}
	size := Path{"spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "maximum"}
	for _, shed := range []bool{false, true} {
		a := read(t, "a.yaml", lazyDoc1, shed)
		b := read(t, "b.yaml", above+lazyDoc1, shed)
		c := read(t, "c.yaml", above+changed, shed)
		if !a.SameText(b) || !b.SameText(a) {
			t.Errorf("shed %v: copies at lines %d and %d are not the same text", shed, a.Line, b.Line)
		}
		if a.SameText(c) || b.SameText(c) {
			t.Errorf("shed %v: a copy with another maximum is the same text", shed)
		}
		if got := [3]int{a.LineOf(size), b.LineOf(size), c.LineOf(size)}; got != [3]int{32, 36, 36} {
			t.Errorf("shed %v: maximum at lines %v, want [32 36 36]", shed, got)
		}
		if !a.ShareObject(b) || a.Object != b.Object {
			t.Errorf("shed %v: copies of one definition keep two Objects", shed)
		}
		if a.ShareObject(c) || a.Object == c.Object {
			t.Errorf("shed %v: copies of two definitions share an Object", shed)
		}
		b.Relocate("chart/templates/b.yaml", func(l int) int { return l + 100 })
		if got := b.LineOf(size); got != 136 || b.File != "chart/templates/b.yaml" {
			t.Errorf("shed %v: relocated maximum at %s:%d, want chart/templates/b.yaml:136", shed, b.File, got)
		}
		Shed(b.File, func() ([]byte, error) { return []byte(above + lazyDoc1), nil }, []*CRD{b})
		if got := b.LineOf(size); got != 136 {
			t.Errorf("shed %v: a relocated copy shed and read again has maximum at line %d, want 136", shed, got)
		}
	}
}

// TestShedCopies: a copy of a file's document under another name, sharing its tree (source
// parses one text of two files once), is shed with it and shares what is read again: one read
// for both, the same text without reading. Another file's own document is left alone.
func TestShedCopies(t *testing.T) {
	doc := widgets(t)
	crds, _ := Parse("a.yaml", []byte(doc))
	copied := *crds[0]
	copied.File = "b.yaml"
	other, _ := Parse("c.yaml", []byte(doc))
	reads := 0
	Shed("a.yaml", func() ([]byte, error) { reads++; return []byte(doc), nil }, []*CRD{crds[0], &copied, other[0]})
	if crds[0].root != nil || copied.root != nil || other[0].root == nil {
		t.Fatalf("trees kept: a.yaml %v, its copy %v, c.yaml %v (want false, false, true)", crds[0].root != nil, copied.root != nil, other[0].root != nil)
	}
	if !crds[0].SameText(&copied) || reads != 0 {
		t.Errorf("the copy is not the same text without reading (%d reads)", reads)
	}
	size := Path{"spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "maximum"}
	if got := [3]int{crds[0].LineOf(size), copied.LineOf(size), other[0].LineOf(size)}; got != [3]int{32, 32, 32} || reads != 1 {
		t.Errorf("maximum at lines %v after %d reads, want [32 32 32] after 1", got, reads)
	}
}

// TestShedUnreadable: a copy whose file cannot be read again places its findings at the
// document's first line and is the same text as nothing.
func TestShedUnreadable(t *testing.T) {
	doc := widgets(t)
	crds, _ := Parse("a.yaml", []byte(doc))
	other, _ := Parse("b.yaml", []byte(doc))
	Shed("a.yaml", func() ([]byte, error) { return nil, errUnreadable }, crds)
	if got := crds[0].LineOf(Path{"spec", "group"}); got != 1 {
		t.Errorf("spec.group at line %d, want the document's line 1", got)
	}
	if crds[0].SameText(other[0]) {
		t.Error("an unreadable copy is the same text as another")
	}
}

// widgets is a CRD whose .spec.size has maximum: 10 at line 32.
func widgets(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../testdata/rules/sample-invalid/maximum-lowered/old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

var errUnreadable = errorString("object not found")

type errorString string

func (e errorString) Error() string { return string(e) }
