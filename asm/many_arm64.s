//go:build arm64 && gc && !noasm && !purego

#include "textflag.h"

// Transposed-codebook kernels for arm64 Advanced SIMD (NEON).
// Go references: addF32Ref, dotTRef, nearestL2TRef, argminAffineRef in
// many.go. Instructions the Go assembler lacks (vector FADD, FMUL, FMIN,
// FMINV, FCMGT, FCMEQ, BIT, ORN, integer ADD, UMIN, UMINV, DUP by element)
// are WORD encodings (from llvm-mc -triple=aarch64 -show-encoding) with the
// mnemonic in the comment. Tails shorter than a vector run a scalar loop.

// func addF32NEON(dst, a, b []float32)
// R0 dst, R1 a, R2 b cursors; R3 elements left.
TEXT ·addF32NEON(SB), NOSPLIT, $0-72
	MOVD dst_base+0(FP), R0
	MOVD dst_len+8(FP), R3
	MOVD a_base+24(FP), R1
	MOVD b_base+48(FP), R2

addn_loop16:
	CMP    $16, R3
	BLT    addn_loop4
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R2), [V4.S4, V5.S4, V6.S4, V7.S4]
	WORD   $0x4e24d400                           // fadd v0.4s, v0.4s, v4.4s
	WORD   $0x4e25d421                           // fadd v1.4s, v1.4s, v5.4s
	WORD   $0x4e26d442                           // fadd v2.4s, v2.4s, v6.4s
	WORD   $0x4e27d463                           // fadd v3.4s, v3.4s, v7.4s
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)
	SUB    $16, R3, R3
	B      addn_loop16

addn_loop4:
	CMP    $4, R3
	BLT    addn_tail
	VLD1.P 16(R1), [V0.S4]
	VLD1.P 16(R2), [V4.S4]
	WORD   $0x4e24d400     // fadd v0.4s, v0.4s, v4.4s
	VST1.P [V0.S4], 16(R0)
	SUB    $4, R3, R3
	B      addn_loop4

addn_tail:
	CBZ     R3, addn_done
	FMOVS.P 4(R1), F0
	FMOVS.P 4(R2), F4
	FADDS   F4, F0, F0
	FMOVS.P F0, 4(R0)
	SUB     $1, R3, R3
	B       addn_tail

addn_done:
	RET

// func dotTNEON(x, cT, base []float32, alpha float32, out []float32)
// out[c] = base[c] + Σ_t (alpha·x[t])·cT[t·k+c], k = len(out).
// Columns run in blocks of 16 (V0-V3), then 4 (V0), then one at a time
// (F0); for each block the d coordinates are walked down the cT rows.
// R0 x, R1 d, R2 cT column cursor, R3 base cursor (0 = nil), R5 out
// cursor, R6 columns left, R7 row stride k·4 bytes, R10 cT row cursor,
// R11 x cursor, R12 coordinates left, F31 alpha, V4 broadcast alpha·x[t].
TEXT ·dotTNEON(SB), NOSPLIT, $0-104
	MOVD  x_base+0(FP), R0
	MOVD  x_len+8(FP), R1
	MOVD  cT_base+24(FP), R2
	MOVD  base_base+48(FP), R3
	FMOVS alpha+72(FP), F31
	MOVD  out_base+80(FP), R5
	MOVD  out_len+88(FP), R6
	LSL   $2, R6, R7

dottn_blk16:
	CMP  $16, R6
	BLT  dottn_blk4
	CBZ  R3, dottn_zero16
	VLD1.P 64(R3), [V0.S4, V1.S4, V2.S4, V3.S4]
	B    dottn_init16

dottn_zero16:
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

dottn_init16:
	MOVD R2, R10
	MOVD R0, R11
	MOVD R1, R12

dottn_coord16:
	FMOVS.P 4(R11), F4
	FMULS   F31, F4, F4
	WORD    $0x4e040484                            // dup v4.4s, v4.s[0]
	VLD1    (R10), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD     R7, R10, R10
	VFMLA   V16.S4, V4.S4, V0.S4
	VFMLA   V17.S4, V4.S4, V1.S4
	VFMLA   V18.S4, V4.S4, V2.S4
	VFMLA   V19.S4, V4.S4, V3.S4
	SUBS    $1, R12, R12
	BNE     dottn_coord16
	VST1.P  [V0.S4, V1.S4, V2.S4, V3.S4], 64(R5)
	ADD     $64, R2, R2
	SUB     $16, R6, R6
	B       dottn_blk16

dottn_blk4:
	CMP  $4, R6
	BLT  dottn_col1
	CBZ  R3, dottn_zero4
	VLD1.P 16(R3), [V0.S4]
	B    dottn_init4

dottn_zero4:
	VEOR V0.B16, V0.B16, V0.B16

dottn_init4:
	MOVD R2, R10
	MOVD R0, R11
	MOVD R1, R12

dottn_coord4:
	FMOVS.P 4(R11), F4
	FMULS   F31, F4, F4
	WORD    $0x4e040484            // dup v4.4s, v4.s[0]
	VLD1    (R10), [V16.S4]
	ADD     R7, R10, R10
	VFMLA   V16.S4, V4.S4, V0.S4
	SUBS    $1, R12, R12
	BNE     dottn_coord4
	VST1.P  [V0.S4], 16(R5)
	ADD     $16, R2, R2
	SUB     $4, R6, R6
	B       dottn_blk4

dottn_col1:
	CBZ  R6, dottn_done
	FMOVS $0.0, F0
	CBZ  R3, dottn_init1
	FMOVS.P 4(R3), F0

dottn_init1:
	MOVD R2, R10
	MOVD R0, R11
	MOVD R1, R12

dottn_coord1:
	FMOVS.P 4(R11), F4
	FMULS   F31, F4, F4
	FMOVS   (R10), F5
	ADD     R7, R10, R10
	FMADDS  F5, F0, F4, F0
	SUBS    $1, R12, R12
	BNE     dottn_coord1
	FMOVS.P F0, 4(R5)
	ADD     $4, R2, R2
	SUB     $1, R6, R6
	B       dottn_col1

dottn_done:
	RET

// V8 +Inf, V9 0.5, V10 [0 1 2 3], V11 16s, V12 4s (clobbers R19).
#define ARGMIN_CONSTS \
	MOVW $0x7f800000, R19 \
	VDUP R19, V8.S4 \
	MOVW $0x3f000000, R19 \
	VDUP R19, V9.S4 \
	VEOR V10.B16, V10.B16, V10.B16 \
	MOVD $1, R19 \
	VMOV R19, V10.S[1] \
	MOVD $2, R19 \
	VMOV R19, V10.S[2] \
	MOVD $3, R19 \
	VMOV R19, V10.S[3] \
	MOVD $16, R19 \
	VDUP R19, V11.S4 \
	MOVD $4, R19 \
	VDUP R19, V12.S4

// Per row: V20-V23 +Inf, V24-V27 index 0, V28-V31 indices 0..15.
#define ARGMIN_INIT \
	VORR V8.B16, V8.B16, V20.B16 \
	VORR V8.B16, V8.B16, V21.B16 \
	VORR V8.B16, V8.B16, V22.B16 \
	VORR V8.B16, V8.B16, V23.B16 \
	VEOR V24.B16, V24.B16, V24.B16 \
	VEOR V25.B16, V25.B16, V25.B16 \
	VEOR V26.B16, V26.B16, V26.B16 \
	VEOR V27.B16, V27.B16, V27.B16 \
	VORR V10.B16, V10.B16, V28.B16 \
	WORD $0x4eac879d /* add v29.4s, v28.4s, v12.4s */ \
	WORD $0x4eac87be /* add v30.4s, v29.4s, v12.4s */ \
	WORD $0x4eac87df /* add v31.4s, v30.4s, v12.4s */

// Lanes where V0-V3 < V20-V23 (strict) take the value and index V28-V31; indices += 16.
#define ARGMIN_UPD16 \
	WORD $0x6ea0e690 /* fcmgt v16.4s, v20.4s, v0.4s */ \
	WORD $0x6ea1e6b1 /* fcmgt v17.4s, v21.4s, v1.4s */ \
	WORD $0x6ea2e6d2 /* fcmgt v18.4s, v22.4s, v2.4s */ \
	WORD $0x6ea3e6f3 /* fcmgt v19.4s, v23.4s, v3.4s */ \
	WORD $0x6eb01c14 /* bit v20.16b, v0.16b, v16.16b */ \
	WORD $0x6eb11c35 /* bit v21.16b, v1.16b, v17.16b */ \
	WORD $0x6eb21c56 /* bit v22.16b, v2.16b, v18.16b */ \
	WORD $0x6eb31c77 /* bit v23.16b, v3.16b, v19.16b */ \
	WORD $0x6eb01f98 /* bit v24.16b, v28.16b, v16.16b */ \
	WORD $0x6eb11fb9 /* bit v25.16b, v29.16b, v17.16b */ \
	WORD $0x6eb21fda /* bit v26.16b, v30.16b, v18.16b */ \
	WORD $0x6eb31ffb /* bit v27.16b, v31.16b, v19.16b */ \
	WORD $0x4eab879c /* add v28.4s, v28.4s, v11.4s */ \
	WORD $0x4eab87bd /* add v29.4s, v29.4s, v11.4s */ \
	WORD $0x4eab87de /* add v30.4s, v30.4s, v11.4s */ \
	WORD $0x4eab87ff /* add v31.4s, v31.4s, v11.4s */

// The same for V0 against V20 / V28; V28 += 4.
#define ARGMIN_UPD4 \
	WORD $0x6ea0e690 /* fcmgt v16.4s, v20.4s, v0.4s */ \
	WORD $0x6eb01c14 /* bit v20.16b, v0.16b, v16.16b */ \
	WORD $0x6eb01f98 /* bit v24.16b, v28.16b, v16.16b */ \
	WORD $0x4eac879c /* add v28.4s, v28.4s, v12.4s */

// F13 = min of V20-V23; S17 = lowest index among the lanes holding it.
#define ARGMIN_REDUCE \
	WORD $0x4eb5f690 /* fmin v16.4s, v20.4s, v21.4s */ \
	WORD $0x4eb7f6d1 /* fmin v17.4s, v22.4s, v23.4s */ \
	WORD $0x4eb1f610 /* fmin v16.4s, v16.4s, v17.4s */ \
	WORD $0x6eb0fa0d /* fminv s13, v16.4s */ \
	WORD $0x4e0405b0 /* dup v16.4s, v13.s[0] */ \
	WORD $0x4e30e691 /* fcmeq v17.4s, v20.4s, v16.4s */ \
	WORD $0x4e30e6b2 /* fcmeq v18.4s, v21.4s, v16.4s */ \
	WORD $0x4e30e6d3 /* fcmeq v19.4s, v22.4s, v16.4s */ \
	WORD $0x4e30e6f0 /* fcmeq v16.4s, v23.4s, v16.4s */ \
	WORD $0x4ef11f11 /* orn v17.16b, v24.16b, v17.16b */ \
	WORD $0x4ef21f32 /* orn v18.16b, v25.16b, v18.16b */ \
	WORD $0x4ef31f53 /* orn v19.16b, v26.16b, v19.16b */ \
	WORD $0x4ef01f70 /* orn v16.16b, v27.16b, v16.16b */ \
	WORD $0x6eb26e31 /* umin v17.4s, v17.4s, v18.4s */ \
	WORD $0x6eb06e73 /* umin v19.4s, v19.4s, v16.4s */ \
	WORD $0x6eb36e31 /* umin v17.4s, v17.4s, v19.4s */ \
	WORD $0x6eb1aa31 /* uminv s17, v17.4s */

// func nearestL2TNEON(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)
// For each row: s_c = cnorm[c]/2 − Σ_t x_t·c_t, one fused multiply-
// subtract per coordinate (the order of nearestL2TRef), 16 centroids at a
// time (V0-V3), then 4 (V0), then one (F0). Each of the 16 lanes keeps its
// own strict-< running minimum (V20-V23 values, V24-V27 centroid indices;
// V28-V31 the current indices), so a lane holds the lowest index of its
// minimum; the reduction takes the minimum value and, among lanes holding
// it, the lowest index. The scalar tail (higher indices) then replaces it
// only when strictly smaller, so ties go to the lowest c overall.
// Registers: R0 row, R1 d, R2 ldx·4, R3 cT, R4 cnorm, R5 k, R6 assign
// cursor, R7 rows left, R8 val cursor (0 = nil), R9 k·4; per row R10
// columns left, R11 cT column cursor, R12 cnorm cursor, R13 cT row cursor,
// R14 x cursor, R15 coordinates left, R19 column index, R20 best index,
// F13 best value. Constants: V8 +Inf, V9 0.5, V10 [0 1 2 3], V11 16s,
// V12 4s.
TEXT ·nearestL2TNEON(SB), NOSPLIT, $0-136
	MOVD x_base+0(FP), R0
	MOVD d+24(FP), R1
	MOVD ldx+32(FP), R2
	LSL  $2, R2, R2
	MOVD cT_base+40(FP), R3
	MOVD cnorm_base+64(FP), R4
	MOVD cnorm_len+72(FP), R5
	MOVD assign_base+88(FP), R6
	MOVD assign_len+96(FP), R7
	MOVD val_base+112(FP), R8
	LSL  $2, R5, R9

	ARGMIN_CONSTS

nl2n_row:
	ARGMIN_INIT
	MOVD R5, R10
	MOVD R3, R11
	MOVD R4, R12
	MOVD $0, R19

nl2n_blk16:
	CMP    $16, R10
	BLT    nl2n_blk4
	VLD1.P 64(R12), [V0.S4, V1.S4, V2.S4, V3.S4]
	WORD   $0x6e29dc00                            // fmul v0.4s, v0.4s, v9.4s
	WORD   $0x6e29dc21                            // fmul v1.4s, v1.4s, v9.4s
	WORD   $0x6e29dc42                            // fmul v2.4s, v2.4s, v9.4s
	WORD   $0x6e29dc63                            // fmul v3.4s, v3.4s, v9.4s
	MOVD   R11, R13
	MOVD   R0, R14
	MOVD   R1, R15

nl2n_coord16:
	FMOVS.P 4(R14), F4
	WORD    $0x4e040484                            // dup v4.4s, v4.s[0]
	VLD1    (R13), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD     R9, R13, R13
	VFMLS   V16.S4, V4.S4, V0.S4
	VFMLS   V17.S4, V4.S4, V1.S4
	VFMLS   V18.S4, V4.S4, V2.S4
	VFMLS   V19.S4, V4.S4, V3.S4
	SUBS    $1, R15, R15
	BNE     nl2n_coord16
	ARGMIN_UPD16
	ADD     $64, R11, R11
	ADD     $16, R19, R19
	SUB     $16, R10, R10
	B       nl2n_blk16

nl2n_blk4:
	CMP    $4, R10
	BLT    nl2n_reduce
	VLD1.P 16(R12), [V0.S4]
	WORD   $0x6e29dc00      // fmul v0.4s, v0.4s, v9.4s
	MOVD   R11, R13
	MOVD   R0, R14
	MOVD   R1, R15

nl2n_coord4:
	FMOVS.P 4(R14), F4
	WORD    $0x4e040484     // dup v4.4s, v4.s[0]
	VLD1    (R13), [V16.S4]
	ADD     R9, R13, R13
	VFMLS   V16.S4, V4.S4, V0.S4
	SUBS    $1, R15, R15
	BNE     nl2n_coord4
	ARGMIN_UPD4
	ADD     $16, R11, R11
	ADD     $4, R19, R19
	SUB     $4, R10, R10
	B       nl2n_blk4

nl2n_reduce:
	ARGMIN_REDUCE
	VMOV V17.S[0], R20

nl2n_col1:
	CBZ     R10, nl2n_store
	FMOVS.P 4(R12), F0
	FMULS   F9, F0, F0
	MOVD    R11, R13
	MOVD    R0, R14
	MOVD    R1, R15

nl2n_coord1:
	FMOVS.P 4(R14), F4
	FMOVS   (R13), F5
	ADD     R9, R13, R13
	FMSUBS  F5, F0, F4, F0
	SUBS    $1, R15, R15
	BNE     nl2n_coord1
	FCMPS   F13, F0
	BPL     nl2n_next1
	FMOVS   F0, F13
	MOVD    R19, R20

nl2n_next1:
	ADD $4, R11, R11
	ADD $1, R19, R19
	SUB $1, R10, R10
	B   nl2n_col1

nl2n_store:
	MOVW.P  R20, 4(R6)
	CBZ     R8, nl2n_nextrow
	FADDS   F13, F13, F13
	FMOVS.P F13, 4(R8)

nl2n_nextrow:
	ADD  R2, R0, R0
	SUBS $1, R7, R7
	BNE  nl2n_row
	RET

// func argminAffineNEON(x []float32, base []float32, alpha float32, idx []int32, val []float32)
// For each row: s_c = base[c] + alpha·x[c] (one fused multiply-add, the
// order of argminAffineRef), 16 columns at a time, then 4, then one, with
// the lane-wise minimum and reduction of nearestL2TNEON.
// Registers: R0 x cursor (rows are contiguous), R3 base, R5 k, R6 idx
// cursor, R7 rows left, R8 val cursor; per row R10 columns left, R12 base
// cursor, R19 column index, R20 best index, F13 best value; F31 alpha
// (only until V5 is set: V28-V31 hold indices),
// V5 alpha in every lane (F5 its lane 0).
TEXT ·argminAffineNEON(SB), NOSPLIT, $0-104
	MOVD  x_base+0(FP), R0
	MOVD  base_base+24(FP), R3
	MOVD  base_len+32(FP), R5
	FMOVS alpha+48(FP), F31
	MOVD  idx_base+56(FP), R6
	MOVD  idx_len+64(FP), R7
	MOVD  val_base+80(FP), R8
	WORD  $0x4e0407e5          // dup v5.4s, v31.s[0]
	ARGMIN_CONSTS

amn_row:
	ARGMIN_INIT
	MOVD R5, R10
	MOVD R3, R12
	MOVD $0, R19

amn_blk16:
	CMP    $16, R10
	BLT    amn_blk4
	VLD1.P 64(R12), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA  V16.S4, V5.S4, V0.S4
	VFMLA  V17.S4, V5.S4, V1.S4
	VFMLA  V18.S4, V5.S4, V2.S4
	VFMLA  V19.S4, V5.S4, V3.S4
	ARGMIN_UPD16
	ADD    $16, R19, R19
	SUB    $16, R10, R10
	B      amn_blk16

amn_blk4:
	CMP    $4, R10
	BLT    amn_reduce
	VLD1.P 16(R12), [V0.S4]
	VLD1.P 16(R0), [V16.S4]
	VFMLA  V16.S4, V5.S4, V0.S4
	ARGMIN_UPD4
	ADD    $4, R19, R19
	SUB    $4, R10, R10
	B      amn_blk4

amn_reduce:
	ARGMIN_REDUCE
	VMOV V17.S[0], R20

amn_col1:
	CBZ     R10, amn_store
	FMOVS.P 4(R12), F0
	FMOVS.P 4(R0), F4
	FMADDS  F4, F0, F5, F0
	FCMPS   F13, F0
	BPL     amn_next1
	FMOVS   F0, F13
	MOVD    R19, R20

amn_next1:
	ADD $1, R19, R19
	SUB $1, R10, R10
	B   amn_col1

amn_store:
	MOVW.P  R20, 4(R6)
	FMOVS.P F13, 4(R8)
	SUBS    $1, R7, R7
	BNE     amn_row
	RET
