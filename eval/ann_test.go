package eval

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func mustRecall[R, G ID](t *testing.T, returned []R, rd []float32, gt []G, gd []float32, k int, order Order) float64 {
	t.Helper()
	r, err := Recall(returned, rd, gt, gd, k, order)
	if err != nil {
		t.Fatalf("Recall: %v", err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

func TestRecallHandCases(t *testing.T) {
	gt := []int32{1, 2, 3, 4, 5}
	gd := []float32{0.1, 0.2, 0.3, 0.4, 0.5}
	cases := []struct {
		name     string
		returned []int64
		rd       []float32 // nil: id rule only (gd passed as nil too)
		k        int
		want     float64
	}{
		// {1,2} of the true top 3 {1,2,3}: 2/3.
		{"two of three", []int64{1, 2, 9}, nil, 3, 2.0 / 3},
		// Order inside the top k does not matter: 3/3.
		{"permuted", []int64{3, 1, 2}, nil, 3, 1},
		// Only the first k returned count: 1 sits at position 3 > k = 2, so 0/2.
		{"beyond k ignored", []int64{9, 8, 1}, nil, 2, 0},
		// 1 counted once; its copies waste two slots: 1/3.
		{"duplicates", []int64{1, 1, 1}, nil, 3, 1.0 / 3},
		// Same with distances: the copy's distance 0.1 <= d_3 = 0.3 still counts once: 1/3.
		{"duplicates with dists", []int64{1, 1, 1}, []float32{0.1, 0.1, 0.1}, 3, 1.0 / 3},
		// -1 is padding, never a hit: 1/3.
		{"padding", []int64{2, -1, -1}, nil, 3, 1.0 / 3},
		// Fewer than k returned still divides by k: 2/4.
		{"short list", []int64{4, 3}, nil, 4, 0.5},
		// Nothing returned: 0/3.
		{"empty", []int64{}, nil, 3, 0},
		{"nil returned", nil, nil, 3, 0},
		// k = 1: 1 is the true nearest: 1/1.
		{"k=1", []int64{1}, nil, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g []float32
			rd := c.rd
			if rd != nil {
				g = gd
			}
			if got := mustRecall(t, c.returned, rd, gt, g, c.k, SmallerIsBetter); !near(got, c.want) {
				t.Errorf("recall = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRecallTiesAtBoundary(t *testing.T) {
	// True top 4 by distance 1, 2, 3, 3: ids 12 and 13 tie at the k = 3 boundary,
	// so d_3 = 3 and the bound is 3·(1+1e-6) = 3.000003.
	gt := []int32{10, 11, 12, 13}
	gd := []float32{1, 2, 3, 3}
	const k = 3

	// 13 is not in gt[:3] but its true distance 3 = d_3: a hit. 3/3.
	if got := mustRecall(t, []int32{10, 11, 13}, []float32{1, 2, 3}, gt, gd, k, SmallerIsBetter); got != 1 {
		t.Errorf("tie at d_k: recall = %v, want 1", got)
	}
	// Without distances only ids count: 13 misses. 2/3.
	if got := mustRecall(t, []int32{10, 11, 13}, nil, gt, nil, k, SmallerIsBetter); !near(got, 2.0/3) {
		t.Errorf("id rule: recall = %v, want 2/3", got)
	}
	// 99 at 3·(1+1e-5) = 3.00003 > 3.000003: not a hit. 2/3.
	far := float32(3 * (1 + 1e-5))
	if got := mustRecall(t, []int32{10, 11, 99}, []float32{1, 2, far}, gt, gd, k, SmallerIsBetter); !near(got, 2.0/3) {
		t.Errorf("d_k·(1+1e-5): recall = %v, want 2/3", got)
	}
	// 99 at 3·(1+5e-7) = 3.0000015 <= 3.000003: within tolerance, a hit. 3/3.
	inside := float32(3 * (1 + 5e-7))
	if float64(inside) <= 3 {
		t.Fatalf("test setup: float32(3·(1+5e-7)) = %v rounds to 3", inside)
	}
	if got := mustRecall(t, []int32{10, 11, 99}, []float32{1, 2, inside}, gt, gd, k, SmallerIsBetter); got != 1 {
		t.Errorf("d_k·(1+5e-7): recall = %v, want 1", got)
	}
	// Two distinct tied ids, 13 and 14, at d_k: each is one distinct hit, at most k in all.
	// Returned 10, 13, 14 are all within the bound: 3/3.
	if got := mustRecall(t, []int32{10, 13, 14}, []float32{1, 3, 3}, gt, gd, k, SmallerIsBetter); got != 1 {
		t.Errorf("two ties: recall = %v, want 1", got)
	}
}

func TestRecallNegativeDistancesAndSimilarities(t *testing.T) {
	// −ip distances, ascending: −9, −8, −2, −2; k = 3, d_3 = −2.
	// Bound = −2 + 1e-6·|−2| = −1.999998 (d_k·(1+1e-6) = −2.000002 would wrongly be tighter).
	gt := []int64{1, 2, 3, 4}
	gd := []float32{-9, -8, -2, -2}
	// 4 at −2 (tie): hit. 3/3.
	if got := mustRecall(t, []int64{1, 2, 4}, []float32{-9, -8, -2}, gt, gd, 3, SmallerIsBetter); got != 1 {
		t.Errorf("-ip tie: recall = %v, want 1", got)
	}
	// 5 at −2·(1 − 5e-7) = −1.999999 <= −1.999998: hit. 3/3.
	if got := mustRecall(t, []int64{1, 2, 5}, []float32{-9, -8, float32(-2 * (1 - 5e-7))}, gt, gd, 3, SmallerIsBetter); got != 1 {
		t.Errorf("-ip within tolerance: recall = %v, want 1", got)
	}
	// 5 at −2·(1 − 1e-5) = −1.99998 > −1.999998: miss. 2/3.
	if got := mustRecall(t, []int64{1, 2, 5}, []float32{-9, -8, float32(-2 * (1 - 1e-5))}, gt, gd, 3, SmallerIsBetter); !near(got, 2.0/3) {
		t.Errorf("-ip beyond tolerance: recall = %v, want 2/3", got)
	}

	// The same data as similarities (ip), descending: 9, 8, 2, 2; s_3 = 2, bound 2 − 2e-6.
	gs := []float32{9, 8, 2, 2}
	if got := mustRecall(t, []int64{1, 2, 4}, []float32{9, 8, 2}, gt, gs, 3, LargerIsBetter); got != 1 {
		t.Errorf("ip tie: recall = %v, want 1", got)
	}
	// 2·(1 − 1e-5) = 1.99998 < 1.999998: miss. 2/3.
	if got := mustRecall(t, []int64{1, 2, 5}, []float32{9, 8, float32(2 * (1 - 1e-5))}, gt, gs, 3, LargerIsBetter); !near(got, 2.0/3) {
		t.Errorf("ip beyond tolerance: recall = %v, want 2/3", got)
	}
	// d_k = 0 (exact duplicates of the query): bound 0, only distance 0 ties.
	if got := mustRecall(t, []int64{7}, []float32{0}, []int64{8}, []float32{0}, 1, SmallerIsBetter); got != 1 {
		t.Errorf("zero tie: recall = %v, want 1", got)
	}
	if got := mustRecall(t, []int64{7}, []float32{1e-30}, []int64{8}, []float32{0}, 1, SmallerIsBetter); got != 0 {
		t.Errorf("zero bound: recall = %v, want 0", got)
	}
}

func TestTieBound(t *testing.T) {
	for _, c := range []struct {
		dk    float32
		order Order
		want  float64
	}{
		{3, SmallerIsBetter, 3.000003},    // 3·(1+1e-6)
		{-2, SmallerIsBetter, -1.999998},  // −2 + 2e-6
		{2, LargerIsBetter, 1.999998},     // 2 − 2e-6
		{-2, LargerIsBetter, -2.000002},   // −2 − 2e-6
		{0, SmallerIsBetter, 0},           // no slack at 0
		{100, SmallerIsBetter, 100.00010}, // 100·(1+1e-6)
	} {
		if got := TieBound(c.dk, c.order); math.Abs(got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("TieBound(%v, %v) = %.9f, want %.9f", c.dk, c.order, got, c.want)
		}
	}
}

func TestRecallErrors(t *testing.T) {
	gt := []int32{1, 2, 3}
	gd := []float32{1, 2, 3}
	ret := []int32{1, 2, 3}
	rd := []float32{1, 2, 3}
	for _, c := range []struct {
		name string
		f    func() (float64, error)
	}{
		{"k=0", func() (float64, error) { return Recall(ret, rd, gt, gd, 0, SmallerIsBetter) }},
		{"k>len(gt)", func() (float64, error) { return Recall(ret, nil, gt, nil, 4, SmallerIsBetter) }},
		{"gd short", func() (float64, error) { return Recall(ret, rd, []int32{1, 2, 3, 4}, gd, 4, SmallerIsBetter) }},
		{"rd length", func() (float64, error) { return Recall(ret, rd[:2], gt, gd, 3, SmallerIsBetter) }},
		{"only rd nil", func() (float64, error) { return Recall(ret, nil, gt, gd, 3, SmallerIsBetter) }},
		{"only gd nil", func() (float64, error) { return Recall(ret, rd, gt, nil, 3, SmallerIsBetter) }},
		{"unsorted asc", func() (float64, error) {
			return Recall(ret, rd, gt, []float32{1, 3, 2}, 3, SmallerIsBetter)
		}},
		{"unsorted desc", func() (float64, error) { return Recall(ret, rd, gt, gd, 3, LargerIsBetter) }},
		{"NaN gt", func() (float64, error) {
			return Recall(ret, rd, gt, []float32{1, 2, float32(math.NaN())}, 3, SmallerIsBetter)
		}},
		{"Inf gt", func() (float64, error) {
			return Recall(ret, rd, gt, []float32{1, 2, float32(math.Inf(1))}, 3, SmallerIsBetter)
		}},
		{"bad order", func() (float64, error) { return Recall(ret, rd, gt, gd, 3, Order(7)) }},
		{"mean of none", func() (float64, error) {
			return MeanRecall[int32, int32](nil, nil, nil, nil, 3, SmallerIsBetter)
		}},
		{"mean length", func() (float64, error) {
			return MeanRecall([][]int32{ret}, nil, [][]int32{gt, gt}, nil, 3, SmallerIsBetter)
		}},
		{"mean dists nil mix", func() (float64, error) {
			return MeanRecall([][]int32{ret}, [][]float32{rd}, [][]int32{gt}, nil, 3, SmallerIsBetter)
		}},
		{"mean nil entry", func() (float64, error) {
			return MeanRecall([][]int32{ret}, [][]float32{nil}, [][]int32{gt}, [][]float32{gd}, 3, SmallerIsBetter)
		}},
		{"mean inner error", func() (float64, error) {
			return MeanRecall([][]int32{ret, ret}, nil, [][]int32{gt, gt[:1]}, nil, 3, SmallerIsBetter)
		}},
	} {
		if _, err := c.f(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", c.name, err)
		}
	}
}

func TestMeanRecall(t *testing.T) {
	// Query 0: 2 of 2 = 1; query 1: 1 of 2 = 0.5. Mean (1 + 0.5)/2 = 0.75.
	// Returned ids are int64 (an index), ground truth int32 (an ivecs file).
	flat := []int32{1, 2, 3, 7, 8, 9} // n = 2 queries × K = 3
	gt := [][]int32{flat[0:3], flat[3:6]}
	ret := [][]int64{{2, 1}, {7, 5}}
	got, err := MeanRecall(ret, nil, gt, nil, 2, SmallerIsBetter)
	if err != nil || !near(got, 0.75) {
		t.Fatalf("MeanRecall = %v, %v; want 0.75", got, err)
	}
	// With distances, 5 ties with d_2 of query 1 (distance 2): 2/2, so mean (1 + 1)/2 = 1.
	gd := [][]float32{{1, 2, 3}, {1, 2, 3}}
	rd := [][]float32{{2, 1}, {1, 2}}
	got, err = MeanRecall(ret, rd, gt, gd, 2, SmallerIsBetter)
	if err != nil || got != 1 {
		t.Fatalf("MeanRecall with ties = %v, %v; want 1", got, err)
	}
}

// refRecall is the obviously-correct O(k²) definition.
func refRecall(returned []int64, rd []float32, gt []int64, gd []float32, k int, order Order) float64 {
	hits := 0
	for i := 0; i < k && i < len(returned); i++ {
		id := returned[i]
		if id < 0 {
			continue
		}
		dup := false
		for j := range i {
			if returned[j] == id {
				dup = true
			}
		}
		if dup {
			continue
		}
		hit := false
		for _, g := range gt[:k] {
			if g == id {
				hit = true
			}
		}
		if rd != nil {
			dk := float64(gd[k-1])
			if order == SmallerIsBetter && float64(rd[i]) <= dk+1e-6*math.Abs(dk) {
				hit = true
			}
			if order == LargerIsBetter && float64(rd[i]) >= dk-1e-6*math.Abs(dk) {
				hit = true
			}
		}
		if hit {
			hits++
		}
	}
	return float64(hits) / float64(k)
}

// TestRecallRandom checks Recall against refRecall on seeded random data
// with many ties and duplicates, the [0,1] range, perfect recall of the
// ground truth itself, and that −d with LargerIsBetter equals d with
// SmallerIsBetter.
func TestRecallRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for it := range iters {
		n := 1 + rng.IntN(40)
		// Random points on a coarse grid of distances so ties are common.
		ids := make([]int64, n)
		dist := make([]float32, n)
		for i := range n {
			ids[i] = int64(i)
			dist[i] = float32(rng.IntN(8)) - 3 // negative too
		}
		// Ground truth: ids sorted by distance.
		perm := rng.Perm(n)
		gt := make([]int64, n)
		for i, p := range perm {
			gt[i] = ids[p]
		}
		sortByDist(gt, dist)
		gd := make([]float32, n)
		for i, id := range gt {
			gd[i] = dist[id]
		}
		k := 1 + rng.IntN(n)
		// Returned: random ids (some repeated, some padding).
		m := rng.IntN(2 * k)
		ret := make([]int64, m)
		rd := make([]float32, m)
		for i := range m {
			if rng.IntN(10) == 0 {
				ret[i], rd[i] = -1, float32(math.Inf(1))
				continue
			}
			ret[i] = int64(rng.IntN(n))
			rd[i] = dist[ret[i]]
		}
		for _, useD := range []bool{false, true} {
			var r, g []float32
			if useD {
				r, g = rd, gd
			}
			got := mustRecall(t, ret, r, gt, g, k, SmallerIsBetter)
			want := refRecall(ret, r, gt, g, k, SmallerIsBetter)
			if got != want || got < 0 || got > 1 {
				t.Fatalf("iter %d dists=%v: recall %v, reference %v", it, useD, got, want)
			}
			if useD {
				// Negated scores, larger is better: same hits.
				nr, ng := negate(rd), negate(gd)
				if got2 := mustRecall(t, ret, nr, gt, ng, k, LargerIsBetter); got2 != got {
					t.Fatalf("iter %d: LargerIsBetter on −d = %v, SmallerIsBetter = %v", it, got2, got)
				}
				// The id rule never gives more than the tie rule.
				if idOnly := mustRecall(t, ret, nil, gt, nil, k, SmallerIsBetter); idOnly > got {
					t.Fatalf("iter %d: id-only %v > with ties %v", it, idOnly, got)
				}
			}
		}
		// The ground truth itself has recall 1.
		if got := mustRecall(t, gt, gd, gt, gd, k, SmallerIsBetter); got != 1 {
			t.Fatalf("iter %d: recall of the ground truth = %v", it, got)
		}
	}
}

func sortByDist(ids []int64, dist []float32) {
	// insertion sort, stable: small n
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && dist[ids[j]] < dist[ids[j-1]]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

func negate(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = -v
	}
	return out
}

// FuzzRecall checks that Recall never panics and stays in [0, 1] on
// arbitrary ids and distances.
func FuzzRecall(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, []byte{1, 2, 3}, uint8(3), true)
	f.Add([]byte{255, 255, 1}, []byte{1, 1, 1, 1}, uint8(2), false)
	f.Add([]byte{}, []byte{9}, uint8(1), true)
	f.Add([]byte{0, 0, 0, 0}, []byte{}, uint8(0), false)
	f.Fuzz(func(t *testing.T, retB, gtB []byte, k8 uint8, larger bool) {
		ret := make([]int32, len(retB))
		rd := make([]float32, len(retB))
		for i, b := range retB {
			ret[i] = int32(b%16) - 1
			rd[i] = float32(b>>4) - 4
		}
		gt := make([]int32, len(gtB))
		gd := make([]float32, len(gtB))
		for i, b := range gtB {
			gt[i] = int32(b % 16)
			gd[i] = float32(i) // ascending
		}
		order := SmallerIsBetter
		if larger {
			order = LargerIsBetter
		}
		r, err := Recall(ret, rd, gt, gd, int(k8%20), order)
		if err == nil && (r < 0 || r > 1) {
			t.Fatalf("recall %v out of [0,1]", r)
		}
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
