//go:build arm64 && gc && !noasm && !purego

#include "textflag.h"

// SQ8 kernels for arm64 NEON. Go references: sq8L2SqRef, sq8DotRef,
// l2SqU8Ref, dotU8Ref in sq8.go. Instructions the Go assembler lacks
// (UCVTF, FSUB, FADD, FADDP, UMULL, UMULL2, UADALP, UABD, UDOT) are WORD
// encodings from llvm-mc, mnemonic in the comment.
//
// The float-query kernels need len(q) % 8 == 0 and the integer kernels
// len % 16 == 0; sq8_arm64.go finishes tails with the reference.
//
// Integer kernels are exact modulo 2^32 like the reference:
//   - UMULL/UMULL2 form u8×u8 products as uint16 (≤ 255² < 2^16), and
//     UADALP adds adjacent pairs into uint32 lanes.
//   - With the dot-product extension, UDOT adds four u8×u8 products into
//     each uint32 lane directly.
//   - For L2, UABD gives |a-b| as a byte, and Σ|a-b|² runs as a dot of that
//     vector with itself.

// func sq8L2SqNEON(q []float32, code []uint8, scale, offset []float32) float32
TEXT ·sq8L2SqNEON(SB), NOSPLIT, $0-100
	MOVD q_base+0(FP), R0
	MOVD q_len+8(FP), R2
	MOVD code_base+24(FP), R1
	MOVD scale_base+48(FP), R3
	MOVD offset_base+72(FP), R4
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16

sq8l2n_loop8:
	CBZ    R2, sq8l2n_reduce
	VLD1.P 8(R1), [V4.B8]
	VUXTL  V4.B8, V4.H8
	VUXTL  V4.H4, V5.S4
	VUXTL2 V4.H8, V6.S4
	WORD $0x6e21d8a5 // ucvtf v5.4s, v5.4s
	WORD $0x6e21d8c6 // ucvtf v6.4s, v6.4s
	VLD1.P 32(R3), [V16.S4, V17.S4]
	VLD1.P 32(R4), [V18.S4, V19.S4]
	VLD1.P 32(R0), [V20.S4, V21.S4]
	VFMLA  V5.S4, V16.S4, V18.S4
	VFMLA  V6.S4, V17.S4, V19.S4
	WORD $0x4eb2d694 // fsub v20.4s, v20.4s, v18.4s
	WORD $0x4eb3d6b5 // fsub v21.4s, v21.4s, v19.4s
	VFMLA  V20.S4, V20.S4, V0.S4
	VFMLA  V21.S4, V21.S4, V1.S4
	SUB    $8, R2, R2
	B      sq8l2n_loop8

sq8l2n_reduce:
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s
	FMOVS F0, ret+96(FP)
	RET

// func sq8DotNEON(q []float32, code []uint8, scale, offset []float32) float32
TEXT ·sq8DotNEON(SB), NOSPLIT, $0-100
	MOVD q_base+0(FP), R0
	MOVD q_len+8(FP), R2
	MOVD code_base+24(FP), R1
	MOVD scale_base+48(FP), R3
	MOVD offset_base+72(FP), R4
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16

sq8dotn_loop8:
	CBZ    R2, sq8dotn_reduce
	VLD1.P 8(R1), [V4.B8]
	VUXTL  V4.B8, V4.H8
	VUXTL  V4.H4, V5.S4
	VUXTL2 V4.H8, V6.S4
	WORD $0x6e21d8a5 // ucvtf v5.4s, v5.4s
	WORD $0x6e21d8c6 // ucvtf v6.4s, v6.4s
	VLD1.P 32(R3), [V16.S4, V17.S4]
	VLD1.P 32(R4), [V18.S4, V19.S4]
	VLD1.P 32(R0), [V20.S4, V21.S4]
	VFMLA  V5.S4, V16.S4, V18.S4
	VFMLA  V6.S4, V17.S4, V19.S4
	VFMLA  V18.S4, V20.S4, V0.S4
	VFMLA  V19.S4, V21.S4, V1.S4
	SUB    $8, R2, R2
	B      sq8dotn_loop8

sq8dotn_reduce:
	WORD $0x4e21d400 // fadd v0.4s, v0.4s, v1.4s
	WORD $0x6e20d400 // faddp v0.4s, v0.4s, v0.4s
	WORD $0x7e30d800 // faddp s0, v0.2s
	FMOVS F0, ret+96(FP)
	RET

// func dotU8NEON(a, b []uint8) uint32
TEXT ·dotU8NEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16

dotu8n_loop:
	CBZ    R2, dotu8n_reduce
	VLD1.P 16(R0), [V4.B16]
	VLD1.P 16(R1), [V5.B16]
	WORD $0x2e25c086 // umull v6.8h, v4.8b, v5.8b
	WORD $0x6e25c087 // umull2 v7.8h, v4.16b, v5.16b
	WORD $0x6e6068c0 // uadalp v0.4s, v6.8h
	WORD $0x6e6068e1 // uadalp v1.4s, v7.8h
	SUB    $16, R2, R2
	B      dotu8n_loop

dotu8n_reduce:
	VADD  V1.S4, V0.S4, V0.S4
	VADDV V0.S4, V0
	VMOV  V0.S[0], R3
	MOVW  R3, ret+48(FP)
	RET

// func l2SqU8NEON(a, b []uint8) uint32
TEXT ·l2SqU8NEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16

l2u8n_loop:
	CBZ    R2, l2u8n_reduce
	VLD1.P 16(R0), [V4.B16]
	VLD1.P 16(R1), [V5.B16]
	WORD $0x6e257484 // uabd v4.16b, v4.16b, v5.16b
	WORD $0x2e24c086 // umull v6.8h, v4.8b, v4.8b
	WORD $0x6e24c087 // umull2 v7.8h, v4.16b, v4.16b
	WORD $0x6e6068c0 // uadalp v0.4s, v6.8h
	WORD $0x6e6068e1 // uadalp v1.4s, v7.8h
	SUB    $16, R2, R2
	B      l2u8n_loop

l2u8n_reduce:
	VADD  V1.S4, V0.S4, V0.S4
	VADDV V0.S4, V0
	VMOV  V0.S[0], R3
	MOVW  R3, ret+48(FP)
	RET

// func dotU8UDOT(a, b []uint8) uint32
TEXT ·dotU8UDOT(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V0.B16, V0.B16, V0.B16

dotu8d_loop:
	CBZ    R2, dotu8d_reduce
	VLD1.P 16(R0), [V4.B16]
	VLD1.P 16(R1), [V5.B16]
	WORD $0x6e859480 // udot v0.4s, v4.16b, v5.16b
	SUB    $16, R2, R2
	B      dotu8d_loop

dotu8d_reduce:
	VADDV V0.S4, V0
	VMOV  V0.S[0], R3
	MOVW  R3, ret+48(FP)
	RET

// func l2SqU8UDOT(a, b []uint8) uint32
TEXT ·l2SqU8UDOT(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	VEOR V0.B16, V0.B16, V0.B16

l2u8d_loop:
	CBZ    R2, l2u8d_reduce
	VLD1.P 16(R0), [V4.B16]
	VLD1.P 16(R1), [V5.B16]
	WORD $0x6e257484 // uabd v4.16b, v4.16b, v5.16b
	WORD $0x6e849480 // udot v0.4s, v4.16b, v4.16b
	SUB    $16, R2, R2
	B      l2u8d_loop

l2u8d_reduce:
	VADDV V0.S4, V0
	VMOV  V0.S[0], R3
	MOVW  R3, ret+48(FP)
	RET
