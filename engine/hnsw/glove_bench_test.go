package hnsw

import (
	"fmt"
	"os"
	"path/filepath"
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
)

// gloveIndex builds (once per process) the bench harness's quick GloVe
// configuration: the first 20,000 base vectors of glove-6b-100-angular
// (d=100, inner product) at M=32, efConstruction=200, and its first 500
// queries with brute-force top-10. With STRATA_GLOVE_INDEX set, the built
// index is saved to / reloaded from that file to skip rebuilds.
func gloveIndex(b *testing.B) (*Index, [][]float32, []gt) {
	gloveOnce.Do(func() {
		cache, err := datasets.CacheDir()
		if err != nil {
			gloveErr = err
			return
		}
		dir := filepath.Join(cache, datasets.GloVe6B100)
		base, err := datasets.ReadFvecs(filepath.Join(dir, datasets.BaseFvecsName))
		if err != nil {
			gloveErr = err
			return
		}
		qs, err := datasets.ReadFvecs(filepath.Join(dir, datasets.QueryFvecsName))
		if err != nil {
			gloveErr = err
			return
		}
		const n, nq = 20000, 500
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
			for i := 0; i < n; i++ {
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
// queries on the 20k quick subset (IP, M=32, efc=200); one op = one query.
// path=pool is the default layer-0 walk (linearPool), path=heap the
// two-heap searchLayer it replaces (SearchParams.forceHeap).
func BenchmarkSearchGloVe(b *testing.B) {
	for _, ef := range []int{10, 16, 32, 64, 128} {
		for _, path := range []string{"pool", "heap"} {
			b.Run(fmt.Sprintf("dataset=glove-20k/M=32/ef=%d/path=%s", ef, path), func(b *testing.B) {
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
