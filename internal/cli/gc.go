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
// comes back. A large release is bounded the other way: the collector works harder as the heap
// nears memoryLimit, so that the peak stays under 500 MB where the default let it reach twice
// the live heap (Kyverno v1.12.0 → v1.13.0 in git mode: 925 MB before, about 460 MB with the
// limit, a quarter slower). GOGC and GOMEMLIMIT, when set, are the user's choice instead.
const (
	smallHeapGCPercent = 400
	smallHeap          = 32 << 20
	memoryLimit        = 400 << 20
)

// tuneGC sets the collector as above.
func tuneGC() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOGC") == "" {
		watchHeap(debug.SetGCPercent(smallHeapGCPercent))
	}
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
