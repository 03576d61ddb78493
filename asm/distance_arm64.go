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

// dotDirect and l2SqDirect call the NEON kernel directly (no dispatch
// table indirection, see distance_amd64.go). len(b) ≥ len(a).
func dotDirect(a, b []float32) float32 {
	if current == NEON {
		return dotNEON(a, b)
	}
	return dotRef(a, b)
}

func l2SqDirect(a, b []float32) float32 {
	if current == NEON {
		return l2SqNEON(a, b)
	}
	return l2SqRef(a, b)
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
