package cli

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A large release is bounded: the collector works harder as the heap nears memoryLimit, so that
// the peak stays under 400 MB (the limit plus the binary's mapped pages) where the default let it
// reach twice the live heap (Kyverno v1.12.0 → v1.13.0 in git mode: 925 MB before, about 460 MB
// with a 400 MiB limit, the collector taking up to 15% of the time). At 320 MiB, kyverno v1.18.0
// → v1.19.0 peaks at 365 MiB instead of 445 and prometheus-operator v0.92.0 → v0.93.0 at 365
// instead of 433, for 6–8% more CPU time (live heaps of 160–190 MB; whole-process paired runs,
// 3 each, on the 2-core machine); releases whose live heap stays well under it pay nothing. Where the live heap leaves the limit too little room, the collector
// runs almost without pause, mostly to no avail (Envoy Gateway v1.7.0 → v1.8.0: a third of the
// time, 1.6 times as slow, and over the limit all the same): once it has taken more than
// gcShareLimit of the time, the limit is lifted. A short run collects at the default pace:
// letting its heap grow fivefold while it was small (GOGC 400 under 8 MiB live, as before) saved
// no CPU time on the 332 shared pairs (74.2 against 73.2 s in all, one run each, alternating),
// since every page a growing heap touches first costs a page fault, and it cost gateway-api
// httproutes v0.7.0 → v0.8.0 10–14 MiB of peak RSS (75 against 85–89 MiB, 12–16 paired runs,
// loaded 2-core machine). GOGC and GOMEMLIMIT, when set, are the user's choice.
const (
	// limitLiftHeap is the live heap above which the limit may be lifted (below it, collecting
	// is cheap whatever its share).
	limitLiftHeap = 32 << 20
	memoryLimit   = 320 << 20
	gcShareLimit  = 0.25
)

// collector is the tuning above, as it stands; its setter is the runtime's (a test's fake).
type collector struct {
	// limited says memoryLimit is in force.
	limited        bool
	setMemoryLimit func(int64) int64
}

// tuneGC sets the memory limit, unless the user set one, and watches the live heap after every
// collection.
func tuneGC() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	c := &collector{limited: true, setMemoryLimit: debug.SetMemoryLimit}
	c.setMemoryLimit(memoryLimit)
	watchHeap(c)
}

// after lifts the limit when the live heap a collection left is large and collecting has taken
// more than its share of the time so far.
func (c *collector) after(live uint64, gcShare float64) {
	if c.limited && live > limitLiftHeap && gcShare > gcShareLimit {
		c.setMemoryLimit(math.MaxInt64)
		c.limited = false
	}
}

// watching reports whether a collection can still change the tuning.
func (c *collector) watching() bool { return c.limited }

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
// most there is when the runtime does not say, so that the limit is lifted.
func heapAndGC() (live uint64, gcShare float64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindFloat64 || s[2].Value.Kind() != metrics.KindFloat64 || s[2].Value.Float64() <= 0 {
		return math.MaxUint64, 1
	}
	return s[0].Value.Uint64(), s[1].Value.Float64() / s[2].Value.Float64()
}
