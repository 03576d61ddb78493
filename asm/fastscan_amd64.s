//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// 4-bit PQ fast-scan kernels, AVX2 and AVX-512 (F, BW), for 1..4 queries;
// the 1-query kernels also come in a GFNI variant (...Q1G). Reference:
// fastScan4Ref / fs4GroupRef in fastscan.go; layout: PackCodes4.
//
// One 32-byte group holds sub-quantizers 2i (bytes 0..15) and 2i+1 (bytes
// 16..31); the LUT bytes lut[32i : 32i+32] hold their two 16-entry tables in
// the same order, so a YMM VPSHUFB looks up both at once (VPSHUFB works per
// 128-bit lane). Low nibbles are vectors 0..15, high nibbles 16..31.
//
// Accumulation (FAISS's trick): a lookup result r holds, per 16-bit word w,
// the contribution of vector w (low byte, even byte of perm0) and of vector
// w+8 (high byte). We keep acc0 += r (as uint16) and acc1 += r>>8. At the end
// acc0 - (acc1<<8) is the sum of the low bytes alone, modulo 2^16 -- exactly
// the reference's uint16 wrap-around. Then the 128-bit lanes (one per
// sub-quantizer of the register) are added, which leaves vectors 0..7 in
// acc0, 8..15 in acc1, 16..23 in acc2 and 24..31 in acc3: natural order.
//
// Only VEX/EVEX instructions; VZEROUPPER before RET.

DATA fs4mask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA fs4mask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA fs4mask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA fs4mask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL fs4mask<>(SB), RODATA|NOPTR, $32

// GF(2) affine matrix for VGF2P8AFFINEQB that maps a byte x to x>>4 (its
// high nibble): row byte 7-i selects source bit i+4 for result bit i < 4.
DATA fs4gfhi<>+0(SB)/8, $0x1020408000000000
DATA fs4gfhi<>+8(SB)/8, $0x1020408000000000
DATA fs4gfhi<>+16(SB)/8, $0x1020408000000000
DATA fs4gfhi<>+24(SB)/8, $0x1020408000000000
GLOBL fs4gfhi<>(SB), RODATA|NOPTR, $32

// ---------------------------------------------------------------- AVX2 ---
// Registers: Y0..Y11 accumulators (4 per query), Y12 low nibbles, Y13 high
// nibbles, Y14 LUT / second lookup, Y15 first lookup / scratch. The nibble
// mask lives in Y11, except in the 3-query kernel, which needs all 16 YMMs
// and reads it from memory (fs4mask<>); Y10 holds the GFNI matrix in Q1G.
// SI codes, CX blocks left, BX bytes per block, DX group offset in the
// block, R8..R11 LUTs, DI R12 R13 AX outputs (Q1: R9 = BX rounded down to
// whole 64-byte steps).

// FS2_SPLIT loads one 32-byte group from src and splits the nibbles.
// mask is Y11 (loaded by the kernels that leave it free) or fs4mask<>(SB).
#define FS2_SPLIT(src, mask) \
	VMOVDQU src, Y12; \
	VPSRLW  $4, Y12, Y13; \
	VPAND   mask, Y12, Y12; \
	VPAND   mask, Y13, Y13

// FS2_SPLITG is FS2_SPLIT with GFNI: one VGF2P8AFFINEQB (matrix in Y10)
// replaces the shift and the mask of the high nibbles.
#define FS2_SPLITG(src, mask) \
	VMOVDQU        src, Y12; \
	VGF2P8AFFINEQB $0, Y10, Y12, Y13; \
	VPAND          mask, Y12, Y12

// FS2_ACC looks up one query's LUT group lut and accumulates into a0..a3.
#define FS2_ACC(lut, a0, a1, a2, a3) \
	VMOVDQU lut, Y14; \
	VPSHUFB Y12, Y14, Y15; \
	VPSHUFB Y13, Y14, Y14; \
	VPADDW  Y15, a0, a0; \
	VPSRLW  $8, Y15, Y15; \
	VPADDW  Y15, a1, a1; \
	VPADDW  Y14, a2, a2; \
	VPSRLW  $8, Y14, Y14; \
	VPADDW  Y14, a3, a3

#define FS2_ZERO(a0, a1, a2, a3) \
	VPXOR a0, a0, a0; \
	VPXOR a1, a1, a1; \
	VPXOR a2, a2, a2; \
	VPXOR a3, a3, a3

// FS2_OUT fixes up one query's accumulators and stores its 32 outputs.
#define FS2_OUT(a0, a1, a2, a3, out) \
	VPSLLW     $8, a1, Y15; \
	VPSUBW     Y15, a0, a0; \
	VPSLLW     $8, a3, Y15; \
	VPSUBW     Y15, a2, a2; \
	VPERM2I128 $0x20, a1, a0, Y14; \
	VPERM2I128 $0x31, a1, a0, Y15; \
	VPADDW     Y15, Y14, Y14; \
	VMOVDQU    Y14, (out); \
	VPERM2I128 $0x20, a3, a2, Y14; \
	VPERM2I128 $0x31, a3, a2, Y15; \
	VPADDW     Y15, Y14, Y14; \
	VMOVDQU    Y14, 32(out); \
	ADDQ       $64, out

// FS_ARGS loads the common arguments.
#define FS_ARGS \
	MOVQ codes+0(FP), SI; \
	MOVQ nblocks+8(FP), CX; \
	MOVQ npairs+16(FP), BX; \
	SHLQ $5, BX; \
	MOVQ luts+24(FP), AX; \
	MOVQ 0(AX), R8; \
	MOVQ 8(AX), R9; \
	MOVQ 16(AX), R10; \
	MOVQ 24(AX), R11; \
	MOVQ outs+32(FP), AX; \
	MOVQ 0(AX), DI; \
	MOVQ 8(AX), R12; \
	MOVQ 16(AX), R13; \
	MOVQ 24(AX), AX

// func fs4AVX2Q1(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX2Q1(SB), NOSPLIT, $0-40
	FS_ARGS
	VMOVDQU fs4mask<>(SB), Y11
	MOVQ    BX, R9
	ANDQ    $-64, R9

q1avx2Block:
	FS2_ZERO(Y0, Y1, Y2, Y3)
	XORQ DX, DX
	TESTQ R9, R9
	JZ   q1avx2Tail

	// Two groups per iteration.
q1avx2Pair:
	FS2_SPLIT(0(SI)(DX*1), Y11)
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)
	FS2_SPLIT(32(SI)(DX*1), Y11)
	FS2_ACC(32(R8)(DX*1), Y0, Y1, Y2, Y3)
	ADDQ $64, DX
	CMPQ DX, R9
	JB   q1avx2Pair

q1avx2Tail:
	CMPQ DX, BX
	JAE  q1avx2Out
	FS2_SPLIT(0(SI)(DX*1), Y11)
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)

q1avx2Out:
	ADDQ BX, SI
	FS2_OUT(Y0, Y1, Y2, Y3, DI)
	DECQ CX
	JNZ  q1avx2Block
	VZEROUPPER
	RET

// fs4AVX2Q1G is fs4AVX2Q1 for CPUs with GFNI.
// func fs4AVX2Q1G(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX2Q1G(SB), NOSPLIT, $0-40
	FS_ARGS
	VMOVDQU fs4mask<>(SB), Y11
	MOVQ    BX, R9
	ANDQ    $-64, R9
	VMOVDQU fs4gfhi<>(SB), Y10

q1gavx2Block:
	FS2_ZERO(Y0, Y1, Y2, Y3)
	XORQ DX, DX
	TESTQ R9, R9
	JZ   q1gavx2Tail

q1gavx2Pair:
	FS2_SPLITG(0(SI)(DX*1), Y11)
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)
	FS2_SPLITG(32(SI)(DX*1), Y11)
	FS2_ACC(32(R8)(DX*1), Y0, Y1, Y2, Y3)
	ADDQ $64, DX
	CMPQ DX, R9
	JB   q1gavx2Pair

q1gavx2Tail:
	CMPQ DX, BX
	JAE  q1gavx2Out
	FS2_SPLITG(0(SI)(DX*1), Y11)
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)

q1gavx2Out:
	ADDQ BX, SI
	FS2_OUT(Y0, Y1, Y2, Y3, DI)
	DECQ CX
	JNZ  q1gavx2Block
	VZEROUPPER
	RET

// func fs4AVX2Q2(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX2Q2(SB), NOSPLIT, $0-40
	FS_ARGS
	VMOVDQU fs4mask<>(SB), Y11

q2avx2Block:
	FS2_ZERO(Y0, Y1, Y2, Y3)
	FS2_ZERO(Y4, Y5, Y6, Y7)
	XORQ DX, DX

q2avx2Pair:
	FS2_SPLIT(0(SI), Y11)
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)
	FS2_ACC(0(R9)(DX*1), Y4, Y5, Y6, Y7)
	ADDQ $32, SI
	ADDQ $32, DX
	CMPQ DX, BX
	JB   q2avx2Pair

	FS2_OUT(Y0, Y1, Y2, Y3, DI)
	FS2_OUT(Y4, Y5, Y6, Y7, R12)
	DECQ CX
	JNZ  q2avx2Block
	VZEROUPPER
	RET

// func fs4AVX2Q3(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX2Q3(SB), NOSPLIT, $0-40
	FS_ARGS

q3avx2Block:
	FS2_ZERO(Y0, Y1, Y2, Y3)
	FS2_ZERO(Y4, Y5, Y6, Y7)
	FS2_ZERO(Y8, Y9, Y10, Y11)
	XORQ DX, DX

q3avx2Pair:
	FS2_SPLIT(0(SI), fs4mask<>(SB))
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)
	FS2_ACC(0(R9)(DX*1), Y4, Y5, Y6, Y7)
	FS2_ACC(0(R10)(DX*1), Y8, Y9, Y10, Y11)
	ADDQ $32, SI
	ADDQ $32, DX
	CMPQ DX, BX
	JB   q3avx2Pair

	FS2_OUT(Y0, Y1, Y2, Y3, DI)
	FS2_OUT(Y4, Y5, Y6, Y7, R12)
	FS2_OUT(Y8, Y9, Y10, Y11, R13)
	DECQ CX
	JNZ  q3avx2Block
	VZEROUPPER
	RET

// fs4AVX2Q4 makes two passes over each block (queries 0-1, then 2-3); the
// second pass reads the block from L1.
// func fs4AVX2Q4(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX2Q4(SB), NOSPLIT, $0-40
	FS_ARGS
	VMOVDQU fs4mask<>(SB), Y11

q4avx2Block:
	FS2_ZERO(Y0, Y1, Y2, Y3)
	FS2_ZERO(Y4, Y5, Y6, Y7)
	XORQ DX, DX

q4avx2PairA:
	FS2_SPLIT(0(SI), Y11)
	FS2_ACC(0(R8)(DX*1), Y0, Y1, Y2, Y3)
	FS2_ACC(0(R9)(DX*1), Y4, Y5, Y6, Y7)
	ADDQ $32, SI
	ADDQ $32, DX
	CMPQ DX, BX
	JB   q4avx2PairA

	FS2_OUT(Y0, Y1, Y2, Y3, DI)
	FS2_OUT(Y4, Y5, Y6, Y7, R12)
	SUBQ BX, SI
	FS2_ZERO(Y0, Y1, Y2, Y3)
	FS2_ZERO(Y4, Y5, Y6, Y7)
	XORQ DX, DX

q4avx2PairB:
	FS2_SPLIT(0(SI), Y11)
	FS2_ACC(0(R10)(DX*1), Y0, Y1, Y2, Y3)
	FS2_ACC(0(R11)(DX*1), Y4, Y5, Y6, Y7)
	ADDQ $32, SI
	ADDQ $32, DX
	CMPQ DX, BX
	JB   q4avx2PairB

	FS2_OUT(Y0, Y1, Y2, Y3, R13)
	FS2_OUT(Y4, Y5, Y6, Y7, AX)
	DECQ CX
	JNZ  q4avx2Block
	VZEROUPPER
	RET

// ------------------------------------------------------------- AVX-512 ---
// A ZMM holds two consecutive groups (sub-quantizers 4i..4i+3, one per
// 128-bit lane) and the matching 64 LUT bytes. An odd last group is loaded
// as a YMM, which zeroes the upper half of the ZMM: zero codes look up zero
// LUT bytes there, so the same code adds nothing for the missing group.
// Registers: Z0..Z15 accumulators (4 per query), Z16 low nibbles, Z17 high
// nibbles, Z18 LUT / second lookup, Z19 first lookup, Z20 nibble mask,
// Z21 Z22 scratch, Z23 GFNI matrix. SI codes, CX blocks left, BX bytes in
// the whole 64-byte steps, DX offset in the block, R8..R11 LUTs, DI R12 R13
// AX outputs.

#define FS5_NIB \
	VPSRLW $4, Z16, Z17; \
	VPANDQ Z20, Z16, Z16; \
	VPANDQ Z20, Z17, Z17

// FS5_NIBG is FS5_NIB with GFNI (matrix in Z23).
#define FS5_NIBG \
	VGF2P8AFFINEQB $0, Z23, Z16, Z17; \
	VPANDQ         Z20, Z16, Z16

#define FS5_ACC(a0, a1, a2, a3) \
	VPSHUFB Z16, Z18, Z19; \
	VPSHUFB Z17, Z18, Z18; \
	VPADDW  Z19, a0, a0; \
	VPSRLW  $8, Z19, Z19; \
	VPADDW  Z19, a1, a1; \
	VPADDW  Z18, a2, a2; \
	VPSRLW  $8, Z18, Z18; \
	VPADDW  Z18, a3, a3

// Full step: two groups. Half step: one group (YMM loads).
#define FS5_FULL(lut, a0, a1, a2, a3) \
	VMOVDQU64 lut, Z18; \
	FS5_ACC(a0, a1, a2, a3)

#define FS5_HALF(lut, a0, a1, a2, a3) \
	VMOVDQU64 lut, Y18; \
	FS5_ACC(a0, a1, a2, a3)

#define FS5_ZERO(a0, a1, a2, a3) \
	VPXORQ a0, a0, a0; \
	VPXORQ a1, a1, a1; \
	VPXORQ a2, a2, a2; \
	VPXORQ a3, a3, a3

// FS5_OUT fixes up one query's accumulators, adds the four 128-bit lanes of
// each and stores the 32 outputs (64 bytes) in natural order.
#define FS5_OUT(a0, a1, a2, a3, out) \
	VPSLLW     $8, a1, Z19; \
	VPSUBW     Z19, a0, a0; \
	VPSLLW     $8, a3, Z19; \
	VPSUBW     Z19, a2, a2; \
	VSHUFI64X2 $0x44, a1, a0, Z18; \
	VSHUFI64X2 $0xee, a1, a0, Z19; \
	VPADDW     Z19, Z18, Z21; \
	VSHUFI64X2 $0x44, a3, a2, Z18; \
	VSHUFI64X2 $0xee, a3, a2, Z19; \
	VPADDW     Z19, Z18, Z22; \
	VSHUFI64X2 $0x88, Z22, Z21, Z18; \
	VSHUFI64X2 $0xdd, Z22, Z21, Z19; \
	VPADDW     Z19, Z18, Z18; \
	VMOVDQU64  Z18, (out); \
	ADDQ       $64, out

// FS5_ARGS: FS_ARGS, BX = bytes in the whole 64-byte steps, Z20 = mask.
#define FS5_ARGS \
	FS_ARGS; \
	ANDQ         $-64, BX; \
	VPBROADCASTQ fs4mask<>(SB), Z20

// func fs4AVX512Q1(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q1(SB), NOSPLIT, $0-40
	FS5_ARGS

q1avx5Block:
	FS5_ZERO(Z0, Z1, Z2, Z3)
	XORQ DX, DX
	CMPQ DX, BX
	JAE  q1avx5Tail

q1avx5Pair:
	VMOVDQU64 (SI), Z16
	FS5_NIB
	FS5_FULL(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	ADDQ $64, SI
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q1avx5Pair

q1avx5Tail:
	TESTQ $1, npairs+16(FP)
	JZ    q1avx5Out
	VMOVDQU64 (SI), Y16
	FS5_NIB
	FS5_HALF(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	ADDQ $32, SI

q1avx5Out:
	FS5_OUT(Z0, Z1, Z2, Z3, DI)
	DECQ CX
	JNZ  q1avx5Block
	VZEROUPPER
	RET

// fs4AVX512Q1G is fs4AVX512Q1 for CPUs with GFNI.
// func fs4AVX512Q1G(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q1G(SB), NOSPLIT, $0-40
	FS5_ARGS
	VPBROADCASTQ fs4gfhi<>(SB), Z23
	MOVQ         BX, R9
	ANDQ         $-128, R9

q1gavx5Block:
	FS5_ZERO(Z0, Z1, Z2, Z3)
	XORQ  DX, DX
	TESTQ R9, R9
	JZ    q1gavx5One

	// Four groups (two ZMM steps) per iteration; the second step uses its
	// own registers (Z24..Z27) so the two can overlap.
q1gavx5Pair:
	VMOVDQU64      (SI)(DX*1), Z16
	VMOVDQU64      64(SI)(DX*1), Z24
	VGF2P8AFFINEQB $0, Z23, Z16, Z17
	VGF2P8AFFINEQB $0, Z23, Z24, Z25
	VPANDQ         Z20, Z16, Z16
	VPANDQ         Z20, Z24, Z24
	VMOVDQU64      (R8)(DX*1), Z18
	VMOVDQU64      64(R8)(DX*1), Z26
	VPSHUFB        Z16, Z18, Z19
	VPSHUFB        Z17, Z18, Z18
	VPSHUFB        Z24, Z26, Z27
	VPSHUFB        Z25, Z26, Z26
	VPADDW         Z19, Z0, Z0
	VPADDW         Z18, Z2, Z2
	VPSRLW         $8, Z19, Z19
	VPSRLW         $8, Z18, Z18
	VPADDW         Z19, Z1, Z1
	VPADDW         Z18, Z3, Z3
	VPADDW         Z27, Z0, Z0
	VPADDW         Z26, Z2, Z2
	VPSRLW         $8, Z27, Z27
	VPSRLW         $8, Z26, Z26
	VPADDW         Z27, Z1, Z1
	VPADDW         Z26, Z3, Z3
	ADDQ           $128, DX
	CMPQ           DX, R9
	JB             q1gavx5Pair

q1gavx5One:
	CMPQ DX, BX
	JAE  q1gavx5Tail
	VMOVDQU64 (SI)(DX*1), Z16
	FS5_NIBG
	FS5_FULL(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	ADDQ $64, DX

q1gavx5Tail:
	TESTQ $1, npairs+16(FP)
	JZ    q1gavx5Out
	VMOVDQU64 (SI)(DX*1), Y16
	FS5_NIBG
	FS5_HALF(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	ADDQ $32, DX

q1gavx5Out:
	ADDQ DX, SI
	FS5_OUT(Z0, Z1, Z2, Z3, DI)
	DECQ CX
	JNZ  q1gavx5Block
	VZEROUPPER
	RET

// func fs4AVX512Q2(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q2(SB), NOSPLIT, $0-40
	FS5_ARGS

q2avx5Block:
	FS5_ZERO(Z0, Z1, Z2, Z3)
	FS5_ZERO(Z4, Z5, Z6, Z7)
	XORQ DX, DX
	CMPQ DX, BX
	JAE  q2avx5Tail

q2avx5Pair:
	VMOVDQU64 (SI), Z16
	FS5_NIB
	FS5_FULL(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	FS5_FULL(0(R9)(DX*1), Z4, Z5, Z6, Z7)
	ADDQ $64, SI
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q2avx5Pair

q2avx5Tail:
	TESTQ $1, npairs+16(FP)
	JZ    q2avx5Out
	VMOVDQU64 (SI), Y16
	FS5_NIB
	FS5_HALF(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	FS5_HALF(0(R9)(DX*1), Z4, Z5, Z6, Z7)
	ADDQ $32, SI

q2avx5Out:
	FS5_OUT(Z0, Z1, Z2, Z3, DI)
	FS5_OUT(Z4, Z5, Z6, Z7, R12)
	DECQ CX
	JNZ  q2avx5Block
	VZEROUPPER
	RET

// func fs4AVX512Q3(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q3(SB), NOSPLIT, $0-40
	FS5_ARGS

q3avx5Block:
	FS5_ZERO(Z0, Z1, Z2, Z3)
	FS5_ZERO(Z4, Z5, Z6, Z7)
	FS5_ZERO(Z8, Z9, Z10, Z11)
	XORQ DX, DX
	CMPQ DX, BX
	JAE  q3avx5Tail

q3avx5Pair:
	VMOVDQU64 (SI), Z16
	FS5_NIB
	FS5_FULL(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	FS5_FULL(0(R9)(DX*1), Z4, Z5, Z6, Z7)
	FS5_FULL(0(R10)(DX*1), Z8, Z9, Z10, Z11)
	ADDQ $64, SI
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q3avx5Pair

q3avx5Tail:
	TESTQ $1, npairs+16(FP)
	JZ    q3avx5Out
	VMOVDQU64 (SI), Y16
	FS5_NIB
	FS5_HALF(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	FS5_HALF(0(R9)(DX*1), Z4, Z5, Z6, Z7)
	FS5_HALF(0(R10)(DX*1), Z8, Z9, Z10, Z11)
	ADDQ $32, SI

q3avx5Out:
	FS5_OUT(Z0, Z1, Z2, Z3, DI)
	FS5_OUT(Z4, Z5, Z6, Z7, R12)
	FS5_OUT(Z8, Z9, Z10, Z11, R13)
	DECQ CX
	JNZ  q3avx5Block
	VZEROUPPER
	RET

// func fs4AVX512Q4(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q4(SB), NOSPLIT, $0-40
	FS5_ARGS

q4avx5Block:
	FS5_ZERO(Z0, Z1, Z2, Z3)
	FS5_ZERO(Z4, Z5, Z6, Z7)
	FS5_ZERO(Z8, Z9, Z10, Z11)
	FS5_ZERO(Z12, Z13, Z14, Z15)
	XORQ DX, DX
	CMPQ DX, BX
	JAE  q4avx5Tail

q4avx5Pair:
	VMOVDQU64 (SI), Z16
	FS5_NIB
	FS5_FULL(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	FS5_FULL(0(R9)(DX*1), Z4, Z5, Z6, Z7)
	FS5_FULL(0(R10)(DX*1), Z8, Z9, Z10, Z11)
	FS5_FULL(0(R11)(DX*1), Z12, Z13, Z14, Z15)
	ADDQ $64, SI
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q4avx5Pair

q4avx5Tail:
	TESTQ $1, npairs+16(FP)
	JZ    q4avx5Out
	VMOVDQU64 (SI), Y16
	FS5_NIB
	FS5_HALF(0(R8)(DX*1), Z0, Z1, Z2, Z3)
	FS5_HALF(0(R9)(DX*1), Z4, Z5, Z6, Z7)
	FS5_HALF(0(R10)(DX*1), Z8, Z9, Z10, Z11)
	FS5_HALF(0(R11)(DX*1), Z12, Z13, Z14, Z15)
	ADDQ $32, SI

q4avx5Out:
	FS5_OUT(Z0, Z1, Z2, Z3, DI)
	FS5_OUT(Z4, Z5, Z6, Z7, R12)
	FS5_OUT(Z8, Z9, Z10, Z11, R13)
	FS5_OUT(Z12, Z13, Z14, Z15, AX)
	DECQ CX
	JNZ  q4avx5Block
	VZEROUPPER
	RET

// ------------------------------------------------- AVX-512 VBMI + VNNI ---
// Transposed variant (...V kernels, CPUs with AVX512_VBMI and AVX512_VNNI).
// One ZMM step covers two groups = four sub-quantizers s0..s3 (16 code
// bytes each). A VPERMB with the constant fs4vperm<> transposes the step
// so that dword p holds byte inv(p) of each of the four sub-quantizers
// (byte t of the dword from s_t), inv inverting perm0: dword p then
// describes vector p (low nibbles) and vector p+16 (high nibbles). The
// lookup index of byte t is its nibble with t in bits 4..5 (one
// VPTERNLOGD: (x & 0x0f) | t<<4), and a VPERMB looks all 64 bytes up in
// the 64 LUT bytes of the step (tables s0..s3, 16 bytes each; VPERMB
// reads index bits 0..5). VPDPBUSD against bytes of 1 then adds the four
// looked-up bytes of each dword into a 32-bit accumulator: per step two
// lookups and two dot-products replace the four 16-bit adds and two
// shifts of the PSHUFB kernels, and the accumulators already hold vectors
// 0..15 and 16..31 in natural order. The outputs are the low 16 bits of
// the accumulators (one VPERMT2W picks them from both), which is the
// reference's sum mod 2^16.
// An odd last group is loaded as a YMM (upper half zero): its zero codes
// index tables s2, s3 of the zero-extended LUT YMM, which add nothing.
// Registers: Z0/Z1 accumulators of query 0 (low/high nibbles), Z2/Z3
// query 1, Z4/Z5 query 2, Z6/Z7 query 3; Z16..Z19, Z24..Z27 step
// scratch, Z21..Z23, Z29 LUTs of an odd last group; Z15 output word
// selection, Z20 nibble mask, Z28 transposition, Z30 nibble-position
// bits, Z31 bytes of 1.

DATA fs4vperm<>+0(SB)/8, $0x3222120230201000
DATA fs4vperm<>+8(SB)/8, $0x3626160634241404
DATA fs4vperm<>+16(SB)/8, $0x3a2a1a0a38281808
DATA fs4vperm<>+24(SB)/8, $0x3e2e1e0e3c2c1c0c
DATA fs4vperm<>+32(SB)/8, $0x3323130331211101
DATA fs4vperm<>+40(SB)/8, $0x3727170735251505
DATA fs4vperm<>+48(SB)/8, $0x3b2b1b0b39291909
DATA fs4vperm<>+56(SB)/8, $0x3f2f1f0f3d2d1d0d
GLOBL fs4vperm<>(SB), RODATA|NOPTR, $64

// fs4vconst<>: bytes 0x00 0x10 0x20 0x30 (table position t<<4 of byte t
// of a dword), then four bytes of 1 (the VPDPBUSD weights).
DATA fs4vconst<>+0(SB)/4, $0x30201000
DATA fs4vconst<>+4(SB)/4, $0x01010101
GLOBL fs4vconst<>(SB), RODATA|NOPTR, $8

// fs4vpack<>: VPERMT2W indices of the low words of two dword vectors.
DATA fs4vpack<>+0(SB)/8, $0x0006000400020000
DATA fs4vpack<>+8(SB)/8, $0x000e000c000a0008
DATA fs4vpack<>+16(SB)/8, $0x0016001400120010
DATA fs4vpack<>+24(SB)/8, $0x001e001c001a0018
DATA fs4vpack<>+32(SB)/8, $0x0026002400220020
DATA fs4vpack<>+40(SB)/8, $0x002e002c002a0028
DATA fs4vpack<>+48(SB)/8, $0x0036003400320030
DATA fs4vpack<>+56(SB)/8, $0x003e003c003a0038
GLOBL fs4vpack<>(SB), RODATA|NOPTR, $64

// FSV_ARGS: FS5_ARGS plus the transposition and constants.
#define FSV_ARGS \
	FS5_ARGS; \
	VMOVDQU64    fs4vperm<>(SB), Z28; \
	VPBROADCASTD fs4vconst<>+0(SB), Z30; \
	VPBROADCASTD fs4vconst<>+4(SB), Z31; \
	VMOVDQU64    fs4vpack<>(SB), Z15

// FSV_IDX turns transposed codes x into the low-nibble index (in place)
// and the high-nibble index h.
#define FSV_IDX(x, h) \
	VPSRLW     $4, x, h; \
	VPTERNLOGD $0xea, Z30, Z20, x; \
	VPTERNLOGD $0xea, Z30, Z20, h

// FSV_ACC looks up indices lo, hi in the 64 LUT bytes tab (memory or
// register) into r0, r1 and accumulates them into a0 (vectors 0..15) and
// a1 (vectors 16..31).
#define FSV_ACC(tab, lo, hi, r0, r1, a0, a1) \
	VPERMB   tab, lo, r0; \
	VPERMB   tab, hi, r1; \
	VPDPBUSD Z31, r0, a0; \
	VPDPBUSD Z31, r1, a1

// FSV_OUT stores one query's 32 outputs (the low words of a0, then of
// a1; a0 is clobbered) and advances out.
#define FSV_OUT(a0, a1, out) \
	VPERMT2W  a1, Z15, a0; \
	VMOVDQU64 a0, (out); \
	ADDQ      $64, out

// func fs4AVX512Q1V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q1V(SB), NOSPLIT, $0-40
	FSV_ARGS
	MOVQ BX, R9
	ANDQ $-128, R9

q1vBlock:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	XORQ   DX, DX
	TESTQ  R9, R9
	JZ     q1vOne

	// Two steps (four groups) per iteration.
q1vPair:
	VPERMB (SI)(DX*1), Z28, Z16
	VPERMB 64(SI)(DX*1), Z28, Z24
	FSV_IDX(Z16, Z17)
	FSV_IDX(Z24, Z25)
	FSV_ACC((R8)(DX*1), Z16, Z17, Z18, Z19, Z0, Z1)
	FSV_ACC(64(R8)(DX*1), Z24, Z25, Z26, Z27, Z0, Z1)
	ADDQ $128, DX
	CMPQ DX, R9
	JB   q1vPair

q1vOne:
	CMPQ   DX, BX
	JAE    q1vTail
	VPERMB (SI)(DX*1), Z28, Z16
	FSV_IDX(Z16, Z17)
	FSV_ACC((R8)(DX*1), Z16, Z17, Z18, Z19, Z0, Z1)
	ADDQ $64, DX

q1vTail:
	TESTQ     $1, npairs+16(FP)
	JZ        q1vOut
	VMOVDQU64 (SI)(DX*1), Y16
	VPERMB    Z16, Z28, Z16
	FSV_IDX(Z16, Z17)
	VMOVDQU64 (R8)(DX*1), Y21
	FSV_ACC(Z21, Z16, Z17, Z18, Z19, Z0, Z1)
	ADDQ $32, DX

q1vOut:
	ADDQ DX, SI
	FSV_OUT(Z0, Z1, DI)
	DECQ CX
	JNZ  q1vBlock
	VZEROUPPER
	RET

// func fs4AVX512Q2V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q2V(SB), NOSPLIT, $0-40
	FSV_ARGS

q2vBlock:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	XORQ   DX, DX
	CMPQ   DX, BX
	JAE    q2vTail

q2vStep:
	VPERMB (SI)(DX*1), Z28, Z16
	FSV_IDX(Z16, Z17)
	FSV_ACC((R8)(DX*1), Z16, Z17, Z18, Z19, Z0, Z1)
	FSV_ACC((R9)(DX*1), Z16, Z17, Z24, Z25, Z2, Z3)
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q2vStep

q2vTail:
	TESTQ     $1, npairs+16(FP)
	JZ        q2vOut
	VMOVDQU64 (SI)(DX*1), Y16
	VPERMB    Z16, Z28, Z16
	FSV_IDX(Z16, Z17)
	VMOVDQU64 (R8)(DX*1), Y21
	FSV_ACC(Z21, Z16, Z17, Z18, Z19, Z0, Z1)
	VMOVDQU64 (R9)(DX*1), Y22
	FSV_ACC(Z22, Z16, Z17, Z24, Z25, Z2, Z3)
	ADDQ $32, DX

q2vOut:
	ADDQ DX, SI
	FSV_OUT(Z0, Z1, DI)
	FSV_OUT(Z2, Z3, R12)
	DECQ       CX
	JNZ        q2vBlock
	VZEROUPPER
	RET

// func fs4AVX512Q3V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q3V(SB), NOSPLIT, $0-40
	FSV_ARGS

q3vBlock:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	XORQ   DX, DX
	CMPQ   DX, BX
	JAE    q3vTail

q3vStep:
	VPERMB (SI)(DX*1), Z28, Z16
	FSV_IDX(Z16, Z17)
	FSV_ACC((R8)(DX*1), Z16, Z17, Z18, Z19, Z0, Z1)
	FSV_ACC((R9)(DX*1), Z16, Z17, Z24, Z25, Z2, Z3)
	FSV_ACC((R10)(DX*1), Z16, Z17, Z26, Z27, Z4, Z5)
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q3vStep

q3vTail:
	TESTQ     $1, npairs+16(FP)
	JZ        q3vOut
	VMOVDQU64 (SI)(DX*1), Y16
	VPERMB    Z16, Z28, Z16
	FSV_IDX(Z16, Z17)
	VMOVDQU64 (R8)(DX*1), Y21
	FSV_ACC(Z21, Z16, Z17, Z18, Z19, Z0, Z1)
	VMOVDQU64 (R9)(DX*1), Y22
	FSV_ACC(Z22, Z16, Z17, Z24, Z25, Z2, Z3)
	VMOVDQU64 (R10)(DX*1), Y23
	FSV_ACC(Z23, Z16, Z17, Z26, Z27, Z4, Z5)
	ADDQ $32, DX

q3vOut:
	ADDQ DX, SI
	FSV_OUT(Z0, Z1, DI)
	FSV_OUT(Z2, Z3, R12)
	FSV_OUT(Z4, Z5, R13)
	DECQ       CX
	JNZ        q3vBlock
	VZEROUPPER
	RET

// func fs4AVX512Q4V(codes *uint8, nblocks, npairs int, luts *[4]*uint8, outs *[4]*uint16)
TEXT ·fs4AVX512Q4V(SB), NOSPLIT, $0-40
	FSV_ARGS

q4vBlock:
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	XORQ   DX, DX
	CMPQ   DX, BX
	JAE    q4vTail

q4vStep:
	VPERMB (SI)(DX*1), Z28, Z16
	FSV_IDX(Z16, Z17)
	FSV_ACC((R8)(DX*1), Z16, Z17, Z18, Z19, Z0, Z1)
	FSV_ACC((R9)(DX*1), Z16, Z17, Z24, Z25, Z2, Z3)
	FSV_ACC((R10)(DX*1), Z16, Z17, Z26, Z27, Z4, Z5)
	FSV_ACC((R11)(DX*1), Z16, Z17, Z18, Z19, Z6, Z7)
	ADDQ $64, DX
	CMPQ DX, BX
	JB   q4vStep

q4vTail:
	TESTQ     $1, npairs+16(FP)
	JZ        q4vOut
	VMOVDQU64 (SI)(DX*1), Y16
	VPERMB    Z16, Z28, Z16
	FSV_IDX(Z16, Z17)
	VMOVDQU64 (R8)(DX*1), Y21
	FSV_ACC(Z21, Z16, Z17, Z18, Z19, Z0, Z1)
	VMOVDQU64 (R9)(DX*1), Y22
	FSV_ACC(Z22, Z16, Z17, Z24, Z25, Z2, Z3)
	VMOVDQU64 (R10)(DX*1), Y23
	FSV_ACC(Z23, Z16, Z17, Z26, Z27, Z4, Z5)
	VMOVDQU64 (R11)(DX*1), Y29
	FSV_ACC(Z29, Z16, Z17, Z18, Z19, Z6, Z7)
	ADDQ $32, DX

q4vOut:
	ADDQ DX, SI
	FSV_OUT(Z0, Z1, DI)
	FSV_OUT(Z2, Z3, R12)
	FSV_OUT(Z4, Z5, R13)
	FSV_OUT(Z6, Z7, AX)
	DECQ CX
	JNZ  q4vBlock
	VZEROUPPER
	RET
