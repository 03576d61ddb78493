//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// IndexAbove kernels: the first i with x[i] > t, or len(x).
// Go reference: indexAboveRef. VCMPPS $0x11 (LT_OQ: ordered, quiet, so
// false when either operand is NaN) of t against x: t < x[i].

// func indexAboveAVX2(x []float32, t float32) int
TEXT ·indexAboveAVX2(SB), NOSPLIT, $0-40
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS t+24(FP), Y0
	XORQ         AX, AX

above2_loop32:
	MOVQ      CX, DX
	SUBQ      AX, DX
	CMPQ      DX, $32
	JB        above2_loop8
	VCMPPS    $0x11, (SI)(AX*4), Y0, Y1
	VCMPPS    $0x11, 32(SI)(AX*4), Y0, Y2
	VCMPPS    $0x11, 64(SI)(AX*4), Y0, Y3
	VCMPPS    $0x11, 96(SI)(AX*4), Y0, Y4
	VORPS     Y1, Y2, Y5
	VORPS     Y3, Y4, Y6
	VORPS     Y5, Y6, Y5
	VMOVMSKPS Y5, DX
	TESTL     DX, DX
	JNZ       above2_found32
	ADDQ      $32, AX
	JMP       above2_loop32

above2_found32:
	// Which of the four vectors holds the first hit.
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       above2_hit
	ADDQ      $8, AX
	VMOVMSKPS Y2, DX
	TESTL     DX, DX
	JNZ       above2_hit
	ADDQ      $8, AX
	VMOVMSKPS Y3, DX
	TESTL     DX, DX
	JNZ       above2_hit
	ADDQ      $8, AX
	VMOVMSKPS Y4, DX

above2_hit:
	BSFL       DX, DX
	ADDQ       DX, AX
	VZEROUPPER
	MOVQ       AX, ret+32(FP)
	RET

above2_loop8:
	CMPQ      DX, $8
	JB        above2_tail
	VCMPPS    $0x11, (SI)(AX*4), Y0, Y1
	VMOVMSKPS Y1, DX
	TESTL     DX, DX
	JNZ       above2_hit
	ADDQ      $8, AX
	MOVQ      CX, DX
	SUBQ      AX, DX
	JMP       above2_loop8

above2_tail:
	VZEROUPPER

above2_tail1:
	CMPQ    AX, CX
	JAE     above2_done
	MOVSS   (SI)(AX*4), X1
	UCOMISS X0, X1
	JA      above2_done
	INCQ    AX
	JMP     above2_tail1

above2_done:
	MOVQ AX, ret+32(FP)
	RET

// func indexAboveAVX512(x []float32, t float32) int
TEXT ·indexAboveAVX512(SB), NOSPLIT, $0-40
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS t+24(FP), Z0
	XORQ         AX, AX

above5_loop64:
	MOVQ    CX, DX
	SUBQ    AX, DX
	CMPQ    DX, $64
	JB      above5_loop16
	VCMPPS  $0x11, (SI)(AX*4), Z0, K1
	VCMPPS  $0x11, 64(SI)(AX*4), Z0, K2
	VCMPPS  $0x11, 128(SI)(AX*4), Z0, K3
	VCMPPS  $0x11, 192(SI)(AX*4), Z0, K4
	KORW    K1, K2, K5
	KORW    K3, K4, K6
	KORTESTW K5, K6
	JNZ     above5_found64
	ADDQ    $64, AX
	JMP     above5_loop64

above5_found64:
	KMOVW   K1, DX
	TESTL   DX, DX
	JNZ     above5_hit
	ADDQ    $16, AX
	KMOVW   K2, DX
	TESTL   DX, DX
	JNZ     above5_hit
	ADDQ    $16, AX
	KMOVW   K3, DX
	TESTL   DX, DX
	JNZ     above5_hit
	ADDQ    $16, AX
	KMOVW   K4, DX

above5_hit:
	BSFL       DX, DX
	ADDQ       DX, AX
	VZEROUPPER
	MOVQ       AX, ret+32(FP)
	RET

above5_loop16:
	CMPQ    DX, $16
	JB      above5_tail
	VCMPPS  $0x11, (SI)(AX*4), Z0, K1
	KMOVW   K1, DX
	TESTL   DX, DX
	JNZ     above5_hit
	ADDQ    $16, AX
	MOVQ    CX, DX
	SUBQ    AX, DX
	JMP     above5_loop16

above5_tail:
	// 0 < DX < 16 elements left: one masked load (the lanes past the end
	// are not read) and a compare under the same mask (they compare false).
	TESTQ   DX, DX
	JZ      above5_none
	MOVQ    CX, R8 // SHLL needs the count in CX (no BMI2 SHLX)
	MOVL    DX, CX
	MOVL    $1, BX
	SHLL    CX, BX
	MOVQ    R8, CX
	DECL    BX
	KMOVW   BX, K7
	VMOVUPS.Z (SI)(AX*4), K7, Z1
	VCMPPS  $0x11, Z1, Z0, K7, K1
	KMOVW   K1, DX
	TESTL   DX, DX
	JNZ     above5_hit
	MOVQ    CX, AX

above5_none:
	VZEROUPPER
	MOVQ    AX, ret+32(FP)
	RET

// IndexBelowU16 kernels: the first i with x[i] < t, or len(x); t ≥ 1
// (IndexBelowU16 answers t = 0 itself). Go reference: indexBelowU16Ref.

// func indexBelowU16AVX2(x []uint16, t uint16) int
// x[i] < t ⇔ min(x[i], t−1) == x[i] (AVX2 has no unsigned compare).
TEXT ·indexBelowU16AVX2(SB), NOSPLIT, $0-40
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	MOVWLZX      t+24(FP), DX
	DECL         DX
	MOVL         DX, X0
	VPBROADCASTW X0, Y0
	XORQ         AX, AX

below2_loop32:
	MOVQ      CX, DX
	SUBQ      AX, DX
	CMPQ      DX, $32
	JB        below2_loop16
	VMOVDQU   (SI)(AX*2), Y1
	VMOVDQU   32(SI)(AX*2), Y2
	VPMINUW   Y0, Y1, Y3
	VPMINUW   Y0, Y2, Y4
	VPCMPEQW  Y1, Y3, Y3
	VPCMPEQW  Y2, Y4, Y4
	VPOR      Y3, Y4, Y5
	VPMOVMSKB Y5, DX
	TESTL     DX, DX
	JNZ       below2_found32
	ADDQ      $32, AX
	JMP       below2_loop32

below2_found32:
	VPMOVMSKB Y3, DX
	TESTL     DX, DX
	JNZ       below2_hit
	ADDQ      $16, AX
	VPMOVMSKB Y4, DX

below2_hit:
	// Two mask bits per uint16 lane.
	BSFL       DX, DX
	SHRL       $1, DX
	ADDQ       DX, AX
	VZEROUPPER
	MOVQ       AX, ret+32(FP)
	RET

below2_loop16:
	CMPQ      DX, $16
	JB        below2_tail
	VMOVDQU   (SI)(AX*2), Y1
	VPMINUW   Y0, Y1, Y3
	VPCMPEQW  Y1, Y3, Y3
	VPMOVMSKB Y3, DX
	TESTL     DX, DX
	JNZ       below2_hit
	ADDQ      $16, AX
	MOVQ      CX, DX
	SUBQ      AX, DX
	JMP       below2_loop16

below2_tail:
	VZEROUPPER
	MOVWLZX t+24(FP), DX

below2_tail1:
	CMPQ    AX, CX
	JAE     below2_done
	MOVWLZX (SI)(AX*2), BX
	CMPL    BX, DX
	JB      below2_done
	INCQ    AX
	JMP     below2_tail1

below2_done:
	MOVQ AX, ret+32(FP)
	RET

// func indexBelowU16AVX512(x []uint16, t uint16) int
TEXT ·indexBelowU16AVX512(SB), NOSPLIT, $0-40
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	MOVWLZX      t+24(FP), DX
	VPBROADCASTW DX, Z0
	XORQ         AX, AX

below5_loop64:
	MOVQ     CX, DX
	SUBQ     AX, DX
	CMPQ     DX, $64
	JB       below5_loop32
	// VPCMPUW $6 (NLE): t > x[i], unsigned.
	VPCMPUW  $6, (SI)(AX*2), Z0, K1
	VPCMPUW  $6, 64(SI)(AX*2), Z0, K2
	KORTESTD K1, K2
	JNZ      below5_found64
	ADDQ     $64, AX
	JMP      below5_loop64

below5_found64:
	KMOVD   K1, DX
	TESTL   DX, DX
	JNZ     below5_hit
	ADDQ    $32, AX
	KMOVD   K2, DX

below5_hit:
	BSFL       DX, DX
	ADDQ       DX, AX
	VZEROUPPER
	MOVQ       AX, ret+32(FP)
	RET

below5_loop32:
	CMPQ    DX, $32
	JB      below5_tail
	VPCMPUW $6, (SI)(AX*2), Z0, K1
	KMOVD   K1, DX
	TESTL   DX, DX
	JNZ     below5_hit
	ADDQ    $32, AX
	MOVQ    CX, DX
	SUBQ    AX, DX
	JMP     below5_loop32

below5_tail:
	// 0 ≤ DX < 32 lanes left: a masked load (the lanes past the end are
	// not read) and a compare under the same mask.
	TESTQ      DX, DX
	JZ         below5_none
	MOVQ       CX, R8 // SHLL needs the count in CX (no BMI2 SHLX)
	MOVL       DX, CX
	MOVL       $1, BX
	SHLL       CX, BX
	MOVQ       R8, CX
	DECL       BX
	KMOVD      BX, K7
	VMOVDQU16.Z (SI)(AX*2), K7, Z1
	VPCMPUW    $6, Z1, Z0, K7, K1
	KMOVD      K1, DX
	TESTL      DX, DX
	JNZ        below5_hit
	MOVQ       CX, AX

below5_none:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
