//go:build amd64 && gc && !noasm && !purego

package asm

// setGatherKernels installs the amd64 gather kernels for level l into t
// (see gather_amd64.s); other levels keep gatherVia(t.dot / t.l2Sq).
func setGatherKernels(t *kernels, l Level) {
	if l == AVX512 {
		t.dotGather = dotGatherAVX512
		t.l2SqGather = l2SqGatherAVX512
	}
}

// dotGatherAVX512 and l2SqGatherAVX512 read len(q) floats of each row
// ids[i] of x (in range: the caller's duty) and write len(ids) floats of
// out; len(ids) ≥ 1.
//
//go:noescape
func dotGatherAVX512(q, x []float32, ids []uint32, out []float32)

//go:noescape
func l2SqGatherAVX512(q, x []float32, ids []uint32, out []float32)
