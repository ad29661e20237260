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
// of megabytes and saves most of that; once it is large (a release of many CRDs), the default
// comes back, so the peak stays what it was.
const (
	smallHeapGCPercent = 400
	smallHeap          = 32 << 20
)

// tuneGC collects less often while the live heap is under smallHeap, unless the user set GOGC or
// GOMEMLIMIT.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	old := debug.SetGCPercent(smallHeapGCPercent)
	watchHeap(old)
}

// watchHeap looks at the live heap after each collection, and restores the GOGC it was given
// once the heap is no longer small.
func watchHeap(gcPercent int) {
	// The cleanup of an object dropped at once runs after the next collection. The object is
	// larger than the tiny allocator's blocks, whose cleanups may never run.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(gcPercent int) {
		if liveHeap() > smallHeap {
			debug.SetGCPercent(gcPercent)
			return
		}
		watchHeap(gcPercent)
	}, gcPercent)
}

// liveHeap is the heap the last collection found live, in bytes; the most there is when the
// runtime does not say, so that the default comes back.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxUint64
	}
	return s[0].Value.Uint64()
}
