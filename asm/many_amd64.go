//go:build amd64 && gc && !noasm && !purego

package asm

// setManyKernels installs the amd64 transposed-codebook kernels (see
// many_amd64.s and many.go) for level l into t.
func setManyKernels(t *kernels, l Level) {
	switch l {
	case AVX2:
		t.nearestL2T = nearestL2TAVX2
		t.dotT = dotTAVX2
		t.addF32 = addF32AVX2
		t.argminAff = argminAffineAVX2
	case AVX512:
		t.nearestL2T = nearestL2TAVX512
		t.dotT = dotTAVX512
		t.addF32 = addF32AVX512
		t.argminAff = argminAffineAVX512
	}
}

// addF32AVX512 and addF32AVX2 are AddF32 with len(dst) ≥ 1 and a, b at
// least as long.
//
//go:noescape
func addF32AVX512(dst, a, b []float32)

//go:noescape
func addF32AVX2(dst, a, b []float32)

// nearestL2TAVX512 is NearestL2T with its checks done: d ≥ 1, ldx ≥ d,
// len(assign) ≥ 1, len(cnorm) ≥ 1, the slices long enough; val may be nil.
//
//go:noescape
func nearestL2TAVX512(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)

// dotTAVX512 is DotT with its checks done: len(x) ≥ 1, len(out) ≥ 1,
// len(cT) ≥ len(x)·len(out); base nil or len(base) ≥ len(out).
//
//go:noescape
func dotTAVX512(x, cT, base []float32, alpha float32, out []float32)

// argminAffineAVX512 is ArgminAffine with len(base) ≥ 1, len(idx) ≥ 1,
// len(x) ≥ len(idx)·len(base), len(val) ≥ len(idx).
//
//go:noescape
func argminAffineAVX512(x []float32, base []float32, alpha float32, idx []int32, val []float32)

// The AVX2 + FMA versions of the kernels above, same contracts.
//
//go:noescape
func nearestL2TAVX2(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)

//go:noescape
func dotTAVX2(x, cT, base []float32, alpha float32, out []float32)

//go:noescape
func argminAffineAVX2(x []float32, base []float32, alpha float32, idx []int32, val []float32)
