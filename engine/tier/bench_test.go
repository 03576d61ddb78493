package tier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
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

// benchStore fills a store on the OS file system with n docs of dim d
// (random vectors, ~100-byte contents) and returns it.
func benchStore(b *testing.B, n, d int, o Options) *Store {
	b.Helper()
	o.FS = vfs.Default
	o.Dir = b.TempDir()
	o.Dim = d
	o.Sync = wal.SyncNone
	o.Logger = quietLog
	s, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < n; i += 1000 {
		bt := &Batch{}
		for j := i; j < min(n, i+1000); j++ {
			v := make([]float32, d)
			for k := range v {
				v[k] = float32(rng.NormFloat64())
			}
			bt.Upsert(Document{ID: fmt.Sprintf("doc-%07d", j), Content: fmt.Sprintf("content of document %d, some words to compress well enough", j), Vector: v})
		}
		if _, err := s.Apply(bt); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkFlush: time to turn a MemTable of n docs (d=128) into a warm
// segment (doc store + HNSW build with M=16, efConstruction=100, 2
// threads), and bytes per vector hot (MemTable arena) vs warm (file).
func BenchmarkFlush(b *testing.B) {
	n := 100000
	if testing.Short() {
		n = 5000
	}
	const d = 128
	b.Run(fmt.Sprintf("docs=%d/dim=%d", n, d), func(b *testing.B) {
		b.ReportAllocs()
		for it := 0; it < b.N; it++ {
			b.StopTimer()
			s := benchStore(b, n, d, Options{BuildThreads: 2})
			b.StartTimer()
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			seg := s.WarmSegments()[0]
			b.ReportMetric(float64(seg.SizeBytes)/float64(n), "warm-B/doc")
			b.ReportMetric(float64(4*d), "hot-vecB/doc")
			s.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkCompact: time to rewrite a warm segment of n docs of which a
// quarter were deleted after the flush (ρ_dead = 0.25 > θ_compact),
// rebuilding the HNSW over the 3n/4 live rows.
func BenchmarkCompact(b *testing.B) {
	n := 100000
	if testing.Short() {
		n = 5000
	}
	const d = 128
	b.Run(fmt.Sprintf("docs=%d/dim=%d", n, d), func(b *testing.B) {
		b.ReportAllocs()
		for it := 0; it < b.N; it++ {
			b.StopTimer()
			s := benchStore(b, n, d, Options{BuildThreads: 2, CompactMaxSegments: 1})
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			bt := &Batch{}
			for j := 0; j < n/4; j++ {
				bt.Delete(fmt.Sprintf("doc-%07d", j*4))
			}
			if _, err := s.Apply(bt); err != nil {
				b.Fatal(err)
			}
			if err := s.Flush(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := s.Compact(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			s.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkSearchTiers: k=10 cross-tier search over a warm segment of n
// docs (d=128, 10% of them deleted after the flush, so the Allow bitmap
// path runs) plus a MemTable of n/10 docs.
func BenchmarkSearchTiers(b *testing.B) {
	const n, d = 10000, 128
	s := benchStore(b, n, d, Options{BuildThreads: 2})
	defer s.Close()
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	del := &Batch{}
	for j := 0; j < n; j += 10 {
		del.Delete(fmt.Sprintf("doc-%07d", j))
	}
	if _, err := s.Apply(del); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	hot := &Batch{}
	for j := 0; j < n/10; j++ {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
		hot.Upsert(Document{ID: fmt.Sprintf("hot-%d", j), Vector: v})
	}
	if _, err := s.Apply(hot); err != nil {
		b.Fatal(err)
	}
	q := make([]float32, d)
	for k := range q {
		q[k] = float32(rng.NormFloat64())
	}
	for _, name := range []string{"filter=none", "filter=half"} {
		var f func(*Document) bool
		if name == "filter=half" {
			f = func(doc *Document) bool { return doc.ID[len(doc.ID)-1]%2 == 0 }
		}
		b.Run(fmt.Sprintf("warm=%d/hot=%d/dim=%d/%s", n, n/10, d, name), func(b *testing.B) {
			b.ReportAllocs()
			sn := s.Snapshot()
			defer sn.Close()
			for i := 0; i < b.N; i++ {
				if _, err := sn.SearchVector(q, 10, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
