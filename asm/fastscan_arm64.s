//go:build arm64 && gc && !noasm && !purego

#include "textflag.h"

// 4-bit PQ fast-scan, NEON. Reference: fastScan4Ref / fs4GroupRef in
// fastscan.go; layout: PackCodes4.
//
// A 32-byte group is two 16-byte halves: sub-quantizer 2i (bytes 0..15) and
// 2i+1 (bytes 16..31), each looked up with VTBL in its own 16-byte table.
// Byte j of a lookup result is the contribution of vector perm0[j] (low
// nibbles) or perm0[j]+16 (high nibbles). UADDW/UADDW2 widen bytes 0..7 and
// 8..15 into two uint16 accumulators (wrapping like the reference):
//   A0 words = vectors 0 8 1 9 2 10 3 11,  A1 = 4 12 5 13 6 14 7 15
// (A2, A3 the same +16). At the end UZP1/UZP2 de-interleave them into
// vectors 0..7 | 8..15 | 16..23 | 24..31, natural order.
//
// Registers: V0..V15 accumulators (4 per query), V16 V17 codes, V18 V20 low
// nibbles, V19 V21 high nibbles, V22 V23 LUT halves, V24..V27 lookups /
// output, V31 0x0f mask. R0 codes, R1 blocks left, R2 bytes per block,
// R3..R6 LUT cursors, R7..R10 outputs, R11 groups left, R12 query count.

// Lookup one query's LUT group (cursor lut) and accumulate into a0..a3.
#define FS_ACC(lut, a0, a1, a2, a3) \
	VLD1.P  32(lut), [V22.B16, V23.B16]; \
	VTBL    V18.B16, [V22.B16], V24.B16; \
	VTBL    V20.B16, [V23.B16], V25.B16; \
	VTBL    V19.B16, [V22.B16], V26.B16; \
	VTBL    V21.B16, [V23.B16], V27.B16; \
	VUADDW  V24.B8, a0.H8, a0.H8; \
	VUADDW2 V24.B16, a1.H8, a1.H8; \
	VUADDW  V25.B8, a0.H8, a0.H8; \
	VUADDW2 V25.B16, a1.H8, a1.H8; \
	VUADDW  V26.B8, a2.H8, a2.H8; \
	VUADDW2 V26.B16, a3.H8, a3.H8; \
	VUADDW  V27.B8, a2.H8, a2.H8; \
	VUADDW2 V27.B16, a3.H8, a3.H8

#define FS_ZERO(a0, a1, a2, a3) \
	VEOR a0.B16, a0.B16, a0.B16; \
	VEOR a1.B16, a1.B16, a1.B16; \
	VEOR a2.B16, a2.B16, a2.B16; \
	VEOR a3.B16, a3.B16, a3.B16

// De-interleave one query's accumulators, store 32 outputs, rewind its LUT
// cursor to the start of the table for the next block.
#define FS_OUT(a0, a1, a2, a3, lut, out) \
	VUZP1 a1.H8, a0.H8, V24.H8; \
	VUZP2 a1.H8, a0.H8, V25.H8; \
	VUZP1 a3.H8, a2.H8, V26.H8; \
	VUZP2 a3.H8, a2.H8, V27.H8; \
	VST1.P [V24.H8, V25.H8, V26.H8, V27.H8], 64(out); \
	SUB    R2, lut, lut

// func fs4NEON(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16, nq int)
TEXT ·fs4NEON(SB), NOSPLIT, $0-48
	MOVD codes+0(FP), R0
	MOVD nblocks+8(FP), R1
	MOVD npairs+16(FP), R2
	LSL  $5, R2, R2
	MOVD luts+24(FP), R13
	MOVD 0(R13), R3
	MOVD 8(R13), R4
	MOVD 16(R13), R5
	MOVD 24(R13), R6
	MOVD outs+32(FP), R13
	MOVD 0(R13), R7
	MOVD 8(R13), R8
	MOVD 16(R13), R9
	MOVD 24(R13), R10
	MOVD nq+40(FP), R12
	VMOVI $15, V31.B16

block:
	FS_ZERO(V0, V1, V2, V3)
	FS_ZERO(V4, V5, V6, V7)
	FS_ZERO(V8, V9, V10, V11)
	FS_ZERO(V12, V13, V14, V15)
	LSR  $5, R2, R11

group:
	VLD1.P 32(R0), [V16.B16, V17.B16]
	VAND   V31.B16, V16.B16, V18.B16
	VUSHR  $4, V16.B16, V19.B16
	VAND   V31.B16, V17.B16, V20.B16
	VUSHR  $4, V17.B16, V21.B16
	FS_ACC(R3, V0, V1, V2, V3)
	CMP    $2, R12
	BLT    next
	FS_ACC(R4, V4, V5, V6, V7)
	CMP    $3, R12
	BLT    next
	FS_ACC(R5, V8, V9, V10, V11)
	CMP    $4, R12
	BLT    next
	FS_ACC(R6, V12, V13, V14, V15)

next:
	SUBS $1, R11, R11
	BNE  group

	FS_OUT(V0, V1, V2, V3, R3, R7)
	CMP  $2, R12
	BLT  done
	FS_OUT(V4, V5, V6, V7, R4, R8)
	CMP  $3, R12
	BLT  done
	FS_OUT(V8, V9, V10, V11, R5, R9)
	CMP  $4, R12
	BLT  done
	FS_OUT(V12, V13, V14, V15, R6, R10)

done:
	SUBS $1, R1, R1
	BNE  block
	RET
