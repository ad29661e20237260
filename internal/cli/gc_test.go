package cli

import (
	"math"
	"slices"
	"testing"
)

// TestCollectorAfter follows the tuning through the live heaps of a run: GOGC comes back once
// the heap is not small, the memory limit goes once the live heap nears it, and what the user
// set is left alone.
func TestCollectorAfter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gcPercent int
		limited   bool
		lives     []uint64
		want      []string
		watching  bool
	}{
		{"a short run", 100, true, []uint64{4 << 20, 20 << 20}, nil, true},
		{"a release", 100, true, []uint64{20 << 20, 40 << 20, 300 << 20}, []string{"GOGC 100"}, true},
		{"a release larger than the limit", 100, true, []uint64{40 << 20, 380 << 20}, []string{"GOGC 100", "no memory limit"}, false},
		{"at the limit's nine tenths exactly", -1, true, []uint64{memoryLimit * 9 / 10}, nil, true},
		{"the user's GOGC", -1, true, []uint64{40 << 20}, nil, true},
		{"the user's GOMEMLIMIT", 100, false, []uint64{40 << 20, 900 << 20}, []string{"GOGC 100"}, false},
		{"unknown heap", 100, true, []uint64{math.MaxUint64}, []string{"GOGC 100", "no memory limit"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			c := &collector{gcPercent: tc.gcPercent, limited: tc.limited,
				setGCPercent: func(p int) int {
					got = append(got, "GOGC "+map[int]string{100: "100"}[p])
					return smallHeapGCPercent
				},
				setMemoryLimit: func(l int64) int64 {
					if l != math.MaxInt64 {
						t.Errorf("memory limit set to %d", l)
					}
					got = append(got, "no memory limit")
					return memoryLimit
				}}
			for _, live := range tc.lives {
				c.after(live)
			}
			if !slices.Equal(got, tc.want) || c.watching() != tc.watching {
				t.Errorf("calls %q (watching %v), want %q (%v)", got, c.watching(), tc.want, tc.watching)
			}
		})
	}
}
