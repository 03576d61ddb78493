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

// TestAssignNearestMatchesBruteForce checks the blocked assignment (tiles
// smaller than K) against a float64 scan.
func TestAssignNearestMatchesBruteForce(t *testing.T) {
	for _, d := range []int{3, 64, 700} { // 700: tile = 23 centroids < K
		x := randVecs(uint64(d), 300, d, false)
		cent := randVecs(uint64(d)+1, 50, d, false)
		assign := make([]int32, 300)
		dist := make([]float32, 300)
		assignNearest(x, norms(x, d), d, cent, 50, assign, dist, 3)
		for i := 0; i < 300; i++ {
			best, bd := 0, math.Inf(1)
			for c := 0; c < 50; c++ {
				if v := exactDist(x[i*d:(i+1)*d], cent[c*d:(c+1)*d], L2); v < bd {
					best, bd = c, v
				}
			}
			got := exactDist(x[i*d:(i+1)*d], cent[int(assign[i])*d:int(assign[i]+1)*d], L2)
			if int(assign[i]) != best && got > bd*(1+1e-4) {
				t.Fatalf("d=%d point %d: assigned %d (%.6g), nearest %d (%.6g)", d, i, assign[i], got, best, bd)
			}
			if math.Abs(float64(dist[i])-got) > 1e-3*(got+float64(d)) {
				t.Fatalf("d=%d point %d: dist %g, want %g", d, i, dist[i], got)
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
