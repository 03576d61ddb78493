package asm

import "math"

// Transposed-codebook kernels for small dimensions (k-means assignment and
// PQ lookup tables).
//
// With d ≤ ~32 (PQ sub-spaces are 2–32 floats) a row-against-row kernel
// spends its time on setup and horizontal reductions: one 16-lane chunk
// holds the whole row, or less. These kernels instead take the k centroids
// transposed, cT = d×k row-major (row t holds coordinate t of every
// centroid), and vectorise across centroids: for each coordinate t one
// broadcast of x[t] and one FMA per 16 centroids, no reductions. The
// whole codebook (d·k·4 bytes: 16 KiB for d = 16, k = 256) stays in L1.
// Cost: d·⌈k/16⌉ FMAs per row on AVX-512 (d·⌈k/8⌉ on AVX2); NEON
// (many_arm64.s) keeps 16 centroids in four 128-bit registers per step.
// noasm builds and other architectures run the generic Go versions
// (nearestL2TRef, dotTRef, argminAffineRef, addF32Ref), which the tests
// compare every level with.

// NearestL2T finds, for each row x_i, the centroid c minimising
// cnorm[c] − 2⟨x_i, c⟩, which is ‖x_i − c‖² − ‖x_i‖² when cnorm[c] = ‖c‖²
// (and the largest ⟨x_i, c⟩ when cnorm is all zero). Ties go to the lowest
// c; x, cT and cnorm must be finite.
//
// Shapes: n = len(assign) rows, row i = x[i·ldx : i·ldx+d] (ldx ≥ d, so a
// row can be a sub-vector of a wider matrix); k = len(cnorm) centroids,
// centroid c's coordinate t = cT[t·k+c] (cT: d×k, row-major). Writes
// assign[i] = the chosen c and, when val != nil (len ≥ n), val[i] = its
// cnorm[c] − 2⟨x_i, c⟩. d ≥ 1; k ≥ 1. It panics on short slices, like an
// out-of-range index.
//
// On AVX2 and AVX-512 the value is computed as 2·(cnorm[c]/2 −
// Σ_t x_t·c_t) with one fused multiply-add per coordinate (the halving
// and doubling are exact), so it agrees with the generic path to float
// rounding, and a near-tie may resolve differently.
func NearestL2T(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32) {
	n, kc := len(assign), len(cnorm)
	if n == 0 || kc == 0 {
		return
	}
	if d < 1 || ldx < d {
		panic("asm: NearestL2T needs d ≥ 1 and ldx ≥ d")
	}
	x = x[:(n-1)*ldx+d]
	cT = cT[:d*kc]
	if val != nil {
		val = val[:n]
	}
	k.nearestL2T(x, d, ldx, cT, cnorm, assign, val)
}

// DotT computes out[c] = base[c] + alpha·Σ_t x[t]·cT[t·k+c] for c < k =
// len(out), with d = len(x) and cT d×k row-major (the transposed
// codebook); base == nil stands for zeros. It fills PQ lookup tables in
// one call per sub-quantizer: alpha = −1 gives −⟨x, c⟩ (inner product),
// alpha = −2 with base = ‖c‖² gives ‖x − c‖² − ‖x‖². Results agree with
// the generic path to float rounding (alpha·x[t] is rounded once, then
// fused multiply-adds). It panics on short slices.
func DotT(x, cT, base []float32, alpha float32, out []float32) {
	kc := len(out)
	if kc == 0 {
		return
	}
	if base != nil {
		base = base[:kc]
	}
	if len(x) == 0 {
		if base == nil {
			clear(out)
		} else {
			copy(out, base)
		}
		return
	}
	cT = cT[:len(x)*kc]
	k.dotT(x, cT, base, alpha, out)
}

// Transpose writes the transpose of the r×c row-major matrix a into t
// (c×r row-major): t[j·r+i] = a[i·c+j]. len(a), len(t) ≥ r·c.
func Transpose(a []float32, r, c int, t []float32) {
	a, t = a[:r*c], t[:r*c]
	for i := 0; i < r; i++ {
		row := a[i*c : (i+1)*c]
		for j, v := range row {
			t[j*r+i] = v
		}
	}
}

// nearestL2TRef is the generic NearestL2T. It computes the same
// cnorm[c]/2 − Σ x_t·c_t in the same order as the AVX-512 kernel, 64
// centroids at a time so the inner loop runs over contiguous cT rows.
func nearestL2TRef(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32) {
	kc := len(cnorm)
	var acc [64]float32
	for i := range assign {
		xi := x[i*ldx : i*ldx+d]
		best, bv := int32(0), float32(math.Inf(1))
		for c0 := 0; c0 < kc; c0 += len(acc) {
			w := min(len(acc), kc-c0)
			a := acc[:w]
			for j, v := range cnorm[c0 : c0+w] {
				a[j] = v * 0.5
			}
			for t, xv := range xi {
				row := cT[t*kc+c0 : t*kc+c0+w]
				for j, v := range row {
					a[j] -= xv * v
				}
			}
			for j, v := range a {
				if v < bv {
					best, bv = int32(c0+j), v
				}
			}
		}
		assign[i] = best
		if val != nil {
			val[i] = 2 * bv
		}
	}
}

// dotTRef is the generic DotT (len(x) ≥ 1).
func dotTRef(x, cT, base []float32, alpha float32, out []float32) {
	kc := len(out)
	if base == nil {
		clear(out)
	} else {
		copy(out, base)
	}
	for t, xv := range x {
		a := alpha * xv
		row := cT[t*kc : (t+1)*kc]
		for c, v := range row {
			out[c] += a * v
		}
	}
}

// AddF32 sets dst[i] = a[i] + b[i] for i < len(dst) (a, b at least as
// long). It builds a per-list PQ lookup table from the precomputed list
// term and the query term (FAISS's fvec_madd with factor 1). It panics
// on short slices.
func AddF32(dst, a, b []float32) {
	if len(dst) == 0 {
		return
	}
	a, b = a[:len(dst)], b[:len(dst)]
	k.addF32(dst, a, b)
}

func addF32Ref(dst, a, b []float32) {
	a, b = a[:len(dst)], b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// ArgminAffine finds, for each row i < n = len(idx) of x (n×k row-major,
// k = len(base)), the c minimising base[c] + alpha·x[i·k+c]: idx[i] = c
// (ties: lowest c) and val[i] = that value. With x a block of inner
// products ⟨x_i, c⟩, base = ‖c‖² and alpha = −2 it is the argmin step of
// k-means assignment after DotMany. Inputs must be finite. On AVX2/AVX-512
// the value is one fused multiply-add, so it agrees with the generic path
// to float rounding. It panics on short slices.
//
// Cost: k/16 fused multiply-adds and compares per row (AVX-512), k/8 (AVX2).
func ArgminAffine(x []float32, base []float32, alpha float32, idx []int32, val []float32) {
	n, kc := len(idx), len(base)
	if n == 0 {
		return
	}
	if kc == 0 {
		panic("asm: ArgminAffine needs len(base) ≥ 1")
	}
	x, val = x[:n*kc], val[:n]
	k.argminAff(x, base, alpha, idx, val)
}

func argminAffineRef(x []float32, base []float32, alpha float32, idx []int32, val []float32) {
	kc := len(base)
	for i := range idx {
		row := x[i*kc : (i+1)*kc]
		best, bv := int32(0), float32(math.Inf(1))
		for c, v := range row {
			if s := base[c] + alpha*v; s < bv {
				best, bv = int32(c), s
			}
		}
		idx[i], val[i] = best, bv
	}
}
