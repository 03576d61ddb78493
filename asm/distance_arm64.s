//go:build arm64 && gc && !noasm && !purego

#include "textflag.h"

// float32 distance kernels for arm64 Advanced SIMD (NEON).
// Go references: l2SqRef, dotRef, l2SqBatchRef, dotBatchRef, sumFloat32Ref
// in ref.go. The Go assembler has no vector FADD/FSUB/FADDP, so those are
// WORD encodings (from llvm-mc -triple=aarch64 -show-encoding) with the
// mnemonic in the comment. Tails shorter than a vector run a scalar loop.

// func l2SqNEON(a, b []float32) float32
TEXT ·l2SqNEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

l2n_loop16:
	CMP    $16, R2
	BLT    l2n_loop4
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	WORD $0x4eb0d484 // fsub v4.4s, v4.4s, v16.4s
	WORD $0x4eb1d4a5 // fsub v5.4s, v5.4s, v17.4s
	WORD $0x4eb2d4c6 // fsub v6.4s, v6.4s, v18.4s
	WORD $0x4eb3d4e7 // fsub v7.4s, v7.4s, v19.4s
	VFMLA  V4.S4, V4.S4, V0.S4
	VFMLA  V5.S4, V5.S4, V1.S4
	VFMLA  V6.S4, V6.S4, V2.S4
	VFMLA  V7.S4, V7.S4, V3.S4
	SUB    $16, R2, R2
	B      l2n_loop16

l2n_loop4:
	CMP    $4, R2
	BLT    l2n_reduce
	VLD1.P 16(R0), [V4.S4]
	VLD1.P 16(R1), [V16.S4]
	WORD $0x4eb0d484 // fsub v4.4s, v4.4s, v16.4s
	VFMLA  V4.S4, V4.S4, V0.S4
	SUB    $4, R2, R2
	B      l2n_loop4

l2n_reduce:
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	WORD $0x4e23d442 // fadd v2.4s, v2.4s, v3.4s
	WORD $0x4e22d400 // fadd v0.4s, v0.4s, v2.4s
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s

l2n_tail:
	CBZ     R2, l2n_done
	FMOVS.P 4(R0), F4
	FMOVS.P 4(R1), F5
	FSUBS   F5, F4, F4
	FMADDS  F4, F0, F4, F0
	SUB     $1, R2, R2
	B       l2n_tail

l2n_done:
	FMOVS F0, ret+48(FP)
	RET

// func dotNEON(a, b []float32) float32
TEXT ·dotNEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

dotn_loop16:
	CMP    $16, R2
	BLT    dotn_loop4
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	VFMLA  V17.S4, V5.S4, V1.S4
	VFMLA  V18.S4, V6.S4, V2.S4
	VFMLA  V19.S4, V7.S4, V3.S4
	SUB    $16, R2, R2
	B      dotn_loop16

dotn_loop4:
	CMP    $4, R2
	BLT    dotn_reduce
	VLD1.P 16(R0), [V4.S4]
	VLD1.P 16(R1), [V16.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	SUB    $4, R2, R2
	B      dotn_loop4

dotn_reduce:
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	WORD $0x4e23d442 // fadd v2.4s, v2.4s, v3.4s
	WORD $0x4e22d400 // fadd v0.4s, v0.4s, v2.4s
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s

dotn_tail:
	CBZ     R2, dotn_done
	FMOVS.P 4(R0), F4
	FMOVS.P 4(R1), F5
	FMADDS  F5, F0, F4, F0
	SUB     $1, R2, R2
	B       dotn_tail

dotn_done:
	FMOVS F0, ret+48(FP)
	RET

// Batch kernels: four rows per iteration share each 4-float query load.
// R0 q, R2 d, R3-R6 row cursors, R7 q cursor, R8 out, R9 rows left,
// R11 elements left in the row, V0-V3 per-row accumulators.
// Each row cursor advances by exactly d floats, so after a group R6 points
// at the next group's first row.

// func l2SqBatchNEON(q, x, out []float32)
TEXT ·l2SqBatchNEON(SB), NOSPLIT, $0-72
	MOVD q_base+0(FP), R0
	MOVD q_len+8(FP), R2
	MOVD x_base+24(FP), R3
	MOVD out_base+48(FP), R8
	MOVD out_len+56(FP), R9
	LSL  $2, R2, R10

l2bn_rows4:
	CMP  $4, R9
	BLT  l2bn_rows1
	ADD  R10, R3, R4
	ADD  R10, R4, R5
	ADD  R10, R5, R6
	MOVD R0, R7
	MOVD R2, R11
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

l2bn_chunk4:
	CMP    $4, R11
	BLT    l2bn_tail4
	VLD1.P 16(R7), [V4.S4]
	VLD1.P 16(R3), [V16.S4]
	VLD1.P 16(R4), [V17.S4]
	VLD1.P 16(R5), [V18.S4]
	VLD1.P 16(R6), [V19.S4]
	WORD $0x4eb0d490 // fsub v16.4s, v4.4s, v16.4s
	WORD $0x4eb1d491 // fsub v17.4s, v4.4s, v17.4s
	WORD $0x4eb2d492 // fsub v18.4s, v4.4s, v18.4s
	WORD $0x4eb3d493 // fsub v19.4s, v4.4s, v19.4s
	VFMLA  V16.S4, V16.S4, V0.S4
	VFMLA  V17.S4, V17.S4, V1.S4
	VFMLA  V18.S4, V18.S4, V2.S4
	VFMLA  V19.S4, V19.S4, V3.S4
	SUB    $4, R11, R11
	B      l2bn_chunk4

l2bn_tail4:
	// lanes = rows: V0 = [Σrow0, Σrow1, Σrow2, Σrow3]
	WORD $0x6e21d400 // faddp v0.4s, v0.4s, v1.4s
	WORD $0x6e23d442 // faddp v2.4s, v2.4s, v3.4s
	WORD $0x6e22d400 // faddp v0.4s, v0.4s, v2.4s

l2bn_scalar4:
	CBZ     R11, l2bn_store4
	MOVWU.P 4(R7), R12
	VDUP    R12, V4.S4
	MOVWU.P 4(R3), R12
	VMOV    R12, V16.S[0]
	MOVWU.P 4(R4), R12
	VMOV    R12, V16.S[1]
	MOVWU.P 4(R5), R12
	VMOV    R12, V16.S[2]
	MOVWU.P 4(R6), R12
	VMOV    R12, V16.S[3]
	WORD $0x4eb0d490 // fsub v16.4s, v4.4s, v16.4s
	VFMLA   V16.S4, V16.S4, V0.S4
	SUB     $1, R11, R11
	B       l2bn_scalar4

l2bn_store4:
	VST1.P [V0.S4], 16(R8)
	MOVD   R6, R3
	SUB    $4, R9, R9
	B      l2bn_rows4

l2bn_rows1:
	CBZ  R9, l2bn_done
	MOVD R0, R7
	MOVD R2, R11
	VEOR V0.B16, V0.B16, V0.B16

l2bn_chunk1:
	CMP    $4, R11
	BLT    l2bn_red1
	VLD1.P 16(R7), [V4.S4]
	VLD1.P 16(R3), [V16.S4]
	WORD $0x4eb0d490 // fsub v16.4s, v4.4s, v16.4s
	VFMLA  V16.S4, V16.S4, V0.S4
	SUB    $4, R11, R11
	B      l2bn_chunk1

l2bn_red1:
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s

l2bn_scalar1:
	CBZ     R11, l2bn_store1
	FMOVS.P 4(R7), F4
	FMOVS.P 4(R3), F5
	FSUBS   F5, F4, F4
	FMADDS  F4, F0, F4, F0
	SUB     $1, R11, R11
	B       l2bn_scalar1

l2bn_store1:
	FMOVS.P F0, 4(R8)
	SUB     $1, R9, R9
	B       l2bn_rows1

l2bn_done:
	RET

// func dotBatchNEON(q, x, out []float32)
TEXT ·dotBatchNEON(SB), NOSPLIT, $0-72
	MOVD q_base+0(FP), R0
	MOVD q_len+8(FP), R2
	MOVD x_base+24(FP), R3
	MOVD out_base+48(FP), R8
	MOVD out_len+56(FP), R9
	LSL  $2, R2, R10

dotbn_rows4:
	CMP  $4, R9
	BLT  dotbn_rows1
	ADD  R10, R3, R4
	ADD  R10, R4, R5
	ADD  R10, R5, R6
	MOVD R0, R7
	MOVD R2, R11
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

dotbn_chunk4:
	CMP    $4, R11
	BLT    dotbn_tail4
	VLD1.P 16(R7), [V4.S4]
	VLD1.P 16(R3), [V16.S4]
	VLD1.P 16(R4), [V17.S4]
	VLD1.P 16(R5), [V18.S4]
	VLD1.P 16(R6), [V19.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	VFMLA  V17.S4, V4.S4, V1.S4
	VFMLA  V18.S4, V4.S4, V2.S4
	VFMLA  V19.S4, V4.S4, V3.S4
	SUB    $4, R11, R11
	B      dotbn_chunk4

dotbn_tail4:
	WORD $0x6e21d400 // faddp v0.4s, v0.4s, v1.4s
	WORD $0x6e23d442 // faddp v2.4s, v2.4s, v3.4s
	WORD $0x6e22d400 // faddp v0.4s, v0.4s, v2.4s

dotbn_scalar4:
	CBZ     R11, dotbn_store4
	MOVWU.P 4(R7), R12
	VDUP    R12, V4.S4
	MOVWU.P 4(R3), R12
	VMOV    R12, V16.S[0]
	MOVWU.P 4(R4), R12
	VMOV    R12, V16.S[1]
	MOVWU.P 4(R5), R12
	VMOV    R12, V16.S[2]
	MOVWU.P 4(R6), R12
	VMOV    R12, V16.S[3]
	VFMLA   V16.S4, V4.S4, V0.S4
	SUB     $1, R11, R11
	B       dotbn_scalar4

dotbn_store4:
	VST1.P [V0.S4], 16(R8)
	MOVD   R6, R3
	SUB    $4, R9, R9
	B      dotbn_rows4

dotbn_rows1:
	CBZ  R9, dotbn_done
	MOVD R0, R7
	MOVD R2, R11
	VEOR V0.B16, V0.B16, V0.B16

dotbn_chunk1:
	CMP    $4, R11
	BLT    dotbn_red1
	VLD1.P 16(R7), [V4.S4]
	VLD1.P 16(R3), [V16.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	SUB    $4, R11, R11
	B      dotbn_chunk1

dotbn_red1:
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s

dotbn_scalar1:
	CBZ     R11, dotbn_store1
	FMOVS.P 4(R7), F4
	FMOVS.P 4(R3), F5
	FMADDS  F5, F0, F4, F0
	SUB     $1, R11, R11
	B       dotbn_scalar1

dotbn_store1:
	FMOVS.P F0, 4(R8)
	SUB     $1, R9, R9
	B       dotbn_rows1

dotbn_done:
	RET

// func sumNEON(x []float32) float32
TEXT ·sumNEON(SB), NOSPLIT, $0-28
	MOVD x_base+0(FP), R0
	MOVD x_len+8(FP), R2
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

sumn_loop16:
	CMP    $16, R2
	BLT    sumn_loop4
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD $0x4e24d400 // fadd v0.4s, v0.4s, v4.4s
	WORD $0x4e25d421 // fadd v1.4s, v1.4s, v5.4s
	WORD $0x4e26d442 // fadd v2.4s, v2.4s, v6.4s
	WORD $0x4e27d463 // fadd v3.4s, v3.4s, v7.4s
	SUB    $16, R2, R2
	B      sumn_loop16

sumn_loop4:
	CMP    $4, R2
	BLT    sumn_reduce
	VLD1.P 16(R0), [V4.S4]
	WORD $0x4e24d400 // fadd v0.4s, v0.4s, v4.4s
	SUB    $4, R2, R2
	B      sumn_loop4

sumn_reduce:
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	WORD $0x4e23d442 // fadd v2.4s, v2.4s, v3.4s
	WORD $0x4e22d400 // fadd v0.4s, v0.4s, v2.4s
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s

sumn_tail:
	CBZ     R2, sumn_done
	FMOVS.P 4(R0), F4
	FADDS   F4, F0, F0
	SUB     $1, R2, R2
	B       sumn_tail

sumn_done:
	FMOVS F0, ret+24(FP)
	RET
