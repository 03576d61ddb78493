package hnsw

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stratasearch/strata/datasets"
)

var (
	gloveOnce sync.Once
	gloveIx   *Index
	gloveQs   [][]float32
	gloveGT   []gt
	gloveErr  error
	gloveDocs []float32
	gloveName string
)

// gloveN is the number of base vectors the GloVe benchmark indexes:
// STRATA_GLOVE_N (0 = the full 331,479-vector base), default 20,000.
func gloveN() int {
	if v := os.Getenv("STRATA_GLOVE_N"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n
		}
	}
	return 20000
}

// gloveIndex builds (once per process) the bench harness's quick GloVe
// configuration: the first 20,000 base vectors of glove-6b-100-angular
// (d=100, inner product) at M=32, efConstruction=200, and its first 500
// queries with brute-force top-10. STRATA_GLOVE_N=n indexes the first n
// base vectors instead, and STRATA_GLOVE_N=0 the whole base with the first
// 2,000 queries and their cached ground truth (make datasets). With
// STRATA_GLOVE_INDEX set, the built index is saved to / reloaded from that
// file to skip rebuilds (the file must match STRATA_GLOVE_N).
func gloveIndex(b *testing.B) (*Index, [][]float32, []gt) {
	gloveOnce.Do(func() {
		cache, err := datasets.CacheDir()
		if err != nil {
			gloveErr = err
			return
		}
		n, nq := gloveN(), 500
		full := n == 0
		var base, qs datasets.Matrix[float32]
		var ann *datasets.ANN
		if full {
			// The whole base with the cached top-100 ground truth of
			// the first 2,000 (randomly ordered) queries.
			ann, err = datasets.LoadANN(cache, datasets.GloVe6B100, 100)
			if err != nil {
				gloveErr = err
				return
			}
			base, qs = ann.Base, ann.Queries
			n, nq = base.N, min(2000, ann.Queries.N)
			gloveName = "glove-full"
		} else {
			dir := filepath.Join(cache, datasets.GloVe6B100)
			base, err = datasets.ReadFvecs(filepath.Join(dir, datasets.BaseFvecsName))
			if err != nil {
				gloveErr = err
				return
			}
			qs, err = datasets.ReadFvecs(filepath.Join(dir, datasets.QueryFvecsName))
			if err != nil {
				gloveErr = err
				return
			}
			n = min(n, base.N)
			gloveName = fmt.Sprintf("glove-%dk", n/1000)
		}
		d := base.D
		docs := base.Data[:n*d]
		gloveDocs = docs
		gloveQs = rows(qs.Data[:nq*d], d)
		if p := os.Getenv("STRATA_GLOVE_INDEX"); p != "" {
			if data, err := os.ReadFile(p); err == nil {
				gloveIx, err = Open(data)
				if err != nil {
					gloveErr = err
					return
				}
			}
		}
		if gloveIx == nil {
			o := Options{Dim: d, Metric: IP, M: 32, EfConstruction: 200, Seed: 42, InitialCapacity: n}
			ix, err := New(o)
			if err != nil {
				gloveErr = err
				return
			}
			if full {
				// AddBatch on GOMAXPROCS threads (ids in order).
				labels := make([]uint64, n)
				for i := range labels {
					labels[i] = uint64(i)
				}
				if _, err := ix.AddBatch(labels, docs, 0); err != nil {
					gloveErr = err
					return
				}
			}
			for i := 0; i < n && !full; i++ {
				if _, err := ix.Add(uint64(i), docs[i*d:(i+1)*d]); err != nil {
					gloveErr = err
					return
				}
			}
			gloveIx = ix
			if p := os.Getenv("STRATA_GLOVE_INDEX"); p != "" {
				f, err := os.Create(p)
				if err == nil {
					gloveIx.WriteTo(f)
					f.Close()
				}
			}
		}
		gloveGT = make([]gt, nq)
		if full {
			// Cached truth: inner products, largest first, as 1 − ip
			// (refDist's IP distance).
			const k = 10
			K := ann.GT.K
			for i := range gloveGT {
				g := gt{ids: make([]uint32, k), dists: make([]float32, k)}
				for j := 0; j < k; j++ {
					g.ids[j] = uint32(ann.GT.IDs.Data[i*K+j])
					g.dists[j] = 1 - ann.GT.Dists.Data[i*K+j]
				}
				gloveGT[i] = g
			}
			return
		}
		for i, q := range gloveQs {
			gloveGT[i] = bruteForce(IP, docs, d, q, 10, nil)
		}
	})
	if gloveErr != nil {
		b.Skipf("glove not available: %v", gloveErr)
	}
	return gloveIx, gloveQs, gloveGT
}

// BenchmarkSearchGloVe: single-threaded top-10 search over 500 GloVe
// queries on the 20k quick subset (IP, M=32, efc=200), or the base size
// STRATA_GLOVE_N sets (see gloveIndex); one op = one query.
// path=pool is the default layer-0 walk (linearPool), path=heap the
// two-heap searchLayer it replaces (SearchParams.forceHeap).
func BenchmarkSearchGloVe(b *testing.B) {
	for _, ef := range []int{10, 16, 32, 64, 128} {
		for _, path := range []string{"pool", "heap"} {
			gloveIndex(b)
			b.Run(fmt.Sprintf("dataset=%s/M=32/ef=%d/path=%s", gloveName, ef, path), func(b *testing.B) {
				ix, qs, truth := gloveIndex(b)
				p := SearchParams{EfSearch: ef, forceHeap: path == "heap"}
				r := meanRecall(b, IP, gloveDocs, 100, qs, truth, 10, func(q []float32) []Result {
					res, _ := ix.Search(q, 10, p)
					return res
				})
				dst := make([]Result, 0, 10)
				b.SetBytes(400)
				b.ReportAllocs()
				b.ResetTimer()
				c0 := procCPU()
				for i := 0; i < b.N; i++ {
					dst, _ = ix.SearchInto(dst, qs[i%len(qs)], 10, p)
				}
				// CPU time per query: robust to other load on a shared machine.
				b.ReportMetric((procCPU()-c0)*1e9/float64(b.N), "cpu-ns/op")
				b.ReportMetric(r, "recall@10")
			})
		}
	}
}
