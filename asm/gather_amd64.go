//go:build amd64 && gc && !noasm && !purego

package asm

// setGatherKernels installs the amd64 gather kernels for level l into t
// (see gather_amd64.s). At AVX512: the self-checking dotGatherChk /
// l2SqGatherChk, which DotGather / L2SqGather prefer, with dotGather and
// l2SqGather left as gatherVia(t.dot / t.l2Sq) (used when d is 0, larger
// than len(x) or ≥ gatherChkMaxD). At AVX2: dotGather / l2SqGather are the
// four-rows-at-a-time AVX2 kernels, run after checkGather's pass over ids.
func setGatherKernels(t *kernels, l Level) {
	switch l {
	case AVX512:
		t.dotGatherChk = dotGatherAVX512
		t.l2SqGatherChk = l2SqGatherAVX512
	case AVX2:
		t.dotGather = dotGatherAVX2
		t.l2SqGather = l2SqGatherAVX2
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

// dotGatherAVX2 and l2SqGatherAVX2 read len(q) floats of each row ids[i]
// of x and write len(ids) floats of out (len(out) ≥ len(ids)). They do
// not check ids: every row ids[i] must lie wholly inside x (checkGather).
//
//go:noescape
func dotGatherAVX2(q, x []float32, ids []uint32, out []float32)

//go:noescape
func l2SqGatherAVX2(q, x []float32, ids []uint32, out []float32)
