package ivfpq

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/stratasearch/strata/asm"
)

// KMeans is a Lloyd k-means trainer (FAISS Clustering semantics). The zero
// value of each field takes the default of the Options field of the same
// name.
type KMeans struct {
	K                    int        // number of centroids, ≥ 1
	Iters                int        // Lloyd iterations; default 25
	Init                 KMeansInit // default InitRandom
	MaxPointsPerCentroid int        // training set ≤ K·this points; default 256
	Seed                 uint64     // seeds subsampling and initialisation
	Threads              int        // goroutines for assignment; default GOMAXPROCS
	// Metric of the assignment: L2 (default, nearest centroid) or IP (largest
	// ⟨x,c⟩, FAISS Clustering over IndexFlatIP; centroids stay plain means).
	Metric Metric
}

// kmeansOf returns the trainer for k centroids configured from o.
func kmeansOf(o Options, k int, threads int) KMeans {
	return KMeans{K: k, Iters: o.KMeansIters, Init: o.KMeansInit, MaxPointsPerCentroid: o.MaxPointsPerCentroid, Seed: o.Seed, Threads: threads}
}

// xnormsFor returns the row norms needed by assignNearest for metric m
// (nil selects inner-product assignment).
func xnormsFor(x []float32, d int, m Metric) []float32 {
	if m == IP {
		return nil
	}
	return norms(x, d)
}

// Train clusters x (n×d float32, row-major, n = len(x)/d) and returns the
// K×d centroids, row-major.
//
// Algorithm: if n > MaxPointsPerCentroid·K the training set is a seeded
// uniform subsample of that size (FAISS). Initialisation by random sampling
// or k-means++. Each Lloyd iteration assigns every point to its nearest
// centroid by ‖x‖² − 2⟨x,c⟩ + ‖c‖² (⟨x,c⟩ from asm.DotBatch over tiles of
// centroids, points split across Threads goroutines), recomputes the means
// in float64, and repairs every empty cluster by splitting the largest one
// (the empty centroid moves to the largest cluster's point farthest from
// its centroid; FAISS's split_clusters instead copies a size-weighted
// random cluster's centroid with a ±1/1024 perturbation, which can fail on
// duplicated points). After the last iteration, clusters left empty are
// repaired and the points re-assigned. The result is
// deterministic for a seed, whatever Threads is.
// Errors: d < 1, len(x) not a multiple of d, n < K (ErrInvalidArgument).
// Cost: O(Iters·n·K·d) time, O(K·d + n) extra memory.
func (km KMeans) Train(x []float32, d int) ([]float32, error) {
	if d < 1 || len(x)%d != 0 {
		return nil, fmt.Errorf("%w: len(x) = %d is not a multiple of d = %d", ErrDimension, len(x), d)
	}
	n := len(x) / d
	k := km.K
	if k < 1 || n < k {
		return nil, fmt.Errorf("%w: k-means needs 1 ≤ K ≤ n, got K = %d, n = %d", ErrInvalidArgument, k, n)
	}
	if km.Iters == 0 {
		km.Iters = 25
	}
	if km.MaxPointsPerCentroid <= 0 {
		km.MaxPointsPerCentroid = 256
	}
	if km.Threads <= 0 {
		km.Threads = 1
	}
	rng := rand.New(rand.NewPCG(km.Seed, 0x6b6d65616e73)) // "kmeans"
	if limit := km.MaxPointsPerCentroid * k; n > limit {
		x = subsample(x, d, n, limit, rng)
		n = limit
	}
	cent := make([]float32, k*d)
	switch km.Init {
	case InitPlusPlus:
		initPlusPlus(x, d, n, k, cent, rng)
	default:
		perm := partialPerm(n, k, rng)
		for c, i := range perm {
			copy(cent[c*d:(c+1)*d], x[i*d:(i+1)*d])
		}
	}
	assign := make([]int32, n)
	xnorm := xnormsFor(x, d, km.Metric)
	sums := make([]float64, k*d)
	counts := make([]int, k)
	for it := 0; it < km.Iters; it++ {
		assignNearest(x, xnorm, d, cent, k, assign, nil, km.Threads)
		clear(sums)
		clear(counts)
		for i, c := range assign {
			counts[c]++
			s := sums[int(c)*d : int(c+1)*d]
			for j, v := range x[i*d : (i+1)*d] {
				s[j] += float64(v)
			}
		}
		for c := 0; c < k; c++ {
			if counts[c] == 0 {
				continue
			}
			inv := 1 / float64(counts[c])
			for j := 0; j < d; j++ {
				cent[c*d+j] = float32(sums[c*d+j] * inv)
			}
		}
		splitEmpty(x, d, cent, k, assign, counts)
	}
	// Final check: a repair in the last iteration (or a centroid that lost
	// all its points to a moved one) can leave a cluster empty; repair and
	// re-assign until none is, for a few rounds.
	for round := 0; round < 4; round++ {
		assignNearest(x, xnorm, d, cent, k, assign, nil, km.Threads)
		clear(counts)
		for _, c := range assign {
			counts[c]++
		}
		if !splitEmpty(x, d, cent, k, assign, counts) {
			break
		}
	}
	return cent, nil
}

// splitEmpty repairs every empty cluster by splitting the currently largest
// one: the empty centroid moves onto the point of the largest cluster that
// is farthest (L2) from its centroid, which then belongs to it. A cluster
// whose points all coincide with its centroid is not split. Reports
// whether any centroid moved.
func splitEmpty(x []float32, d int, cent []float32, k int, assign []int32, counts []int) bool {
	moved := false
	for ci := 0; ci < k; ci++ {
		if counts[ci] != 0 {
			continue
		}
		cj := 0
		for c := 1; c < k; c++ {
			if counts[c] > counts[cj] {
				cj = c
			}
		}
		if counts[cj] < 2 {
			return moved
		}
		p, pd := -1, float32(0)
		cc := cent[cj*d : (cj+1)*d]
		for i, c := range assign {
			if int(c) == cj {
				if v := asm.L2Sq(x[i*d:(i+1)*d], cc); v > pd {
					p, pd = i, v
				}
			}
		}
		if p < 0 {
			continue // all points of the largest cluster coincide
		}
		copy(cent[ci*d:(ci+1)*d], x[p*d:(p+1)*d])
		assign[p] = int32(ci)
		counts[ci], counts[cj] = 1, counts[cj]-1
		moved = true
	}
	return moved
}

// tileFloats is the centroid tile size in float32s (64 KiB): a tile stays
// in L2 while a block of points streams past it.
const tileFloats = 16 << 10

// assignNearest sets assign[i] to the nearest of the k centroids of x[i]
// (ties: lowest index) and, if dist != nil, dist[i] to its squared distance.
// xnorm[i] = ‖x_i‖²; xnorm == nil selects inner product: assign[i] is the
// centroid with the largest ⟨x_i,c⟩ and dist[i] = −⟨x_i,c⟩. This is the blocked many-to-many L2 kernel, built from
// asm.DotBatch (dotBatch for small d): points are processed in blocks against tiles of centroids.
func assignNearest(x, xnorm []float32, d int, cent []float32, k int, assign []int32, dist []float32, threads int) {
	n := len(assign)
	ip := xnorm == nil
	var cnorm []float32
	if ip {
		cnorm = make([]float32, k)
	} else {
		cnorm = rowNorms(cent[:k*d], d)
	}
	tile := max(1, min(k, tileFloats/d))
	const block = 64
	nblocks := (n + block - 1) / block
	if !ip && d <= smallDim {
		// Small d (PQ sub-spaces): fused dot + argmin per point.
		tile = k
	}
	work := func(b0, b1 int) {
		best := make([]float32, block)
		dots := make([]float32, tile)
		for b := b0; b < b1; b++ {
			i0, i1 := b*block, min(n, (b+1)*block)
			for i := range best {
				best[i] = float32(math.Inf(1))
			}
			for t0 := 0; t0 < k; t0 += tile {
				t1 := min(k, t0+tile)
				ct := cent[t0*d : t1*d]
				out := dots[:t1-t0]
				if !ip && d <= smallDim {
					for i := i0; i < i1; i++ {
						assign[i], best[i-i0] = argminSmall(x[i*d:(i+1)*d], ct, cnorm, k)
					}
					continue
				}
				for i := i0; i < i1; i++ {
					dotBatch(x[i*d:(i+1)*d], ct, out)
					bi, bd := assign[i], best[i-i0]
					for c, dp := range out {
						if v := cnorm[t0+c] - 2*dp; v < bd {
							bd, bi = v, int32(t0+c)
						}
					}
					assign[i], best[i-i0] = bi, bd
				}
			}
			if dist != nil {
				for i := i0; i < i1; i++ {
					if ip {
						dist[i] = best[i-i0] / 2
					} else {
						dist[i] = max(0, best[i-i0]+xnorm[i])
					}
				}
			}
		}
	}
	if threads <= 1 || nblocks < 2 {
		work(0, nblocks)
		return
	}
	threads = min(threads, nblocks)
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		b0, b1 := t*nblocks/threads, (t+1)*nblocks/threads
		wg.Add(1)
		go func() { defer wg.Done(); work(b0, b1) }()
	}
	wg.Wait()
}

// subsample returns limit distinct rows of x chosen uniformly with rng.
func subsample(x []float32, d, n, limit int, rng *rand.Rand) []float32 {
	perm := partialPerm(n, limit, rng)
	out := make([]float32, limit*d)
	for r, i := range perm {
		copy(out[r*d:(r+1)*d], x[i*d:(i+1)*d])
	}
	return out
}

// partialPerm returns the first m entries of a seeded Fisher–Yates
// permutation of 0..n-1.
func partialPerm(n, m int, rng *rand.Rand) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := 0; i < m; i++ {
		j := i + rng.IntN(n-i)
		p[i], p[j] = p[j], p[i]
	}
	return p[:m]
}

// initPlusPlus is k-means++ seeding: D² sampling with asm.L2SqBatch.
func initPlusPlus(x []float32, d, n, k int, cent []float32, rng *rand.Rand) {
	first := rng.IntN(n)
	copy(cent[:d], x[first*d:(first+1)*d])
	minD := make([]float32, n)
	asm.L2SqBatch(cent[:d], x, minD)
	tmp := make([]float32, n)
	for c := 1; c < k; c++ {
		var total float64
		for _, v := range minD {
			total += float64(v)
		}
		pick := 0
		if total > 0 {
			r := rng.Float64() * total
			var acc float64
			pick = n - 1
			for i, v := range minD {
				acc += float64(v)
				if acc > r {
					pick = i
					break
				}
			}
		} else {
			pick = rng.IntN(n)
		}
		cc := cent[c*d : (c+1)*d]
		copy(cc, x[pick*d:(pick+1)*d])
		asm.L2SqBatch(cc, x, tmp)
		for i, v := range tmp {
			if v < minD[i] {
				minD[i] = v
			}
		}
	}
}
