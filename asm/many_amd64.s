//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// Transposed-codebook kernels, AVX-512 F (see many.go; Go references
// nearestL2TRef and dotTRef). Centroids are processed 64 at a time (four
// ZMM accumulators, one broadcast of x[t] feeding four FMAs with memory
// operands per coordinate), then 16 at a time, then one masked chunk for
// k mod 16 (K1; masked memory operands do not fault). EVEX/VEX only; every
// function ends with VZEROUPPER.

DATA manyhalf<>+0(SB)/4, $0x3f000000 // 0.5
GLOBL manyhalf<>(SB), RODATA|NOPTR, $4

DATA manyinf<>+0(SB)/4, $0x7f800000 // +Inf
GLOBL manyinf<>(SB), RODATA|NOPTR, $4

DATA many16<>+0(SB)/4, $16
GLOBL many16<>(SB), RODATA|NOPTR, $4

DATA manyeight<>+0(SB)/4, $8
GLOBL manyeight<>(SB), RODATA|NOPTR, $4

DATA manyiota<>+0(SB)/8, $0x0000000100000000
DATA manyiota<>+8(SB)/8, $0x0000000300000002
DATA manyiota<>+16(SB)/8, $0x0000000500000004
DATA manyiota<>+24(SB)/8, $0x0000000700000006
DATA manyiota<>+32(SB)/8, $0x0000000900000008
DATA manyiota<>+40(SB)/8, $0x0000000b0000000a
DATA manyiota<>+48(SB)/8, $0x0000000d0000000c
DATA manyiota<>+56(SB)/8, $0x0000000f0000000e
GLOBL manyiota<>(SB), RODATA|NOPTR, $64

// ARGMIN_UPD folds the 16 candidate values in z (centroid indices in Z30)
// into the running per-lane minimum Z28 and its indices Z29 (strictly
// smaller wins, so the lowest index keeps a tie), then advances Z30 by 16.
#define ARGMIN_UPD(z) \
	VCMPPS    $1, Z28, z, K2; \
	VMOVAPS   z, K2, Z28; \
	VMOVDQA32 Z30, K2, Z29; \
	VPADDD    Z24, Z30, Z30

// ARGMIN_REDUCE leaves the minimum of the 16 lanes of Z28 in every lane
// of X5 and the smallest index (from Z29) among the lanes holding it in
// AX (0xffffffff if none does: NaN). Clobbers Z6-Z8, K3.
#define ARGMIN_REDUCE \
	VMOVAPS       Z28, Z6; \
	VEXTRACTF64X4 $1, Z6, Y5; \
	VMINPS        Y5, Y6, Y5; \
	VEXTRACTF128  $1, Y5, X7; \
	VMINPS        X7, X5, X5; \
	VPERMILPS     $0x4e, X5, X7; \
	VMINPS        X7, X5, X5; \
	VPERMILPS     $0xb1, X5, X7; \
	VMINPS        X7, X5, X5; \
	VBROADCASTSS  X5, Z8; \
	VCMPPS        $0, Z8, Z6, K3; \
	VPTERNLOGD    $0xff, Z7, Z7, Z7; \
	VMOVDQA32     Z29, K3, Z7; \
	VEXTRACTI64X4 $1, Z7, Y8; \
	VPMINUD       Y8, Y7, Y7; \
	VEXTRACTI128  $1, Y7, X8; \
	VPMINUD       X8, X7, X7; \
	VPSHUFD       $0x4e, X7, X8; \
	VPMINUD       X8, X7, X7; \
	VPSHUFD       $0xb1, X7, X8; \
	VPMINUD       X8, X7, X7; \
	VMOVD         X7, AX

// func nearestL2TAVX512(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)
//
// Registers: SI x row; DX x[t] pointer, R9 its end; BX cT column of the
// current chunk, AX cT row t of it, R10 cT row stride (4k); R14 cnorm at
// the chunk; CX centroids left in the row; DI assign; R13 val (0: none);
// R12 rows left. Locals: k, cnorm base, x row stride in bytes, d·4.
// Z24 = 16 (int), Z25 = 0..15, Z26 = +Inf, Z27 = 0.5.
TEXT ·nearestL2TAVX512(SB), NOSPLIT, $32-136
	MOVQ x_base+0(FP), SI
	MOVQ d+24(FP), AX
	SHLQ $2, AX
	MOVQ AX, dbytes-32(SP)
	MOVQ ldx+32(FP), AX
	SHLQ $2, AX
	MOVQ AX, xstride-24(SP)
	MOVQ cT_base+40(FP), R8
	MOVQ cnorm_base+64(FP), AX
	MOVQ AX, cnbase-16(SP)
	MOVQ cnorm_len+72(FP), AX
	MOVQ AX, kk-8(SP)
	MOVQ AX, R10
	SHLQ $2, R10
	MOVQ assign_base+88(FP), DI
	MOVQ assign_len+96(FP), R12
	MOVQ val_base+112(FP), R13

	MOVQ  kk-8(SP), CX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

	VPBROADCASTD many16<>(SB), Z24
	VMOVDQU32    manyiota<>(SB), Z25
	VBROADCASTSS manyinf<>(SB), Z26
	VBROADCASTSS manyhalf<>(SB), Z27

nl_row:
	VMOVAPS   Z26, Z28
	VPXORD    Z29, Z29, Z29
	VMOVDQA32 Z25, Z30
	MOVQ      R8, BX
	MOVQ      cnbase-16(SP), R14
	MOVQ      kk-8(SP), CX
	MOVQ      SI, R9
	ADDQ      dbytes-32(SP), R9

nl_group:
	CMPQ   CX, $64
	JLT    nl_single
	VMULPS (R14), Z27, Z0
	VMULPS 64(R14), Z27, Z1
	VMULPS 128(R14), Z27, Z2
	VMULPS 192(R14), Z27, Z3
	MOVQ   BX, AX
	MOVQ   SI, DX

nl_group_t:
	VBROADCASTSS  (DX), Z4
	VFNMADD231PS  (AX), Z4, Z0
	VFNMADD231PS  64(AX), Z4, Z1
	VFNMADD231PS  128(AX), Z4, Z2
	VFNMADD231PS  192(AX), Z4, Z3
	ADDQ          $4, DX
	ADDQ          R10, AX
	CMPQ          DX, R9
	JNE           nl_group_t
	ARGMIN_UPD(Z0)
	ARGMIN_UPD(Z1)
	ARGMIN_UPD(Z2)
	ARGMIN_UPD(Z3)
	ADDQ          $256, BX
	ADDQ          $256, R14
	SUBQ          $64, CX
	JMP           nl_group

nl_single:
	CMPQ   CX, $16
	JLT    nl_tail
	VMULPS (R14), Z27, Z0
	MOVQ   BX, AX
	MOVQ   SI, DX

nl_single_t:
	VBROADCASTSS  (DX), Z4
	VFNMADD231PS  (AX), Z4, Z0
	ADDQ          $4, DX
	ADDQ          R10, AX
	CMPQ          DX, R9
	JNE           nl_single_t
	ARGMIN_UPD(Z0)
	ADDQ          $64, BX
	ADDQ          $64, R14
	SUBQ          $16, CX
	JMP           nl_single

nl_tail:
	TESTQ   CX, CX
	JZ      nl_reduce
	VMOVAPS Z26, Z0
	VMOVUPS (R14), K1, Z0
	VMULPS  Z27, Z0, Z0
	MOVQ    BX, AX
	MOVQ    SI, DX

nl_tail_t:
	VBROADCASTSS  (DX), Z4
	VFNMADD231PS  (AX), Z4, K1, Z0
	ADDQ          $4, DX
	ADDQ          R10, AX
	CMPQ          DX, R9
	JNE           nl_tail_t
	ARGMIN_UPD(Z0)

nl_reduce:
	ARGMIN_REDUCE
	CMPQ          AX, kk-8(SP)
	JB            nl_store
	XORL          AX, AX // no lane matched (NaN input): centroid 0

nl_store:
	MOVL  AX, (DI)
	ADDQ  $4, DI
	TESTQ R13, R13
	JZ    nl_next
	VADDSS X5, X5, X5
	VMOVSS X5, (R13)
	ADDQ   $4, R13

nl_next:
	ADDQ xstride-24(SP), SI
	DECQ R12
	JNZ  nl_row
	VZEROUPPER
	RET

// func dotTAVX512(x, cT, base []float32, alpha float32, out []float32)
//
// Registers: SI x, R9 its end, DX x[t] pointer; BX cT column of the chunk,
// AX cT row t of it, R10 cT row stride (4k); R14 base at the chunk (0:
// none); DI out at the chunk; CX centroids left. Z27 = alpha.
TEXT ·dotTAVX512(SB), NOSPLIT, $0-104
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), R9
	LEAQ         (SI)(R9*4), R9
	MOVQ         cT_base+24(FP), BX
	MOVQ         base_base+48(FP), R14
	VBROADCASTSS alpha+72(FP), Z27
	MOVQ         out_base+80(FP), DI
	MOVQ         out_len+88(FP), CX
	MOVQ         CX, R10
	SHLQ         $2, R10

	MOVQ  CX, AX
	ANDQ  $15, AX
	MOVQ  CX, R8
	MOVQ  AX, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	MOVQ  R8, CX

dt_group:
	CMPQ    CX, $64
	JLT     dt_single
	TESTQ   R14, R14
	JZ      dt_group_zero
	VMOVUPS (R14), Z0
	VMOVUPS 64(R14), Z1
	VMOVUPS 128(R14), Z2
	VMOVUPS 192(R14), Z3
	ADDQ    $256, R14
	JMP     dt_group_go

dt_group_zero:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

dt_group_go:
	MOVQ BX, AX
	MOVQ SI, DX

dt_group_t:
	VBROADCASTSS (DX), Z4
	VMULPS       Z27, Z4, Z4
	VFMADD231PS  (AX), Z4, Z0
	VFMADD231PS  64(AX), Z4, Z1
	VFMADD231PS  128(AX), Z4, Z2
	VFMADD231PS  192(AX), Z4, Z3
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          dt_group_t
	VMOVUPS      Z0, (DI)
	VMOVUPS      Z1, 64(DI)
	VMOVUPS      Z2, 128(DI)
	VMOVUPS      Z3, 192(DI)
	ADDQ         $256, DI
	ADDQ         $256, BX
	SUBQ         $64, CX
	JMP          dt_group

dt_single:
	CMPQ    CX, $16
	JLT     dt_tail
	VXORPS  Z0, Z0, Z0
	TESTQ   R14, R14
	JZ      dt_single_go
	VMOVUPS (R14), Z0
	ADDQ    $64, R14

dt_single_go:
	MOVQ BX, AX
	MOVQ SI, DX

dt_single_t:
	VBROADCASTSS (DX), Z4
	VMULPS       Z27, Z4, Z4
	VFMADD231PS  (AX), Z4, Z0
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          dt_single_t
	VMOVUPS      Z0, (DI)
	ADDQ         $64, DI
	ADDQ         $64, BX
	SUBQ         $16, CX
	JMP          dt_single

dt_tail:
	TESTQ     CX, CX
	JZ        dt_done
	VXORPS    Z0, Z0, Z0
	TESTQ     R14, R14
	JZ        dt_tail_go
	VMOVUPS.Z (R14), K1, Z0

dt_tail_go:
	MOVQ BX, AX
	MOVQ SI, DX

dt_tail_t:
	VBROADCASTSS (DX), Z4
	VMULPS       Z27, Z4, Z4
	VFMADD231PS  (AX), Z4, K1, Z0
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          dt_tail_t
	VMOVUPS      Z0, K1, (DI)

dt_done:
	VZEROUPPER
	RET

// func addF32AVX512(dst, a, b []float32)
// 64 floats per iteration, then 16, then a masked tail.
TEXT ·addF32AVX512(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX

af5_64:
	CMPQ    CX, $64
	JLT     af5_16
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VADDPS  128(DX), Z2, Z2
	VADDPS  192(DX), Z3, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, SI
	ADDQ    $256, DX
	ADDQ    $256, DI
	SUBQ    $64, CX
	JMP     af5_64

af5_16:
	CMPQ    CX, $16
	JLT     af5_tail
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     af5_16

af5_tail:
	TESTQ     CX, CX
	JZ        af5_done
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K1, Z1
	VADDPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)

af5_done:
	VZEROUPPER
	RET

// func addF32AVX2(dst, a, b []float32)
// 32 floats per iteration, then 8, then scalar (VEX) for the tail.
TEXT ·addF32AVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX

af2_32:
	CMPQ    CX, $32
	JLT     af2_8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VADDPS  64(DX), Y2, Y2
	VADDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     af2_32

af2_8:
	CMPQ    CX, $8
	JLT     af2_tail
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     af2_8

af2_tail:
	TESTQ  CX, CX
	JZ     af2_done
	VMOVSS (SI), X0
	VADDSS (DX), X0, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DX
	ADDQ   $4, DI
	DECQ   CX
	JMP    af2_tail

af2_done:
	VZEROUPPER
	RET

// func argminAffineAVX512(x []float32, base []float32, alpha float32, idx []int32, val []float32)
//
// Row i of x (len(base) floats) → idx[i], val[i] = argmin, min of
// base[c] + alpha·x[i][c]. Registers: SI x (walks all rows), R8 base at
// the chunk, CX columns left in the row, DI idx, R13 val, R12 rows left,
// R11 k. Z27 = alpha; Z24-Z26 as in nearestL2TAVX512.
TEXT ·argminAffineAVX512(SB), NOSPLIT, $0-104
	MOVQ x_base+0(FP), SI
	MOVQ base_len+32(FP), R11
	VBROADCASTSS alpha+48(FP), Z27
	MOVQ idx_base+56(FP), DI
	MOVQ idx_len+64(FP), R12
	MOVQ val_base+80(FP), R13

	MOVQ  R11, CX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

	VPBROADCASTD many16<>(SB), Z24
	VMOVDQU32    manyiota<>(SB), Z25
	VBROADCASTSS manyinf<>(SB), Z26

aa_row:
	VMOVAPS   Z26, Z28
	VPXORD    Z29, Z29, Z29
	VMOVDQA32 Z25, Z30
	MOVQ      base_base+24(FP), R8
	MOVQ      R11, CX

aa_chunk:
	CMPQ        CX, $16
	JLT         aa_tail
	VMOVUPS     (R8), Z1
	VFMADD231PS (SI), Z27, Z1
	ARGMIN_UPD(Z1)
	ADDQ        $64, SI
	ADDQ        $64, R8
	SUBQ        $16, CX
	JMP         aa_chunk

aa_tail:
	TESTQ       CX, CX
	JZ          aa_reduce
	VMOVAPS     Z26, Z1
	VMOVUPS     (R8), K1, Z1
	VFMADD231PS (SI), Z27, K1, Z1
	ARGMIN_UPD(Z1)
	LEAQ        (SI)(CX*4), SI

aa_reduce:
	ARGMIN_REDUCE
	CMPQ AX, R11
	JB   aa_store
	XORL AX, AX

aa_store:
	MOVL   AX, (DI)
	ADDQ   $4, DI
	VMOVSS X5, (R13)
	ADDQ   $4, R13
	DECQ   R12
	JNZ    aa_row
	VZEROUPPER
	RET

// ---------------------------------------------------------------------------
// AVX2 + FMA versions: 8 centroids per YMM, groups of 32, then 8, then a
// VMASKMOVPS tail (masked-out lanes read as 0 and never fault).

// manytail<>: 8 × 0xffffffff then 8 × 0; the 8 dwords at byte offset
// 32-4r have exactly the first r lanes set.
DATA manytail<>+0(SB)/8, $0xffffffffffffffff
DATA manytail<>+8(SB)/8, $0xffffffffffffffff
DATA manytail<>+16(SB)/8, $0xffffffffffffffff
DATA manytail<>+24(SB)/8, $0xffffffffffffffff
DATA manytail<>+32(SB)/8, $0
DATA manytail<>+40(SB)/8, $0
DATA manytail<>+48(SB)/8, $0
DATA manytail<>+56(SB)/8, $0
GLOBL manytail<>(SB), RODATA|NOPTR, $64

// ARGMIN_UPD_Y folds the 8 values in y (indices in Y10) into the running
// minimum Y8 / indices Y9 (strictly smaller wins), then advances Y10 by 8
// (Y11). Clobbers Y5.
#define ARGMIN_UPD_Y(y) \
	VCMPPS    $1, Y8, y, Y5; \
	VBLENDVPS Y5, y, Y8, Y8; \
	VBLENDVPS Y5, Y10, Y9, Y9; \
	VPADDD    Y11, Y10, Y10

// ARGMIN_REDUCE_Y: minimum of Y8's lanes into every lane of X5, smallest
// index (Y9) among the lanes holding it into AX (0xffffffff if none).
// Clobbers Y6, Y7.
#define ARGMIN_REDUCE_Y \
	VEXTRACTF128 $1, Y8, X5; \
	VMINPS       X5, X8, X5; \
	VPERMILPS    $0x4e, X5, X7; \
	VMINPS       X7, X5, X5; \
	VPERMILPS    $0xb1, X5, X7; \
	VMINPS       X7, X5, X5; \
	VBROADCASTSS X5, Y6; \
	VCMPPS       $0, Y6, Y8, Y7; \
	VPCMPEQD     Y6, Y6, Y6; \
	VBLENDVPS    Y7, Y9, Y6, Y6; \
	VEXTRACTI128 $1, Y6, X7; \
	VPMINUD      X7, X6, X6; \
	VPSHUFD      $0x4e, X6, X7; \
	VPMINUD      X7, X6, X6; \
	VPSHUFD      $0xb1, X6, X7; \
	VPMINUD      X7, X6, X6; \
	VMOVD        X6, AX

// func nearestL2TAVX2(x []float32, d, ldx int, cT, cnorm []float32, assign []int32, val []float32)
// Registers as nearestL2TAVX512; Y11 = 8 (int), Y12 = 0.5, Y13 = +Inf,
// Y14 = 0..7, Y15 = tail lane mask.
TEXT ·nearestL2TAVX2(SB), NOSPLIT, $32-136
	MOVQ x_base+0(FP), SI
	MOVQ d+24(FP), AX
	SHLQ $2, AX
	MOVQ AX, dbytes-32(SP)
	MOVQ ldx+32(FP), AX
	SHLQ $2, AX
	MOVQ AX, xstride-24(SP)
	MOVQ cT_base+40(FP), R8
	MOVQ cnorm_base+64(FP), AX
	MOVQ AX, cnbase-16(SP)
	MOVQ cnorm_len+72(FP), AX
	MOVQ AX, kk-8(SP)
	MOVQ AX, R10
	SHLQ $2, R10
	MOVQ assign_base+88(FP), DI
	MOVQ assign_len+96(FP), R12
	MOVQ val_base+112(FP), R13

	MOVQ    kk-8(SP), CX
	ANDQ    $7, CX
	SHLQ    $2, CX
	LEAQ    manytail<>(SB), AX
	ADDQ    $32, AX
	SUBQ    CX, AX
	VMOVDQU (AX), Y15

	VPBROADCASTD manyeight<>(SB), Y11
	VBROADCASTSS manyhalf<>(SB), Y12
	VBROADCASTSS manyinf<>(SB), Y13
	VMOVDQU      manyiota<>(SB), Y14

n2_row:
	VMOVAPS Y13, Y8
	VPXOR   Y9, Y9, Y9
	VMOVDQA Y14, Y10
	MOVQ    R8, BX
	MOVQ    cnbase-16(SP), R14
	MOVQ    kk-8(SP), CX
	MOVQ    SI, R9
	ADDQ    dbytes-32(SP), R9

n2_group:
	CMPQ   CX, $32
	JLT    n2_single
	VMULPS (R14), Y12, Y0
	VMULPS 32(R14), Y12, Y1
	VMULPS 64(R14), Y12, Y2
	VMULPS 96(R14), Y12, Y3
	MOVQ   BX, AX
	MOVQ   SI, DX

n2_group_t:
	VBROADCASTSS (DX), Y4
	VFNMADD231PS (AX), Y4, Y0
	VFNMADD231PS 32(AX), Y4, Y1
	VFNMADD231PS 64(AX), Y4, Y2
	VFNMADD231PS 96(AX), Y4, Y3
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          n2_group_t
	ARGMIN_UPD_Y(Y0)
	ARGMIN_UPD_Y(Y1)
	ARGMIN_UPD_Y(Y2)
	ARGMIN_UPD_Y(Y3)
	ADDQ         $128, BX
	ADDQ         $128, R14
	SUBQ         $32, CX
	JMP          n2_group

n2_single:
	CMPQ   CX, $8
	JLT    n2_tail
	VMULPS (R14), Y12, Y0
	MOVQ   BX, AX
	MOVQ   SI, DX

n2_single_t:
	VBROADCASTSS (DX), Y4
	VFNMADD231PS (AX), Y4, Y0
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          n2_single_t
	ARGMIN_UPD_Y(Y0)
	ADDQ         $32, BX
	ADDQ         $32, R14
	SUBQ         $8, CX
	JMP          n2_single

n2_tail:
	TESTQ      CX, CX
	JZ         n2_reduce
	VMASKMOVPS (R14), Y15, Y0
	VMULPS     Y12, Y0, Y0
	VBLENDVPS  Y15, Y0, Y13, Y0 // masked-out lanes: +Inf
	MOVQ       BX, AX
	MOVQ       SI, DX

n2_tail_t:
	VBROADCASTSS (DX), Y4
	VMASKMOVPS   (AX), Y15, Y6
	VFNMADD231PS Y6, Y4, Y0
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          n2_tail_t
	ARGMIN_UPD_Y(Y0)

n2_reduce:
	ARGMIN_REDUCE_Y
	CMPQ AX, kk-8(SP)
	JB   n2_store
	XORL AX, AX

n2_store:
	MOVL   AX, (DI)
	ADDQ   $4, DI
	TESTQ  R13, R13
	JZ     n2_next
	VADDSS X5, X5, X5
	VMOVSS X5, (R13)
	ADDQ   $4, R13

n2_next:
	ADDQ xstride-24(SP), SI
	DECQ R12
	JNZ  n2_row
	VZEROUPPER
	RET

// func dotTAVX2(x, cT, base []float32, alpha float32, out []float32)
// Registers as dotTAVX512; Y12 = alpha, Y15 = tail lane mask.
TEXT ·dotTAVX2(SB), NOSPLIT, $0-104
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), R9
	LEAQ         (SI)(R9*4), R9
	MOVQ         cT_base+24(FP), BX
	MOVQ         base_base+48(FP), R14
	VBROADCASTSS alpha+72(FP), Y12
	MOVQ         out_base+80(FP), DI
	MOVQ         out_len+88(FP), CX
	MOVQ         CX, R10
	SHLQ         $2, R10

	MOVQ    CX, DX
	ANDQ    $7, DX
	SHLQ    $2, DX
	LEAQ    manytail<>(SB), AX
	ADDQ    $32, AX
	SUBQ    DX, AX
	VMOVDQU (AX), Y15

d2_group:
	CMPQ    CX, $32
	JLT     d2_single
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	TESTQ   R14, R14
	JZ      d2_group_go
	VMOVUPS (R14), Y0
	VMOVUPS 32(R14), Y1
	VMOVUPS 64(R14), Y2
	VMOVUPS 96(R14), Y3
	ADDQ    $128, R14

d2_group_go:
	MOVQ BX, AX
	MOVQ SI, DX

d2_group_t:
	VBROADCASTSS (DX), Y4
	VMULPS       Y12, Y4, Y4
	VFMADD231PS  (AX), Y4, Y0
	VFMADD231PS  32(AX), Y4, Y1
	VFMADD231PS  64(AX), Y4, Y2
	VFMADD231PS  96(AX), Y4, Y3
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          d2_group_t
	VMOVUPS      Y0, (DI)
	VMOVUPS      Y1, 32(DI)
	VMOVUPS      Y2, 64(DI)
	VMOVUPS      Y3, 96(DI)
	ADDQ         $128, DI
	ADDQ         $128, BX
	SUBQ         $32, CX
	JMP          d2_group

d2_single:
	CMPQ    CX, $8
	JLT     d2_tail
	VXORPS  Y0, Y0, Y0
	TESTQ   R14, R14
	JZ      d2_single_go
	VMOVUPS (R14), Y0
	ADDQ    $32, R14

d2_single_go:
	MOVQ BX, AX
	MOVQ SI, DX

d2_single_t:
	VBROADCASTSS (DX), Y4
	VMULPS       Y12, Y4, Y4
	VFMADD231PS  (AX), Y4, Y0
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          d2_single_t
	VMOVUPS      Y0, (DI)
	ADDQ         $32, DI
	ADDQ         $32, BX
	SUBQ         $8, CX
	JMP          d2_single

d2_tail:
	TESTQ      CX, CX
	JZ         d2_done
	VXORPS     Y0, Y0, Y0
	TESTQ      R14, R14
	JZ         d2_tail_go
	VMASKMOVPS (R14), Y15, Y0

d2_tail_go:
	MOVQ BX, AX
	MOVQ SI, DX

d2_tail_t:
	VBROADCASTSS (DX), Y4
	VMULPS       Y12, Y4, Y4
	VMASKMOVPS   (AX), Y15, Y6
	VFMADD231PS  Y6, Y4, Y0
	ADDQ         $4, DX
	ADDQ         R10, AX
	CMPQ         DX, R9
	JNE          d2_tail_t
	VMASKMOVPS   Y0, Y15, (DI)

d2_done:
	VZEROUPPER
	RET

// func argminAffineAVX2(x []float32, base []float32, alpha float32, idx []int32, val []float32)
// Registers as argminAffineAVX512; Y12 = alpha, Y13 = +Inf, Y14 = 0..7,
// Y11 = 8, Y15 = tail lane mask.
TEXT ·argminAffineAVX2(SB), NOSPLIT, $0-104
	MOVQ         x_base+0(FP), SI
	MOVQ         base_len+32(FP), R11
	VBROADCASTSS alpha+48(FP), Y12
	MOVQ         idx_base+56(FP), DI
	MOVQ         idx_len+64(FP), R12
	MOVQ         val_base+80(FP), R13

	MOVQ    R11, CX
	ANDQ    $7, CX
	SHLQ    $2, CX
	LEAQ    manytail<>(SB), AX
	ADDQ    $32, AX
	SUBQ    CX, AX
	VMOVDQU (AX), Y15

	VPBROADCASTD manyeight<>(SB), Y11
	VBROADCASTSS manyinf<>(SB), Y13
	VMOVDQU      manyiota<>(SB), Y14

a2_row:
	VMOVAPS Y13, Y8
	VPXOR   Y9, Y9, Y9
	VMOVDQA Y14, Y10
	MOVQ    base_base+24(FP), R8
	MOVQ    R11, CX

a2_chunk:
	CMPQ        CX, $8
	JLT         a2_tail
	VMOVUPS     (R8), Y1
	VFMADD231PS (SI), Y12, Y1
	ARGMIN_UPD_Y(Y1)
	ADDQ        $32, SI
	ADDQ        $32, R8
	SUBQ        $8, CX
	JMP         a2_chunk

a2_tail:
	TESTQ       CX, CX
	JZ          a2_reduce
	VMASKMOVPS  (R8), Y15, Y1
	VMASKMOVPS  (SI), Y15, Y2
	VFMADD231PS Y2, Y12, Y1
	VBLENDVPS   Y15, Y1, Y13, Y1
	ARGMIN_UPD_Y(Y1)
	LEAQ        (SI)(CX*4), SI

a2_reduce:
	ARGMIN_REDUCE_Y
	CMPQ AX, R11
	JB   a2_store
	XORL AX, AX

a2_store:
	MOVL   AX, (DI)
	ADDQ   $4, DI
	VMOVSS X5, (R13)
	ADDQ   $4, R13
	DECQ   R12
	JNZ    a2_row
	VZEROUPPER
	RET
