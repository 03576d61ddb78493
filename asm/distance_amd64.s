//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// float32 distance kernels for AVX2+FMA (YMM) and AVX-512 F (ZMM).
// Go references: l2SqRef, dotRef, l2SqBatchRef, dotBatchRef, sumFloat32Ref
// in ref.go. Only VEX/EVEX instructions are used; every function ends with
// VZEROUPPER. Accumulation order differs from the reference (several vector
// accumulators), so results agree to float rounding, not bit for bit.
//
// Tails: AVX-512 uses a k-register mask (1<<r)-1 with zeroing loads, which
// also suppress faults on the masked-out lanes. AVX2 uses VMASKMOVPS with a
// lane mask read from tailmask<>, which likewise never faults on masked lanes.

// tailmask<>: 8 × 0xffffffff then 8 × 0. The 8 dwords at byte offset
// 32-4r have exactly the first r lanes set.
DATA tailmask<>+0(SB)/8, $0xffffffffffffffff
DATA tailmask<>+8(SB)/8, $0xffffffffffffffff
DATA tailmask<>+16(SB)/8, $0xffffffffffffffff
DATA tailmask<>+24(SB)/8, $0xffffffffffffffff
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// REDUCE_Z sums the 16 lanes of Z into lane 0 of X (same register number),
// clobbering T (a Y/X register pair name given as yT, xT).
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

// ---------------------------------------------------------------------------
// Single-pair entry points (see dotDirect in distance_amd64.go): one
// direct call from Dot / L2Sq, then a tail jump to the kernel of the
// current level, which returns straight to the Go caller. The generic
// level jumps to the ABI0 wrapper of dotRefP / l2SqRefP. Entry points and
// kernels take (a, b *float32, n int): three argument words instead of two
// slices' six, which the caller stores and the kernel loads per call.

// func dotDirectP(a, b *float32, n int) float32
TEXT ·dotDirectP(SB), NOSPLIT, $0-28
	MOVBLZX ·pairLevel(SB), AX
	CMPL    AX, $2
	JNE     dotd_avx2
	JMP     ·dotAVX512(SB)

dotd_avx2:
	CMPL AX, $1
	JNE  dotd_generic
	JMP  ·dotAVX2(SB)

dotd_generic:
	JMP ·dotRefP(SB)

// func l2SqDirectP(a, b *float32, n int) float32
TEXT ·l2SqDirectP(SB), NOSPLIT, $0-28
	MOVBLZX ·pairLevel(SB), AX
	CMPL    AX, $2
	JNE     l2d_avx2
	JMP     ·l2SqAVX512(SB)

l2d_avx2:
	CMPL AX, $1
	JNE  l2d_generic
	JMP  ·l2SqAVX2(SB)

l2d_generic:
	JMP ·l2SqRefP(SB)

// ---------------------------------------------------------------------------
// AVX-512

// Single-pair kernels (AVX-512). The hot shape is a short vector (d = 128
// or a few hundred), so per-call instruction count and the latency of one
// call, not the FMA throughput, bound a stream of pairs. The first 128
// floats are one straight-line block: the 8 ZMM products initialise four
// accumulators (the first four multiply in place into the registers that
// received a's chunks, b read as a memory operand), so d = 128 needs no
// zeroing, no loop and no index register, and each accumulator sees a
// chain of two operations. Further 128-float blocks loop with FMAs; a
// remainder < 128 takes one 64-float block, 16-float steps and a masked
// tail (a k-register mask (1<<r)-1 with zeroing loads, which suppress
// faults on the masked-out lanes). SI, DI advance; CX counts floats left.

// func l2SqAVX512(a, b *float32, n int) float32
TEXT ·l2SqAVX512(SB), NOSPLIT, $0-28
	MOVQ        a+0(FP), SI
	MOVQ        n+16(FP), CX
	MOVQ        b+8(FP), DI
	CMPQ        CX, $128
	JB          l2z_small
	VMOVUPS     0(SI), Z0
	VMOVUPS     64(SI), Z1
	VMOVUPS     128(SI), Z2
	VMOVUPS     192(SI), Z3
	VMOVUPS     256(SI), Z4
	VMOVUPS     320(SI), Z5
	VMOVUPS     384(SI), Z6
	VMOVUPS     448(SI), Z7
	VSUBPS      0(DI), Z0, Z0
	VSUBPS      64(DI), Z1, Z1
	VSUBPS      128(DI), Z2, Z2
	VSUBPS      192(DI), Z3, Z3
	VSUBPS      256(DI), Z4, Z4
	VSUBPS      320(DI), Z5, Z5
	VSUBPS      384(DI), Z6, Z6
	VSUBPS      448(DI), Z7, Z7
	VMULPS      Z0, Z0, Z0
	VMULPS      Z1, Z1, Z1
	VMULPS      Z2, Z2, Z2
	VMULPS      Z3, Z3, Z3
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	SUBQ        $128, CX
	JNZ         l2z_more

l2z_reduce:
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	VMOVSS     X0, ret+24(FP)
	RET

l2z_more:
	ADDQ $512, SI
	ADDQ $512, DI
	CMPQ CX, $128
	JB   l2z_rest

l2z_loop128:
	VMOVUPS     0(SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VMOVUPS     256(SI), Z8
	VMOVUPS     320(SI), Z9
	VMOVUPS     384(SI), Z10
	VMOVUPS     448(SI), Z11
	VSUBPS      0(DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VSUBPS      256(DI), Z8, Z8
	VSUBPS      320(DI), Z9, Z9
	VSUBPS      384(DI), Z10, Z10
	VSUBPS      448(DI), Z11, Z11
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	VFMADD231PS Z8, Z8, Z0
	VFMADD231PS Z9, Z9, Z1
	VFMADD231PS Z10, Z10, Z2
	VFMADD231PS Z11, Z11, Z3
	ADDQ        $512, SI
	ADDQ        $512, DI
	SUBQ        $128, CX
	CMPQ        CX, $128
	JAE         l2z_loop128
	JMP         l2z_rest

l2z_small:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

	// 0 ≤ CX < 128 floats left.
l2z_rest:
	CMPQ        CX, $64
	JB          l2z_r16
	VMOVUPS     0(SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VSUBPS      0(DI), Z4, Z4
	VSUBPS      64(DI), Z5, Z5
	VSUBPS      128(DI), Z6, Z6
	VSUBPS      192(DI), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX

l2z_r16:
	CMPQ CX, $16
	JB   l2z_tail

l2z_loop16:
	VMOVUPS     (SI), Z4
	VSUBPS      (DI), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	CMPQ        CX, $16
	JAE         l2z_loop16

l2z_tail:
	TESTQ       CX, CX
	JZ          l2z_reduce
	MOVL        $1, DX
	SHLL        CX, DX
	DECL        DX
	KMOVW       DX, K1
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z1
	JMP         l2z_reduce

// func dotAVX512(a, b *float32, n int) float32
TEXT ·dotAVX512(SB), NOSPLIT, $0-28
	MOVQ        a+0(FP), SI
	MOVQ        n+16(FP), CX
	MOVQ        b+8(FP), DI
	CMPQ        CX, $128
	JB          dotz_small
	VMOVUPS     0(SI), Z0
	VMOVUPS     64(SI), Z1
	VMOVUPS     128(SI), Z2
	VMOVUPS     192(SI), Z3
	VMOVUPS     256(SI), Z4
	VMOVUPS     320(SI), Z5
	VMOVUPS     384(SI), Z6
	VMOVUPS     448(SI), Z7
	VMULPS      0(DI), Z0, Z0
	VMULPS      64(DI), Z1, Z1
	VMULPS      128(DI), Z2, Z2
	VMULPS      192(DI), Z3, Z3
	VFMADD231PS 256(DI), Z4, Z0
	VFMADD231PS 320(DI), Z5, Z1
	VFMADD231PS 384(DI), Z6, Z2
	VFMADD231PS 448(DI), Z7, Z3
	SUBQ        $128, CX
	JNZ         dotz_more

dotz_reduce:
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	VMOVSS     X0, ret+24(FP)
	RET

dotz_more:
	ADDQ $512, SI
	ADDQ $512, DI
	CMPQ CX, $128
	JB   dotz_rest

dotz_loop128:
	VMOVUPS     0(SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VMOVUPS     256(SI), Z8
	VMOVUPS     320(SI), Z9
	VMOVUPS     384(SI), Z10
	VMOVUPS     448(SI), Z11
	VFMADD231PS 0(DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	VFMADD231PS 256(DI), Z8, Z0
	VFMADD231PS 320(DI), Z9, Z1
	VFMADD231PS 384(DI), Z10, Z2
	VFMADD231PS 448(DI), Z11, Z3
	ADDQ        $512, SI
	ADDQ        $512, DI
	SUBQ        $128, CX
	CMPQ        CX, $128
	JAE         dotz_loop128
	JMP         dotz_rest

dotz_small:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

	// 0 ≤ CX < 128 floats left.
dotz_rest:
	CMPQ        CX, $64
	JB          dotz_r16
	VMOVUPS     0(SI), Z4
	VMOVUPS     64(SI), Z5
	VMOVUPS     128(SI), Z6
	VMOVUPS     192(SI), Z7
	VFMADD231PS 0(DI), Z4, Z0
	VFMADD231PS 64(DI), Z5, Z1
	VFMADD231PS 128(DI), Z6, Z2
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX

dotz_r16:
	CMPQ CX, $16
	JB   dotz_tail

dotz_loop16:
	VMOVUPS     (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	CMPQ        CX, $16
	JAE         dotz_loop16

dotz_tail:
	TESTQ       CX, CX
	JZ          dotz_reduce
	MOVL        $1, DX
	SHLL        CX, DX
	DECL        DX
	KMOVW       DX, K1
	VMOVUPS.Z   (SI), K1, Z4
	VMOVUPS.Z   (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1
	JMP         dotz_reduce

// Batch kernels: four rows per iteration share each query load; the
// remaining n mod 4 rows go one at a time. Registers:
//   SI q, DX d, DI row 0, R12-R14 rows 1-3, R8 out, R9 rows left,
//   R10 row stride in bytes, R11 full 16-lane chunks per row, K1 tail mask,
//   CX tail lane count, AX byte offset within the row, BX chunk counter.

#define BATCH_PROLOGUE_Z \
	MOVQ  DX, CX; \
	ANDQ  $15, CX; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1; \
	MOVQ  DX, R10; \
	SHLQ  $2, R10; \
	MOVQ  DX, R11; \
	SHRQ  $4, R11

#define REDUCE4_Z_STORE \
	VEXTRACTF64X4 $1, Z0, Y4; \
	VADDPS        Y4, Y0, Y0; \
	VEXTRACTF64X4 $1, Z1, Y5; \
	VADDPS        Y5, Y1, Y1; \
	VEXTRACTF64X4 $1, Z2, Y6; \
	VADDPS        Y6, Y2, Y2; \
	VEXTRACTF64X4 $1, Z3, Y7; \
	VADDPS        Y7, Y3, Y3; \
	VEXTRACTF128  $1, Y0, X4; \
	VADDPS        X4, X0, X0; \
	VEXTRACTF128  $1, Y1, X5; \
	VADDPS        X5, X1, X1; \
	VEXTRACTF128  $1, Y2, X6; \
	VADDPS        X6, X2, X2; \
	VEXTRACTF128  $1, Y3, X7; \
	VADDPS        X7, X3, X3; \
	VHADDPS       X1, X0, X0; \
	VHADDPS       X3, X2, X2; \
	VHADDPS       X2, X0, X0; \
	VMOVUPS       X0, (R8)

// func l2SqBatchAVX512(q, x, out []float32)
TEXT ·l2SqBatchAVX512(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), DX
	MOVQ x_base+24(FP), DI
	MOVQ out_base+48(FP), R8
	MOVQ out_len+56(FP), R9
	BATCH_PROLOGUE_Z

l2bz_rows4:
	CMPQ   R9, $4
	JB     l2bz_rows1
	LEAQ   (DI)(R10*1), R12
	LEAQ   (R12)(R10*1), R13
	LEAQ   (R13)(R10*1), R14
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   R11, BX

l2bz_chunk4:
	TESTQ       BX, BX
	JZ          l2bz_tail4
	VMOVUPS     (SI)(AX*1), Z4
	VSUBPS      (DI)(AX*1), Z4, Z5
	VSUBPS      (R12)(AX*1), Z4, Z6
	VSUBPS      (R13)(AX*1), Z4, Z7
	VSUBPS      (R14)(AX*1), Z4, Z8
	VFMADD231PS Z5, Z5, Z0
	VFMADD231PS Z6, Z6, Z1
	VFMADD231PS Z7, Z7, Z2
	VFMADD231PS Z8, Z8, Z3
	ADDQ        $64, AX
	DECQ        BX
	JMP         l2bz_chunk4

l2bz_tail4:
	TESTQ       CX, CX
	JZ          l2bz_red4
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (DI)(AX*1), K1, Z5
	VMOVUPS.Z   (R12)(AX*1), K1, Z6
	VMOVUPS.Z   (R13)(AX*1), K1, Z7
	VMOVUPS.Z   (R14)(AX*1), K1, Z8
	VSUBPS      Z5, Z4, Z5
	VSUBPS      Z6, Z4, Z6
	VSUBPS      Z7, Z4, Z7
	VSUBPS      Z8, Z4, Z8
	VFMADD231PS Z5, Z5, Z0
	VFMADD231PS Z6, Z6, Z1
	VFMADD231PS Z7, Z7, Z2
	VFMADD231PS Z8, Z8, Z3

l2bz_red4:
	REDUCE4_Z_STORE
	ADDQ $16, R8
	LEAQ (R14)(R10*1), DI
	SUBQ $4, R9
	JMP  l2bz_rows4

l2bz_rows1:
	TESTQ  R9, R9
	JZ     l2bz_done
	VXORPS Z0, Z0, Z0
	XORQ   AX, AX
	MOVQ   R11, BX

l2bz_chunk1:
	TESTQ       BX, BX
	JZ          l2bz_tail1
	VMOVUPS     (SI)(AX*1), Z4
	VSUBPS      (DI)(AX*1), Z4, Z5
	VFMADD231PS Z5, Z5, Z0
	ADDQ        $64, AX
	DECQ        BX
	JMP         l2bz_chunk1

l2bz_tail1:
	TESTQ       CX, CX
	JZ          l2bz_red1
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (DI)(AX*1), K1, Z5
	VSUBPS      Z5, Z4, Z5
	VFMADD231PS Z5, Z5, Z0

l2bz_red1:
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (R8)
	ADDQ   $4, R8
	ADDQ   R10, DI
	DECQ   R9
	JMP    l2bz_rows1

l2bz_done:
	VZEROUPPER
	RET

// func dotBatchAVX512(q, x, out []float32)
TEXT ·dotBatchAVX512(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), DX
	MOVQ x_base+24(FP), DI
	MOVQ out_base+48(FP), R8
	MOVQ out_len+56(FP), R9
	BATCH_PROLOGUE_Z

dotbz_rows4:
	CMPQ   R9, $4
	JB     dotbz_rows1
	LEAQ   (DI)(R10*1), R12
	LEAQ   (R12)(R10*1), R13
	LEAQ   (R13)(R10*1), R14
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	XORQ   AX, AX
	MOVQ   R11, BX

dotbz_chunk4:
	TESTQ       BX, BX
	JZ          dotbz_tail4
	VMOVUPS     (SI)(AX*1), Z4
	VFMADD231PS (DI)(AX*1), Z4, Z0
	VFMADD231PS (R12)(AX*1), Z4, Z1
	VFMADD231PS (R13)(AX*1), Z4, Z2
	VFMADD231PS (R14)(AX*1), Z4, Z3
	ADDQ        $64, AX
	DECQ        BX
	JMP         dotbz_chunk4

dotbz_tail4:
	TESTQ       CX, CX
	JZ          dotbz_red4
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (DI)(AX*1), K1, Z5
	VMOVUPS.Z   (R12)(AX*1), K1, Z6
	VMOVUPS.Z   (R13)(AX*1), K1, Z7
	VMOVUPS.Z   (R14)(AX*1), K1, Z8
	VFMADD231PS Z5, Z4, Z0
	VFMADD231PS Z6, Z4, Z1
	VFMADD231PS Z7, Z4, Z2
	VFMADD231PS Z8, Z4, Z3

dotbz_red4:
	REDUCE4_Z_STORE
	ADDQ $16, R8
	LEAQ (R14)(R10*1), DI
	SUBQ $4, R9
	JMP  dotbz_rows4

dotbz_rows1:
	TESTQ  R9, R9
	JZ     dotbz_done
	VXORPS Z0, Z0, Z0
	XORQ   AX, AX
	MOVQ   R11, BX

dotbz_chunk1:
	TESTQ       BX, BX
	JZ          dotbz_tail1
	VMOVUPS     (SI)(AX*1), Z4
	VFMADD231PS (DI)(AX*1), Z4, Z0
	ADDQ        $64, AX
	DECQ        BX
	JMP         dotbz_chunk1

dotbz_tail1:
	TESTQ       CX, CX
	JZ          dotbz_red1
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (DI)(AX*1), K1, Z5
	VFMADD231PS Z5, Z4, Z0

dotbz_red1:
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (R8)
	ADDQ   $4, R8
	ADDQ   R10, DI
	DECQ   R9
	JMP    dotbz_rows1

dotbz_done:
	VZEROUPPER
	RET

// func sumAVX512(x []float32) float32
TEXT ·sumAVX512(SB), NOSPLIT, $0-28
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

sumz_loop64:
	CMPQ   CX, $64
	JB     sumz_loop16
	VADDPS (SI), Z0, Z0
	VADDPS 64(SI), Z1, Z1
	VADDPS 128(SI), Z2, Z2
	VADDPS 192(SI), Z3, Z3
	ADDQ   $256, SI
	SUBQ   $64, CX
	JMP    sumz_loop64

sumz_loop16:
	CMPQ   CX, $16
	JB     sumz_tail
	VADDPS (SI), Z0, Z0
	ADDQ   $64, SI
	SUBQ   $16, CX
	JMP    sumz_loop16

sumz_tail:
	TESTQ     CX, CX
	JZ        sumz_reduce
	MOVL      $1, AX
	SHLL      CX, AX
	DECL      AX
	KMOVW     AX, K1
	VMOVUPS.Z (SI), K1, Z4
	VADDPS    Z4, Z1, Z1

sumz_reduce:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VZEROUPPER
	VMOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// AVX2 + FMA

// LOADMASK_Y loads into yM the VMASKMOVPS mask selecting the first r lanes,
// r in CX (0..7). Clobbers AX, BX.
#define LOADMASK_Y(yM) \
	LEAQ    tailmask<>(SB), BX; \
	MOVQ    $32, AX; \
	SUBQ    CX, AX; \
	SUBQ    CX, AX; \
	SUBQ    CX, AX; \
	SUBQ    CX, AX; \
	VMOVDQU (BX)(AX*1), yM

// Single-pair kernels, AVX2: as the AVX-512 ones (see there) with YMM
// chunks. The first 128 floats (16 chunks, all loaded up front) go into
// four accumulators Y0..Y3; further 128-float blocks loop into eight,
// Y0..Y7, which are then folded to Y0..Y3 for the remainder (one 64-float
// block, 8-float steps and a VMASKMOVPS tail, whose lane mask comes from
// tailmask<>; LOADMASK_Y clobbers AX, BX). At d = 128 these kernels are
// bound by the L1 load rate: 32 YMM loads at two per cycle.
// func l2SqAVX2(a, b *float32, n int) float32
TEXT ·l2SqAVX2(SB), NOSPLIT, $0-28
	MOVQ        a+0(FP), SI
	MOVQ        n+16(FP), CX
	MOVQ        b+8(FP), DI
	CMPQ        CX, $128
	JB          l2y_small
	VMOVUPS     0(SI), Y0
	VMOVUPS     32(SI), Y1
	VMOVUPS     64(SI), Y2
	VMOVUPS     96(SI), Y3
	VMOVUPS     128(SI), Y4
	VMOVUPS     160(SI), Y5
	VMOVUPS     192(SI), Y6
	VMOVUPS     224(SI), Y7
	VMOVUPS     256(SI), Y8
	VMOVUPS     288(SI), Y9
	VMOVUPS     320(SI), Y10
	VMOVUPS     352(SI), Y11
	VMOVUPS     384(SI), Y12
	VMOVUPS     416(SI), Y13
	VMOVUPS     448(SI), Y14
	VMOVUPS     480(SI), Y15
	VSUBPS      0(DI), Y0, Y0
	VSUBPS      32(DI), Y1, Y1
	VSUBPS      64(DI), Y2, Y2
	VSUBPS      96(DI), Y3, Y3
	VSUBPS      128(DI), Y4, Y4
	VSUBPS      160(DI), Y5, Y5
	VSUBPS      192(DI), Y6, Y6
	VSUBPS      224(DI), Y7, Y7
	VSUBPS      256(DI), Y8, Y8
	VSUBPS      288(DI), Y9, Y9
	VSUBPS      320(DI), Y10, Y10
	VSUBPS      352(DI), Y11, Y11
	VSUBPS      384(DI), Y12, Y12
	VSUBPS      416(DI), Y13, Y13
	VSUBPS      448(DI), Y14, Y14
	VSUBPS      480(DI), Y15, Y15
	VMULPS      Y0, Y0, Y0
	VMULPS      Y1, Y1, Y1
	VMULPS      Y2, Y2, Y2
	VMULPS      Y3, Y3, Y3
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	VFMADD231PS Y8, Y8, Y0
	VFMADD231PS Y9, Y9, Y1
	VFMADD231PS Y10, Y10, Y2
	VFMADD231PS Y11, Y11, Y3
	VFMADD231PS Y12, Y12, Y0
	VFMADD231PS Y13, Y13, Y1
	VFMADD231PS Y14, Y14, Y2
	VFMADD231PS Y15, Y15, Y3
	SUBQ        $128, CX
	JZ          l2y_reduce
	VXORPS      Y4, Y4, Y4
	VXORPS      Y5, Y5, Y5
	VXORPS      Y6, Y6, Y6
	VXORPS      Y7, Y7, Y7
	JMP         l2y_more

l2y_reduce8:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3

l2y_reduce:
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y1, Y1
	VADDPS       Y1, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VZEROUPPER
	VMOVSS       X0, ret+24(FP)
	RET

l2y_more:
	ADDQ $512, SI
	ADDQ $512, DI
	CMPQ CX, $128
	JB   l2y_fold

l2y_loop128:
	VMOVUPS     0(SI), Y8
	VMOVUPS     32(SI), Y9
	VMOVUPS     64(SI), Y10
	VMOVUPS     96(SI), Y11
	VMOVUPS     128(SI), Y12
	VMOVUPS     160(SI), Y13
	VMOVUPS     192(SI), Y14
	VMOVUPS     224(SI), Y15
	VSUBPS      0(DI), Y8, Y8
	VSUBPS      32(DI), Y9, Y9
	VSUBPS      64(DI), Y10, Y10
	VSUBPS      96(DI), Y11, Y11
	VSUBPS      128(DI), Y12, Y12
	VSUBPS      160(DI), Y13, Y13
	VSUBPS      192(DI), Y14, Y14
	VSUBPS      224(DI), Y15, Y15
	VFMADD231PS Y8, Y8, Y0
	VFMADD231PS Y9, Y9, Y1
	VFMADD231PS Y10, Y10, Y2
	VFMADD231PS Y11, Y11, Y3
	VFMADD231PS Y12, Y12, Y4
	VFMADD231PS Y13, Y13, Y5
	VFMADD231PS Y14, Y14, Y6
	VFMADD231PS Y15, Y15, Y7
	VMOVUPS     256(SI), Y8
	VMOVUPS     288(SI), Y9
	VMOVUPS     320(SI), Y10
	VMOVUPS     352(SI), Y11
	VMOVUPS     384(SI), Y12
	VMOVUPS     416(SI), Y13
	VMOVUPS     448(SI), Y14
	VMOVUPS     480(SI), Y15
	VSUBPS      256(DI), Y8, Y8
	VSUBPS      288(DI), Y9, Y9
	VSUBPS      320(DI), Y10, Y10
	VSUBPS      352(DI), Y11, Y11
	VSUBPS      384(DI), Y12, Y12
	VSUBPS      416(DI), Y13, Y13
	VSUBPS      448(DI), Y14, Y14
	VSUBPS      480(DI), Y15, Y15
	VFMADD231PS Y8, Y8, Y0
	VFMADD231PS Y9, Y9, Y1
	VFMADD231PS Y10, Y10, Y2
	VFMADD231PS Y11, Y11, Y3
	VFMADD231PS Y12, Y12, Y4
	VFMADD231PS Y13, Y13, Y5
	VFMADD231PS Y14, Y14, Y6
	VFMADD231PS Y15, Y15, Y7
	ADDQ        $512, SI
	ADDQ        $512, DI
	SUBQ        $128, CX
	CMPQ        CX, $128
	JAE         l2y_loop128

l2y_fold:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	JMP    l2y_rest

l2y_small:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

	// 0 ≤ CX < 128 floats left; accumulators Y0..Y3.
l2y_rest:
	CMPQ        CX, $64
	JB          l2y_r8
	VMOVUPS     0(SI), Y8
	VMOVUPS     32(SI), Y9
	VMOVUPS     64(SI), Y10
	VMOVUPS     96(SI), Y11
	VMOVUPS     128(SI), Y12
	VMOVUPS     160(SI), Y13
	VMOVUPS     192(SI), Y14
	VMOVUPS     224(SI), Y15
	VSUBPS      0(DI), Y8, Y8
	VSUBPS      32(DI), Y9, Y9
	VSUBPS      64(DI), Y10, Y10
	VSUBPS      96(DI), Y11, Y11
	VSUBPS      128(DI), Y12, Y12
	VSUBPS      160(DI), Y13, Y13
	VSUBPS      192(DI), Y14, Y14
	VSUBPS      224(DI), Y15, Y15
	VFMADD231PS Y8, Y8, Y0
	VFMADD231PS Y9, Y9, Y1
	VFMADD231PS Y10, Y10, Y2
	VFMADD231PS Y11, Y11, Y3
	VFMADD231PS Y12, Y12, Y0
	VFMADD231PS Y13, Y13, Y1
	VFMADD231PS Y14, Y14, Y2
	VFMADD231PS Y15, Y15, Y3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX

l2y_r8:
	CMPQ CX, $8
	JB   l2y_tail

l2y_loop8:
	VMOVUPS     (SI), Y8
	VSUBPS      (DI), Y8, Y8
	VFMADD231PS Y8, Y8, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	CMPQ        CX, $8
	JAE         l2y_loop8

l2y_tail:
	TESTQ           CX, CX
	JZ              l2y_reduce
	LOADMASK_Y(Y15)
	VMASKMOVPS      (SI), Y15, Y8
	VMASKMOVPS      (DI), Y15, Y9
	VSUBPS          Y9, Y8, Y8
	VFMADD231PS     Y8, Y8, Y1
	JMP             l2y_reduce

// func dotAVX2(a, b *float32, n int) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ        a+0(FP), SI
	MOVQ        n+16(FP), CX
	MOVQ        b+8(FP), DI
	CMPQ        CX, $128
	JB          doty_small
	VMOVUPS     0(SI), Y0
	VMOVUPS     32(SI), Y1
	VMOVUPS     64(SI), Y2
	VMOVUPS     96(SI), Y3
	VMOVUPS     128(SI), Y4
	VMOVUPS     160(SI), Y5
	VMOVUPS     192(SI), Y6
	VMOVUPS     224(SI), Y7
	VMOVUPS     256(SI), Y8
	VMOVUPS     288(SI), Y9
	VMOVUPS     320(SI), Y10
	VMOVUPS     352(SI), Y11
	VMOVUPS     384(SI), Y12
	VMOVUPS     416(SI), Y13
	VMOVUPS     448(SI), Y14
	VMOVUPS     480(SI), Y15
	VMULPS      0(DI), Y0, Y0
	VMULPS      32(DI), Y1, Y1
	VMULPS      64(DI), Y2, Y2
	VMULPS      96(DI), Y3, Y3
	VFMADD231PS 128(DI), Y4, Y0
	VFMADD231PS 160(DI), Y5, Y1
	VFMADD231PS 192(DI), Y6, Y2
	VFMADD231PS 224(DI), Y7, Y3
	VFMADD231PS 256(DI), Y8, Y0
	VFMADD231PS 288(DI), Y9, Y1
	VFMADD231PS 320(DI), Y10, Y2
	VFMADD231PS 352(DI), Y11, Y3
	VFMADD231PS 384(DI), Y12, Y0
	VFMADD231PS 416(DI), Y13, Y1
	VFMADD231PS 448(DI), Y14, Y2
	VFMADD231PS 480(DI), Y15, Y3
	SUBQ        $128, CX
	JZ          doty_reduce
	VXORPS      Y4, Y4, Y4
	VXORPS      Y5, Y5, Y5
	VXORPS      Y6, Y6, Y6
	VXORPS      Y7, Y7, Y7
	JMP         doty_more

doty_reduce8:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3

doty_reduce:
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y1, Y1
	VADDPS       Y1, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VZEROUPPER
	VMOVSS       X0, ret+24(FP)
	RET

doty_more:
	ADDQ $512, SI
	ADDQ $512, DI
	CMPQ CX, $128
	JB   doty_fold

doty_loop128:
	VMOVUPS     0(SI), Y8
	VMOVUPS     32(SI), Y9
	VMOVUPS     64(SI), Y10
	VMOVUPS     96(SI), Y11
	VMOVUPS     128(SI), Y12
	VMOVUPS     160(SI), Y13
	VMOVUPS     192(SI), Y14
	VMOVUPS     224(SI), Y15
	VFMADD231PS 0(DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	VFMADD231PS 64(DI), Y10, Y2
	VFMADD231PS 96(DI), Y11, Y3
	VFMADD231PS 128(DI), Y12, Y4
	VFMADD231PS 160(DI), Y13, Y5
	VFMADD231PS 192(DI), Y14, Y6
	VFMADD231PS 224(DI), Y15, Y7
	VMOVUPS     256(SI), Y8
	VMOVUPS     288(SI), Y9
	VMOVUPS     320(SI), Y10
	VMOVUPS     352(SI), Y11
	VMOVUPS     384(SI), Y12
	VMOVUPS     416(SI), Y13
	VMOVUPS     448(SI), Y14
	VMOVUPS     480(SI), Y15
	VFMADD231PS 256(DI), Y8, Y0
	VFMADD231PS 288(DI), Y9, Y1
	VFMADD231PS 320(DI), Y10, Y2
	VFMADD231PS 352(DI), Y11, Y3
	VFMADD231PS 384(DI), Y12, Y4
	VFMADD231PS 416(DI), Y13, Y5
	VFMADD231PS 448(DI), Y14, Y6
	VFMADD231PS 480(DI), Y15, Y7
	ADDQ        $512, SI
	ADDQ        $512, DI
	SUBQ        $128, CX
	CMPQ        CX, $128
	JAE         doty_loop128

doty_fold:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	JMP    doty_rest

doty_small:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

	// 0 ≤ CX < 128 floats left; accumulators Y0..Y3.
doty_rest:
	CMPQ        CX, $64
	JB          doty_r8
	VMOVUPS     0(SI), Y8
	VMOVUPS     32(SI), Y9
	VMOVUPS     64(SI), Y10
	VMOVUPS     96(SI), Y11
	VMOVUPS     128(SI), Y12
	VMOVUPS     160(SI), Y13
	VMOVUPS     192(SI), Y14
	VMOVUPS     224(SI), Y15
	VFMADD231PS 0(DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	VFMADD231PS 64(DI), Y10, Y2
	VFMADD231PS 96(DI), Y11, Y3
	VFMADD231PS 128(DI), Y12, Y0
	VFMADD231PS 160(DI), Y13, Y1
	VFMADD231PS 192(DI), Y14, Y2
	VFMADD231PS 224(DI), Y15, Y3
	ADDQ        $256, SI
	ADDQ        $256, DI
	SUBQ        $64, CX

doty_r8:
	CMPQ CX, $8
	JB   doty_tail

doty_loop8:
	VMOVUPS     (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	CMPQ        CX, $8
	JAE         doty_loop8

doty_tail:
	TESTQ           CX, CX
	JZ              doty_reduce
	LOADMASK_Y(Y15)
	VMASKMOVPS      (SI), Y15, Y8
	VMASKMOVPS      (DI), Y15, Y9
	VFMADD231PS     Y9, Y8, Y1
	JMP             doty_reduce

// Batch, AVX2: same structure as AVX-512 with 8-lane chunks; Y15 tail mask.
#define BATCH_PROLOGUE_Y \
	MOVQ DX, CX; \
	ANDQ $7, CX; \
	LOADMASK_Y(Y15); \
	MOVQ DX, R10; \
	SHLQ $2, R10; \
	MOVQ DX, R11; \
	SHRQ $3, R11

#define REDUCE4_Y_STORE \
	VEXTRACTF128 $1, Y0, X4; \
	VADDPS       X4, X0, X0; \
	VEXTRACTF128 $1, Y1, X5; \
	VADDPS       X5, X1, X1; \
	VEXTRACTF128 $1, Y2, X6; \
	VADDPS       X6, X2, X2; \
	VEXTRACTF128 $1, Y3, X7; \
	VADDPS       X7, X3, X3; \
	VHADDPS      X1, X0, X0; \
	VHADDPS      X3, X2, X2; \
	VHADDPS      X2, X0, X0; \
	VMOVUPS      X0, (R8)

// func l2SqBatchAVX2(q, x, out []float32)
TEXT ·l2SqBatchAVX2(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), DX
	MOVQ x_base+24(FP), DI
	MOVQ out_base+48(FP), R8
	MOVQ out_len+56(FP), R9
	BATCH_PROLOGUE_Y

l2by_rows4:
	CMPQ   R9, $4
	JB     l2by_rows1
	LEAQ   (DI)(R10*1), R12
	LEAQ   (R12)(R10*1), R13
	LEAQ   (R13)(R10*1), R14
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   R11, BX

l2by_chunk4:
	TESTQ       BX, BX
	JZ          l2by_tail4
	VMOVUPS     (SI)(AX*1), Y4
	VSUBPS      (DI)(AX*1), Y4, Y5
	VSUBPS      (R12)(AX*1), Y4, Y6
	VSUBPS      (R13)(AX*1), Y4, Y7
	VSUBPS      (R14)(AX*1), Y4, Y8
	VFMADD231PS Y5, Y5, Y0
	VFMADD231PS Y6, Y6, Y1
	VFMADD231PS Y7, Y7, Y2
	VFMADD231PS Y8, Y8, Y3
	ADDQ        $32, AX
	DECQ        BX
	JMP         l2by_chunk4

l2by_tail4:
	TESTQ       CX, CX
	JZ          l2by_red4
	VMASKMOVPS  (SI)(AX*1), Y15, Y4
	VMASKMOVPS  (DI)(AX*1), Y15, Y5
	VMASKMOVPS  (R12)(AX*1), Y15, Y6
	VMASKMOVPS  (R13)(AX*1), Y15, Y7
	VMASKMOVPS  (R14)(AX*1), Y15, Y8
	VSUBPS      Y5, Y4, Y5
	VSUBPS      Y6, Y4, Y6
	VSUBPS      Y7, Y4, Y7
	VSUBPS      Y8, Y4, Y8
	VFMADD231PS Y5, Y5, Y0
	VFMADD231PS Y6, Y6, Y1
	VFMADD231PS Y7, Y7, Y2
	VFMADD231PS Y8, Y8, Y3

l2by_red4:
	REDUCE4_Y_STORE
	ADDQ $16, R8
	LEAQ (R14)(R10*1), DI
	SUBQ $4, R9
	JMP  l2by_rows4

l2by_rows1:
	TESTQ  R9, R9
	JZ     l2by_done
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	MOVQ   R11, BX

l2by_chunk1:
	TESTQ       BX, BX
	JZ          l2by_tail1
	VMOVUPS     (SI)(AX*1), Y4
	VSUBPS      (DI)(AX*1), Y4, Y5
	VFMADD231PS Y5, Y5, Y0
	ADDQ        $32, AX
	DECQ        BX
	JMP         l2by_chunk1

l2by_tail1:
	TESTQ       CX, CX
	JZ          l2by_red1
	VMASKMOVPS  (SI)(AX*1), Y15, Y4
	VMASKMOVPS  (DI)(AX*1), Y15, Y5
	VSUBPS      Y5, Y4, Y5
	VFMADD231PS Y5, Y5, Y0

l2by_red1:
	REDUCE_Y(Y0, X0, X1)
	VMOVSS X0, (R8)
	ADDQ   $4, R8
	ADDQ   R10, DI
	DECQ   R9
	JMP    l2by_rows1

l2by_done:
	VZEROUPPER
	RET

// func dotBatchAVX2(q, x, out []float32)
TEXT ·dotBatchAVX2(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), DX
	MOVQ x_base+24(FP), DI
	MOVQ out_base+48(FP), R8
	MOVQ out_len+56(FP), R9
	BATCH_PROLOGUE_Y

dotby_rows4:
	CMPQ   R9, $4
	JB     dotby_rows1
	LEAQ   (DI)(R10*1), R12
	LEAQ   (R12)(R10*1), R13
	LEAQ   (R13)(R10*1), R14
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	MOVQ   R11, BX

dotby_chunk4:
	TESTQ       BX, BX
	JZ          dotby_tail4
	VMOVUPS     (SI)(AX*1), Y4
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS (R12)(AX*1), Y4, Y1
	VFMADD231PS (R13)(AX*1), Y4, Y2
	VFMADD231PS (R14)(AX*1), Y4, Y3
	ADDQ        $32, AX
	DECQ        BX
	JMP         dotby_chunk4

dotby_tail4:
	TESTQ       CX, CX
	JZ          dotby_red4
	VMASKMOVPS  (SI)(AX*1), Y15, Y4
	VMASKMOVPS  (DI)(AX*1), Y15, Y5
	VMASKMOVPS  (R12)(AX*1), Y15, Y6
	VMASKMOVPS  (R13)(AX*1), Y15, Y7
	VMASKMOVPS  (R14)(AX*1), Y15, Y8
	VFMADD231PS Y5, Y4, Y0
	VFMADD231PS Y6, Y4, Y1
	VFMADD231PS Y7, Y4, Y2
	VFMADD231PS Y8, Y4, Y3

dotby_red4:
	REDUCE4_Y_STORE
	ADDQ $16, R8
	LEAQ (R14)(R10*1), DI
	SUBQ $4, R9
	JMP  dotby_rows4

dotby_rows1:
	TESTQ  R9, R9
	JZ     dotby_done
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	MOVQ   R11, BX

dotby_chunk1:
	TESTQ       BX, BX
	JZ          dotby_tail1
	VMOVUPS     (SI)(AX*1), Y4
	VFMADD231PS (DI)(AX*1), Y4, Y0
	ADDQ        $32, AX
	DECQ        BX
	JMP         dotby_chunk1

dotby_tail1:
	TESTQ       CX, CX
	JZ          dotby_red1
	VMASKMOVPS  (SI)(AX*1), Y15, Y4
	VMASKMOVPS  (DI)(AX*1), Y15, Y5
	VFMADD231PS Y5, Y4, Y0

dotby_red1:
	REDUCE_Y(Y0, X0, X1)
	VMOVSS X0, (R8)
	ADDQ   $4, R8
	ADDQ   R10, DI
	DECQ   R9
	JMP    dotby_rows1

dotby_done:
	VZEROUPPER
	RET

// func sumAVX2(x []float32) float32
TEXT ·sumAVX2(SB), NOSPLIT, $0-28
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

sumy_loop32:
	CMPQ   CX, $32
	JB     sumy_loop8
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JMP    sumy_loop32

sumy_loop8:
	CMPQ   CX, $8
	JB     sumy_tail
	VADDPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JMP    sumy_loop8

sumy_tail:
	TESTQ      CX, CX
	JZ         sumy_reduce
	LOADMASK_Y(Y15)
	VMASKMOVPS (SI), Y15, Y4
	VADDPS     Y4, Y1, Y1

sumy_reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VZEROUPPER
	VMOVSS X0, ret+24(FP)
	RET

// ---------------------------------------------------------------------------
// Many-to-many (k-means assignment) tiles, AVX-512: 4 rows of x against 4
// rows of c at a time, 16 ZMM accumulators Z0-Z15 (Z(4r+k) = x row r vs c
// row k). Each 16-lane chunk costs 8 loads for 16 row pairs, against 20
// loads for the same work done as four one-to-many batches, so the loop is
// bound by arithmetic instead of loads.
//
// SI, R13, R14, R11: x rows 0-3; DI, R8, R9, R10: c rows j..j+3; R12 row
// stride (d·4 bytes); AX byte offset within rows; BX chunk counter;
// DX out row 0 at column j; CX out row stride in bytes; K1 tail mask.

#define TILE_L2(xr, a0, a1, a2, a3) \
	VMOVUPS     (xr)(AX*1), Z20; \
	VSUBPS      Z16, Z20, Z21; \
	VSUBPS      Z17, Z20, Z22; \
	VSUBPS      Z18, Z20, Z23; \
	VSUBPS      Z19, Z20, Z24; \
	VFMADD231PS Z21, Z21, a0; \
	VFMADD231PS Z22, Z22, a1; \
	VFMADD231PS Z23, Z23, a2; \
	VFMADD231PS Z24, Z24, a3

#define TILE_L2_MASKED(xr, a0, a1, a2, a3) \
	VMOVUPS.Z   (xr)(AX*1), K1, Z20; \
	VSUBPS      Z16, Z20, Z21; \
	VSUBPS      Z17, Z20, Z22; \
	VSUBPS      Z18, Z20, Z23; \
	VSUBPS      Z19, Z20, Z24; \
	VFMADD231PS Z21, Z21, a0; \
	VFMADD231PS Z22, Z22, a1; \
	VFMADD231PS Z23, Z23, a2; \
	VFMADD231PS Z24, Z24, a3

#define TILE_DOT(xr, a0, a1, a2, a3) \
	VMOVUPS     (xr)(AX*1), Z20; \
	VFMADD231PS Z16, Z20, a0; \
	VFMADD231PS Z17, Z20, a1; \
	VFMADD231PS Z18, Z20, a2; \
	VFMADD231PS Z19, Z20, a3

#define TILE_DOT_MASKED(xr, a0, a1, a2, a3) \
	VMOVUPS.Z   (xr)(AX*1), K1, Z20; \
	VFMADD231PS Z16, Z20, a0; \
	VFMADD231PS Z17, Z20, a1; \
	VFMADD231PS Z18, Z20, a2; \
	VFMADD231PS Z19, Z20, a3

#define TILE_LOADC \
	VMOVUPS (DI)(AX*1), Z16; \
	VMOVUPS (R8)(AX*1), Z17; \
	VMOVUPS (R9)(AX*1), Z18; \
	VMOVUPS (R10)(AX*1), Z19

#define TILE_LOADC_MASKED \
	VMOVUPS.Z (DI)(AX*1), K1, Z16; \
	VMOVUPS.Z (R8)(AX*1), K1, Z17; \
	VMOVUPS.Z (R9)(AX*1), K1, Z18; \
	VMOVUPS.Z (R10)(AX*1), K1, Z19

// TILE_RED4 reduces the four accumulators z0..z3 (with their Y and X
// names) to [Σz0, Σz1, Σz2, Σz3] in x0 and stores it at (dst).
#define TILE_RED4(z0, z1, z2, z3, y0, y1, y2, y3, x0, x1, x2, x3, dst) \
	VEXTRACTF64X4 $1, z0, Y16; \
	VADDPS        Y16, y0, y0; \
	VEXTRACTF64X4 $1, z1, Y17; \
	VADDPS        Y17, y1, y1; \
	VEXTRACTF64X4 $1, z2, Y18; \
	VADDPS        Y18, y2, y2; \
	VEXTRACTF64X4 $1, z3, Y19; \
	VADDPS        Y19, y3, y3; \
	VEXTRACTF32X4 $1, y0, X16; \
	VADDPS        X16, x0, x0; \
	VEXTRACTF32X4 $1, y1, X17; \
	VADDPS        X17, x1, x1; \
	VEXTRACTF32X4 $1, y2, X18; \
	VADDPS        X18, x2, x2; \
	VEXTRACTF32X4 $1, y3, X19; \
	VADDPS        X19, x3, x3; \
	VHADDPS       x1, x0, x0; \
	VHADDPS       x3, x2, x2; \
	VHADDPS       x2, x0, x0; \
	VMOVUPS       x0, (dst)

#define TILE_ZERO \
	VXORPS Z0, Z0, Z0; \
	VXORPS Z1, Z1, Z1; \
	VXORPS Z2, Z2, Z2; \
	VXORPS Z3, Z3, Z3; \
	VXORPS Z4, Z4, Z4; \
	VXORPS Z5, Z5, Z5; \
	VXORPS Z6, Z6, Z6; \
	VXORPS Z7, Z7, Z7; \
	VXORPS Z8, Z8, Z8; \
	VXORPS Z9, Z9, Z9; \
	VXORPS Z10, Z10, Z10; \
	VXORPS Z11, Z11, Z11; \
	VXORPS Z12, Z12, Z12; \
	VXORPS Z13, Z13, Z13; \
	VXORPS Z14, Z14, Z14; \
	VXORPS Z15, Z15, Z15

// TILE_STORE reduces all 16 accumulators and writes the 4×4 block at DX
// (row stride CX). Clobbers AX.
#define TILE_STORE \
	TILE_RED4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, X1, X2, X3, DX); \
	LEAQ (DX)(CX*1), AX; \
	TILE_RED4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4, X5, X6, X7, AX); \
	ADDQ CX, AX; \
	TILE_RED4(Z8, Z9, Z10, Z11, Y8, Y9, Y10, Y11, X8, X9, X10, X11, AX); \
	ADDQ CX, AX; \
	TILE_RED4(Z12, Z13, Z14, Z15, Y12, Y13, Y14, Y15, X12, X13, X14, X15, AX)

// TILE_PROLOGUE: registers from the arguments, loaded by the caller into
// SI (x), DI (c), R12 (d), DX (out), CX (ldo). Leaves the chunk count
// in nch-8(SP).
#define TILE_PROLOGUE \
	MOVQ  R12, BX; \
	SHRQ  $4, BX; \
	MOVQ  BX, nch-8(SP); \
	MOVQ  R12, BX; \
	ANDQ  $15, BX; \
	MOVQ  CX, R8; \
	MOVQ  BX, CX; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1; \
	MOVQ  R8, CX; \
	SHLQ  $2, CX; \
	SHLQ  $2, R12; \
	LEAQ  (SI)(R12*1), R13; \
	LEAQ  (R13)(R12*1), R14; \
	LEAQ  (R14)(R12*1), R11

// func l2SqTileAVX512(x, c []float32, d, mc int, out []float32, ldo int)
// x: 4×d; c: mc×d with mc ≥ 4, mc % 4 == 0; writes out[r*ldo+j] for r < 4,
// j < mc.
TEXT ·l2SqTileAVX512(SB), NOSPLIT, $16-96
	MOVQ x_base+0(FP), SI
	MOVQ c_base+24(FP), DI
	MOVQ d+48(FP), R12
	MOVQ mc+56(FP), AX
	MOVQ AX, jleft-16(SP)
	MOVQ out_base+64(FP), DX
	MOVQ ldo+88(FP), CX
	TILE_PROLOGUE

l2t_block:
	LEAQ (DI)(R12*1), R8
	LEAQ (R8)(R12*1), R9
	LEAQ (R9)(R12*1), R10
	TILE_ZERO
	XORQ AX, AX
	MOVQ nch-8(SP), BX

l2t_chunk:
	TESTQ BX, BX
	JZ    l2t_tail
	TILE_LOADC
	TILE_L2(SI, Z0, Z1, Z2, Z3)
	TILE_L2(R13, Z4, Z5, Z6, Z7)
	TILE_L2(R14, Z8, Z9, Z10, Z11)
	TILE_L2(R11, Z12, Z13, Z14, Z15)
	ADDQ  $64, AX
	DECQ  BX
	JMP   l2t_chunk

l2t_tail:
	KORTESTW K1, K1
	JZ       l2t_store
	TILE_LOADC_MASKED
	TILE_L2_MASKED(SI, Z0, Z1, Z2, Z3)
	TILE_L2_MASKED(R13, Z4, Z5, Z6, Z7)
	TILE_L2_MASKED(R14, Z8, Z9, Z10, Z11)
	TILE_L2_MASKED(R11, Z12, Z13, Z14, Z15)

l2t_store:
	TILE_STORE
	ADDQ $16, DX
	LEAQ (R10)(R12*1), DI
	SUBQ $4, jleft-16(SP)
	JNZ  l2t_block
	VZEROUPPER
	RET

// func dotTileAVX512(x, c []float32, d, mc int, out []float32, ldo int)
TEXT ·dotTileAVX512(SB), NOSPLIT, $16-96
	MOVQ x_base+0(FP), SI
	MOVQ c_base+24(FP), DI
	MOVQ d+48(FP), R12
	MOVQ mc+56(FP), AX
	MOVQ AX, jleft-16(SP)
	MOVQ out_base+64(FP), DX
	MOVQ ldo+88(FP), CX
	TILE_PROLOGUE

dott_block:
	LEAQ (DI)(R12*1), R8
	LEAQ (R8)(R12*1), R9
	LEAQ (R9)(R12*1), R10
	TILE_ZERO
	XORQ AX, AX
	MOVQ nch-8(SP), BX

dott_chunk:
	TESTQ BX, BX
	JZ    dott_tail
	TILE_LOADC
	TILE_DOT(SI, Z0, Z1, Z2, Z3)
	TILE_DOT(R13, Z4, Z5, Z6, Z7)
	TILE_DOT(R14, Z8, Z9, Z10, Z11)
	TILE_DOT(R11, Z12, Z13, Z14, Z15)
	ADDQ  $64, AX
	DECQ  BX
	JMP   dott_chunk

dott_tail:
	KORTESTW K1, K1
	JZ       dott_store
	TILE_LOADC_MASKED
	TILE_DOT_MASKED(SI, Z0, Z1, Z2, Z3)
	TILE_DOT_MASKED(R13, Z4, Z5, Z6, Z7)
	TILE_DOT_MASKED(R14, Z8, Z9, Z10, Z11)
	TILE_DOT_MASKED(R11, Z12, Z13, Z14, Z15)

dott_store:
	TILE_STORE
	ADDQ $16, DX
	LEAQ (R10)(R12*1), DI
	SUBQ $4, jleft-16(SP)
	JNZ  dott_block
	VZEROUPPER
	RET

// ---------------------------------------------------------------------------
// Register-blocked many-to-many tiles, AVX2 + FMA (see manyTiledRows):
// dotTile3AVX2 computes a 3×4 block of inner products per pass over d
// (3 x rows held in Y12-Y14, the 4 c rows loaded in turn into Y15, twelve
// accumulators Y0-Y11): 7 loads per 12 FMAs, against 5 per 4 for
// dotBatchAVX2. l2SqTile2AVX2 computes a 2×4 block of squared distances
// (x rows in Y12, Y13; difference in Y14; accumulators Y0-Y7).
// d must be a multiple of 4: the 8-float chunks are followed by at most
// one 4-float step with XMM loads, which zero the upper lanes, so no mask
// register (there is none left) is needed and nothing outside the rows is
// read. Every c block writes out[r*ldo+j .. +3] for r < rows.
//
// Registers: SI, R13, R14 x rows; DI, R8, R9, R10 c rows of the block;
// R12 row bytes; R11 full chunks; R15 c rows left; AX byte offset;
// BX chunk counter; DX out cursor; CX ldo in bytes.

// TILE_RED4_Y reduces Ya..Yd into Xa = [ΣYa, ΣYb, ΣYc, ΣYd]; clobbers
// X12-X15.
#define TILE_RED4_Y(ya, yb, yc, yd, xa, xb, xc, xd) \
	VEXTRACTF128 $1, ya, X12; \
	VADDPS       X12, xa, xa; \
	VEXTRACTF128 $1, yb, X13; \
	VADDPS       X13, xb, xb; \
	VEXTRACTF128 $1, yc, X14; \
	VADDPS       X14, xc, xc; \
	VEXTRACTF128 $1, yd, X15; \
	VADDPS       X15, xd, xd; \
	VHADDPS      xb, xa, xa; \
	VHADDPS      xd, xc, xc; \
	VHADDPS      xc, xa, xa

// func dotTile3AVX2(x, c []float32, d, mc int, out []float32, ldo int)
TEXT ·dotTile3AVX2(SB), NOSPLIT, $0-96
	MOVQ x_base+0(FP), SI
	MOVQ c_base+24(FP), DI
	MOVQ d+48(FP), R12
	MOVQ mc+56(FP), R15
	MOVQ out_base+64(FP), DX
	MOVQ ldo+88(FP), CX
	SHLQ $2, CX
	MOVQ R12, R11
	SHRQ $3, R11
	SHLQ $2, R12
	LEAQ (SI)(R12*1), R13
	LEAQ (R13)(R12*1), R14

dott3y_block:
	LEAQ (DI)(R12*1), R8
	LEAQ (R8)(R12*1), R9
	LEAQ (R9)(R12*1), R10
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
	XORQ AX, AX
	MOVQ R11, BX

dott3y_chunk:
	TESTQ BX, BX
	JZ    dott3y_tail
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     (R13)(AX*1), Y13
	VMOVUPS     (R14)(AX*1), Y14
	VMOVUPS     (DI)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS     (R8)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS     (R9)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS     (R10)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11
	ADDQ  $32, AX
	DECQ  BX
	JMP   dott3y_chunk

dott3y_tail:
	// d mod 8 is 0 or 4 (the caller's duty): a 4-float step, XMM loads
	// (the upper lanes read as zero).
	TESTQ $16, R12
	JZ    dott3y_store
	VMOVUPS     (SI)(AX*1), X12
	VMOVUPS     (R13)(AX*1), X13
	VMOVUPS     (R14)(AX*1), X14
	VMOVUPS     (DI)(AX*1), X15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS     (R8)(AX*1), X15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS     (R9)(AX*1), X15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS     (R10)(AX*1), X15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11

dott3y_store:
	TILE_RED4_Y(Y0, Y1, Y2, Y3, X0, X1, X2, X3)
	TILE_RED4_Y(Y4, Y5, Y6, Y7, X4, X5, X6, X7)
	TILE_RED4_Y(Y8, Y9, Y10, Y11, X8, X9, X10, X11)
	VMOVUPS X0, (DX)
	VMOVUPS X4, (DX)(CX*1)
	VMOVUPS X8, (DX)(CX*2)
	ADDQ $16, DX
	LEAQ (R10)(R12*1), DI
	SUBQ $4, R15
	JNZ  dott3y_block
	VZEROUPPER
	RET

// func l2SqTile2AVX2(x, c []float32, d, mc int, out []float32, ldo int)
TEXT ·l2SqTile2AVX2(SB), NOSPLIT, $0-96
	MOVQ x_base+0(FP), SI
	MOVQ c_base+24(FP), DI
	MOVQ d+48(FP), R12
	MOVQ mc+56(FP), R15
	MOVQ out_base+64(FP), DX
	MOVQ ldo+88(FP), CX
	SHLQ $2, CX
	MOVQ R12, R11
	SHRQ $3, R11
	SHLQ $2, R12
	LEAQ (SI)(R12*1), R13

l2t2y_block:
	LEAQ (DI)(R12*1), R8
	LEAQ (R8)(R12*1), R9
	LEAQ (R9)(R12*1), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX
	MOVQ R11, BX

l2t2y_chunk:
	TESTQ BX, BX
	JZ    l2t2y_tail
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     (R13)(AX*1), Y13
	VMOVUPS     (DI)(AX*1), Y15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y0
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y4
	VMOVUPS     (R8)(AX*1), Y15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y1
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y5
	VMOVUPS     (R9)(AX*1), Y15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y2
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y6
	VMOVUPS     (R10)(AX*1), Y15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y3
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y7
	ADDQ  $32, AX
	DECQ  BX
	JMP   l2t2y_chunk

l2t2y_tail:
	// d mod 8 is 0 or 4 (the caller's duty): a 4-float step, XMM loads
	// (the upper lanes read as zero).
	TESTQ $16, R12
	JZ    l2t2y_store
	VMOVUPS     (SI)(AX*1), X12
	VMOVUPS     (R13)(AX*1), X13
	VMOVUPS     (DI)(AX*1), X15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y0
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y4
	VMOVUPS     (R8)(AX*1), X15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y1
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y5
	VMOVUPS     (R9)(AX*1), X15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y2
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y6
	VMOVUPS     (R10)(AX*1), X15
	VSUBPS      Y15, Y12, Y14
	VFMADD231PS Y14, Y14, Y3
	VSUBPS      Y15, Y13, Y14
	VFMADD231PS Y14, Y14, Y7

l2t2y_store:
	TILE_RED4_Y(Y0, Y1, Y2, Y3, X0, X1, X2, X3)
	TILE_RED4_Y(Y4, Y5, Y6, Y7, X4, X5, X6, X7)
	VMOVUPS X0, (DX)
	VMOVUPS X4, (DX)(CX*1)
	ADDQ $16, DX
	LEAQ (R10)(R12*1), DI
	SUBQ $4, R15
	JNZ  l2t2y_block
	VZEROUPPER
	RET
