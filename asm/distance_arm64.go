//go:build arm64 && gc && !noasm && !purego

package asm

// setDistanceKernels installs the NEON float32 distance kernels into t (see
// distance_arm64.s).
func setDistanceKernels(t *kernels, l Level) {
	if l != NEON {
		return
	}
	t.l2Sq = l2SqNEON
	t.dot = dotNEON
	t.l2SqBatch = l2SqBatchNEON
	t.dotBatch = dotBatchNEON
	t.sumFloat32 = sumNEON
}

// The kernels read len(a) elements of a and b, resp. len(out)·len(q)
// elements of x.

//go:noescape
func l2SqNEON(a, b []float32) float32

//go:noescape
func dotNEON(a, b []float32) float32

//go:noescape
func l2SqBatchNEON(q, x, out []float32)

//go:noescape
func dotBatchNEON(q, x, out []float32)

//go:noescape
func sumNEON(x []float32) float32
