package wal

import (
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/vfs"
)

// BenchmarkAppend measures appends/s and acknowledgement latency on the
// real file system (b.TempDir) per sync policy and writer count. Each op
// is one 256-byte record; p50/p99 are per-Append wall times.
func BenchmarkAppend(b *testing.B) {
	payload := make([]byte, 256)
	for _, pol := range []SyncPolicy{SyncAlways, SyncInterval, SyncNone} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("sync=%s/writers=%d", pol, writers), func(b *testing.B) {
				o := Options{FS: vfs.Default, Dir: b.TempDir(), Sync: pol,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
				w, err := Open(o, 0, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				lat := make([][]time.Duration, writers)
				b.SetBytes(int64(len(payload) + HeaderSize))
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for g := 0; g < writers; g++ {
					n := b.N / writers
					if g < b.N%writers {
						n++
					}
					wg.Add(1)
					go func(g, n int) {
						defer wg.Done()
						l := make([]time.Duration, 0, n)
						for i := 0; i < n; i++ {
							t0 := time.Now()
							if _, err := w.Append(payload); err != nil {
								b.Error(err)
								return
							}
							l = append(l, time.Since(t0))
						}
						lat[g] = l
					}(g, n)
				}
				wg.Wait()
				b.StopTimer()
				var all []time.Duration
				for _, l := range lat {
					all = append(all, l...)
				}
				if len(all) == 0 {
					return
				}
				sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
				b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			})
		}
	}
}
