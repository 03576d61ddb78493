//go:build amd64 && gc && !noasm && !purego

package asm

// setGatherKernels installs the amd64 gather kernels for level l into t
// (see gather_amd64.s): at AVX512 the self-checking dotGatherChk /
// l2SqGatherChk, which DotGather / L2SqGather prefer; dotGather and
// l2SqGather stay gatherVia(t.dot / t.l2Sq) at every level (used when d
// is 0, larger than len(x) or ≥ gatherChkMaxD).
func setGatherKernels(t *kernels, l Level) {
	if l == AVX512 {
		t.dotGatherChk = dotGatherAVX512
		t.l2SqGatherChk = l2SqGatherAVX512
	}
}

// dotGatherAVX512 and l2SqGatherAVX512 read len(q) floats of each row
// ids[i] of x and write len(ids) floats of out; len(ids) ≥ 1 and
// 1 ≤ len(q) ≤ min(len(x), gatherChkMaxD). They check every id themselves:
// at the first row not wholly inside x they stop, before touching it, and
// return 1 (out then holds only some of the distances); otherwise 0.
//
//go:noescape
func dotGatherAVX512(q, x []float32, ids []uint32, out []float32) int

//go:noescape
func l2SqGatherAVX512(q, x []float32, ids []uint32, out []float32) int
