//go:build arm64 && gc && !noasm && !purego

package asm

// setManyKernels installs the NEON transposed-codebook kernels (see
// many_arm64.s and many.go) for level l into t: AddF32, DotT, NearestL2T
// and ArgminAffine.
func setManyKernels(t *kernels, l Level) {
	if l != NEON {
		return
	}
	t.addF32 = addF32NEON
	t.dotT = dotTNEON
	t.nearestL2T = nearestL2TNEON
	t.argminAff = argminAffineNEON
}

// addF32NEON is AddF32 with len(dst) ≥ 1 and a, b at least as long.
//
//go:noescape
func addF32NEON(dst, a, b []float32)

// dotTNEON is DotT with its checks done: len(x) ≥ 1, len(out) ≥ 1,
// len(cT) ≥ len(x)·len(out); base nil or len(base) ≥ len(out).
//
//go:noescape
func dotTNEON(x, cT, base []float32, alpha float32, out []float32)

// nearestL2TNEON is NearestL2T with its checks done: d ≥ 1, ldx ≥ d,
// len(assign) ≥ 1, len(cnorm) ≥ 1, the slices long enough; val may be nil.
//
//go:noescape
func nearestL2TNEON(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)

// argminAffineNEON is ArgminAffine with len(base) ≥ 1, len(idx) ≥ 1,
// len(x) ≥ len(idx)·len(base), len(val) ≥ len(idx).
//
//go:noescape
func argminAffineNEON(x []float32, base []float32, alpha float32, idx []int32, val []float32)
