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
	// ⟨x,c⟩, FAISS Clustering over IndexFlatIP). Centroids are plain means
	// unless Spherical is set (Options.SphericalCoarse).
	Metric Metric
	// Spherical rescales every centroid to unit L2 norm after each update
	// (FAISS ClusteringParameters.spherical). Zero centroids stay zero.
	Spherical bool
	// init, when it holds K×d floats, replaces the initialisation (warm
	// start, used by OPQ's alternating training, FAISS Train_hot_start).
	init []float32
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
// centroid by ‖x‖² − 2⟨x,c⟩ + ‖c‖² (the blocked kernels of assignNearest:
// asm.NearestL2T for d ≤ 32, asm.DotMany + asm.ArgminAffine above; points
// split across Threads goroutines), recomputes the means
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
	switch {
	case len(km.init) == k*d:
		copy(cent, km.init)
	case km.Init == InitPlusPlus:
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
		if km.Spherical {
			renormRows(cent, d)
		}
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
		if km.Spherical {
			renormRows(cent, d)
		}
	}
	return cent, nil
}

// renormRows scales every non-zero row of x (row-major, d columns) to unit
// L2 norm, computed in float64.
func renormRows(x []float32, d int) {
	for i := 0; i+d <= len(x); i += d {
		row := x[i : i+d]
		var ss float64
		for _, v := range row {
			ss += float64(v) * float64(v)
		}
		if ss == 0 {
			continue
		}
		inv := 1 / math.Sqrt(ss)
		for j, v := range row {
			row[j] = float32(float64(v) * inv)
		}
	}
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

// transposedMaxDim is the largest dimension assigned with
// asm.NearestL2T on the transposed centroids (one FMA per coordinate and
// 16 centroids, the codebook in L1: PQ sub-spaces); above it the
// register-blocked asm.DotMany tiles (4 points × 4 centroids per pass on
// AVX-512) compute ⟨x,c⟩ for a block of points against a tile of
// centroids.
const transposedMaxDim = 32

// assignBlock is the number of points per work unit of assignNearest, and
// assignTile the centroids per asm.DotMany call (its output, block×tile
// floats, stays in L2).
const (
	assignBlock = 64
	assignTile  = 1024
)

// assignNearest sets assign[i] to the nearest of the k centroids of x[i]
// (ties: lowest index) and, if dist != nil, dist[i] to its squared
// distance, computed as ‖x‖² + ‖c‖² − 2⟨x,c⟩ (clamped at 0). xnorm[i] =
// ‖x_i‖²; xnorm == nil selects inner product: assign[i] is the centroid
// with the largest ⟨x_i,c⟩ and dist[i] = −⟨x_i,c⟩.
//
// This is the blocked many-to-many kernel of k-means: d ≤
// transposedMaxDim uses asm.NearestL2T (dot products, norms and the argmin
// fused in one pass over the transposed centroids); larger d computes
// blocks of assignBlock points × assignTile centroids with asm.DotMany and
// takes the argmin of ‖c‖² − 2⟨x,c⟩ with asm.ArgminAffine. Blocks are
// split across threads goroutines; a point's result does not depend on
// threads.
func assignNearest(x, xnorm []float32, d int, cent []float32, k int, assign []int32, dist []float32, threads int) {
	n := len(assign)
	ip := xnorm == nil
	var cnorm []float32
	if ip {
		cnorm = make([]float32, k)
	} else {
		cnorm = rowNorms(cent[:k*d], d)
	}
	nblocks := (n + assignBlock - 1) / assignBlock
	var work func(b0, b1 int)
	if d <= transposedMaxDim {
		cT := make([]float32, k*d)
		asm.Transpose(cent[:k*d], k, d, cT)
		work = func(b0, b1 int) {
			var val [assignBlock]float32
			for b := b0; b < b1; b++ {
				i0, i1 := b*assignBlock, min(n, (b+1)*assignBlock)
				asm.NearestL2T(x[i0*d:i1*d], d, d, cT, cnorm, assign[i0:i1], val[:i1-i0])
				if dist != nil {
					finishDist(dist[i0:i1], val[:i1-i0], xnorm, i0, ip)
				}
			}
		}
	} else {
		tile := min(k, assignTile)
		work = func(b0, b1 int) {
			dots := make([]float32, assignBlock*tile)
			var best, tv [assignBlock]float32
			var ti [assignBlock]int32
			for b := b0; b < b1; b++ {
				i0, i1 := b*assignBlock, min(n, (b+1)*assignBlock)
				nb := i1 - i0
				for t0 := 0; t0 < k; t0 += tile {
					t1 := min(k, t0+tile)
					out := dots[:nb*(t1-t0)]
					asm.DotMany(x[i0*d:i1*d], cent[t0*d:t1*d], d, out)
					asm.ArgminAffine(out, cnorm[t0:t1], -2, ti[:nb], tv[:nb])
					for r := 0; r < nb; r++ {
						if t0 == 0 || tv[r] < best[r] {
							assign[i0+r], best[r] = int32(t0)+ti[r], tv[r]
						}
					}
				}
				if dist != nil {
					finishDist(dist[i0:i1], best[:nb], xnorm, i0, ip)
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

// finishDist turns the minima v = ‖c‖² − 2⟨x,c⟩ (IP: −2⟨x,c⟩) of points
// i0.. into distances: L2 max(0, v + ‖x‖²), IP v/2.
func finishDist(dist, v, xnorm []float32, i0 int, ip bool) {
	for i, b := range v {
		if ip {
			dist[i] = b / 2
		} else {
			dist[i] = max(0, b+xnorm[i0+i])
		}
	}
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
