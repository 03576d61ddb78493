package ivfpq

import (
	"fmt"
	"sync"
	"testing"
)

// vaswaniIndexes caches the benchmark indexes (training is not measured).
var (
	benchMu  sync.Mutex
	benchIxs = map[string]*Index{}
	benchGT  [][]uint32
)

func benchIndex(b *testing.B, nbits, m int) (*Index, [][]float32) {
	return benchIndexOPQ(b, nbits, m, false)
}

// benchIndexOPQ is benchIndex with or without the OPQ rotation.
func benchIndexOPQ(b *testing.B, nbits, m int, opq bool) (*Index, [][]float32) {
	base, queries := loadVaswani(b)
	key := fmt.Sprintf("%d/%d/%v", nbits, m, opq)
	benchMu.Lock()
	defer benchMu.Unlock()
	if benchGT == nil {
		benchGT, _ = exactIP(base, queries, 10)
	}
	ix := benchIxs[key]
	if ix == nil {
		ix = buildIndex(b, Options{Dim: base.D, Metric: IP, Nlist: 64, M: m, Nbits: nbits, Seed: 1, OPQ: opq}, base.Data)
		ix.SetRefineVectors(base.Data)
		benchIxs[key] = ix
	}
	qs := make([][]float32, queries.N)
	for i := range qs {
		qs[i] = queries.Row(i)
	}
	return ix, qs
}

// BenchmarkSearch measures single-query search latency on Vaswani USE-512
// (IP, nlist = 64), one query per op, single goroutine, and reports
// recall@10 (id intersection with brute force, as the FAISS script
// testdata/faiss_compare.py computes it). Bytes per op are the PQ code
// bytes of the probed fraction (approximate: nprobe/nlist of the
// collection).
func BenchmarkSearch(b *testing.B) {
	for _, c := range []struct{ nbits, m, kf int }{{4, 128, 10}, {8, 64, 4}} {
		for _, nprobe := range []int{4, 8, 16, 32} {
			for _, refine := range []bool{false, true} {
				name := fmt.Sprintf("dataset=vaswani/nbits=%d/nprobe=%d/refine=%v", c.nbits, nprobe, refine)
				b.Run(name, func(b *testing.B) {
					ix, qs := benchIndex(b, c.nbits, c.m)
					p := SearchParams{Nprobe: nprobe}
					if refine {
						p.KFactor = c.kf
					}
					var got [][]Result
					for _, q := range qs {
						r, err := ix.Search(q, 10, p)
						if err != nil {
							b.Fatal(err)
						}
						got = append(got, r)
					}
					rec := recallAt(got, benchGT, 10)
					b.SetBytes(int64(float64(ix.Len()) * float64(nprobe) / 64 * ix.codeBytesPerVector()))
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if _, err := ix.Search(qs[i%len(qs)], 10, p); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(rec, "recall@10")
				})
			}
		}
	}
}

// BenchmarkSearchOPQ is BenchmarkSearch at the acceptance settings
// (nprobe 16, refined) with and without the OPQ rotation: the cost of
// rotating the query (512² multiply-adds) and the recall it buys.
func BenchmarkSearchOPQ(b *testing.B) {
	for _, c := range []struct{ nbits, m, kf int }{{8, 64, 4}, {4, 128, 10}} {
		for _, opq := range []bool{false, true} {
			b.Run(fmt.Sprintf("dataset=vaswani/nbits=%d/nprobe=16/refine=true/opq=%v", c.nbits, opq), func(b *testing.B) {
				ix, qs := benchIndexOPQ(b, c.nbits, c.m, opq)
				p := SearchParams{Nprobe: 16, KFactor: c.kf}
				var got [][]Result
				for _, q := range qs {
					r, err := ix.Search(q, 10, p)
					if err != nil {
						b.Fatal(err)
					}
					got = append(got, r)
				}
				rec := recallAt(got, benchGT, 10)
				b.SetBytes(int64(float64(ix.Len()) * 16 / 64 * ix.codeBytesPerVector()))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := ix.Search(qs[i%len(qs)], 10, p); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(rec, "recall@10")
			})
		}
	}
}

// BenchmarkKMeans measures one Lloyd training (PQ sub-space shape: d = 8,
// k = 256, n = 11,429, 5 iterations) and the coarse shape (d = 512,
// k = 64).
func BenchmarkKMeans(b *testing.B) {
	for _, c := range []struct{ d, k, n int }{{8, 256, 11429}, {512, 64, 11429}} {
		b.Run(fmt.Sprintf("d=%d/k=%d/n=%d", c.d, c.k, c.n), func(b *testing.B) {
			x := randVecs(1, c.n, c.d, false)
			b.SetBytes(int64(len(x) * 4 * 5))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := (KMeans{K: c.k, Iters: 5, Seed: 1, Threads: 1}).Train(x, c.d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTrain measures Train + Add on Vaswani USE-512 (IP, nlist = 64)
// on one goroutine, the FAISS script's setting (omp threads = 1). Use
// -benchtime 1x: one op is a full build.
func BenchmarkTrain(b *testing.B) {
	base, _ := loadVaswani(b)
	for _, c := range []struct{ nbits, m int }{{4, 128}, {8, 64}} {
		b.Run(fmt.Sprintf("dataset=vaswani/nbits=%d/M=%d", c.nbits, c.m), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ix, err := New(Options{Dim: base.D, Metric: IP, Nlist: 64, M: c.m, Nbits: c.nbits, Seed: 1, Threads: 1})
				if err != nil {
					b.Fatal(err)
				}
				if err := ix.Train(base.Data); err != nil {
					b.Fatal(err)
				}
				if _, err := ix.Add(nil, base.Data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTrainOPQ is BenchmarkTrain (one goroutine, Train + Add) with
// and without the OPQ rotation (default 10 rounds). Use -benchtime 1x.
func BenchmarkTrainOPQ(b *testing.B) {
	base, _ := loadVaswani(b)
	for _, c := range []struct{ nbits, m int }{{8, 64}, {4, 128}} {
		for _, opq := range []bool{false, true} {
			b.Run(fmt.Sprintf("dataset=vaswani/nbits=%d/M=%d/opq=%v", c.nbits, c.m, opq), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					ix, err := New(Options{Dim: base.D, Metric: IP, Nlist: 64, M: c.m, Nbits: c.nbits, Seed: 1, Threads: 1, OPQ: opq})
					if err != nil {
						b.Fatal(err)
					}
					if err := ix.Train(base.Data); err != nil {
						b.Fatal(err)
					}
					if _, err := ix.Add(nil, base.Data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSearchL2Residual measures L2 search by residual with and
// without the precomputed tables (synthetic Gaussian data, n = 20,000,
// d = 128, nlist = 128, M = 32, one query per op, no refine): tables=on
// builds each probed list's LUT as one asm.AddF32, tables=off computes
// the LUT of q − y_l per list.
func BenchmarkSearchL2Residual(b *testing.B) {
	const n, d = 20000, 128
	x := randVecs(7, n, d, false)
	qs := randVecs(8, 200, d, false)
	for _, nbits := range []int{8, 4} {
		for _, tables := range []bool{true, false} {
			o := Options{Dim: d, Metric: L2, Nlist: 128, M: 32, Nbits: nbits, Seed: 1}
			if !tables {
				o.MaxPrecomputedTableBytes = -1
			}
			var ix *Index
			for _, nprobe := range []int{4, 16} {
				b.Run(fmt.Sprintf("nbits=%d/nprobe=%d/tables=%v", nbits, nprobe, tables), func(b *testing.B) {
					if ix == nil {
						ix = buildIndex(b, o, x)
					}
					p := SearchParams{Nprobe: nprobe}
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						if _, err := ix.Search(qs[(i%200)*d:(i%200+1)*d], 10, p); err != nil {
							b.Fatal(err)
						}
						i++
					}
				})
			}
		}
	}
}
