//go:build arm64 && gc && !noasm && !purego

package asm

// setFastScanKernels installs the arm64 fast-scan kernel for level l into t.
func setFastScanKernels(t *kernels, l Level) {
	if l == NEON {
		t.fastScan4 = fastScan4NEON
	}
}

// fs4NEON computes fastScan4Ref for nq = 1..4 queries (fastscan_arm64.s).
// codes: nblocks·npairs·32 packed bytes, nblocks ≥ 1, npairs = mpad/2 ≥ 1;
// luts: nq pointers to mpad×16 LUTs; outs: nq pointers to nblocks·32 uint16.
//
//go:noescape
func fs4NEON(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16, nq int)

func fastScan4NEON(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16) {
	var lp [4]*uint8
	var op [4]*uint16
	for i := range luts {
		lp[i] = &luts[i][0]
		op[i] = &out[i][0]
	}
	fs4NEON(&packed[0], nblocks, (m+1)/2, &lp, &op, len(luts))
}

// GFNI variants exist only on amd64; see fastscan_amd64.go.
var fs4HasGFNI, fs4UseGFNI = false, false

// The transposed VBMI/VNNI variants exist only on amd64 too.
var fs4HasVBMI, fs4UseVBMI = false, false
