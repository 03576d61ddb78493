package ivfpq

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/stratasearch/strata/asm"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// OPQ: Ge, He, Ke, Sun, "Optimized Product Quantization for Approximate
// Nearest Neighbor Search", CVPR 2013 (TPAMI 2014), §3.1, the
// non-parametric solution. An orthogonal d×d matrix R is learned so that
// the product quantizer of the rotated vectors R·x loses less: with X the
// training points (n×d rows) and Ŷ the PQ reconstructions of X·Rᵀ, the
// method alternates
//
//  1. fix R: train the M codebooks on X·Rᵀ (warm-started from the previous
//     round after the first) and encode, giving Ŷ;
//  2. fix the codes: R = argmin over orthogonal R of ‖X·Rᵀ − Ŷ‖_F, the
//     orthogonal Procrustes problem: with XᵀŶ = U·S·Vᵀ (SVD), Rᵀ = U·Vᵀ,
//     i.e. R = V·Uᵀ.
//
// Neither step increases the distortion ‖X·Rᵀ − Ŷ‖². This is FAISS's
// OPQMatrix (niter outer rounds, niter_pq_0 k-means iterations in the
// first round and niter_pq = 4 after, R starting at the identity for a
// square matrix), read as a reference, not copied. The SVD is gonum's
// (lapack64.Gesvd, float64).
//
// Layout: R is d×d float32, row-major; the rotated vector is y = R·x,
// y_i = ⟨R_i, x⟩, so a batch X (n×d rows) rotates to X·Rᵀ with one
// asm.DotMany.

// opqPQItersAfterFirst is the k-means iterations per sub-quantizer in
// every OPQ round after the first (FAISS OPQMatrix niter_pq).
const opqPQItersAfterFirst = 4

// opqResult is the learned rotation and the mean squared PQ distortion
// ‖R·x − ŷ‖² of the training points in each round (before that round's R
// update), for tests and logs.
type opqResult struct {
	R          []float32
	Distortion []float64
}

// trainOPQ learns the OPQ rotation for an (M, nbits) product quantizer from
// x (n×d float32, row-major; n ≥ 2^nbits) in iters ≥ 1 rounds; km
// configures the per-round k-means (km.Iters is the first round's
// iterations, later rounds use opqPQItersAfterFirst, warm-started).
// Errors: PQ training errors, an SVD that does not converge.
// Cost per round: O(n·d² (rotation, XᵀŶ) + iters_pq·n·2^nbits·d + d³ (SVD)).
func trainOPQ(x []float32, d, m, nbits, iters int, km KMeans) (*opqResult, error) {
	n := len(x) / d
	threads := max(1, km.Threads)
	R := make([]float32, d*d)
	for i := 0; i < d; i++ {
		R[i*d+i] = 1
	}
	res := &opqResult{}
	xr := make([]float32, n*d)
	yhat := make([]float32, n*d)
	codes := make([]uint8, n*m)
	xT := transposeBlocks(x, d)
	var prev *PQ
	for it := 0; it < iters; it++ {
		rotateRows(x, d, R, xr, threads)
		k := km
		if it > 0 {
			k.Iters = opqPQItersAfterFirst
		}
		pq, err := trainPQ(xr, d, m, nbits, k, prev)
		if err != nil {
			return nil, err
		}
		prev = pq
		encodeParallel(pq, xr, codes, threads)
		pq.Decode(codes, yhat)
		var dist float64
		for i, v := range xr {
			e := float64(v - yhat[i])
			dist += e * e
		}
		res.Distortion = append(res.Distortion, dist/float64(n))
		// Procrustes: XᵀŶ = U S Vᵀ → R = V Uᵀ.
		if err := procrustes(crossProduct(xT, yhat, d, threads), d, R); err != nil {
			return nil, fmt.Errorf("ivfpq: OPQ round %d: %w", it, err)
		}
	}
	res.R = R
	return res, nil
}

// procrustes sets R (d×d float32) to the orthogonal matrix nearest to
// the cross-product xty = XᵀŶ (d×d float64, row-major) in the sense of
// minimising ‖X·Rᵀ − Ŷ‖_F: with XᵀŶ = U·S·Vᵀ (LAPACK Dgesvd, gonum),
// R = V·Uᵀ. The matrices are stored with an odd leading dimension: with
// d = 512 the row stride of 4096 bytes made the Givens-rotation updates of
// the SVD (Dlasr) alias in cache and run 4× slower.
func procrustes(xty []float64, d int, R []float32) error {
	ld := d + 1 - d%2 // odd: rows never 4 KiB apart
	gen := func() blas64.General {
		return blas64.General{Rows: d, Cols: d, Stride: ld, Data: make([]float64, d*ld)}
	}
	a, u, vt := gen(), gen(), gen()
	for i := 0; i < d; i++ {
		copy(a.Data[i*ld:i*ld+d], xty[i*d:(i+1)*d])
	}
	s := make([]float64, d)
	work := []float64{0}
	lapack64.Gesvd(lapack.SVDAll, lapack.SVDAll, a, u, vt, s, work, -1)
	work = make([]float64, int(work[0]))
	if !lapack64.Gesvd(lapack.SVDAll, lapack.SVDAll, a, u, vt, s, work, len(work)) {
		return errors.New("SVD did not converge")
	}
	// R = V·Uᵀ: R[a][b] = ⟨row a of V, row b of U⟩, row a of V being
	// column a of Vᵀ; one asm.DotMany in float32 (orthogonal to ~d·2^-24).
	v32 := make([]float32, d*d)
	u32 := make([]float32, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v32[j*d+i] = float32(vt.Data[i*ld+j])
			u32[i*d+j] = float32(u.Data[i*ld+j])
		}
	}
	asm.DotMany(v32, u32, d, R)
	return nil
}

// rotateRows writes out = x·Rᵀ: row i of out is R·x_i (x, out n×d; R d×d
// row-major), in blocks of rotateBlock rows on threads goroutines.
func rotateRows(x []float32, d int, R []float32, out []float32, threads int) {
	n := len(x) / d
	nb := (n + rotateBlock - 1) / rotateBlock
	parallelBlocks(nb, threads, func(b int) {
		i0, i1 := b*rotateBlock, min(n, (b+1)*rotateBlock)
		asm.DotMany(x[i0*d:i1*d], R, d, out[i0*d:i1*d])
	})
}

// rotateBlock is the rows per asm.DotMany call of rotateRows.
const rotateBlock = 64

// transposeBlocks returns x (n×d) as consecutive transposed blocks of
// crossBlock rows: block b (r rows) is d×r at offset b·crossBlock·d.
func transposeBlocks(x []float32, d int) []float32 {
	n := len(x) / d
	out := make([]float32, len(x))
	for i0 := 0; i0 < n; i0 += crossBlock {
		i1 := min(n, i0+crossBlock)
		asm.Transpose(x[i0*d:i1*d], i1-i0, d, out[i0*d:i1*d])
	}
	return out
}

// crossProduct returns XᵀY (d×d float64, row-major: [a·d+b] = Σ_i
// X[i][a]·Y[i][b]) for X given as transposeBlocks(x, d) and y n×d
// float32, summed per block of crossBlock rows in float32 by
// asm.DotMany over transposed blocks and across blocks in float64.
func crossProduct(xT, y []float32, d, threads int) []float64 {
	n := len(xT) / d
	nb := (n + crossBlock - 1) / crossBlock
	threads = max(1, min(threads, nb))
	acc := make([][]float64, threads)
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sum := make([]float64, d*d)
			yT := make([]float32, d*crossBlock)
			part := make([]float32, d*d)
			for b := t; b < nb; b += threads {
				i0, i1 := b*crossBlock, min(n, (b+1)*crossBlock)
				r := i1 - i0
				asm.Transpose(y[i0*d:i1*d], r, d, yT)
				asm.DotMany(xT[i0*d:i1*d], yT[:d*r], r, part)
				for i, v := range part {
					sum[i] += float64(v)
				}
			}
			acc[t] = sum
		}()
	}
	wg.Wait()
	out := acc[0]
	for _, s := range acc[1:] {
		for i, v := range s {
			out[i] += v
		}
	}
	return out
}

// crossBlock is the rows per float32 partial sum of crossProduct.
const crossBlock = 512

// parallelBlocks runs f(b) for b in [0, nb) on up to threads goroutines.
func parallelBlocks(nb, threads int, f func(b int)) {
	threads = max(1, min(threads, nb))
	if threads == 1 {
		for b := 0; b < nb; b++ {
			f(b)
		}
		return
	}
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := t; b < nb; b += threads {
				f(b)
			}
		}()
	}
	wg.Wait()
}

// encodeParallel is pq.Encode of x (n×D) into codes (n×M) on threads
// goroutines.
func encodeParallel(pq *PQ, x []float32, codes []uint8, threads int) {
	n := len(x) / pq.D
	const blk = 256
	nb := (n + blk - 1) / blk
	parallelBlocks(nb, threads, func(b int) {
		i0, i1 := b*blk, min(n, (b+1)*blk)
		pq.Encode(x[i0*pq.D:i1*pq.D], codes[i0*pq.M:i1*pq.M])
	})
}

// orthogonalityError returns max |(R·Rᵀ − I)_ij| of a d×d row-major R.
func orthogonalityError(R []float32, d int) float64 {
	rr := make([]float32, d*d)
	asm.DotMany(R, R, d, rr)
	var worst float64
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			v := float64(rr[i*d+j])
			if i == j {
				v--
			}
			worst = math.Max(worst, math.Abs(v))
		}
	}
	return worst
}
