package tier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// BenchmarkWriteLatencyDuringFlush: one writer applies single-document
// batches (d=128, sync=always, OS file system) while a Flush turns a
// MemTable of n documents into a warm segment (HNSW M=16,
// efConstruction=100, 2 build threads). Reports the acknowledgement
// latency of the writes made while the flush ran (p50, p99, max), how
// many there were, and the flush time. Writes used to wait for the whole
// flush (one write's latency ≈ the flush); now they wait only for its
// freeze and swap steps.
func BenchmarkWriteLatencyDuringFlush(b *testing.B) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	const d = 128
	b.Run(fmt.Sprintf("docs=%d/dim=%d", n, d), func(b *testing.B) {
		b.ReportAllocs()
		var lat []time.Duration
		var flushTime time.Duration
		for it := 0; it < b.N; it++ {
			b.StopTimer()
			s, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), Dim: d, Sync: wal.SyncAlways, Logger: quietLog, BuildThreads: 2})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			vec := func() []float32 {
				v := make([]float32, d)
				for k := range v {
					v[k] = float32(rng.NormFloat64())
				}
				return v
			}
			for i := 0; i < n; i += 1000 {
				bt := &Batch{}
				for j := i; j < min(n, i+1000); j++ {
					bt.Upsert(Document{ID: fmt.Sprintf("doc-%07d", j), Content: fmt.Sprintf("content of document %d, some words to compress well enough", j), Vector: vec()})
				}
				if _, err := s.Apply(bt); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			done := make(chan error, 1)
			t0 := time.Now()
			go func() { done <- s.Flush(context.Background()) }()
			for i := 0; ; i++ {
				select {
				case err := <-done:
					if err != nil {
						b.Fatal(err)
					}
					flushTime += time.Since(t0)
					goto flushed
				default:
				}
				bt := &Batch{}
				// Half the writes replace documents being flushed.
				id := fmt.Sprintf("doc-%07d", rng.IntN(n))
				if i%2 == 1 {
					id = fmt.Sprintf("new-%07d", i)
				}
				bt.Upsert(Document{ID: id, Content: "written during the flush", Vector: vec()})
				w0 := time.Now()
				if _, err := s.Apply(bt); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(w0))
			}
		flushed:
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		if len(lat) > 0 {
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
		}
		b.ReportMetric(float64(len(lat))/float64(b.N), "writes/flush")
		b.ReportMetric(flushTime.Seconds()/float64(b.N), "flush-s")
	})
}
