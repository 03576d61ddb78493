package hnsw

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestSQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const d, k = 32, 10
	n := 2500
	if testing.Short() {
		n = 1000
	}
	base := clustered(rng, n, d, 30)
	qs := rows(clustered(rng, 40, d, 30), d)
	for _, m := range []Metric{L2, Cosine} {
		o := Options{Dim: d, Metric: m, M: 12, EfConstruction: 100, Storage: SQ8, Seed: 1}
		ix, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Add(1, base[:d]); !errors.Is(err, ErrUntrained) {
			t.Fatalf("Add before training: %v", err)
		}
		ix = build(t, o, base) // AddBatch trains on its batch
		if err := ix.TrainSQ8(base); err == nil {
			t.Fatal("second TrainSQ8 succeeded")
		}
		truth := make([]gt, len(qs))
		for i, q := range qs {
			truth[i] = bruteForce(m, base, d, q, k, nil)
		}
		r := meanRecall(t, m, base, d, qs, truth, k, func(q []float32) []Result {
			res, err := ix.Search(q, k, SearchParams{EfSearch: 96})
			if err != nil {
				t.Fatal(err)
			}
			// Reranked: distances are exact.
			for _, x := range res {
				if want := float32(refDist(m, q, base[int(x.ID)*d:int(x.ID+1)*d])); absf(x.Distance-want) > 1e-3*(1+absf(want)) {
					t.Fatalf("distance %v not exact (%v)", x.Distance, want)
				}
			}
			return res
		})
		t.Logf("sq8 %v recall@10=%.4f", m, r)
		if r < 0.97 {
			t.Errorf("sq8 %v: recall@10 %.4f < 0.97", m, r)
		}
		// Round trip keeps results identical.
		re, err := Open(serialize(t, ix))
		if err != nil {
			t.Fatal(err)
		}
		sameResults(t, ix, re, base, d)
	}
	if err := (&Index{}).TrainSQ8(nil); err == nil {
		t.Fatal("TrainSQ8 on float32 index succeeded")
	}
}

func TestSQ8USE(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data build skipped in -short mode")
	}
	set := loadUSE(t, "vaswani")
	o := Options{Dim: set.d, Metric: Cosine, M: 16, EfConstruction: 200, Seed: 42, Storage: SQ8}
	ix := build(t, o, set.docs)
	qs := rows(set.queries, set.d)
	b := useIndex(t, "vaswani")
	r := meanRecall(t, Cosine, set.docs, set.d, qs, b.truth, 10, func(q []float32) []Result {
		res, _ := ix.Search(q, 10, SearchParams{EfSearch: 128})
		return res
	})
	t.Logf("vaswani sq8 ef=128 recall@10=%.4f", r)
	if r < 0.99 {
		t.Errorf("sq8 recall@10 %.4f < 0.99", r)
	}
}
