//go:build amd64 && gc && !noasm && !purego

package asm

import "github.com/klauspost/cpuid/v2"

// fs4HasGFNI reports GFNI (VGF2P8AFFINEQB), which extracts the high nibbles
// of the codes in one instruction instead of a shift and a mask. fs4UseGFNI
// selects the GFNI variants of the 1-query kernels; tests clear it to run
// the plain variants on GFNI machines too.
var (
	fs4HasGFNI = cpuid.CPU.Supports(cpuid.GFNI)
	fs4UseGFNI = fs4HasGFNI
)

// fs4HasVBMI reports AVX512_VBMI (VPERMB) and AVX512_VNNI (VPDPBUSD), which
// the transposed AVX-512 kernels (...V, see fastscan_amd64.s) need on top
// of the AVX-512 level. fs4UseVBMI selects them at the AVX-512 level for
// every query count; tests clear it to run the PSHUFB kernels too.
var (
	fs4HasVBMI = cpuid.CPU.Supports(cpuid.AVX512VBMI, cpuid.AVX512VNNI)
	fs4UseVBMI = fs4HasVBMI
)

// setFastScanKernels installs the amd64 fast-scan kernels for level l into t.
func setFastScanKernels(t *kernels, l Level) {
	switch l {
	case AVX2:
		t.fastScan4 = fastScan4AVX2
	case AVX512:
		t.fastScan4 = fastScan4AVX512
	}
}

// The assembly kernels (fastscan_amd64.s) all take
//
//	codes:   nblocks·npairs·32 packed bytes (PackCodes4 layout), nblocks ≥ 1
//	npairs:  mpad/2 ≥ 1 groups per block
//	luts:    Q pointers to mpad×16 quantised LUTs
//	outs:    Q pointers to nblocks·32 uint16 outputs
//
// and compute exactly fastScan4Ref for Q = 1..4 queries. The ...Q1G
// variants need GFNI as well, the ...V variants AVX512_VBMI and
// AVX512_VNNI.

//go:noescape
func fs4AVX2Q1(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX2Q1G(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX2Q2(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX2Q3(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX2Q4(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q1(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q1G(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q2(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q3(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q4(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q1V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q2V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q3V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

//go:noescape
func fs4AVX512Q4V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)

// fs4Ptrs gathers the per-query base pointers. FastScan4 guarantees
// nblocks ≥ 1, m ≥ 1, 1–4 queries and exact slice lengths.
func fs4Ptrs(luts [][]uint8, out [][]uint16) (lp [4]*uint8, op [4]*uint16) {
	for i := range luts {
		lp[i] = &luts[i][0]
		op[i] = &out[i][0]
	}
	return lp, op
}

func fastScan4AVX2(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16) {
	lp, op := fs4Ptrs(luts, out)
	np := (m + 1) / 2
	switch len(luts) {
	case 1:
		if fs4UseGFNI {
			fs4AVX2Q1G(&packed[0], nblocks, np, &lp, &op)
		} else {
			fs4AVX2Q1(&packed[0], nblocks, np, &lp, &op)
		}
	case 2:
		fs4AVX2Q2(&packed[0], nblocks, np, &lp, &op)
	case 3:
		fs4AVX2Q3(&packed[0], nblocks, np, &lp, &op)
	case 4:
		fs4AVX2Q4(&packed[0], nblocks, np, &lp, &op)
	}
}

func fastScan4AVX512(packed []uint8, nblocks, m int, luts [][]uint8, out [][]uint16) {
	lp, op := fs4Ptrs(luts, out)
	np := (m + 1) / 2
	if fs4UseVBMI {
		switch len(luts) {
		case 1:
			fs4AVX512Q1V(&packed[0], nblocks, np, &lp, &op)
		case 2:
			fs4AVX512Q2V(&packed[0], nblocks, np, &lp, &op)
		case 3:
			fs4AVX512Q3V(&packed[0], nblocks, np, &lp, &op)
		case 4:
			fs4AVX512Q4V(&packed[0], nblocks, np, &lp, &op)
		}
		return
	}
	switch len(luts) {
	case 1:
		if fs4UseGFNI {
			fs4AVX512Q1G(&packed[0], nblocks, np, &lp, &op)
		} else {
			fs4AVX512Q1(&packed[0], nblocks, np, &lp, &op)
		}
	case 2:
		fs4AVX512Q2(&packed[0], nblocks, np, &lp, &op)
	case 3:
		fs4AVX512Q3(&packed[0], nblocks, np, &lp, &op)
	case 4:
		fs4AVX512Q4(&packed[0], nblocks, np, &lp, &op)
	}
}
