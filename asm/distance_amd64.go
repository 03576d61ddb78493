//go:build amd64 && gc && !noasm && !purego

package asm

// setDistanceKernels installs the amd64 float32 distance kernels for level l
// into t (see distance_amd64.s).
func setDistanceKernels(t *kernels, l Level) {
	switch l {
	case Generic:
		pairLevel = 0
	case AVX2:
		pairLevel = 1
		t.l2Sq = l2SqAVX2
		t.dot = dotAVX2
		t.l2SqBatch = l2SqBatchAVX2
		t.dotBatch = dotBatchAVX2
		t.sumFloat32 = sumAVX2
	case AVX512:
		pairLevel = 2
		t.l2Sq = l2SqAVX512
		t.dot = dotAVX512
		t.l2SqBatch = l2SqBatchAVX512
		t.dotBatch = dotBatchAVX512
		t.sumFloat32 = sumAVX512
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

// dotDirect and l2SqDirect are assembly entry points that test pairLevel
// and tail-jump to the kernel of the current level. Dot and L2Sq inline
// to one direct call of them: calling through the dispatch table instead
// costs an indirect call to the ABIInternal→ABI0 wrapper of the kernel,
// one more call level per pair. len(b) ≥ len(a) is the caller's duty.
//
//go:noescape
func dotDirect(a, b []float32) float32

//go:noescape
func l2SqDirect(a, b []float32) float32

// The kernels below read len(a) elements of a and b (len(b) ≥ len(a) is
// the caller's duty), resp. len(out)·len(q) elements of x.

//go:noescape
func l2SqAVX2(a, b []float32) float32

//go:noescape
func dotAVX2(a, b []float32) float32

//go:noescape
func l2SqBatchAVX2(q, x, out []float32)

//go:noescape
func dotBatchAVX2(q, x, out []float32)

//go:noescape
func sumAVX2(x []float32) float32

//go:noescape
func l2SqAVX512(a, b []float32) float32

//go:noescape
func dotAVX512(a, b []float32) float32

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
