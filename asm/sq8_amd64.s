//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// SQ8 kernels for AVX2+FMA and AVX-512 (F, BW, VL; VNNI where present).
// Go references: sq8L2SqRef, sq8DotRef, l2SqU8Ref, dotU8Ref in sq8.go.
//
// Float-query kernels dequantise in-register: zero-extend 16 (8) code bytes
// to dwords, convert to float32, x = offset + scale·c with one FMA, then
// accumulate (q-x)² or q·x.
//
// Integer kernels are exact modulo 2^32, like the reference's uint32 sums:
//   - AVX2 / AVX-512 without VNNI: zero-extend bytes to words and use
//     VPMADDWD, whose pairwise sums (≤ 2·255²) fit int32 exactly.
//   - AVX-512 VNNI: VPDPBUSD multiplies unsigned by *signed* bytes, so for
//     u8×u8 we write b = (b XOR 0x80) + 128 with b XOR 0x80 read as int8 in
//     [-128, 127]: Σ a·b = Σ a·(b^0x80 as s8) + 128·Σ a. Both sums are
//     VPDPBUSD (the second against a vector of int8 ones). For L2 the
//     operand is d = max(a,b) - min(a,b) = |a-b| (a u8), and Σ d² uses the
//     same identity with a = b = d.
//
// AVX2 kernels process len &^ 7 (float) or len &^ 15 (integer) elements and
// the Go wrappers in sq8_amd64.go finish the tail with the reference;
// AVX-512 kernels handle tails with k-masked, fault-suppressing loads.

DATA bytes80<>+0(SB)/8, $0x8080808080808080
GLOBL bytes80<>(SB), RODATA|NOPTR, $8

DATA bytes01<>+0(SB)/8, $0x0101010101010101
GLOBL bytes01<>(SB), RODATA|NOPTR, $8

#define REDUCE_Z(z, y, x, yT, xT) \
	VEXTRACTF64X4 $1, z, yT; \
	VADDPS        yT, y, y; \
	VEXTRACTF128  $1, y, xT; \
	VADDPS        xT, x, x; \
	VMOVHLPS      x, x, xT; \
	VADDPS        xT, x, x; \
	VMOVSHDUP     x, xT; \
	VADDSS        xT, x, x

#define REDUCE_Y(y, x, xT) \
	VEXTRACTF128 $1, y, xT; \
	VADDPS       xT, x, x; \
	VMOVHLPS     x, x, xT; \
	VADDPS       xT, x, x; \
	VMOVSHDUP    x, xT; \
	VADDSS       xT, x, x

#define IREDUCE_Z(z, y, x, yT, xT) \
	VEXTRACTI64X4 $1, z, yT; \
	VPADDD        yT, y, y; \
	VEXTRACTI128  $1, y, xT; \
	VPADDD        xT, x, x; \
	VPSHUFD       $0x4e, x, xT; \
	VPADDD        xT, x, x; \
	VPSHUFD       $0xb1, x, xT; \
	VPADDD        xT, x, x

#define IREDUCE_Y(y, x, xT) \
	VEXTRACTI128 $1, y, xT; \
	VPADDD       xT, x, x; \
	VPSHUFD      $0x4e, x, xT; \
	VPADDD       xT, x, x; \
	VPSHUFD      $0xb1, x, xT; \
	VPADDD       xT, x, x

// Argument registers for the float-query kernels:
// SI q, CX d, DI code, R8 scale, R9 offset.

// func sq8L2SqAVX512(q []float32, code []uint8, scale, offset []float32) float32
TEXT ·sq8L2SqAVX512(SB), NOSPLIT, $0-100
	MOVQ   q_base+0(FP), SI
	MOVQ   q_len+8(FP), CX
	MOVQ   code_base+24(FP), DI
	MOVQ   scale_base+48(FP), R8
	MOVQ   offset_base+72(FP), R9
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1

sq8l2z_loop32:
	CMPQ        CX, $32
	JB          sq8l2z_loop16
	VPMOVZXBD   (DI), Z4
	VPMOVZXBD   16(DI), Z5
	VCVTDQ2PS   Z4, Z4
	VCVTDQ2PS   Z5, Z5
	VMOVUPS     (R8), Z6
	VMOVUPS     64(R8), Z7
	VFMADD213PS (R9), Z6, Z4
	VFMADD213PS 64(R9), Z7, Z5
	VMOVUPS     (SI), Z6
	VMOVUPS     64(SI), Z7
	VSUBPS      Z4, Z6, Z6
	VSUBPS      Z5, Z7, Z7
	VFMADD231PS Z6, Z6, Z0
	VFMADD231PS Z7, Z7, Z1
	ADDQ        $32, DI
	ADDQ        $128, R8
	ADDQ        $128, R9
	ADDQ        $128, SI
	SUBQ        $32, CX
	JMP         sq8l2z_loop32

sq8l2z_loop16:
	CMPQ        CX, $16
	JB          sq8l2z_tail
	VPMOVZXBD   (DI), Z4
	VCVTDQ2PS   Z4, Z4
	VMOVUPS     (R8), Z6
	VFMADD213PS (R9), Z6, Z4
	VMOVUPS     (SI), Z6
	VSUBPS      Z4, Z6, Z6
	VFMADD231PS Z6, Z6, Z0
	ADDQ        $16, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, SI
	SUBQ        $16, CX

sq8l2z_tail:
	TESTQ       CX, CX
	JZ          sq8l2z_reduce
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVDQU8.Z  (DI), K1, X4
	VPMOVZXBD   X4, Z4
	VCVTDQ2PS   Z4, Z4
	VMOVUPS.Z   (R8), K1, Z6
	VMOVUPS.Z   (R9), K1, Z7
	VFMADD213PS Z7, Z6, Z4
	VMOVUPS.Z   (SI), K1, Z6
	VSUBPS      Z4, Z6, Z6
	VFMADD231PS Z6, Z6, Z1

sq8l2z_reduce:
	VADDPS Z1, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	VMOVSS X0, ret+96(FP)
	RET

// func sq8DotAVX512(q []float32, code []uint8, scale, offset []float32) float32
TEXT ·sq8DotAVX512(SB), NOSPLIT, $0-100
	MOVQ   q_base+0(FP), SI
	MOVQ   q_len+8(FP), CX
	MOVQ   code_base+24(FP), DI
	MOVQ   scale_base+48(FP), R8
	MOVQ   offset_base+72(FP), R9
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1

sq8dotz_loop32:
	CMPQ        CX, $32
	JB          sq8dotz_loop16
	VPMOVZXBD   (DI), Z4
	VPMOVZXBD   16(DI), Z5
	VCVTDQ2PS   Z4, Z4
	VCVTDQ2PS   Z5, Z5
	VMOVUPS     (R8), Z6
	VMOVUPS     64(R8), Z7
	VFMADD213PS (R9), Z6, Z4
	VFMADD213PS 64(R9), Z7, Z5
	VFMADD231PS (SI), Z4, Z0
	VFMADD231PS 64(SI), Z5, Z1
	ADDQ        $32, DI
	ADDQ        $128, R8
	ADDQ        $128, R9
	ADDQ        $128, SI
	SUBQ        $32, CX
	JMP         sq8dotz_loop32

sq8dotz_loop16:
	CMPQ        CX, $16
	JB          sq8dotz_tail
	VPMOVZXBD   (DI), Z4
	VCVTDQ2PS   Z4, Z4
	VMOVUPS     (R8), Z6
	VFMADD213PS (R9), Z6, Z4
	VFMADD231PS (SI), Z4, Z0
	ADDQ        $16, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, SI
	SUBQ        $16, CX

sq8dotz_tail:
	TESTQ       CX, CX
	JZ          sq8dotz_reduce
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	KMOVW       AX, K1
	VMOVDQU8.Z  (DI), K1, X4
	VPMOVZXBD   X4, Z4
	VCVTDQ2PS   Z4, Z4
	VMOVUPS.Z   (R8), K1, Z6
	VMOVUPS.Z   (R9), K1, Z7
	VFMADD213PS Z7, Z6, Z4
	VMOVUPS.Z   (SI), K1, Z6
	VFMADD231PS Z6, Z4, Z1

sq8dotz_reduce:
	VADDPS Z1, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	VMOVSS X0, ret+96(FP)
	RET

// func sq8L2SqAVX2(q []float32, code []uint8, scale, offset []float32) float32
// Requires len(q) % 8 == 0.
TEXT ·sq8L2SqAVX2(SB), NOSPLIT, $0-100
	MOVQ   q_base+0(FP), SI
	MOVQ   q_len+8(FP), CX
	MOVQ   code_base+24(FP), DI
	MOVQ   scale_base+48(FP), R8
	MOVQ   offset_base+72(FP), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

sq8l2y_loop16:
	CMPQ        CX, $16
	JB          sq8l2y_loop8
	VPMOVZXBD   (DI), Y4
	VPMOVZXBD   8(DI), Y5
	VCVTDQ2PS   Y4, Y4
	VCVTDQ2PS   Y5, Y5
	VMOVUPS     (R8), Y6
	VMOVUPS     32(R8), Y7
	VFMADD213PS (R9), Y6, Y4
	VFMADD213PS 32(R9), Y7, Y5
	VMOVUPS     (SI), Y6
	VMOVUPS     32(SI), Y7
	VSUBPS      Y4, Y6, Y6
	VSUBPS      Y5, Y7, Y7
	VFMADD231PS Y6, Y6, Y0
	VFMADD231PS Y7, Y7, Y1
	ADDQ        $16, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, SI
	SUBQ        $16, CX
	JMP         sq8l2y_loop16

sq8l2y_loop8:
	CMPQ        CX, $8
	JB          sq8l2y_reduce
	VPMOVZXBD   (DI), Y4
	VCVTDQ2PS   Y4, Y4
	VMOVUPS     (R8), Y6
	VFMADD213PS (R9), Y6, Y4
	VMOVUPS     (SI), Y6
	VSUBPS      Y4, Y6, Y6
	VFMADD231PS Y6, Y6, Y1

sq8l2y_reduce:
	VADDPS Y1, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VZEROUPPER
	VMOVSS X0, ret+96(FP)
	RET

// func sq8DotAVX2(q []float32, code []uint8, scale, offset []float32) float32
// Requires len(q) % 8 == 0.
TEXT ·sq8DotAVX2(SB), NOSPLIT, $0-100
	MOVQ   q_base+0(FP), SI
	MOVQ   q_len+8(FP), CX
	MOVQ   code_base+24(FP), DI
	MOVQ   scale_base+48(FP), R8
	MOVQ   offset_base+72(FP), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

sq8doty_loop16:
	CMPQ        CX, $16
	JB          sq8doty_loop8
	VPMOVZXBD   (DI), Y4
	VPMOVZXBD   8(DI), Y5
	VCVTDQ2PS   Y4, Y4
	VCVTDQ2PS   Y5, Y5
	VMOVUPS     (R8), Y6
	VMOVUPS     32(R8), Y7
	VFMADD213PS (R9), Y6, Y4
	VFMADD213PS 32(R9), Y7, Y5
	VFMADD231PS (SI), Y4, Y0
	VFMADD231PS 32(SI), Y5, Y1
	ADDQ        $16, DI
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, SI
	SUBQ        $16, CX
	JMP         sq8doty_loop16

sq8doty_loop8:
	CMPQ        CX, $8
	JB          sq8doty_reduce
	VPMOVZXBD   (DI), Y4
	VCVTDQ2PS   Y4, Y4
	VMOVUPS     (R8), Y6
	VFMADD213PS (R9), Y6, Y4
	VFMADD231PS (SI), Y4, Y1

sq8doty_reduce:
	VADDPS Y1, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VZEROUPPER
	VMOVSS X0, ret+96(FP)
	RET

// ---------------------------------------------------------------------------
// Integer kernels. SI a, DI b, CX n.

// func dotU8AVX2(a, b []uint8) uint32
// Requires len(a) % 16 == 0.
TEXT ·dotU8AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXOR  Y0, Y0, Y0
	VPXOR  Y1, Y1, Y1

dotu8y_loop32:
	CMPQ      CX, $32
	JB        dotu8y_loop16
	VPMOVZXBW (SI), Y4
	VPMOVZXBW 16(SI), Y5
	VPMOVZXBW (DI), Y6
	VPMOVZXBW 16(DI), Y7
	VPMADDWD  Y6, Y4, Y4
	VPMADDWD  Y7, Y5, Y5
	VPADDD    Y4, Y0, Y0
	VPADDD    Y5, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       dotu8y_loop32

dotu8y_loop16:
	CMPQ      CX, $16
	JB        dotu8y_reduce
	VPMOVZXBW (SI), Y4
	VPMOVZXBW (DI), Y6
	VPMADDWD  Y6, Y4, Y4
	VPADDD    Y4, Y0, Y0

dotu8y_reduce:
	VPADDD Y1, Y0, Y0
	IREDUCE_Y(Y0, X0, X1)
	VMOVD  X0, AX
	VZEROUPPER
	MOVL   AX, ret+48(FP)
	RET

// func l2SqU8AVX2(a, b []uint8) uint32
// Requires len(a) % 16 == 0.
TEXT ·l2SqU8AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXOR  Y0, Y0, Y0
	VPXOR  Y1, Y1, Y1

l2u8y_loop32:
	CMPQ      CX, $32
	JB        l2u8y_loop16
	VPMOVZXBW (SI), Y4
	VPMOVZXBW 16(SI), Y5
	VPMOVZXBW (DI), Y6
	VPMOVZXBW 16(DI), Y7
	VPSUBW    Y6, Y4, Y4
	VPSUBW    Y7, Y5, Y5
	VPMADDWD  Y4, Y4, Y4
	VPMADDWD  Y5, Y5, Y5
	VPADDD    Y4, Y0, Y0
	VPADDD    Y5, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       l2u8y_loop32

l2u8y_loop16:
	CMPQ      CX, $16
	JB        l2u8y_reduce
	VPMOVZXBW (SI), Y4
	VPMOVZXBW (DI), Y6
	VPSUBW    Y6, Y4, Y4
	VPMADDWD  Y4, Y4, Y4
	VPADDD    Y4, Y0, Y0

l2u8y_reduce:
	VPADDD Y1, Y0, Y0
	IREDUCE_Y(Y0, X0, X1)
	VMOVD  X0, AX
	VZEROUPPER
	MOVL   AX, ret+48(FP)
	RET

// func dotU8AVX512(a, b []uint8) uint32
// AVX-512 BW without VNNI: 32 bytes per step, word products, masked tail.
TEXT ·dotU8AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

dotu8z_loop64:
	CMPQ      CX, $64
	JB        dotu8z_loop32
	VPMOVZXBW (SI), Z4
	VPMOVZXBW 32(SI), Z5
	VPMOVZXBW (DI), Z6
	VPMOVZXBW 32(DI), Z7
	VPMADDWD  Z6, Z4, Z4
	VPMADDWD  Z7, Z5, Z5
	VPADDD    Z4, Z0, Z0
	VPADDD    Z5, Z1, Z1
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX
	JMP       dotu8z_loop64

dotu8z_loop32:
	CMPQ      CX, $32
	JB        dotu8z_tail
	VPMOVZXBW (SI), Z4
	VPMOVZXBW (DI), Z6
	VPMADDWD  Z6, Z4, Z4
	VPADDD    Z4, Z0, Z0
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX

dotu8z_tail:
	TESTQ      CX, CX
	JZ         dotu8z_reduce
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVD      AX, K1
	VMOVDQU8.Z (SI), K1, Y4
	VMOVDQU8.Z (DI), K1, Y6
	VPMOVZXBW  Y4, Z4
	VPMOVZXBW  Y6, Z6
	VPMADDWD   Z6, Z4, Z4
	VPADDD     Z4, Z1, Z1

dotu8z_reduce:
	VPADDD Z1, Z0, Z0
	IREDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVD  X0, AX
	VZEROUPPER
	MOVL   AX, ret+48(FP)
	RET

// func l2SqU8AVX512(a, b []uint8) uint32
TEXT ·l2SqU8AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1

l2u8z_loop64:
	CMPQ      CX, $64
	JB        l2u8z_loop32
	VPMOVZXBW (SI), Z4
	VPMOVZXBW 32(SI), Z5
	VPMOVZXBW (DI), Z6
	VPMOVZXBW 32(DI), Z7
	VPSUBW    Z6, Z4, Z4
	VPSUBW    Z7, Z5, Z5
	VPMADDWD  Z4, Z4, Z4
	VPMADDWD  Z5, Z5, Z5
	VPADDD    Z4, Z0, Z0
	VPADDD    Z5, Z1, Z1
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $64, CX
	JMP       l2u8z_loop64

l2u8z_loop32:
	CMPQ      CX, $32
	JB        l2u8z_tail
	VPMOVZXBW (SI), Z4
	VPMOVZXBW (DI), Z6
	VPSUBW    Z6, Z4, Z4
	VPMADDWD  Z4, Z4, Z4
	VPADDD    Z4, Z0, Z0
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX

l2u8z_tail:
	TESTQ      CX, CX
	JZ         l2u8z_reduce
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVD      AX, K1
	VMOVDQU8.Z (SI), K1, Y4
	VMOVDQU8.Z (DI), K1, Y6
	VPMOVZXBW  Y4, Z4
	VPMOVZXBW  Y6, Z6
	VPSUBW     Z6, Z4, Z4
	VPMADDWD   Z4, Z4, Z4
	VPADDD     Z4, Z1, Z1

l2u8z_reduce:
	VPADDD Z1, Z0, Z0
	IREDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVD  X0, AX
	VZEROUPPER
	MOVL   AX, ret+48(FP)
	RET

// VNNI kernels: 64 bytes per step. Z2 = 0x80 bytes, Z3 = int8 ones.
// Z0 accumulates Σ u·(v^0x80 as s8), Z1 accumulates Σ u; result Z0 + 128·Z1.

// func dotU8VNNI(a, b []uint8) uint32
TEXT ·dotU8VNNI(SB), NOSPLIT, $0-52
	MOVQ         a_base+0(FP), SI
	MOVQ         a_len+8(FP), CX
	MOVQ         b_base+24(FP), DI
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPBROADCASTQ bytes80<>(SB), Z2
	VPBROADCASTQ bytes01<>(SB), Z3

dotvnni_loop64:
	CMPQ     CX, $64
	JB       dotvnni_tail
	VMOVDQU8 (SI), Z4
	VPXORD   (DI), Z2, Z5
	VPDPBUSD Z5, Z4, Z0
	VPDPBUSD Z3, Z4, Z1
	ADDQ     $64, SI
	ADDQ     $64, DI
	SUBQ     $64, CX
	JMP      dotvnni_loop64

dotvnni_tail:
	TESTQ      CX, CX
	JZ         dotvnni_reduce
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVQ      AX, K1
	VMOVDQU8.Z (SI), K1, Z4
	VMOVDQU8.Z (DI), K1, Z5
	VPXORD     Z2, Z5, Z5
	VPDPBUSD   Z5, Z4, Z0
	VPDPBUSD   Z3, Z4, Z1

dotvnni_reduce:
	VPSLLD $7, Z1, Z1
	VPADDD Z1, Z0, Z0
	IREDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVD  X0, AX
	VZEROUPPER
	MOVL   AX, ret+48(FP)
	RET

// func l2SqU8VNNI(a, b []uint8) uint32
TEXT ·l2SqU8VNNI(SB), NOSPLIT, $0-52
	MOVQ         a_base+0(FP), SI
	MOVQ         a_len+8(FP), CX
	MOVQ         b_base+24(FP), DI
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPBROADCASTQ bytes80<>(SB), Z2
	VPBROADCASTQ bytes01<>(SB), Z3

l2vnni_loop64:
	CMPQ     CX, $64
	JB       l2vnni_tail
	VMOVDQU8 (SI), Z4
	VMOVDQU8 (DI), Z5
	VPMAXUB  Z5, Z4, Z6
	VPMINUB  Z5, Z4, Z7
	VPSUBB   Z7, Z6, Z6
	VPXORD   Z2, Z6, Z7
	VPDPBUSD Z7, Z6, Z0
	VPDPBUSD Z3, Z6, Z1
	ADDQ     $64, SI
	ADDQ     $64, DI
	SUBQ     $64, CX
	JMP      l2vnni_loop64

l2vnni_tail:
	TESTQ      CX, CX
	JZ         l2vnni_reduce
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVQ      AX, K1
	VMOVDQU8.Z (SI), K1, Z4
	VMOVDQU8.Z (DI), K1, Z5
	VPMAXUB    Z5, Z4, Z6
	VPMINUB    Z5, Z4, Z7
	VPSUBB     Z7, Z6, Z6
	VPXORD     Z2, Z6, Z7
	VPDPBUSD   Z7, Z6, Z0
	VPDPBUSD   Z3, Z6, Z1

l2vnni_reduce:
	VPSLLD $7, Z1, Z1
	VPADDD Z1, Z0, Z0
	IREDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVD  X0, AX
	VZEROUPPER
	MOVL   AX, ret+48(FP)
	RET
