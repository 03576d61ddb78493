//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// dotPanels4AVX2: 4 x rows × 24 packed c rows per block (see panel.go).
// For each coordinate t: three panel loads (Y12-Y14) and, per x row, one
// broadcast of x_r[t] (Y15) feeding three FMAs into that row's three
// accumulators (row r: Y(3r)..Y(3r+2)); four coordinates per loop pass,
// then one at a time for d mod 4. No horizontal sums: each accumulator
// is 8 finished dot products, stored as they are.
//
// Registers: SI, R13, R14, R11 x rows; DI the block's first panel;
// BX panel cursor; R9 panel bytes (32·d); AX x byte offset; R8 counter;
// R12 d; R15 c rows left; DX out cursor; CX ldo bytes; R10 store rows.

#define PSTEP(poff, xoff) \
	VMOVUPS      poff(BX), Y12; \
	VMOVUPS      poff(BX)(R9*1), Y13; \
	VMOVUPS      poff(BX)(R9*2), Y14; \
	VBROADCASTSS xoff(SI)(AX*1), Y15; \
	VFMADD231PS  Y12, Y15, Y0; \
	VFMADD231PS  Y13, Y15, Y1; \
	VFMADD231PS  Y14, Y15, Y2; \
	VBROADCASTSS xoff(R13)(AX*1), Y15; \
	VFMADD231PS  Y12, Y15, Y3; \
	VFMADD231PS  Y13, Y15, Y4; \
	VFMADD231PS  Y14, Y15, Y5; \
	VBROADCASTSS xoff(R14)(AX*1), Y15; \
	VFMADD231PS  Y12, Y15, Y6; \
	VFMADD231PS  Y13, Y15, Y7; \
	VFMADD231PS  Y14, Y15, Y8; \
	VBROADCASTSS xoff(R11)(AX*1), Y15; \
	VFMADD231PS  Y12, Y15, Y9; \
	VFMADD231PS  Y13, Y15, Y10; \
	VFMADD231PS  Y14, Y15, Y11

// func dotPanels4AVX2(x, p []float32, d, mc int, out []float32, ldo int)
TEXT ·dotPanels4AVX2(SB), NOSPLIT, $0-96
	MOVQ x_base+0(FP), SI
	MOVQ p_base+24(FP), DI
	MOVQ d+48(FP), R12
	MOVQ mc+56(FP), R15
	MOVQ out_base+64(FP), DX
	MOVQ ldo+88(FP), CX
	SHLQ $2, CX
	MOVQ R12, R10
	SHLQ $2, R10
	LEAQ (SI)(R10*1), R13
	LEAQ (R13)(R10*1), R14
	LEAQ (R14)(R10*1), R11
	MOVQ R12, R9
	SHLQ $5, R9

pan_block:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ  AX, AX
	MOVQ  DI, BX
	MOVQ  R12, R8
	SHRQ  $2, R8
	TESTQ R8, R8
	JZ    pan_rem

pan_loop4:
	PSTEP(0, 0)
	PSTEP(32, 4)
	PSTEP(64, 8)
	PSTEP(96, 12)
	ADDQ $16, AX
	ADDQ $128, BX
	DECQ R8
	JNZ  pan_loop4

pan_rem:
	MOVQ R12, R8
	ANDQ $3, R8
	JZ   pan_store

pan_loop1:
	PSTEP(0, 0)
	ADDQ $4, AX
	ADDQ $32, BX
	DECQ R8
	JNZ  pan_loop1

pan_store:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	LEAQ    (DX)(CX*1), R10
	VMOVUPS Y3, (R10)
	VMOVUPS Y4, 32(R10)
	VMOVUPS Y5, 64(R10)
	ADDQ    CX, R10
	VMOVUPS Y6, (R10)
	VMOVUPS Y7, 32(R10)
	VMOVUPS Y8, 64(R10)
	ADDQ    CX, R10
	VMOVUPS Y9, (R10)
	VMOVUPS Y10, 32(R10)
	VMOVUPS Y11, 64(R10)
	ADDQ    $96, DX
	LEAQ    (DI)(R9*2), DI
	ADDQ    R9, DI
	SUBQ    $24, R15
	JNZ     pan_block
	VZEROUPPER
	RET
