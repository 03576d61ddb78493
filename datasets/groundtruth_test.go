package datasets

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveGT is the obviously-correct reference: score every pair in float64,
// sort (score, id) pairs.
func naiveGT(base, queries Matrix[float32], metric Metric, k int) ([][]int32, [][]float64) {
	var ids [][]int32
	var ds [][]float64
	for q := 0; q < queries.N; q++ {
		type p struct {
			s  float64
			id int32
		}
		ps := make([]p, base.N)
		for i := 0; i < base.N; i++ {
			var s float64
			for j := 0; j < base.D; j++ {
				a, b := float64(queries.Row(q)[j]), float64(base.Row(i)[j])
				if metric == L2 {
					s += (a - b) * (a - b)
				} else {
					s -= a * b
				}
			}
			ps[i] = p{s, int32(i)}
		}
		slices.SortFunc(ps, func(x, y p) int {
			if x.s != y.s {
				if x.s < y.s {
					return -1
				}
				return 1
			}
			return int(x.id - y.id)
		})
		var ri []int32
		var rd []float64
		for _, x := range ps[:k] {
			ri = append(ri, x.id)
			if metric == InnerProduct {
				x.s = -x.s
			}
			rd = append(rd, x.s)
		}
		ids = append(ids, ri)
		ds = append(ds, rd)
	}
	return ids, ds
}

// smallIntMatrix draws values from {-2..2}: all sums are exact in float32,
// so the kernel and the float64 reference agree bit for bit and ties are
// frequent (exercising the lower-id-first rule).
func smallIntMatrix(r *rand.Rand, n, d int) Matrix[float32] {
	m := Matrix[float32]{N: n, D: d, Data: make([]float32, n*d)}
	for i := range m.Data {
		m.Data[i] = float32(r.IntN(5) - 2)
	}
	return m
}

func TestGroundTruthMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, nq, d, k, workers int }{
		{1, 1, 1, 1, 1}, {50, 7, 3, 10, 1}, {300, 40, 8, 17, 3}, {1000, 33, 17, 100, 2}, {200, 5, 64, 200, 4},
	} {
		base, queries := smallIntMatrix(r, tc.n, tc.d), smallIntMatrix(r, tc.nq, tc.d)
		for _, metric := range []Metric{L2, InnerProduct} {
			gt, err := ComputeGroundTruth(context.Background(), base, queries, metric, Options{K: tc.k, Workers: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			wantIDs, wantD := naiveGT(base, queries, metric, tc.k)
			for q := range wantIDs {
				if !slices.Equal(gt.IDs.Row(q), wantIDs[q]) {
					t.Fatalf("%+v %v q=%d: ids\n got %v\nwant %v", tc, metric, q, gt.IDs.Row(q), wantIDs[q])
				}
				for j, d := range wantD[q] {
					if float64(gt.Dists.Row(q)[j]) != d {
						t.Fatalf("%+v %v q=%d j=%d: dist %v want %v", tc, metric, q, j, gt.Dists.Row(q)[j], d)
					}
				}
			}
		}
	}
}

func TestGroundTruthFloatData(t *testing.T) {
	// Real-valued data: ids must match the float64 reference except where
	// two neighbours' float64 distances are within rounding of each other.
	r := rand.New(rand.NewPCG(3, 4))
	n, nq, d, k := 2000, 20, 32, 50
	base := Matrix[float32]{N: n, D: d, Data: make([]float32, n*d)}
	queries := Matrix[float32]{N: nq, D: d, Data: make([]float32, nq*d)}
	for i := range base.Data {
		base.Data[i] = float32(r.NormFloat64())
	}
	for i := range queries.Data {
		queries.Data[i] = float32(r.NormFloat64())
	}
	for _, metric := range []Metric{L2, InnerProduct} {
		gt, err := ComputeGroundTruth(context.Background(), base, queries, metric, Options{K: k, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		wantIDs, wantD := naiveGT(base, queries, metric, k)
		for q := range wantIDs {
			for j := range wantIDs[q] {
				got := gt.IDs.Row(q)[j]
				if got != wantIDs[q][j] {
					// Acceptable only as a near-tie swap.
					if j+1 < k && abs(wantD[q][j]-wantD[q][j+1]) < 1e-4 || j > 0 && abs(wantD[q][j]-wantD[q][j-1]) < 1e-4 {
						continue
					}
					t.Fatalf("%v q=%d j=%d: id %d want %d", metric, q, j, got, wantIDs[q][j])
				}
				if e := abs(float64(gt.Dists.Row(q)[j]) - wantD[q][j]); e > 1e-3*(1+abs(wantD[q][j])) {
					t.Fatalf("%v q=%d j=%d: dist %v want %v", metric, q, j, gt.Dists.Row(q)[j], wantD[q][j])
				}
			}
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestGroundTruthErrors(t *testing.T) {
	b := Matrix[float32]{N: 2, D: 2, Data: make([]float32, 4)}
	q := Matrix[float32]{N: 1, D: 3, Data: make([]float32, 3)}
	if _, err := ComputeGroundTruth(context.Background(), b, q, L2, Options{K: 1}); err == nil {
		t.Error("dimension mismatch accepted")
	}
	q = Matrix[float32]{N: 1, D: 2, Data: make([]float32, 2)}
	if _, err := ComputeGroundTruth(context.Background(), b, q, L2, Options{K: 3}); err == nil {
		t.Error("K > n accepted")
	}
	if _, err := ComputeGroundTruth(context.Background(), b, q, L2, Options{K: -1}); err == nil {
		t.Error("K < 0 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ComputeGroundTruth(ctx, b, q, L2, Options{K: 1}); err == nil {
		t.Error("cancelled context ignored")
	}
}

func TestCachedGroundTruth(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(5, 6))
	base, queries := smallIntMatrix(r, 500, 8), smallIntMatrix(r, 30, 8)
	opt := Options{K: 10}
	g1, cached, err := CachedGroundTruth(context.Background(), dir, "toy", base, queries, L2, opt)
	if err != nil || cached {
		t.Fatalf("first call: cached=%v err=%v", cached, err)
	}
	g2, cached, err := CachedGroundTruth(context.Background(), dir, "toy", base, queries, L2, opt)
	if err != nil || !cached {
		t.Fatalf("second call: cached=%v err=%v", cached, err)
	}
	if !slices.Equal(g1.IDs.Data, g2.IDs.Data) || !slices.Equal(g1.Dists.Data, g2.Dists.Data) {
		t.Fatal("cached ground truth differs")
	}
	// Changed input must not be served from the stale cache.
	queries.Data[0] += 1
	g3, cached, err := CachedGroundTruth(context.Background(), dir, "toy", base, queries, L2, opt)
	if err != nil || cached {
		t.Fatalf("changed input: cached=%v err=%v", cached, err)
	}
	want, _ := naiveGT(base, queries, L2, 10)
	if !slices.Equal(g3.IDs.Row(0), want[0]) {
		t.Fatalf("recomputed row 0 = %v, want %v", g3.IDs.Row(0), want[0])
	}
}

func TestGroundTruthNaN(t *testing.T) {
	// NaN distances never rank; rows with too few finite candidates are
	// padded with id -1, and nothing panics.
	nan := float32(math.NaN())
	base := Matrix[float32]{N: 3, D: 1, Data: []float32{nan, 2, nan}}
	q := Matrix[float32]{N: 1, D: 1, Data: []float32{1}}
	gt, err := ComputeGroundTruth(context.Background(), base, q, L2, Options{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gt.IDs.Row(0), []int32{1, -1}) {
		t.Fatalf("ids %v", gt.IDs.Row(0))
	}
}
