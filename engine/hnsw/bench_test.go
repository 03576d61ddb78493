package hnsw

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/internal/base"
)

var (
	benchMu  sync.Mutex
	benchIxs = map[Storage]*Index{}
)

func benchIndex(b *testing.B) (*Index, *useSet) { return benchIndexS(b, Float32) }

func benchIndexS(b *testing.B, s Storage) (*Index, *useSet) {
	set := loadUSE(b, "vaswani")
	benchMu.Lock()
	defer benchMu.Unlock()
	if ix := benchIxs[s]; ix != nil {
		return ix, set
	}
	ix := build(b, Options{Dim: set.d, Metric: Cosine, M: 16, EfConstruction: 200, Seed: 42, Storage: s}, set.docs)
	benchIxs[s] = ix
	return ix, set
}

// BenchmarkSearch: single-threaded top-10 search over the 93 Vaswani
// queries; one op = one query. recall@10 is reported beside ns/op.
func BenchmarkSearch(b *testing.B) {
	set := loadUSE(b, "vaswani")
	qs := rows(set.queries, set.d)
	truth := make([]gt, len(qs))
	for i, q := range qs {
		truth[i] = bruteForce(Cosine, set.docs, set.d, q, 10, nil)
	}
	for _, st := range []Storage{Float32, SQ8} {
		for _, ef := range []int{16, 32, 64, 128} {
			b.Run(fmt.Sprintf("dataset=vaswani/M=16/ef=%d/storage=%v", ef, st), func(b *testing.B) {
				ix, _ := benchIndexS(b, st)
				p := SearchParams{EfSearch: ef}
				r := meanRecall(b, Cosine, set.docs, set.d, qs, truth, 10, func(q []float32) []Result {
					res, _ := ix.Search(q, 10, p)
					return res
				})
				dst := make([]Result, 0, 10)
				b.SetBytes(int64(4 * set.d))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					dst, _ = ix.SearchInto(dst, qs[i%len(qs)], 10, p)
				}
				b.ReportMetric(r, "recall@10")
			})
		}
	}
}

// BenchmarkBuild: building over the first 4000 and over all 11,429
// Vaswani vectors (cosine, M=16, efConstruction=200) with AddBatch on 1
// and 2 goroutines; one op = one full build.
func BenchmarkBuild(b *testing.B) {
	set := loadUSE(b, "vaswani")
	type cfg struct {
		name    string
		n       int
		threads int
	}
	full := len(set.docs) / set.d
	for _, c := range []cfg{{"vaswani-4k", 4000, 1}, {"vaswani-4k", 4000, 2}, {"vaswani", full, 1}, {"vaswani", full, 2}} {
		n, threads := c.n, c.threads
		base := set.docs[:n*set.d]
		labels := make([]uint64, n)
		b.Run(fmt.Sprintf("dataset=%s/M=16/efc=200/threads=%d", c.name, threads), func(b *testing.B) {
			b.SetBytes(int64(len(base) * 4))
			b.ReportAllocs()
			c0 := procCPU()
			for i := 0; i < b.N; i++ {
				ix, _ := New(Options{Dim: set.d, Metric: Cosine, M: 16, EfConstruction: 200, InitialCapacity: n})
				if _, err := ix.AddBatch(labels, base, threads); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
			// Process CPU seconds per build (Linux): on a shared machine
			// this shows the parallel overhead that wall time hides.
			b.ReportMetric((procCPU()-c0)/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkFilteredPlanner measures the two filtered-search paths at
// several allowed fractions of Vaswani (k=10, ef=64); it is what the
// planner constants exactCostRatio / exactMinCount are set from.
func BenchmarkFilteredPlanner(b *testing.B) {
	ix, set := benchIndex(b)
	qs := rows(set.queries, set.d)
	n := len(set.docs) / set.d
	for _, frac := range []float64{0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3} {
		rng := rand.New(rand.NewPCG(uint64(frac*1e6), 3))
		bm := roaring.New()
		for _, i := range rng.Perm(n)[:max(1, int(frac*float64(n)))] {
			bm.Add(uint32(i))
		}
		for _, path := range []string{"graph", "exact"} {
			b.Run(fmt.Sprintf("allowed=%g/path=%s", frac, path), func(b *testing.B) {
				p := SearchParams{EfSearch: 64, Allow: bm, forceGraph: path == "graph", noFallback: true}
				if path == "exact" {
					p.forceGraph = false
				}
				dst := make([]Result, 0, 10)
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if path == "exact" {
						ix.mu.RLock()
						ctx := ix.getCtx()
						q := append(ctx.q[:0], qs[i%len(qs)]...)
						base.UnitVector(q, q)
						dst = ix.exact(ctx, dst[:0], q, 10, bm)
						ix.putCtx(ctx)
						ix.mu.RUnlock()
					} else {
						dst, _ = ix.SearchInto(dst, qs[i%len(qs)], 10, p)
					}
				}
			})
		}
	}
}

// TestMemoryPerVector checks MemoryBytes against the doc.go formula on
// a real build and logs the measured bytes per vector.
func TestMemoryPerVector(t *testing.T) {
	b := useIndex(t, "vaswani")
	used, alloc := b.ix.MemoryBytes()
	n := int64(b.ix.Len())
	d, m := int64(b.set.d), int64(16)
	fixed := n*(4*d+4*(1+2*m)+1+4+8) + 8*((n+31)/32)
	upper := used - fixed
	expUpper := float64(n) / float64(m-1) * float64(4*(1+m))
	t.Logf("vaswani n=%d d=%d M=16: %.1f bytes/vector used (%.1f allocated); upper layers %.2f B/vector measured vs %.2f expected",
		n, d, float64(used)/float64(n), float64(alloc)/float64(n), float64(upper)/float64(n), expUpper/float64(n))
	if r := float64(upper) / expUpper; r < 0.8 || r > 1.25 {
		t.Errorf("upper-layer memory %d is %.2f× the expected %.0f", upper, r, expUpper)
	}
}
