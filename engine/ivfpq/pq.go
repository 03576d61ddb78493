package ivfpq

import (
	"fmt"
	"math"
	"sync"

	"github.com/stratasearch/strata/asm"
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
	cT        []float32 // transposed codebooks, M × (Dsub×Ksub), ditto
}

// tables returns ‖C_j[c]‖² for every sub-quantizer j and centroid c
// (M×Ksub) and the transposed codebooks (sub-quantizer j: Dsub×Ksub at
// cT[j·Dsub·Ksub:], coordinate t of centroid c at [t·Ksub+c]), the layout
// of asm.NearestL2T and asm.DotT. Centroids must not change after the
// first call.
func (pq *PQ) tables() (cnorms, cT []float32) {
	pq.normsOnce.Do(func() {
		pq.cnorms = rowNorms(pq.Centroids, pq.Dsub)
		pq.cT = make([]float32, len(pq.Centroids))
		s := pq.Ksub * pq.Dsub
		for j := 0; j < pq.M; j++ {
			asm.Transpose(pq.Centroids[j*s:(j+1)*s], pq.Ksub, pq.Dsub, pq.cT[j*s:(j+1)*s])
		}
	})
	return pq.cnorms, pq.cT
}

// codebookT returns sub-quantizer j's transposed codebook (Dsub×Ksub).
func (pq *PQ) codebookT(cT []float32, j int) []float32 {
	s := pq.Ksub * pq.Dsub
	return cT[j*s : (j+1)*s]
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
	return trainPQ(x, d, m, nbits, km, nil)
}

// trainPQ is TrainPQ; with prev (same shape) each sub-quantizer's k-means
// starts from prev's codebook instead of its initialisation (warm start).
func trainPQ(x []float32, d, m, nbits int, km KMeans, prev *PQ) (*PQ, error) {
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
				if prev != nil {
					k.init = prev.codebook(j)
				}
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
// code per byte whatever Nbits; row-major). len(codes) ≥ n·M. Each
// sub-vector goes to its nearest centroid (asm.NearestL2T over the
// transposed codebook, up to 256 vectors per call).
func (pq *PQ) Encode(x []float32, codes []uint8) {
	n := len(x) / pq.D
	cn, cT := pq.tables()
	var a [256]int32
	for i0 := 0; i0 < n; i0 += len(a) {
		i1 := min(n, i0+len(a))
		for j := 0; j < pq.M; j++ {
			asm.NearestL2T(x[i0*pq.D+j*pq.Dsub:], pq.Dsub, pq.D, pq.codebookT(cT, j), cn[j*pq.Ksub:(j+1)*pq.Ksub], a[:i1-i0], nil)
			for i := i0; i < i1; i++ {
				codes[i*pq.M+j] = uint8(a[i-i0])
			}
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
// L2 entries are computed as ‖q_j‖² − 2⟨q_j,c⟩ + ‖c‖² (clamped at 0), one
// asm.DotT per sub-quantizer.
func (pq *PQ) LUT(q []float32, metric Metric, lut []float32) {
	cn, cT := pq.tables()
	for j := 0; j < pq.M; j++ {
		sub := q[j*pq.Dsub : (j+1)*pq.Dsub]
		t := lut[j*pq.Ksub : (j+1)*pq.Ksub]
		if metric == IP {
			asm.DotT(sub, pq.codebookT(cT, j), nil, -1, t)
			continue
		}
		asm.DotT(sub, pq.codebookT(cT, j), cn[j*pq.Ksub:(j+1)*pq.Ksub], -2, t)
		var qn float32
		for _, v := range sub {
			qn += v * v
		}
		for c, v := range t {
			t[c] = max(0, v+qn)
		}
	}
}

// queryTerm fills qt (M×Ksub) with −2⟨q_j, C_j[c]⟩: the query-dependent
// term of the precomputed-table decomposition (see Index.precomputed),
// one table per query shared by every probed list.
func (pq *PQ) queryTerm(q []float32, qt []float32) {
	_, cT := pq.tables()
	for j := 0; j < pq.M; j++ {
		asm.DotT(q[j*pq.Dsub:(j+1)*pq.Dsub], pq.codebookT(cT, j), nil, -2, qt[j*pq.Ksub:(j+1)*pq.Ksub])
	}
}

// listTerm fills t (M×Ksub) with ‖C_j[c]‖² + 2⟨y_j, C_j[c]⟩ for a coarse
// centroid y (D float32): the query-independent term of the
// precomputed-table decomposition.
func (pq *PQ) listTerm(y []float32, t []float32) {
	cn, cT := pq.tables()
	for j := 0; j < pq.M; j++ {
		asm.DotT(y[j*pq.Dsub:(j+1)*pq.Dsub], pq.codebookT(cT, j), cn[j*pq.Ksub:(j+1)*pq.Ksub], 2, t[j*pq.Ksub:(j+1)*pq.Ksub])
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
