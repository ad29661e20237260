package celproof

import (
	"reflect"
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

// TestRename checks that a refused value is renamed wherever it stands at the same place in the
// object's lists, and nowhere else.
func TestRename(t *testing.T) {
	doc := func(ip string) map[string]any {
		return map[string]any{"spec": map[string]any{
			"name": "a",
			"addresses": []any{
				map[string]any{"type": "IPAddress", "value": ip},
				map[string]any{"type": "IPAddress", "value": ip},
				map[string]any{"type": "Hostname", "value": "b"},
			},
		}}
	}
	obj := doc("a")
	if !rename(obj, crd.Path{"spec", "addresses", 1, "value"}, "10.0.0.1") {
		t.Fatal("nothing renamed")
	}
	if want := doc("10.0.0.1"); !reflect.DeepEqual(obj, want) {
		t.Errorf("got %v, want %v", obj, want)
	}
}
