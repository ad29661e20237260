package crd

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// checkBounds asserts that a CRD's bounds bracket its exact measures, and returns how far each
// bound is from them.
func checkBounds(t *testing.T, c *CRD) (annLo, annHi, storedLo, storedHi int) {
	t.Helper()
	exact, err := c.AnnotationSize()
	lo, hi, ok := c.AnnotationBounds()
	switch {
	case err != nil && ok:
		// The exact measure fails (toJSON refuses a number): the bounds may say anything, since
		// no finding comes from either.
	case err != nil:
	case !ok:
		t.Errorf("%s: no annotation bounds for a document measured at %d bytes", c.Name, exact)
	case lo > exact || exact > hi:
		t.Errorf("%s: annotation size %d outside its bounds [%d, %d]", c.Name, exact, lo, hi)
	default:
		annLo, annHi = exact-lo, hi-exact
	}
	if c.Object == nil {
		return annLo, annHi, 0, 0
	}
	exact, err = c.StoredSize()
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	lo, hi, ok = c.StoredBounds()
	if !ok || lo > exact || exact > hi {
		t.Errorf("%s: stored size %d outside its bounds [%d, %d] (ok %v)", c.Name, exact, lo, hi, ok)
	}
	return annLo, annHi, exact - lo, hi - exact
}

// TestSizeBoundsBracketEveryCase measures every CRD of the rule cases both ways: the bounds never
// fall on the wrong side of the exact measure.
func TestSizeBoundsBracketEveryCase(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "../../testdata/rules")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		cs, _ := Parse(path, data)
		for _, c := range cs {
			n++
			checkBounds(t, c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("only %d CRDs in the rule cases", n)
	}
}

// TestSizeBounds measures documents built to reach each rule of the bounds: escapes, numbers,
// booleans YAML 1.1 reads, aliases, annotations present or not. lo and hi are the distances of
// the lower and upper annotation bounds from the exact measure.
func TestSizeBounds(t *testing.T) {
	head := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
	spec := `spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: %s
`
	for _, c := range []struct {
		name, meta, desc string
		lo, hi           int
	}{
		// Without annotations the measure adds an empty map, which the lower bound leaves out
		// and the upper bound counts with a metadata object.
		{"plain", "metadata:\n  name: widgets.example.com\n", "plain text", 17, 13},
		// U+2028 (3 bytes written as 6) puts lo 3 short and hi 3 over, \x01 (written as 6) lo 4
		// short, \b (written as 2) and é (2 bytes kept) hi 4 over each.
		{"escaped", "metadata:\n  name: widgets.example.com\n", `"<a & b> \"q\" \\ \n \t \r \u2028 \x01 \b é"`, 17 + 3 + 4, 13 + 3 + 4 + 4},
		// lo leaves out the whole annotations entry, `,"annotations":{"a":"b"}`, and the a and b
		// the measure adds; hi counts the annotations node again (65 bytes), the last-applied
		// entry the measure drops (56) and an added metadata object (30), less a and b.
		{"annotations", "metadata:\n  name: widgets.example.com\n  annotations:\n    a: b\n    " + LastAppliedAnnotation + ": '{}'\n", "x", 26, 151 - 2},
		{"empty annotations", "metadata:\n  name: widgets.example.com\n  annotations: {}\n", "x", 17, 32},
		{"aliases", "metadata:\n  name: &n widgets.example.com\n  labels: {a: *n, b: *n}\n", "x", 17, 13},
		// Numbers are bounded from 1 to numberMax bytes, whatever toJSON and the JSON decode
		// make of them: written 0, 0, 1, 1000, 31, 18446744073709551616 (a float64),
		// -0.0000012345678901234567, 1.5e+300, 123456.
		{"numbers", "metadata:\n  name: widgets.example.com\n", "x\n        x-numbers: [0, -0, 1.0, 1e3, 0x1f, 18446744073709551615, -0.0000012345678901234567, 1.5e300, 123_456]", 17 + 59, 13 + 220},
		{"booleans and null", "metadata:\n  name: widgets.example.com\n", "x\n        x-flags: {a: yes, b: off, c: ~, d: True, e: FALSE}", 17, 13},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := head + c.meta + strings.Replace(spec, "%s", c.desc, 1)
			cs, problems := Parse("crd.yaml", []byte(doc))
			if len(cs) != 1 || len(problems) > 0 {
				t.Fatalf("%d CRDs, problems %v", len(cs), problems)
			}
			lo, hi, slo, shi := checkBounds(t, cs[0])
			if lo != c.lo || hi != c.hi {
				t.Errorf("annotation bounds %d below and %d above the measure, want %d and %d", lo, hi, c.lo, c.hi)
			}
			if c.name == "plain" && (slo != 162 || shi != 401) {
				// Below: the envelope (apiVersion, kind: 60 bytes), the metadata as stored (name,
				// uid, creation time, generation), the status, the fields' tags and lengths.
				t.Errorf("stored bounds %d below and %d above the measure, want 162 and 401", slo, shi)
			}
		})
	}
}
