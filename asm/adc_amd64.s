//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// 8-bit PQ ADC scan. Go reference: adc8Ref in adc.go.
//
// Two designs live here. Dispatch uses the scalar four-row kernel
// adc8Scalar4 (at the end of the file) on both AVX levels, because on the
// CPU we measured it is about 2× faster than both the reference and the
// gather kernels below (numbers in adc_amd64.go). The gather kernels stay,
// tested against the reference, for CPUs where gathers are cheaper.
//
// Transposed over a block of 16 (AVX-512) or 8 (AVX2) code vectors: for
// sub-quantizers j..j+3, one VPGATHERDD fetches the 4 code bytes
// codes[row*m+j .. row*m+j+3] of every row in the block (dword lanes at
// byte stride m), then for t = 0..3 the byte t of each lane, plus the
// table offset (j+t)·256, indexes one VGATHERDPS from the LUT, and the
// lane sums accumulate in float32.
//
// No gather uses X4/Y4/Z4 as its index: qemu-user (checked with 7.2 TCG,
// -cpu max) decodes VSIB index register 4 as "no index", so every lane
// would read the base address. Real CPUs handle it; the test suite runs
// under qemu, so we avoid it. The kernels cover sub-quantizers
// [0, m4), m4 = m &^ 3, and reading 4 code bytes at j ≤ m4-4 never
// passes the end of a row; adc_amd64.go adds the last m mod 4 terms.

// iota32<>: int32 0..15.
DATA iota32<>+0(SB)/4, $0
DATA iota32<>+4(SB)/4, $1
DATA iota32<>+8(SB)/4, $2
DATA iota32<>+12(SB)/4, $3
DATA iota32<>+16(SB)/4, $4
DATA iota32<>+20(SB)/4, $5
DATA iota32<>+24(SB)/4, $6
DATA iota32<>+28(SB)/4, $7
DATA iota32<>+32(SB)/4, $8
DATA iota32<>+36(SB)/4, $9
DATA iota32<>+40(SB)/4, $10
DATA iota32<>+44(SB)/4, $11
DATA iota32<>+48(SB)/4, $12
DATA iota32<>+52(SB)/4, $13
DATA iota32<>+56(SB)/4, $14
DATA iota32<>+60(SB)/4, $15
GLOBL iota32<>(SB), RODATA|NOPTR, $64

DATA lowbyte<>+0(SB)/4, $0xff
GLOBL lowbyte<>(SB), RODATA|NOPTR, $4

// func adc8AVX512(codes []uint8, m, m4 int, lut []float32, out []float32)
// Requires m4 ≥ 4, m4 % 4 == 0, m4 ≤ m; all len(out) rows handled
// (the last partial block with k-masks).
//
// SI block's first code row, DX m, BX m4, R8 lut, DI out, R9 rows left,
// Z31 row byte offsets [0, m, .., 15m], Z30 0xff dwords, K3 row mask.
TEXT ·adc8AVX512(SB), NOSPLIT, $0-88
	MOVQ         codes_base+0(FP), SI
	MOVQ         m+24(FP), DX
	MOVQ         m4+32(FP), BX
	MOVQ         lut_base+40(FP), R8
	MOVQ         out_base+64(FP), DI
	MOVQ         out_len+72(FP), R9
	VPBROADCASTD DX, Z31
	VPMULLD      iota32<>(SB), Z31, Z31
	VPBROADCASTD lowbyte<>(SB), Z30
	MOVQ         DX, R13
	SHLQ         $4, R13                  // 16·m: bytes per block of codes

adcz_block:
	TESTQ R9, R9
	JZ    adcz_done
	MOVL  $0xffff, AX
	CMPQ  R9, $16
	JAE   adcz_full
	MOVQ  R9, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX

adcz_full:
	KMOVW  AX, K3
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	MOVQ   SI, R12                        // &codes[row0*m + j]
	MOVQ   R8, R11                        // &lut[j*256]
	MOVQ   BX, R10                        // sub-quantizers left

adcz_j:
	KMOVW       K3, K1
	VPGATHERDD  (R12)(Z31*1), K1, Z2
	VPANDD      Z30, Z2, Z3
	VPSRLD      $8, Z2, Z11
	VPANDD      Z30, Z11, Z11
	VPSRLD      $16, Z2, Z5
	VPANDD      Z30, Z5, Z5
	VPSRLD      $24, Z2, Z6
	KMOVW       K3, K1
	VGATHERDPS  (R11)(Z3*4), K1, Z7
	KMOVW       K3, K2
	VGATHERDPS  1024(R11)(Z11*4), K2, Z8
	KMOVW       K3, K1
	VGATHERDPS  2048(R11)(Z5*4), K1, Z9
	KMOVW       K3, K2
	VGATHERDPS  3072(R11)(Z6*4), K2, Z10
	VADDPS      Z7, Z0, Z0
	VADDPS      Z8, Z1, Z1
	VADDPS      Z9, Z0, Z0
	VADDPS      Z10, Z1, Z1
	ADDQ        $4, R12
	ADDQ        $4096, R11
	SUBQ        $4, R10
	JNZ         adcz_j

	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K3, (DI)
	ADDQ      R13, SI
	ADDQ      $64, DI
	SUBQ      $16, R9
	JAE       adcz_block
	XORQ      R9, R9
	JMP       adcz_block

adcz_done:
	VZEROUPPER
	RET

// func adc8AVX2(codes []uint8, m, m4 int, lut []float32, out []float32)
// Requires m4 ≥ 4, m4 % 4 == 0, m4 ≤ m, len(out) % 8 == 0.
// Y15 row byte offsets [0, m, .., 7m], Y14 0xff dwords, Y13 all-ones.
TEXT ·adc8AVX2(SB), NOSPLIT, $0-88
	MOVQ         codes_base+0(FP), SI
	MOVQ         m+24(FP), DX
	MOVQ         m4+32(FP), BX
	MOVQ         lut_base+40(FP), R8
	MOVQ         out_base+64(FP), DI
	MOVQ         out_len+72(FP), R9
	VMOVD        DX, X15
	VPBROADCASTD X15, Y15
	VPMULLD      iota32<>(SB), Y15, Y15
	VPBROADCASTD lowbyte<>(SB), Y14
	VPCMPEQD     Y13, Y13, Y13
	MOVQ         DX, R13
	SHLQ         $3, R13                  // 8·m

adcy_block:
	CMPQ   R9, $8
	JB     adcy_done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ   SI, R12
	MOVQ   R8, R11
	MOVQ   BX, R10

adcy_j:
	VMOVDQA    Y13, Y12
	VPGATHERDD Y12, (R12)(Y15*1), Y2
	VPAND      Y14, Y2, Y3
	VPSRLD     $8, Y2, Y8
	VPAND      Y14, Y8, Y8
	VPSRLD     $16, Y2, Y5
	VPAND      Y14, Y5, Y5
	VPSRLD     $24, Y2, Y6
	VMOVDQA    Y13, Y12
	VGATHERDPS Y12, (R11)(Y3*4), Y7
	VMOVDQA    Y13, Y11
	VGATHERDPS Y11, 1024(R11)(Y8*4), Y4
	VMOVDQA    Y13, Y12
	VGATHERDPS Y12, 2048(R11)(Y5*4), Y9
	VMOVDQA    Y13, Y11
	VGATHERDPS Y11, 3072(R11)(Y6*4), Y10
	VADDPS     Y7, Y0, Y0
	VADDPS     Y4, Y1, Y1
	VADDPS     Y9, Y0, Y0
	VADDPS     Y10, Y1, Y1
	ADDQ       $4, R12
	ADDQ       $4096, R11
	SUBQ       $4, R10
	JNZ        adcy_j

	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    R13, SI
	ADDQ    $32, DI
	SUBQ    $8, R9
	JMP     adcy_block

adcy_done:
	VZEROUPPER
	RET

// func adc8Scalar4(codes []uint8, m int, lut []float32, out []float32)
// Scalar (VEX) kernel, four rows at a time: per sub-quantizer j, one byte
// load and one VADDSS with a memory operand per row, with two accumulators
// per row (even / odd j) so eight independent add chains hide the FP add
// latency. Sums sub-quantizers [0, m &^ 1); requires m ≥ 2 and
// len(out) % 4 == 0.
//
// SI, DI, R8, R9: code rows 0-3; BX byte offset j; R10 &lut[j*256];
// R11 m (row setup) or m &^ 1 (loop bound); R12 rows left; R13 out; X0-X3 even-j sums, X4-X7 odd-j sums.
TEXT ·adc8Scalar4(SB), NOSPLIT, $0-80
	MOVQ codes_base+0(FP), SI
	MOVQ out_base+56(FP), R13
	MOVQ out_len+64(FP), R12

adcs_rows:
	CMPQ   R12, $4
	JB     adcs_done
	MOVQ   m+24(FP), R11
	LEAQ   (SI)(R11*1), DI
	LEAQ   (DI)(R11*1), R8
	LEAQ   (R8)(R11*1), R9
	ANDQ   $-2, R11                       // loop bound m &^ 1
	MOVQ   lut_base+32(FP), R10
	XORQ   BX, BX
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7

adcs_j:
	MOVBLZX (SI)(BX*1), AX
	MOVBLZX (DI)(BX*1), CX
	MOVBLZX (R8)(BX*1), DX
	MOVBLZX (R9)(BX*1), R14
	VADDSS  (R10)(AX*4), X0, X0
	VADDSS  (R10)(CX*4), X1, X1
	VADDSS  (R10)(DX*4), X2, X2
	VADDSS  (R10)(R14*4), X3, X3
	MOVBLZX 1(SI)(BX*1), AX
	MOVBLZX 1(DI)(BX*1), CX
	MOVBLZX 1(R8)(BX*1), DX
	MOVBLZX 1(R9)(BX*1), R14
	VADDSS  1024(R10)(AX*4), X4, X4
	VADDSS  1024(R10)(CX*4), X5, X5
	VADDSS  1024(R10)(DX*4), X6, X6
	VADDSS  1024(R10)(R14*4), X7, X7
	ADDQ    $2048, R10
	ADDQ    $2, BX
	CMPQ    BX, R11
	JB      adcs_j

	VADDSS X4, X0, X0
	VADDSS X5, X1, X1
	VADDSS X6, X2, X2
	VADDSS X7, X3, X3
	VMOVSS X0, (R13)
	VMOVSS X1, 4(R13)
	VMOVSS X2, 8(R13)
	VMOVSS X3, 12(R13)
	ADDQ   $16, R13
	MOVQ   m+24(FP), R11
	LEAQ   (R9)(R11*1), SI
	SUBQ   $4, R12
	JMP    adcs_rows

adcs_done:
	VZEROUPPER
	RET
