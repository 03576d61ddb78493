package ivfpq

import (
	"github.com/stratasearch/strata/internal/testenv"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/eval"
)

// loadVaswani returns the Vaswani USE-512 documents and queries, skipping
// the test when the dataset directory is absent (failing under CI=true).
func loadVaswani(t testing.TB) (base, queries datasets.Matrix[float32]) {
	t.Helper()
	testenv.SkipIfEmulated(t, "reads a real dataset")
	dir, err := datasets.Dir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	base, err = datasets.ReadFvecs(filepath.Join(dir, "vaswani", "use512-docs.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	queries, err = datasets.ReadFvecs(filepath.Join(dir, "vaswani", "use512-queries.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	return base, queries
}

// exactIP returns the brute-force top-k ids and inner products (largest
// first) of every query.
func exactIP(base, queries datasets.Matrix[float32], k int) ([][]uint32, [][]float32) {
	ids, negs := bruteForce(base.Data, queries.Data, base.D, k, IP, nil)
	sims := make([][]float32, len(negs))
	for i, row := range negs {
		for _, v := range row {
			sims[i] = append(sims[i], -v)
		}
	}
	return ids, sims
}

// recallIP is eval.MeanRecall@k with the tie rule, on true inner products.
func recallIP(t *testing.T, base datasets.Matrix[float32], queries datasets.Matrix[float32], got [][]Result, gtIDs [][]uint32, gtSims [][]float32, k int) float64 {
	t.Helper()
	ids := make([][]uint32, len(got))
	sims := make([][]float32, len(got))
	for qi, rs := range got {
		q := queries.Row(qi)
		for _, r := range rs {
			ids[qi] = append(ids[qi], r.ID)
			sims[qi] = append(sims[qi], asm.Dot(q, base.Row(int(r.ID))))
		}
	}
	r, err := eval.MeanRecall(ids, sims, gtIDs, gtSims, k, eval.LargerIsBetter)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestVaswaniRecall is the real-data acceptance test: Vaswani
// USE-512 (11,429 × 512, 93 queries), inner product, nlist = 64, nprobe = 16:
// 8-bit M = 64 refined ×4 → recall@10 ≥ 0.95; 4-bit fast-scan M = 128
// refined ×10 → recall@10 ≥ 0.90 (recall before refine is logged).
//
// Without OPQ the 8-bit configuration sits at the threshold: over training
// seeds its refined recall@10 is 0.948–0.958 (one query-neighbour is
// 0.0011), and with every list scanned (nprobe = 64) only 0.956–0.962, so
// PQ ranking, not probing or k-means settings (25 or 50 iterations, random
// or k-means++ initialisation, spherical coarse centroids were all
// measured), is the limit. FAISS at the same settings reaches 0.933. With
// the OPQ rotation (Options.OPQ) the PQ error drops and every seed clears
// 0.95 with margin: seeds 1–5 give 0.9677 0.9634 0.9742 0.9656 0.9624
// with 5 rounds (mean 0.967), 0.9720 0.9699 0.9785 0.9817 0.9667 with the
// default 10 (mean 0.974). The test runs 5 rounds: half the OPQ training,
// which is most of this test's time (~3 s of CPU per seed at 5 rounds).
//
// Checks: 8-bit with OPQ (5 rounds), each of five training seeds ≥ 0.95; 8-bit
// without OPQ, the mean over the same seeds ≥ 0.95 and each ≥ 0.94 (the
// coin-toss regime above, kept so a regression of the plain path is
// seen); 4-bit without OPQ on one seed ≥ 0.90 (0.984; with OPQ, 10
// rounds, ≈ 0.99, not run here to keep the test short).
func TestVaswaniRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data recall runs without -short")
	}
	base, queries := loadVaswani(t)
	const k = 10
	gtIDs, gtSims := exactIP(base, queries, k)
	for _, c := range []struct {
		nbits, m, kfactor int
		opqIters          int // 0: no OPQ
		seeds             int
		want              float64 // per seed with OPQ, mean without
	}{{8, 64, 4, 5, 5, 0.95}, {8, 64, 4, 0, 5, 0.95}, {4, 128, 10, 0, 1, 0.90}} {
		var sum float64
		for seed := 1; seed <= c.seeds; seed++ {
			o := Options{M: c.m, Nbits: c.nbits, Seed: uint64(seed), OPQ: c.opqIters > 0, OPQIters: c.opqIters}
			r1 := vaswaniRun(t, base, queries, gtIDs, gtSims, o, c.kfactor)
			floor := c.want - 0.01
			if c.opqIters > 0 {
				floor = c.want
			}
			if r1 < floor {
				t.Errorf("nbits=%d M=%d OPQIters=%d seed %d: refined recall@10 = %.4f, want ≥ %.2f", c.nbits, c.m, c.opqIters, seed, r1, floor)
			}
			sum += r1
		}
		mean := sum / float64(c.seeds)
		t.Logf("nbits=%d M=%d OPQIters=%d: mean refined recall@10 over %d seed(s) %.4f", c.nbits, c.m, c.opqIters, c.seeds, mean)
		if mean < c.want {
			t.Errorf("nbits=%d M=%d OPQIters=%d: mean refined recall@10 over %d seed(s) = %.4f, want ≥ %.2f", c.nbits, c.m, c.opqIters, c.seeds, mean, c.want)
		}
	}
}

// vaswaniRun builds one index (IP, nlist 64; o's M, Nbits, Seed, OPQ and
// OPQIters), searches every query at nprobe 16 with and without refine,
// logs both recalls and returns the refined recall@10.
func vaswaniRun(t *testing.T, base, queries datasets.Matrix[float32], gtIDs [][]uint32, gtSims [][]float32, o Options, kfactor int) float64 {
	t.Helper()
	const k = 10
	o.Dim, o.Metric, o.Nlist = base.D, IP, 64
	nbits, m, seed := o.Nbits, o.M, o.Seed
	ix, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := ix.Train(base.Data); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	if _, err := ix.Add(nil, base.Data); err != nil {
		t.Fatal(err)
	}
	t2 := time.Now()
	if err := ix.SetRefineVectors(base.Data); err != nil {
		t.Fatal(err)
	}
	var raw, ref [][]Result
	for qi := 0; qi < queries.N; qi++ {
		a, err := ix.Search(queries.Row(qi), k, SearchParams{Nprobe: 16})
		if err != nil {
			t.Fatal(err)
		}
		b, err := ix.Search(queries.Row(qi), k, SearchParams{Nprobe: 16, KFactor: kfactor})
		if err != nil {
			t.Fatal(err)
		}
		raw, ref = append(raw, a), append(ref, b)
	}
	r0 := recallIP(t, base, queries, raw, gtIDs, gtSims, k)
	r1 := recallIP(t, base, queries, ref, gtIDs, gtSims, k)
	t.Logf("vaswani IP nlist=64 nprobe=16 nbits=%d M=%d OPQ=%v/%d seed %d: recall@10 (tie rule) before refine %.4f, refined ×%d %.4f; id-only %.4f / %.4f (train %v, add %v)",
		nbits, m, o.OPQ, ix.Options().OPQIters, seed, r0, kfactor, r1, recallAt(raw, gtIDs, k), recallAt(ref, gtIDs, k),
		t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond))
	return r1
}

// TestSphericalCoarseVaswani checks Options.SphericalCoarse on Vaswani
// USE-512 (IP, nlist 64, 8-bit M = 64, refine ×4, seed 42) by work, not
// time: the spherical centroids are unit length, its lists are more
// balanced (lower ImbalanceFactor), and it reaches the refined recall@10
// of plain means at nprobe 8 while scanning fewer codes per query (the sum
// of the probed lists' lengths), which is what made it 1.5× faster at
// equal recall in doc.go's table.
func TestSphericalCoarseVaswani(t *testing.T) {
	if testing.Short() {
		t.Skip("real-data recall runs without -short")
	}
	base, queries := loadVaswani(t)
	const k, kfactor = 10, 4
	gtIDs, gtSims := exactIP(base, queries, k)
	type point struct{ recall, codes float64 }
	build := func(sph bool) (*Index, func(nprobe int) point) {
		ix, err := New(Options{Dim: base.D, Metric: IP, Nlist: 64, M: 64, Nbits: 8, Seed: 42, SphericalCoarse: sph})
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Train(base.Data); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Add(nil, base.Data); err != nil {
			t.Fatal(err)
		}
		if err := ix.SetRefineVectors(base.Data); err != nil {
			t.Fatal(err)
		}
		return ix, func(nprobe int) point {
			got := make([][]Result, queries.N)
			var codes float64
			for qi := range got {
				q := queries.Row(qi)
				rs, err := ix.Search(q, k, SearchParams{Nprobe: nprobe, KFactor: kfactor})
				if err != nil {
					t.Fatal(err)
				}
				got[qi] = rs
				lists, _ := ix.probe(q, nprobe, nil)
				for _, l := range lists {
					codes += float64(len(ix.lists[l].ids))
				}
			}
			return point{recallIP(t, base, queries, got, gtIDs, gtSims, k), codes / float64(queries.N)}
		}
	}
	plain, plainAt := build(false)
	sph, sphAt := build(true)
	for c := 0; c < 64; c++ {
		if n := asm.Dot(sph.coarse[c*base.D:(c+1)*base.D], sph.coarse[c*base.D:(c+1)*base.D]); n < 0.9999 || n > 1.0001 {
			t.Fatalf("spherical centroid %d has squared norm %v", c, n)
		}
	}
	ip, is := plain.ImbalanceFactor(), sph.ImbalanceFactor()
	t.Logf("imbalance factor: plain %.3f, spherical %.3f", ip, is)
	if is >= ip {
		t.Errorf("spherical imbalance %.3f not below plain %.3f", is, ip)
	}
	ref := plainAt(8)
	t.Logf("plain nprobe 8: recall@10 %.4f, %.0f codes/query", ref.recall, ref.codes)
	for nprobe := 8; nprobe <= 32; nprobe++ {
		p := sphAt(nprobe)
		if p.recall < ref.recall-0.002 {
			continue
		}
		t.Logf("spherical nprobe %d: recall@10 %.4f, %.0f codes/query", nprobe, p.recall, p.codes)
		if p.codes >= ref.codes {
			t.Errorf("spherical needs %.0f codes/query for recall %.4f, plain %.0f for %.4f", p.codes, p.recall, ref.codes, ref.recall)
		}
		return
	}
	t.Errorf("spherical never reached plain's nprobe-8 recall %.4f by nprobe 32", ref.recall)
}
