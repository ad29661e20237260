package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A run of crdguard is short and allocates much that dies young (candidate objects, CEL
// values): on one pair the collector ran for about a tenth of the CPU time at the default GOGC
// of 100. While the live heap is small, collecting when it has grown fivefold costs a few tens
// of megabytes and saves most of that; once it passes smallHeap, the default comes back: a
// hard pair's live heap of 10-15 MiB let the heap grow to 70 MiB at 400 (gateway-api
// httproutes v0.7.0 → v0.8.0: 107 MiB peak RSS with the default back above 32 MiB, 83 MiB
// above 8 MiB, the same CPU time in paired runs on a loaded 2-core machine). A large release is bounded the other way: the collector works harder as the heap
// nears memoryLimit, so that the peak stays under 500 MB where the default let it reach twice
// the live heap (Kyverno v1.12.0 → v1.13.0 in git mode: 925 MB before, about 460 MB with the
// limit, the collector taking up to 15% of the time). Where the live heap leaves the limit too
// little room, the collector runs almost without pause, mostly to no avail (Envoy Gateway
// v1.7.0 → v1.8.0: a third of the time, 1.6 times as slow, and over the limit all the same):
// once it has taken more than gcShareLimit of the time, the limit is lifted. GOGC and
// GOMEMLIMIT, when set, are the user's choice.
const (
	smallHeapGCPercent = 400
	smallHeap          = 8 << 20
	// limitLiftHeap is the live heap above which the limit may be lifted (below it, collecting
	// is cheap whatever its share).
	limitLiftHeap = 32 << 20
	memoryLimit   = 400 << 20
	gcShareLimit  = 0.25
)

// collector is the tuning above, as it stands; its setters are the runtime's (a test's fakes).
type collector struct {
	// gcPercent is the GOGC to restore once the heap is not small; -1 when restored, or when
	// GOGC is the user's.
	gcPercent int
	// limited says memoryLimit is in force.
	limited        bool
	setGCPercent   func(int) int
	setMemoryLimit func(int64) int64
}

// tuneGC sets the collector as above and watches the live heap after every collection.
func tuneGC() {
	c := &collector{gcPercent: -1, setGCPercent: debug.SetGCPercent, setMemoryLimit: debug.SetMemoryLimit}
	if os.Getenv("GOMEMLIMIT") == "" {
		c.setMemoryLimit(memoryLimit)
		c.limited = true
	}
	if os.Getenv("GOGC") == "" {
		c.gcPercent = c.setGCPercent(smallHeapGCPercent)
	}
	if c.watching() {
		watchHeap(c)
	}
}

// after adjusts the collector to the live heap a collection left and the share of the time
// the collector has taken so far.
func (c *collector) after(live uint64, gcShare float64) {
	if c.gcPercent >= 0 && live > smallHeap {
		c.setGCPercent(c.gcPercent)
		c.gcPercent = -1
	}
	if c.limited && live > limitLiftHeap && gcShare > gcShareLimit {
		c.setMemoryLimit(math.MaxInt64)
		c.limited = false
	}
}

// watching reports whether a collection can still change the tuning.
func (c *collector) watching() bool { return c.gcPercent >= 0 || c.limited }

// watchHeap calls c.after with the live heap after each collection while c is watching.
func watchHeap(c *collector) {
	// The cleanup of an object dropped at once runs after the next collection. The object is
	// larger than the tiny allocator's blocks, whose cleanups may never run.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(c *collector) {
		c.after(heapAndGC())
		if c.watching() {
			watchHeap(c)
		}
	}, c)
}

// heapAndGC are the heap the last collection found live, in bytes, and the share of the CPU
// time available to the process (GOMAXPROCS over the time it ran) that collecting took; the
// most there is when the runtime does not say, so that the defaults come back.
func heapAndGC() (live uint64, gcShare float64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindFloat64 || s[2].Value.Kind() != metrics.KindFloat64 || s[2].Value.Float64() <= 0 {
		return math.MaxUint64, 1
	}
	return s[0].Value.Uint64(), s[1].Value.Float64() / s[2].Value.Float64()
}
