package ivfpq

import (
	"math"
	"slices"
	"testing"
)

// TestKMeansRecoversBlobs: on well-separated seeded Gaussian blobs, every
// centroid trained with k-means++ lies near a distinct true centre, for
// every seed. (Random init puts all 8 seeds in distinct blobs with
// probability 8!/8^8 ≈ 0.2%, and Lloyd then stays in a local minimum, so it
// is not asserted here; FAISS behaves the same.)
func TestKMeansRecoversBlobs(t *testing.T) {
	const d, nc, sigma = 16, 8, 0.05
	n := 4000
	if testing.Short() {
		n = 800
	}
	x, centres, _ := gaussianBlobs(7, n, d, nc, 10, sigma)
	for _, init := range []KMeansInit{InitPlusPlus} {
		okRuns := 0
		seeds := []uint64{1, 2, 3, 4, 5}
		for _, seed := range seeds {
			cent, err := KMeans{K: nc, Init: init, Seed: seed, Threads: 2}.Train(x, d)
			if err != nil {
				t.Fatal(err)
			}
			used := make([]bool, nc)
			ok := true
			for c := 0; c < nc; c++ {
				best, bd := -1, math.Inf(1)
				for tc := 0; tc < nc; tc++ {
					if v := exactDist(cent[c*d:(c+1)*d], centres[tc*d:(tc+1)*d], L2); v < bd {
						best, bd = tc, v
					}
				}
				// mean of n/nc points: error ≈ σ·sqrt(d/(n/nc)); allow 1σ·sqrt(d).
				if used[best] || bd > sigma*sigma*d {
					ok = false
				}
				used[best] = true
			}
			if ok {
				okRuns++
			} else if init == InitPlusPlus {
				t.Errorf("k-means++ seed %d did not recover the %d centres", seed, nc)
			}
		}
		if okRuns != len(seeds) {
			t.Errorf("init %d recovered the centres in only %d/%d seeds", init, okRuns, len(seeds))
		}
	}
}

// TestKMeansNoEmptyClusters: with K far above the number of blobs (so many
// clusters start empty or collide), every final centroid owns ≥ 1 point.
func TestKMeansNoEmptyClusters(t *testing.T) {
	const d, k = 8, 64
	x, _, _ := gaussianBlobs(3, 2000, d, 5, 10, 0.5)
	// Duplicate points force empty clusters under random init.
	for i := 0; i < 500; i++ {
		copy(x[i*d:(i+1)*d], x[:d])
	}
	for _, init := range []KMeansInit{InitRandom, InitPlusPlus} {
		cent, err := KMeans{K: k, Init: init, Seed: 11, Threads: 2}.Train(x, d)
		if err != nil {
			t.Fatal(err)
		}
		n := len(x) / d
		assign := make([]int32, n)
		assignNearest(x, norms(x, d), d, cent, k, assign, nil, 1)
		count := make([]int, k)
		for _, c := range assign {
			count[c]++
		}
		for c, v := range count {
			if v == 0 {
				t.Errorf("init %d: cluster %d is empty", init, c)
			}
		}
	}
}

// TestKMeansDeterministic: same seed ⇒ identical centroids, whatever the
// thread count; another seed ⇒ different ones.
func TestKMeansDeterministic(t *testing.T) {
	const d = 12
	x := randVecs(5, 3000, d, false)
	a, _ := KMeans{K: 16, Seed: 9, Threads: 1, MaxPointsPerCentroid: 100}.Train(x, d)
	b, _ := KMeans{K: 16, Seed: 9, Threads: 4, MaxPointsPerCentroid: 100}.Train(x, d)
	c, _ := KMeans{K: 16, Seed: 10, Threads: 2, MaxPointsPerCentroid: 100}.Train(x, d)
	if !slices.Equal(a, b) {
		t.Error("same seed, different thread counts: centroids differ")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave identical centroids")
	}
}

// TestAssignNearestMatchesBruteForce checks the blocked assignment against
// a float64 scan for L2 and IP over shapes covering both kernels (d ≤ 32:
// asm.NearestL2T; above: asm.DotMany + asm.ArgminAffine), centroid counts
// around the 16/64 chunks and past one assignTile (1030 > 1024), point
// counts that leave partial 64-point blocks, and checks that the result
// does not depend on the number of goroutines.
func TestAssignNearestMatchesBruteForce(t *testing.T) {
	shapes := []struct{ n, d, k int }{
		{300, 3, 50}, {300, 64, 50}, {300, 700, 50}, {129, 2, 256}, {130, 8, 17},
		{65, 14, 256}, {200, 16, 16}, {70, 32, 65}, {70, 33, 65}, {100, 100, 566}, {67, 5, 1030}, {67, 40, 1030},
	}
	if testing.Short() {
		shapes = shapes[:9]
	}
	for _, sh := range shapes {
		n, d, k := sh.n, sh.d, sh.k
		x := randVecs(uint64(d), n, d, false)
		cent := randVecs(uint64(d)+1, k, d, false)
		for _, metric := range []Metric{L2, IP} {
			assign := make([]int32, n)
			dist := make([]float32, n)
			xn := xnormsFor(x, d, metric)
			assignNearest(x, xn, d, cent, k, assign, dist, 3)
			a1 := make([]int32, n)
			d1 := make([]float32, n)
			assignNearest(x, xn, d, cent, k, a1, d1, 1)
			for i := 0; i < n; i++ {
				if a1[i] != assign[i] || d1[i] != dist[i] {
					t.Fatalf("%v n=%d d=%d k=%d point %d: 1 thread (%d, %g) vs 3 (%d, %g)", metric, n, d, k, i, a1[i], d1[i], assign[i], dist[i])
				}
				xi := x[i*d : (i+1)*d]
				best, bd := 0, math.Inf(1)
				var mag float64
				for c := 0; c < k; c++ {
					cc := cent[c*d : (c+1)*d]
					if v := exactDist(xi, cc, metric); v < bd {
						best, bd = c, v
					}
					var m float64 // magnitude of the float32 terms ‖x‖², ‖c‖², 2⟨x,c⟩
					for j := range xi {
						m += float64(xi[j])*float64(xi[j]) + float64(cc[j])*float64(cc[j]) + 2*math.Abs(float64(xi[j])*float64(cc[j]))
					}
					mag = math.Max(mag, m)
				}
				tol := 8 * float64(d+2) * 6e-8 * mag
				got := exactDist(xi, cent[int(assign[i])*d:int(assign[i]+1)*d], metric)
				if int(assign[i]) != best && got > bd+tol {
					t.Fatalf("%v n=%d d=%d k=%d point %d: assigned %d (%.6g), nearest %d (%.6g)", metric, n, d, k, i, assign[i], got, best, bd)
				}
				if math.Abs(float64(dist[i])-got) > tol {
					t.Fatalf("%v n=%d d=%d k=%d point %d: dist %g, want %g", metric, n, d, k, i, dist[i], got)
				}
			}
		}
	}
}

func TestKMeansErrors(t *testing.T) {
	x := randVecs(1, 10, 4, false)
	if _, err := (KMeans{K: 11}).Train(x, 4); err == nil {
		t.Error("K > n: want error")
	}
	if _, err := (KMeans{K: 2}).Train(x[:7], 4); err == nil {
		t.Error("ragged x: want error")
	}
	if _, err := (KMeans{K: 0}).Train(x, 4); err == nil {
		t.Error("K = 0: want error")
	}
}

// TestKMeansSubsample: with MaxPointsPerCentroid·K < n training still works
// and uses the bound (checked indirectly: result differs from full data).
func TestKMeansSubsample(t *testing.T) {
	x := randVecs(8, 2000, 4, false)
	a, err := KMeans{K: 4, MaxPointsPerCentroid: 10, Seed: 1}.Train(x, 4)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KMeans{K: 4, MaxPointsPerCentroid: 1000, Seed: 1}.Train(x, 4)
	if slices.Equal(a, b) {
		t.Error("subsampled training gave the same centroids as full training")
	}
}

// TestKMeansSpherical: with Spherical every centroid has unit norm (the
// mean of unit vectors has norm < 1, so plain means do not), IP assignment
// still recovers well-separated directions, and the result is deterministic.
func TestKMeansSpherical(t *testing.T) {
	const d, nc = 16, 8
	x, centres, _ := gaussianBlobs(11, 1600, d, nc, 10, 0.3)
	renormRows(x, d)
	renormRows(centres, d)
	norm := func(c []float32) float64 {
		var ss float64
		for _, v := range c {
			ss += float64(v) * float64(v)
		}
		return math.Sqrt(ss)
	}
	km := KMeans{K: nc, Iters: 20, Init: InitPlusPlus, Seed: 3, Metric: IP, Spherical: true, Threads: 2}
	cent, err := km.Train(x, d)
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < nc; c++ {
		if n := norm(cent[c*d : (c+1)*d]); math.Abs(n-1) > 1e-5 {
			t.Fatalf("spherical centroid %d norm %v", c, n)
		}
	}
	// Each true direction has a centroid within cosine 0.95.
	for i := 0; i < nc; i++ {
		best := -1.0
		for c := 0; c < nc; c++ {
			var dot float64
			for j := 0; j < d; j++ {
				dot += float64(centres[i*d+j]) * float64(cent[c*d+j])
			}
			best = max(best, dot)
		}
		if best < 0.95 {
			t.Errorf("direction %d: best centroid cosine %.3f", i, best)
		}
	}
	km.Spherical = false
	plain, _ := km.Train(x, d)
	short := 0
	for c := 0; c < nc; c++ {
		if norm(plain[c*d:(c+1)*d]) < 0.999 {
			short++
		}
	}
	if short == 0 {
		t.Error("plain means all have unit norm: the data does not exercise Spherical")
	}
	km.Spherical, km.Threads = true, 1
	again, _ := km.Train(x, d)
	if !slices.Equal(again, cent) {
		t.Error("spherical k-means not deterministic across Threads")
	}
}
