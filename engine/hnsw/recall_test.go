package hnsw

import (
	"sync"
	"testing"
	"time"
)

type builtUSE struct {
	set   *useSet
	ix    *Index
	truth []gt // exact top-10 per query, cosine
}

var (
	builtMu sync.Mutex
	builtM  = map[string]*builtUSE{}
)

// useIndex builds (once per test binary) the M=16, efConstruction=200
// cosine index over a USE-512 collection, with exact top-10 truth.
func useIndex(t *testing.T, name string) *builtUSE {
	t.Helper()
	if testing.Short() {
		t.Skip("real-data build skipped in -short mode")
	}
	set := loadUSE(t, name)
	builtMu.Lock()
	defer builtMu.Unlock()
	if b, ok := builtM[name]; ok {
		return b
	}
	start := time.Now()
	ix := build(t, Options{Dim: set.d, Metric: Cosine, M: 16, EfConstruction: 200, Seed: 42}, set.docs)
	t.Logf("%s: built %d×%d in %v", name, len(set.docs)/set.d, set.d, time.Since(start))
	qs := rows(set.queries, set.d)
	truth := make([]gt, len(qs))
	for i, q := range qs {
		truth[i] = bruteForce(Cosine, set.docs, set.d, q, 10, nil)
	}
	b := &builtUSE{set: set, ix: ix, truth: truth}
	builtM[name] = b
	return b
}

// TestRecallUSE: recall@10 ≥ 0.99 at M=16, efConstruction=200,
// efSearch=128 against brute force on the real USE-512 vectors (issue 4).
func TestRecallUSE(t *testing.T) {
	for _, name := range []string{"vaswani", "cranfield"} {
		t.Run(name, func(t *testing.T) {
			b := useIndex(t, name)
			qs := rows(b.set.queries, b.set.d)
			for _, ef := range []int{32, 64, 128} {
				r := meanRecall(t, Cosine, b.set.docs, b.set.d, qs, b.truth, 10, func(q []float32) []Result {
					res, err := b.ix.Search(q, 10, SearchParams{EfSearch: ef})
					if err != nil {
						t.Fatal(err)
					}
					return res
				})
				t.Logf("%s ef=%d recall@10=%.4f", name, ef, r)
				if ef == 128 && r < 0.99 {
					t.Errorf("%s: recall@10 %.4f < 0.99 at efSearch=128", name, r)
				}
			}
		})
	}
}
