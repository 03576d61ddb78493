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
	MOVL    $1, BX
	SHLXL   DX, BX, BX
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
