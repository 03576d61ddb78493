package tier

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/vfs"
)

// BenchmarkApply measures store write throughput (one document of 1 KiB
// content + a 128-d vector per batch) and acknowledgement latency on the
// real file system, per sync policy and writer count.
func BenchmarkApply(b *testing.B) {
	const dim = 128
	content := string(make([]byte, 1024))
	for _, pol := range []wal.SyncPolicy{wal.SyncAlways, wal.SyncInterval, wal.SyncNone} {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("sync=%s/writers=%d", pol, writers), func(b *testing.B) {
				s, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), Dim: dim, Sync: pol, Logger: quietLog})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				vec := make([]float32, dim)
				b.SetBytes(int64(len(content) + 4*dim))
				b.ReportAllocs()
				lat := make([][]time.Duration, writers)
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
						for i := 0; i < n; i++ {
							bt := &Batch{}
							bt.Upsert(Document{ID: fmt.Sprintf("w%d-%d", g, i%1000), Content: content, Vector: vec})
							t0 := time.Now()
							if _, err := s.Apply(bt); err != nil {
								b.Error(err)
								return
							}
							lat[g] = append(lat[g], time.Since(t0))
						}
					}(g, n)
				}
				wg.Wait()
				b.StopTimer()
				var all []time.Duration
				for _, l := range lat {
					all = append(all, l...)
				}
				sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
				if len(all) > 0 {
					b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
			})
		}
	}
}

// BenchmarkMemTableSearch measures brute-force search over n live
// versions (plus as many dead ones) at d=128.
func BenchmarkMemTableSearch(b *testing.B) {
	const dim = 128
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("n=%d/dim=%d/k=10", n, dim), func(b *testing.B) {
			s, err := Open(Options{FS: vfs.NewCrashableMem(), Dir: "/db", Dim: dim, Sync: wal.SyncNone, Logger: quietLog})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			for round := 0; round < 2; round++ { // second round kills the first versions
				for i := 0; i < n; i += 100 {
					bt := &Batch{}
					for j := i; j < i+100 && j < n; j++ {
						v := make([]float32, dim)
						for k := range v {
							v[k] = float32(rng.NormFloat64())
						}
						bt.Upsert(Document{ID: fmt.Sprint(j), Vector: v})
					}
					if _, err := s.Apply(bt); err != nil {
						b.Fatal(err)
					}
				}
			}
			q := make([]float32, dim)
			for k := range q {
				q[k] = float32(rng.NormFloat64())
			}
			sn := s.Snapshot()
			b.SetBytes(int64(2 * n * dim * 4))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := sn.SearchVector(q, 10, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
