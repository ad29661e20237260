package source

import (
	"testing"

	"github.com/crdguard/crdguard/internal/finding"
)

func TestBlockEnd(t *testing.T) {
	lines := splitLines([]byte(`spec:
  versions:
  - name: v1
    served: true

    # storage
    storage: true
  - name: v2
    served: false
  names:
    kind: Widget
`))
	for _, tc := range []struct{ line, want int }{
		{1, 11}, // spec: everything below it
		{2, 9},  // versions: its items at the same indentation, the blank line and the comment
		{3, 7},  // the v1 item ends before the next item
		{4, 4},  // a scalar
		{8, 9},  // the last item
		{10, 11},
		{11, 11},
		{12, 12}, // past the end
	} {
		if got := blockEnd(lines, tc.line); got != tc.want {
			t.Errorf("blockEnd(%d) = %d, want %d", tc.line, got, tc.want)
		}
	}
}

// A removed property whose child line the diff aligns with a property added in its place is
// shown at the kept line after its block, with Removed set; head findings stay where they are;
// a finding of a deleted file has no head line; a baseline's finding goes through its own diff.
func TestPlace(t *testing.T) {
	old := []byte("spec:\n  properties:\n    name:\n      type: string\n      description: Display name.\n    size:\n      type: integer\n")
	new := []byte("spec:\n  description: A widget.\n  properties:\n    label:\n      type: string\n    size:\n      type: integer\n")
	pr := &Diff{}
	pr.Add(LazyFileDiff("crd.yaml", "crd.yaml", old, new))
	pr.Add(LazyFileDiff("gone.yaml", "", old, nil))
	rel := &Diff{}
	rel.Add(NewFileDiff("crd.yaml", "crd.yaml", append([]byte("# header\n"), old...), new))
	fs := []finding.Finding{
		{Rule: "field-removed", Location: finding.Location{File: "crd.yaml", Line: 3, Side: finding.Base}},
		{Rule: "type-changed", Location: finding.Location{File: "crd.yaml", Line: 7, Side: finding.Head}},
		{Rule: "crd-removed", Location: finding.Location{File: "gone.yaml", Line: 1, Side: finding.Base}},
		{Rule: "field-removed", Baseline: "v1.0.0", Location: finding.Location{File: "crd.yaml", Line: 4, Side: finding.Base}},
		{Rule: "field-removed", Baseline: "cluster", Location: finding.Location{File: "kube://w", Line: 4, Side: finding.Base}},
	}
	Place(fs, map[string]*Diff{"": pr, "v1.0.0": rel})
	want := []*finding.HeadLine{
		{File: "crd.yaml", Line: 6, Removed: true, EndColumn: 10},
		{File: "crd.yaml", Line: 7, EndColumn: 20},
		nil,
		{File: "crd.yaml", Line: 6, Removed: true, EndColumn: 10},
		nil,
	}
	for i, f := range fs {
		got := f.Head
		if (got == nil) != (want[i] == nil) || got != nil && *got != *want[i] {
			t.Errorf("%s at %s:%d: head %+v, want %+v", f.Rule, f.Location.File, f.Location.Line, got, want[i])
		}
	}
}
