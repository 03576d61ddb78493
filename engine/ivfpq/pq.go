package ivfpq

import (
	"fmt"
	"math"
	"sync"
)

// PQ is a product quantizer (Jégou, Douze, Schmid, "Product quantization for
// nearest neighbor search", IEEE TPAMI 2011, §II–III): a d-dimensional
// vector is split into M sub-vectors of Dsub = d/M dimensions, and each is
// replaced by the index of its nearest of Ksub = 2^Nbits centroids.
type PQ struct {
	D, M, Nbits int
	Dsub, Ksub  int
	// Centroids holds M codebooks of Ksub×Dsub float32: sub-quantizer j,
	// centroid c is Centroids[(j·Ksub+c)·Dsub : (j·Ksub+c+1)·Dsub].
	Centroids []float32

	normsOnce sync.Once
	cnorms    []float32 // ‖centroid‖², M×Ksub, computed on first use
}

// centroidNorms returns ‖C_j[c]‖² for every sub-quantizer j and centroid c
// (M×Ksub). Centroids must not change after the first call.
func (pq *PQ) centroidNorms() []float32 {
	pq.normsOnce.Do(func() { pq.cnorms = rowNorms(pq.Centroids, pq.Dsub) })
	return pq.cnorms
}

// newPQ checks the shape and returns an untrained PQ.
func newPQ(d, m, nbits int) (*PQ, error) {
	if d < 1 || m < 1 || d%m != 0 {
		return nil, fmt.Errorf("%w: PQ needs d divisible by M, got d = %d, M = %d", ErrInvalidArgument, d, m)
	}
	if nbits != 4 && nbits != 8 {
		return nil, fmt.Errorf("%w: PQ nbits = %d, want 4 or 8", ErrInvalidArgument, nbits)
	}
	ksub := 1 << nbits
	return &PQ{D: d, M: m, Nbits: nbits, Dsub: d / m, Ksub: ksub, Centroids: make([]float32, m*ksub*(d/m))}, nil
}

// TrainPQ trains a product quantizer on x (n×d float32, row-major): one
// k-means with Ksub centroids per sub-space (km.K is ignored), the M
// sub-spaces trained in parallel on km.Threads goroutines, sub-space j
// seeded with km.Seed+j. Needs n ≥ 2^nbits.
func TrainPQ(x []float32, d, m, nbits int, km KMeans) (*PQ, error) {
	pq, err := newPQ(d, m, nbits)
	if err != nil {
		return nil, err
	}
	if len(x)%d != 0 {
		return nil, fmt.Errorf("%w: len(x) = %d is not a multiple of d = %d", ErrDimension, len(x), d)
	}
	n := len(x) / d
	if n < pq.Ksub {
		return nil, fmt.Errorf("%w: PQ training needs ≥ %d points, got %d", ErrInvalidArgument, pq.Ksub, n)
	}
	threads := max(1, km.Threads)
	var wg sync.WaitGroup
	errs := make([]error, m)
	next := make(chan int, m)
	for j := 0; j < m; j++ {
		next <- j
	}
	close(next)
	for t := 0; t < min(threads, m); t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub := make([]float32, n*pq.Dsub)
			for j := range next {
				for i := 0; i < n; i++ {
					copy(sub[i*pq.Dsub:(i+1)*pq.Dsub], x[i*d+j*pq.Dsub:i*d+(j+1)*pq.Dsub])
				}
				k := km
				k.K, k.Seed, k.Threads = pq.Ksub, km.Seed+uint64(j)+1, 1
				c, err := k.Train(sub, pq.Dsub)
				if err != nil {
					errs[j] = err
					continue
				}
				copy(pq.codebook(j), c)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return pq, nil
}

// codebook returns sub-quantizer j's Ksub×Dsub centroids.
func (pq *PQ) codebook(j int) []float32 {
	s := pq.Ksub * pq.Dsub
	return pq.Centroids[j*s : (j+1)*s]
}

// Encode writes the codes of x (n×D float32) into codes (n×M bytes, one
// code per byte whatever Nbits; row-major). len(codes) ≥ n·M.
func (pq *PQ) Encode(x []float32, codes []uint8) {
	n := len(x) / pq.D
	dots := make([]float32, pq.Ksub)
	cn := pq.centroidNorms()
	for i := 0; i < n; i++ {
		for j := 0; j < pq.M; j++ {
			sub := x[i*pq.D+j*pq.Dsub : i*pq.D+(j+1)*pq.Dsub]
			// argmin ‖x−c‖² = argmin ‖c‖² − 2⟨x,c⟩
			norms := cn[j*pq.Ksub : (j+1)*pq.Ksub]
			var best int
			if pq.Dsub <= smallDim {
				b, _ := argminSmall(sub, pq.codebook(j), norms, pq.Ksub)
				best = int(b)
			} else {
				dotBatch(sub, pq.codebook(j), dots)
				bd := norms[0] - 2*dots[0]
				for c := 1; c < pq.Ksub; c++ {
					if v := norms[c] - 2*dots[c]; v < bd {
						best, bd = c, v
					}
				}
			}
			codes[i*pq.M+j] = uint8(best)
		}
	}
}

// Decode reconstructs n = len(codes)/M vectors into x (n×D float32).
func (pq *PQ) Decode(codes []uint8, x []float32) {
	n := len(codes) / pq.M
	for i := 0; i < n; i++ {
		for j := 0; j < pq.M; j++ {
			c := int(codes[i*pq.M+j])
			copy(x[i*pq.D+j*pq.Dsub:i*pq.D+(j+1)*pq.Dsub], pq.codebook(j)[c*pq.Dsub:(c+1)*pq.Dsub])
		}
	}
}

// LUT fills lut (M×Ksub float32) with the distance contributions of query
// q (D float32): L2: lut[j·Ksub+c] = ‖q_j − C_j[c]‖²; IP: −⟨q_j, C_j[c]⟩,
// so that Σ_j lut[j·Ksub + code_j] is the distance of q to the
// reconstruction (L2²) or its negated inner product (IP).
//
// L2 entries are computed as ‖q_j‖² − 2⟨q_j,c⟩ + ‖c‖² (clamped at 0).
func (pq *PQ) LUT(q []float32, metric Metric, lut []float32) {
	cn := pq.centroidNorms()
	for j := 0; j < pq.M; j++ {
		sub := q[j*pq.Dsub : (j+1)*pq.Dsub]
		t := lut[j*pq.Ksub : (j+1)*pq.Ksub]
		dotBatch(sub, pq.codebook(j), t)
		if metric == IP {
			for c := range t {
				t[c] = -t[c]
			}
			continue
		}
		var qn float32
		for _, v := range sub {
			qn += v * v
		}
		norms := cn[j*pq.Ksub : (j+1)*pq.Ksub]
		for c := range t {
			t[c] = max(0, qn-2*t[c]+norms[c])
		}
	}
}

// finite reports whether every value of x is finite.
func finite(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}
