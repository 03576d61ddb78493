//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// Gather kernels (AVX-512 F): the distances between q and the rows of x
// named by ids. Go references: dotGatherRef, l2SqGatherRef in gather.go.
// Per row the body is dotAVX512 / l2SqAVX512 (four ZMM accumulators over
// 64-float blocks, then 16-float blocks, then a k-masked zeroing tail);
// before scoring row i the kernel issues PREFETCHT0 for every cache line
// of row i+1, so its memory traffic overlaps row i's arithmetic.
// Registers: SI q, DX d, R10 row bytes, BX x, R8 ids cursor, R9 rows left,
// DI out cursor, K1 tail mask, R11 tail lane count, R12 row, R13/CX/AX
// scratch, R14 q cursor.

#define REDUCE_Z(z, y, x, yT, xT) \
	VEXTRACTF64X4 $1, z, yT; \
	VADDPS        yT, y, y; \
	VEXTRACTF128  $1, y, xT; \
	VADDPS        xT, x, x; \
	VMOVHLPS      x, x, xT; \
	VADDPS        xT, x, x; \
	VMOVSHDUP     x, xT; \
	VADDSS        xT, x, x

// func dotGatherAVX512(q, x []float32, ids []uint32, out []float32)
TEXT ·dotGatherAVX512(SB), NOSPLIT, $0-96
	MOVQ  q_base+0(FP), SI
	MOVQ  q_len+8(FP), DX
	MOVQ  x_base+24(FP), BX
	MOVQ  ids_base+48(FP), R8
	MOVQ  ids_len+56(FP), R9
	MOVQ  out_base+72(FP), DI
	MOVQ  DX, R10
	SHLQ  $2, R10
	MOVQ  DX, R11
	ANDQ  $15, R11
	MOVL  $1, AX
	MOVQ  R11, CX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

dotg_row:
	MOVL  (R8), AX
	IMULQ R10, AX
	LEAQ  (BX)(AX*1), R12
	CMPQ  R9, $1
	JBE   dotg_score
	MOVL  4(R8), AX
	IMULQ R10, AX
	LEAQ  (BX)(AX*1), R13
	MOVQ  R10, CX
	PREFETCHT0 -4(R13)(CX*1)

dotg_pf:
	PREFETCHT0 (R13)
	ADDQ       $64, R13
	SUBQ       $64, CX
	JG         dotg_pf

dotg_score:
	MOVQ   SI, R14
	MOVQ   DX, CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

dotg_loop64:
	CMPQ        CX, $64
	JB          dotg_loop16
	VMOVUPS     (R14), Z4
	VMOVUPS     64(R14), Z5
	VMOVUPS     128(R14), Z6
	VMOVUPS     192(R14), Z7
	VFMADD231PS (R12), Z4, Z0
	VFMADD231PS 64(R12), Z5, Z1
	VFMADD231PS 128(R12), Z6, Z2
	VFMADD231PS 192(R12), Z7, Z3
	ADDQ        $256, R14
	ADDQ        $256, R12
	SUBQ        $64, CX
	JMP         dotg_loop64

dotg_loop16:
	CMPQ        CX, $16
	JB          dotg_tail
	VMOVUPS     (R14), Z4
	VFMADD231PS (R12), Z4, Z0
	ADDQ        $64, R14
	ADDQ        $64, R12
	SUBQ        $16, CX
	JMP         dotg_loop16

dotg_tail:
	TESTQ       CX, CX
	JZ          dotg_reduce
	VMOVUPS.Z   (R14), K1, Z4
	VMOVUPS.Z   (R12), K1, Z5
	VFMADD231PS Z5, Z4, Z1

dotg_reduce:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   $4, R8
	DECQ   R9
	JNZ    dotg_row
	VZEROUPPER
	RET

// func l2SqGatherAVX512(q, x []float32, ids []uint32, out []float32)
TEXT ·l2SqGatherAVX512(SB), NOSPLIT, $0-96
	MOVQ  q_base+0(FP), SI
	MOVQ  q_len+8(FP), DX
	MOVQ  x_base+24(FP), BX
	MOVQ  ids_base+48(FP), R8
	MOVQ  ids_len+56(FP), R9
	MOVQ  out_base+72(FP), DI
	MOVQ  DX, R10
	SHLQ  $2, R10
	MOVQ  DX, R11
	ANDQ  $15, R11
	MOVL  $1, AX
	MOVQ  R11, CX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

l2g_row:
	MOVL  (R8), AX
	IMULQ R10, AX
	LEAQ  (BX)(AX*1), R12
	CMPQ  R9, $1
	JBE   l2g_score
	MOVL  4(R8), AX
	IMULQ R10, AX
	LEAQ  (BX)(AX*1), R13
	MOVQ  R10, CX
	PREFETCHT0 -4(R13)(CX*1)

l2g_pf:
	PREFETCHT0 (R13)
	ADDQ       $64, R13
	SUBQ       $64, CX
	JG         l2g_pf

l2g_score:
	MOVQ   SI, R14
	MOVQ   DX, CX
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3

l2g_loop64:
	CMPQ        CX, $64
	JB          l2g_loop16
	VMOVUPS     (R14), Z4
	VMOVUPS     64(R14), Z5
	VMOVUPS     128(R14), Z6
	VMOVUPS     192(R14), Z7
	VSUBPS      (R12), Z4, Z4
	VSUBPS      64(R12), Z5, Z5
	VSUBPS      128(R12), Z6, Z6
	VSUBPS      192(R12), Z7, Z7
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	VFMADD231PS Z6, Z6, Z2
	VFMADD231PS Z7, Z7, Z3
	ADDQ        $256, R14
	ADDQ        $256, R12
	SUBQ        $64, CX
	JMP         l2g_loop64

l2g_loop16:
	CMPQ        CX, $16
	JB          l2g_tail
	VMOVUPS     (R14), Z4
	VSUBPS      (R12), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ        $64, R14
	ADDQ        $64, R12
	SUBQ        $16, CX
	JMP         l2g_loop16

l2g_tail:
	TESTQ       CX, CX
	JZ          l2g_reduce
	VMOVUPS.Z   (R14), K1, Z4
	VMOVUPS.Z   (R12), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z1

l2g_reduce:
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   $4, R8
	DECQ   R9
	JNZ    l2g_row
	VZEROUPPER
	RET

