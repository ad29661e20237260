package celproof

import (
	"testing"

	"github.com/crdguard/crdguard/internal/crd"
)

// TestKeptAt checks what a repair must keep of a value, relative to the witness's node
// spec.rules[*].filters whose rules read each filter's type.
func TestKeptAt(t *testing.T) {
	steps := []Step{{Property, "spec"}, {Property, "rules"}, {Kind: Items}, {Property, "filters"}}
	read := &refNode{}
	read.element().field("type").value = true
	for _, tc := range []struct {
		name string
		p    crd.Path
		ok   bool
		keep string // the one field kept, if any
	}{
		{"beside the node", crd.Path{"spec", "hostnames", 0}, true, ""},
		{"an item of the node", crd.Path{"spec", "rules", 0, "filters", 1}, true, "type"},
		{"above the node, on the way to it", crd.Path{"spec", "rules", 0}, true, "filters"},
		{"the list above the node", crd.Path{"spec", "rules"}, false, ""},
		{"the node itself", crd.Path{"spec", "rules", 0, "filters"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, ok := keptAt(read, steps, tc.p)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			var got string
			if kept != nil {
				for name := range kept.fields {
					got += name
				}
			}
			if got != tc.keep {
				t.Errorf("kept %q, want %q", got, tc.keep)
			}
		})
	}
}
