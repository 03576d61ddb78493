package hnsw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/datasets"
)

// filteredRecall checks filtered search on ix (built over base) at the
// given allowed fractions: results are allowed, distinct, exactly
// min(k, |allowed|) many, and recall@10 over the allowed subset is ≥
// floor, both with the graph walk forced (test hook) and with the
// planner choosing.
func filteredRecall(t *testing.T, ix *Index, m Metric, base []float32, d int, qs [][]float32, fracs []float64, ef int, floor float64) {
	n := len(base) / d
	for _, frac := range fracs {
		for _, force := range []bool{true, false} {
			t.Run(fmt.Sprintf("allowed=%g/force=%v", frac, force), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(frac*1e6), 17))
				allowed := make([]bool, n)
				bm := roaring.New()
				for _, i := range rng.Perm(n)[:max(1, int(frac*float64(n)))] {
					allowed[i] = true
					bm.Add(uint32(i))
				}
				ok := func(id uint32) bool { return allowed[id] }
				truth := make([]gt, len(qs))
				for i, q := range qs {
					truth[i] = bruteForce(m, base, d, q, 10, ok)
				}
				p := SearchParams{EfSearch: ef, Allow: bm, forceGraph: force, noFallback: force}
				r := meanRecall(t, m, base, d, qs, truth, 10, func(q []float32) []Result {
					res, err := ix.Search(q, 10, p)
					if err != nil {
						t.Fatal(err)
					}
					if want := min(10, int(bm.GetCardinality())); len(res) != want {
						t.Fatalf("%d results, want %d", len(res), want)
					}
					seen := map[uint32]bool{}
					for _, x := range res {
						if !allowed[x.ID] {
							t.Fatalf("disallowed id %d returned", x.ID)
						}
						if seen[x.ID] {
							t.Fatalf("duplicate id %d", x.ID)
						}
						seen[x.ID] = true
					}
					return res
				})
				t.Logf("allowed=%g (%d) force=%v recall@10=%.4f", frac, bm.GetCardinality(), force, r)
				if r < floor {
					t.Errorf("recall@10 %.4f < %.2f", r, floor)
				}
			})
		}
	}
}

func TestFilteredRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	o := Options{Dim: 16, Metric: Cosine, M: 12, EfConstruction: 100, Seed: 3}
	n := 3000
	if testing.Short() {
		n = 1500
	}
	base := clustered(rng, n, o.Dim, 30)
	ix := build(t, o, base)
	qs := rows(clustered(rng, 30, o.Dim, 30), o.Dim)
	filteredRecall(t, ix, o.Metric, base, o.Dim, qs, []float64{0.5, 0.1, 0.01, 0.001}, 128, 0.95)
}

func TestFilteredUSE(t *testing.T) {
	b := useIndex(t, "vaswani")
	filteredRecall(t, b.ix, Cosine, b.set.docs, b.set.d, rows(b.set.queries, b.set.d), []float64{0.5, 0.1, 0.01}, 128, 0.95)
}

// TestFilteredNeverShort: an allow-list whose members are unreachable
// from the walk's neighbourhood still yields min(k, |allowed|) results.
func TestFilteredNeverShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	o := Options{Dim: 8, M: 4, EfConstruction: 8}
	base := randVecs(rng, 400, 8)
	ix := build(t, o, base)
	// Allow 15 ids and delete 5 of them.
	bm := roaring.New()
	for _, i := range rng.Perm(400)[:15] {
		bm.Add(uint32(i))
	}
	it := bm.Iterator()
	for j := 0; j < 5; j++ {
		if err := ix.Delete(it.Next()); err != nil {
			t.Fatal(err)
		}
	}
	for _, force := range []bool{true, false} {
		res, err := ix.Search(base[:8], 12, SearchParams{EfSearch: 1, Allow: bm, forceGraph: force})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 10 {
			t.Fatalf("force=%v: %d results, want 10 (15 allowed, 5 deleted)", force, len(res))
		}
		for _, r := range res {
			if !bm.Contains(r.ID) || ix.isDeleted(r.ID) {
				t.Fatalf("id %d not allowed or deleted", r.ID)
			}
		}
	}
	res, _ := ix.Search(base[:8], 5, SearchParams{Allow: roaring.New()})
	if len(res) != 0 {
		t.Fatalf("empty allow-list gave %d results", len(res))
	}
}

// TestFilteredFashionMNIST: 0.1% allowed on fashion-mnist-784 (L2; the
// 60,000 training images as base, the first 50 test images as queries),
// graph walk forced and planner free. Runs only where the Debian package
// dataset-fashion-mnist is installed (`make datasets`).
func TestFilteredFashionMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("fashion-mnist build skipped in -short mode")
	}
	const dir = "/usr/share/datasets/fashion-mnist"
	train, err := datasets.ReadIDXImages(filepath.Join(dir, "train-images-idx3-ubyte.gz"))
	if err != nil {
		t.Skipf("fashion-mnist not installed (make datasets): %v", err)
	}
	test, err := datasets.ReadIDXImages(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"))
	if err != nil {
		t.Skipf("fashion-mnist not installed (make datasets): %v", err)
	}
	d := train.D
	o := Options{Dim: d, Metric: L2, M: 16, EfConstruction: 100, Seed: 7}
	ix := build(t, o, train.Data)
	qs := rows(test.Data[:50*d], d)
	filteredRecall(t, ix, L2, train.Data, d, qs, []float64{0.001}, 128, 0.95)
}

// TestExactBatches: the exact path (allow-lists the planner scores
// exactly) returns recall 1 against brute force over the live allowed
// ids, for allow-lists whose sizes straddle its gather batches, that
// hold deleted ids and ids beyond the index, and with no allow-list.
func TestExactBatches(t *testing.T) {
	const n, d = 1200, 12
	rng := rand.New(rand.NewPCG(8, 8))
	base := randVecs(rng, n, d)
	ix, err := New(Options{Dim: d, Metric: L2, M: 8, EfConstruction: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := ix.Add(uint64(i), base[i*d:(i+1)*d]); err != nil {
			t.Fatal(err)
		}
	}
	deleted := map[uint32]bool{}
	for i := uint32(5); i < n; i += 37 {
		if err := ix.Delete(i); err != nil {
			t.Fatal(err)
		}
		deleted[i] = true
	}
	qs := [][]float32{randVecs(rng, 1, d), randVecs(rng, 1, d), base[7*d : 8*d]}
	for _, size := range []int{0, 1, exactBatch - 1, exactBatch, exactBatch + 1, 3*exactBatch + 7, n} {
		var bm *roaring.Bitmap
		allowed := func(id uint32) bool { return !deleted[id] }
		if size < n {
			bm = roaring.New()
			in := map[uint32]bool{}
			for _, i := range rng.Perm(n)[:size] {
				bm.Add(uint32(i))
				in[uint32(i)] = true
			}
			bm.Add(n + 3) // beyond the index: ignored
			allowed = func(id uint32) bool { return in[id] && !deleted[id] }
		}
		for qi, q := range qs {
			want := bruteForce(L2, base, d, q, 10, allowed)
			ix.mu.RLock()
			ctx := ix.getCtx()
			got := ix.exact(ctx, nil, q, 10, bm)
			ix.putCtx(ctx)
			ix.mu.RUnlock()
			if len(got) != len(want.ids) {
				t.Fatalf("size %d q%d: %d results, want %d", size, qi, len(got), len(want.ids))
			}
			for i, r := range got {
				if r.ID != want.ids[i] || math.Abs(float64(r.Distance-want.dists[i])) > 1e-4*(1+float64(want.dists[i])) {
					t.Fatalf("size %d q%d: result %d = %d (%g), want %d (%g)", size, qi, i, r.ID, r.Distance, want.ids[i], want.dists[i])
				}
			}
		}
	}
}
