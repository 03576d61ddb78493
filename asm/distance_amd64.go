//go:build amd64 && gc && !noasm && !purego

package asm

import "unsafe"

// setDistanceKernels installs the amd64 float32 distance kernels for level l
// into t (see distance_amd64.s).
func setDistanceKernels(t *kernels, l Level) {
	switch l {
	case Generic:
		pairLevel = 0
	case AVX2:
		pairLevel = 1
		t.l2Sq = l2SqAVX2s
		t.dot = dotAVX2s
		t.l2SqBatch = l2SqBatchAVX2
		t.dotBatch = dotBatchAVX2
		t.sumFloat32 = sumAVX2
		t.indexAbove = indexAboveAVX2
		t.indexBelowU16 = indexBelowU16AVX2
		t.l2SqMany = func(x, c []float32, d int, out []float32) {
			if d%4 != 0 {
				l2SqManyBatch(x, c, d, out)
				return
			}
			manyTiledRows(x, c, d, out, 2, l2SqTile2AVX2, l2SqBatchAVX2)
		}
		t.dotMany = func(x, c []float32, d int, out []float32) {
			if d%4 != 0 {
				dotManyBatch(x, c, d, out)
				return
			}
			manyTiledRows(x, c, d, out, 3, dotTile3AVX2, dotBatchAVX2)
		}
	case AVX512:
		pairLevel = 2
		t.l2Sq = l2SqAVX512s
		t.dot = dotAVX512s
		t.l2SqBatch = l2SqBatchAVX512
		t.dotBatch = dotBatchAVX512
		t.sumFloat32 = sumAVX512
		t.indexAbove = indexAboveAVX512
		t.indexBelowU16 = indexBelowU16AVX512
		t.l2SqMany = func(x, c []float32, d int, out []float32) {
			manyTiled(x, c, d, out, l2SqTileAVX512, l2SqBatchAVX512)
		}
		t.dotMany = func(x, c []float32, d int, out []float32) {
			manyTiled(x, c, d, out, dotTileAVX512, dotBatchAVX512)
		}
	}
}

// pairLevel selects the single-pair kernel that dotDirect / l2SqDirect
// jump to: 0 generic, 1 AVX2, 2 AVX-512. It is written only by setLevel.
var pairLevel uint8

// dotDirect and l2SqDirect inline into Dot and L2Sq as one direct call of
// the assembly entry points dotDirectP / l2SqDirectP, which test pairLevel
// and tail-jump to the kernel of the current level. Calling through the
// dispatch table instead costs an indirect call to the ABIInternal→ABI0
// wrapper of the kernel, one more call level per pair. The entry points
// and the single-pair kernels take (a, b *float32, n int) -- three stack
// words per call instead of two slices' six. len(b) ≥ len(a) is the
// caller's duty; for n = 0 the pointers are not read.
func dotDirect(a, b []float32) float32 {
	return dotDirectP(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

func l2SqDirect(a, b []float32) float32 {
	return l2SqDirectP(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

//go:noescape
func dotDirectP(a, b *float32, n int) float32

//go:noescape
func l2SqDirectP(a, b *float32, n int) float32

// dotRefP and l2SqRefP are the generic targets of the entry points.
func dotRefP(a, b *float32, n int) float32 {
	return dotRef(unsafe.Slice(a, n), unsafe.Slice(b, n))
}

func l2SqRefP(a, b *float32, n int) float32 {
	return l2SqRef(unsafe.Slice(a, n), unsafe.Slice(b, n))
}

// The single-pair kernels read n floats of a and b; the ...s forms are
// their dispatch-table (slice) signatures.
func l2SqAVX2s(a, b []float32) float32 {
	return l2SqAVX2(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

func dotAVX2s(a, b []float32) float32 {
	return dotAVX2(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

func l2SqAVX512s(a, b []float32) float32 {
	return l2SqAVX512(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

func dotAVX512s(a, b []float32) float32 {
	return dotAVX512(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

//go:noescape
func l2SqAVX2(a, b *float32, n int) float32

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func l2SqAVX512(a, b *float32, n int) float32

//go:noescape
func dotAVX512(a, b *float32, n int) float32

// The batch kernels read len(out)·len(q) elements of x.

//go:noescape
func l2SqBatchAVX2(q, x, out []float32)

//go:noescape
func dotBatchAVX2(q, x, out []float32)

//go:noescape
func sumAVX2(x []float32) float32

//go:noescape
func l2SqBatchAVX512(q, x, out []float32)

//go:noescape
func dotBatchAVX512(q, x, out []float32)

//go:noescape
func sumAVX512(x []float32) float32

// l2SqTileAVX512 and dotTileAVX512 write the 4×mc block
// out[r*ldo+j] = L2Sq / Dot(x row r, c row j) for r < 4, j < mc, where
// x is 4×d, c is mc×d, mc ≥ 4 and mc % 4 == 0.
//
//go:noescape
func l2SqTileAVX512(x, c []float32, d, mc int, out []float32, ldo int)

//go:noescape
func dotTileAVX512(x, c []float32, d, mc int, out []float32, ldo int)

// dotTile3AVX2 writes the 3×mc block out[r*ldo+j] = Dot(x row r, c row j)
// for r < 3, j < mc, and l2SqTile2AVX2 the 2×mc block of L2Sq, where x is
// 3×d (2×d), c is mc×d, mc ≥ 4, mc % 4 == 0 and d % 4 == 0 (d ≥ 4).
//
//go:noescape
func dotTile3AVX2(x, c []float32, d, mc int, out []float32, ldo int)

//go:noescape
func l2SqTile2AVX2(x, c []float32, d, mc int, out []float32, ldo int)
