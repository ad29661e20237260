package cli

import (
	"math"
	"slices"
	"testing"
)

// TestCollectorAfter follows the tuning through the collections of a run: the memory limit goes
// once collecting has taken more than a quarter of the time with a large live heap, and a limit
// the user set is left alone.
func TestCollectorAfter(t *testing.T) {
	type gc struct {
		live  uint64
		share float64
	}
	for _, tc := range []struct {
		name     string
		limited  bool
		gcs      []gc
		want     []string
		watching bool
	}{
		{"a short run", true, []gc{{2 << 20, 0.01}, {6 << 20, 0.3}}, nil, true},
		{"a hard pair: the limit kept", true, []gc{{4 << 20, 0.01}, {13 << 20, 0.3}}, nil, true},
		{"a release", true, []gc{{20 << 20, 0.02}, {40 << 20, 0.05}, {300 << 20, 0.15}}, nil, true},
		{"a release the limit leaves too little room", true, []gc{{40 << 20, 0.05}, {280 << 20, 0.26}}, []string{"no memory limit"}, false},
		{"at a quarter of the time exactly", true, []gc{{300 << 20, gcShareLimit}}, nil, true},
		{"the user's GOMEMLIMIT", false, []gc{{40 << 20, 0.1}, {900 << 20, 0.5}}, nil, false},
		{"unknown heap", true, []gc{{math.MaxUint64, 1}}, []string{"no memory limit"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			c := &collector{limited: tc.limited,
				setMemoryLimit: func(l int64) int64 {
					if l != math.MaxInt64 {
						t.Errorf("memory limit set to %d", l)
					}
					got = append(got, "no memory limit")
					return memoryLimit
				}}
			for _, g := range tc.gcs {
				c.after(g.live, g.share)
			}
			if !slices.Equal(got, tc.want) || c.watching() != tc.watching {
				t.Errorf("calls %q (watching %v), want %q (%v)", got, c.watching(), tc.want, tc.watching)
			}
		})
	}
}
