package asm

import (
	"time"
)

// BandwidthDefaultBytes is the buffer size Bandwidth uses when given
// bytes ≤ 0: 256 MiB, well beyond any last-level cache.
const BandwidthDefaultBytes = 256 << 20

// Bandwidth measures single-thread sequential read bandwidth in GB/s
// (10⁹ bytes per second). It allocates a float32 buffer of the given size
// in bytes (≤ 0 selects BandwidthDefaultBytes; sizes below 1 MiB are raised
// to 1 MiB), writes it once so every page is mapped, then streams it with
// SumFloat32 at the current dispatch level four times and returns the best
// pass. The result is the physical limit for memory-bound scans; benchmarks
// report kernel throughput as a fraction of it. Use a size several times
// the last-level cache, or the figure measures the cache instead. The call
// takes about five passes over the buffer and allocates it (garbage after
// return).
func Bandwidth(bytes int) (GBps float64) {
	if bytes <= 0 {
		bytes = BandwidthDefaultBytes
	}
	bytes = max(bytes, 1<<20)
	x := make([]float32, bytes/4)
	for i := range x {
		x[i] = float32(i & 7)
	}
	best := time.Duration(1<<63 - 1)
	var sink float32
	for pass := 0; pass < 4; pass++ {
		t0 := time.Now()
		sink += SumFloat32(x)
		best = min(best, time.Since(t0))
	}
	bandwidthSink = sink
	return float64(len(x)*4) / best.Seconds() / 1e9
}

// bandwidthSink keeps the sums live so the passes cannot be elided.
var bandwidthSink float32
