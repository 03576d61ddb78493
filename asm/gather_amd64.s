//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// Gather kernels (AVX-512 F): the distances between q and the rows of x
// named by ids. Go references: dotGatherRef, l2SqGatherRef in gather.go.
//
// Rows go four at a time: each 16-float chunk of q is loaded once and
// used against the four rows (as in dotBatchAVX512), the chunks alternate
// between two accumulator sets (Z0-Z3, Z8-Z11) to halve the FMA dependency
// chains, and the four sums are reduced together (VHADDPS) and stored as
// one XMM. Loading four scattered rows at once also keeps four rows' cache
// misses in flight. Before scoring a group the kernel issues PREFETCHT0
// for every cache line of the next group's rows (ids[i+4..i+7]). The
// remaining n mod 4 rows go one at a time (already prefetched).
// Tails: a k-masked zeroing load (K1 = first d mod 16 lanes), which
// never faults on the masked-out lanes.
//
// Bounds: each id is checked as it is first loaded (by the prefetch of
// the next group, or by GATHER_ROWPTR): its row's byte offset id·4d must
// be ≤ R15 = 4·len(x) − 4d, else the kernel stops and returns 1 (0 when
// every row was in range), before reading anything at that row, so no
// memory outside x is read or prefetched; rows before it may already be
// scored into out. The caller guarantees 1 ≤ d ≤ len(x) and d < 2^28, so
// id·4d < 2^62 cannot overflow.
//
// Registers: SI q, BX x, R8 ids cursor, R9 rows left, DI out cursor,
// R10 row bytes, R11 full chunks per row, R15 last row offset, K1 tail
// mask; R12, R13, R14, DX rows of the group; AX byte offset in the row;
// CX chunk counter.

#define REDUCE_Z(z, y, x, yT, xT) \
	VEXTRACTF64X4 $1, z, yT; \
	VADDPS        yT, y, y; \
	VEXTRACTF128  $1, y, xT; \
	VADDPS        xT, x, x; \
	VMOVHLPS      x, x, xT; \
	VADDPS        xT, x, x; \
	VMOVSHDUP     x, xT; \
	VADDSS        xT, x, x

// GATHER_RED4 stores [ΣZ0, ΣZ1, ΣZ2, ΣZ3] at (DI). Clobbers Z4-Z7.
#define GATHER_RED4 \
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
	VMOVUPS       X0, (DI)

// GATHER_ROWPTR loads into r the address of row ids[off/4] of x, or
// jumps to bad if that row is not wholly inside x (byte offset > R15).
#define GATHER_ROWPTR(off, r, bad) \
	MOVL  off(R8), AX; \
	IMULQ R10, AX; \
	CMPQ  AX, R15; \
	JA    bad; \
	LEAQ  (BX)(AX*1), r

// func dotGatherAVX512(q, x []float32, ids []uint32, out []float32) int
TEXT ·dotGatherAVX512(SB), NOSPLIT, $0-104
	MOVQ  q_base+0(FP), SI
	MOVQ  q_len+8(FP), DX
	MOVQ  x_base+24(FP), BX
	MOVQ  x_len+32(FP), R15
	SUBQ  DX, R15
	SHLQ  $2, R15
	MOVQ  ids_base+48(FP), R8
	MOVQ  ids_len+56(FP), R9
	MOVQ  out_base+72(FP), DI
	MOVQ  DX, R10
	SHLQ  $2, R10
	MOVQ  DX, R11
	SHRQ  $4, R11
	MOVQ  DX, CX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

dotg_rows4:
	CMPQ R9, $4
	JB   dotg_rows1
	// Prefetch the rows of the next group: ids[4 .. min(8, rows left)).
	MOVQ R9, DX
	SUBQ $4, DX
	JZ   dotg_cur
	CMPQ DX, $4
	JBE  dotg_pfgo
	MOVQ $4, DX

dotg_pfgo:
	LEAQ 16(R8), R12

dotg_pfrow:
	MOVL       (R12), AX
	IMULQ      R10, AX
	CMPQ       AX, R15
	JA         dotg_bad
	ADDQ       BX, AX
	MOVQ       R10, CX
	PREFETCHT0 -4(AX)(CX*1)

dotg_pfline:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	SUBQ       $64, CX
	JG         dotg_pfline
	ADDQ       $4, R12
	DECQ       DX
	JNZ        dotg_pfrow

dotg_cur:
	GATHER_ROWPTR(0, R12, dotg_bad)
	GATHER_ROWPTR(4, R13, dotg_bad)
	GATHER_ROWPTR(8, R14, dotg_bad)
	GATHER_ROWPTR(12, DX, dotg_bad)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	XORQ   AX, AX
	MOVQ   R11, CX

dotg_chunk8:
	CMPQ CX, $2
	JB   dotg_chunk4
	VMOVUPS     0(SI)(AX*1), Z4
	VFMADD231PS 0(R12)(AX*1), Z4, Z0
	VFMADD231PS 0(R13)(AX*1), Z4, Z1
	VFMADD231PS 0(R14)(AX*1), Z4, Z2
	VFMADD231PS 0(DX)(AX*1), Z4, Z3
	VMOVUPS     64(SI)(AX*1), Z12
	VFMADD231PS 64(R12)(AX*1), Z12, Z8
	VFMADD231PS 64(R13)(AX*1), Z12, Z9
	VFMADD231PS 64(R14)(AX*1), Z12, Z10
	VFMADD231PS 64(DX)(AX*1), Z12, Z11
	ADDQ $128, AX
	SUBQ $2, CX
	JMP  dotg_chunk8

dotg_chunk4:
	TESTQ CX, CX
	JZ    dotg_tail4
	VMOVUPS     0(SI)(AX*1), Z4
	VFMADD231PS 0(R12)(AX*1), Z4, Z0
	VFMADD231PS 0(R13)(AX*1), Z4, Z1
	VFMADD231PS 0(R14)(AX*1), Z4, Z2
	VFMADD231PS 0(DX)(AX*1), Z4, Z3
	ADDQ  $64, AX

dotg_tail4:
	KORTESTW K1, K1
	JZ       dotg_red4
	VMOVUPS.Z   (SI)(AX*1), K1, Z12
	VMOVUPS.Z   (R12)(AX*1), K1, Z5
	VMOVUPS.Z   (R13)(AX*1), K1, Z6
	VMOVUPS.Z   (R14)(AX*1), K1, Z7
	VMOVUPS.Z   (DX)(AX*1), K1, Z13
	VFMADD231PS Z5, Z12, Z8
	VFMADD231PS Z6, Z12, Z9
	VFMADD231PS Z7, Z12, Z10
	VFMADD231PS Z13, Z12, Z11

dotg_red4:
	VADDPS Z8, Z0, Z0
	VADDPS Z9, Z1, Z1
	VADDPS Z10, Z2, Z2
	VADDPS Z11, Z3, Z3
	GATHER_RED4
	ADDQ $16, DI
	ADDQ $16, R8
	SUBQ $4, R9
	JMP  dotg_rows4

dotg_rows1:
	TESTQ  R9, R9
	JZ     dotg_done
	GATHER_ROWPTR(0, R12, dotg_bad)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	XORQ   AX, AX
	MOVQ   R11, CX

dotg_chunk1:
	TESTQ CX, CX
	JZ    dotg_tail1
	VMOVUPS     (SI)(AX*1), Z4
	VFMADD231PS (R12)(AX*1), Z4, Z0
	ADDQ  $64, AX
	DECQ  CX
	JMP   dotg_chunk1

dotg_tail1:
	KORTESTW K1, K1
	JZ       dotg_red1
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (R12)(AX*1), K1, Z5
	VFMADD231PS Z5, Z4, Z1

dotg_red1:
	VADDPS Z1, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   $4, R8
	DECQ   R9
	JMP    dotg_rows1

dotg_done:
	VZEROUPPER
	MOVQ $0, ret+96(FP)
	RET

dotg_bad:
	VZEROUPPER
	MOVQ $1, ret+96(FP)
	RET

// func l2SqGatherAVX512(q, x []float32, ids []uint32, out []float32) int
TEXT ·l2SqGatherAVX512(SB), NOSPLIT, $0-104
	MOVQ  q_base+0(FP), SI
	MOVQ  q_len+8(FP), DX
	MOVQ  x_base+24(FP), BX
	MOVQ  x_len+32(FP), R15
	SUBQ  DX, R15
	SHLQ  $2, R15
	MOVQ  ids_base+48(FP), R8
	MOVQ  ids_len+56(FP), R9
	MOVQ  out_base+72(FP), DI
	MOVQ  DX, R10
	SHLQ  $2, R10
	MOVQ  DX, R11
	SHRQ  $4, R11
	MOVQ  DX, CX
	ANDQ  $15, CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1

l2g_rows4:
	CMPQ R9, $4
	JB   l2g_rows1
	// Prefetch the rows of the next group: ids[4 .. min(8, rows left)).
	MOVQ R9, DX
	SUBQ $4, DX
	JZ   l2g_cur
	CMPQ DX, $4
	JBE  l2g_pfgo
	MOVQ $4, DX

l2g_pfgo:
	LEAQ 16(R8), R12

l2g_pfrow:
	MOVL       (R12), AX
	IMULQ      R10, AX
	CMPQ       AX, R15
	JA         l2g_bad
	ADDQ       BX, AX
	MOVQ       R10, CX
	PREFETCHT0 -4(AX)(CX*1)

l2g_pfline:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	SUBQ       $64, CX
	JG         l2g_pfline
	ADDQ       $4, R12
	DECQ       DX
	JNZ        l2g_pfrow

l2g_cur:
	GATHER_ROWPTR(0, R12, l2g_bad)
	GATHER_ROWPTR(4, R13, l2g_bad)
	GATHER_ROWPTR(8, R14, l2g_bad)
	GATHER_ROWPTR(12, DX, l2g_bad)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z8, Z8, Z8
	VXORPS Z9, Z9, Z9
	VXORPS Z10, Z10, Z10
	VXORPS Z11, Z11, Z11
	XORQ   AX, AX
	MOVQ   R11, CX

l2g_chunk8:
	CMPQ CX, $2
	JB   l2g_chunk4
	VMOVUPS     0(SI)(AX*1), Z4
	VSUBPS      0(R12)(AX*1), Z4, Z5
	VSUBPS      0(R13)(AX*1), Z4, Z6
	VSUBPS      0(R14)(AX*1), Z4, Z7
	VSUBPS      0(DX)(AX*1), Z4, Z13
	VFMADD231PS Z5, Z5, Z0
	VFMADD231PS Z6, Z6, Z1
	VFMADD231PS Z7, Z7, Z2
	VFMADD231PS Z13, Z13, Z3
	VMOVUPS     64(SI)(AX*1), Z12
	VSUBPS      64(R12)(AX*1), Z12, Z14
	VSUBPS      64(R13)(AX*1), Z12, Z15
	VSUBPS      64(R14)(AX*1), Z12, Z16
	VSUBPS      64(DX)(AX*1), Z12, Z17
	VFMADD231PS Z14, Z14, Z8
	VFMADD231PS Z15, Z15, Z9
	VFMADD231PS Z16, Z16, Z10
	VFMADD231PS Z17, Z17, Z11
	ADDQ $128, AX
	SUBQ $2, CX
	JMP  l2g_chunk8

l2g_chunk4:
	TESTQ CX, CX
	JZ    l2g_tail4
	VMOVUPS     0(SI)(AX*1), Z4
	VSUBPS      0(R12)(AX*1), Z4, Z5
	VSUBPS      0(R13)(AX*1), Z4, Z6
	VSUBPS      0(R14)(AX*1), Z4, Z7
	VSUBPS      0(DX)(AX*1), Z4, Z13
	VFMADD231PS Z5, Z5, Z0
	VFMADD231PS Z6, Z6, Z1
	VFMADD231PS Z7, Z7, Z2
	VFMADD231PS Z13, Z13, Z3
	ADDQ  $64, AX

l2g_tail4:
	KORTESTW K1, K1
	JZ       l2g_red4
	VMOVUPS.Z   (SI)(AX*1), K1, Z12
	VMOVUPS.Z   (R12)(AX*1), K1, Z14
	VMOVUPS.Z   (R13)(AX*1), K1, Z15
	VMOVUPS.Z   (R14)(AX*1), K1, Z16
	VMOVUPS.Z   (DX)(AX*1), K1, Z17
	VSUBPS      Z14, Z12, Z14
	VSUBPS      Z15, Z12, Z15
	VSUBPS      Z16, Z12, Z16
	VSUBPS      Z17, Z12, Z17
	VFMADD231PS Z14, Z14, Z8
	VFMADD231PS Z15, Z15, Z9
	VFMADD231PS Z16, Z16, Z10
	VFMADD231PS Z17, Z17, Z11

l2g_red4:
	VADDPS Z8, Z0, Z0
	VADDPS Z9, Z1, Z1
	VADDPS Z10, Z2, Z2
	VADDPS Z11, Z3, Z3
	GATHER_RED4
	ADDQ $16, DI
	ADDQ $16, R8
	SUBQ $4, R9
	JMP  l2g_rows4

l2g_rows1:
	TESTQ  R9, R9
	JZ     l2g_done
	GATHER_ROWPTR(0, R12, l2g_bad)
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	XORQ   AX, AX
	MOVQ   R11, CX

l2g_chunk1:
	TESTQ CX, CX
	JZ    l2g_tail1
	VMOVUPS     (SI)(AX*1), Z4
	VSUBPS      (R12)(AX*1), Z4, Z4
	VFMADD231PS Z4, Z4, Z0
	ADDQ  $64, AX
	DECQ  CX
	JMP   l2g_chunk1

l2g_tail1:
	KORTESTW K1, K1
	JZ       l2g_red1
	VMOVUPS.Z   (SI)(AX*1), K1, Z4
	VMOVUPS.Z   (R12)(AX*1), K1, Z5
	VSUBPS      Z5, Z4, Z4
	VFMADD231PS Z4, Z4, Z1

l2g_red1:
	VADDPS Z1, Z0, Z0
	REDUCE_Z(Z0, Y0, X0, Y1, X1)
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   $4, R8
	DECQ   R9
	JMP    l2g_rows1

l2g_done:
	VZEROUPPER
	MOVQ $0, ret+96(FP)
	RET

l2g_bad:
	VZEROUPPER
	MOVQ $1, ret+96(FP)
	RET

// ---------------------------------------------------------------------------
// Gather kernels, AVX2 + FMA: the AVX-512 kernels' scheme with YMM chunks
// (four rows at a time, each 8-float chunk of q loaded once, two
// accumulator sets Y0-Y3 / Y8-Y11 over alternate chunks, one combined
// reduction, PREFETCHT0 of every line of the next group's rows). The tail
// of d mod 8 floats is a VMASKMOVPS load with the lane mask Y15 from
// gtailmask<>, which never faults on masked-out lanes on hardware (qemu-user
// reads the whole vector). These kernels do not check ids: the caller
// (DotGather / L2SqGather) has checked that every row lies inside x, so
// the loads and prefetches stay inside x.
//
// Registers: SI q, BX x, R8 ids cursor, R9 rows left, DI out cursor,
// R10 row bytes, R11 full 8-float chunks per row, R15 tail floats (d mod 8),
// Y15 tail mask; R12, R13, R14, DX rows of the group; AX byte offset in
// the row; CX chunk counter.

// gtailmask<>: 8 × 0xffffffff then 8 × 0. The 8 dwords at byte offset
// 32-4r have exactly the first r lanes set.
DATA gtailmask<>+0(SB)/8, $0xffffffffffffffff
DATA gtailmask<>+8(SB)/8, $0xffffffffffffffff
DATA gtailmask<>+16(SB)/8, $0xffffffffffffffff
DATA gtailmask<>+24(SB)/8, $0xffffffffffffffff
DATA gtailmask<>+32(SB)/8, $0
DATA gtailmask<>+40(SB)/8, $0
DATA gtailmask<>+48(SB)/8, $0
DATA gtailmask<>+56(SB)/8, $0
GLOBL gtailmask<>(SB), RODATA|NOPTR, $64

// GATHER_LOADMASK_Y loads into Y15 the mask of the first R15 lanes.
// Clobbers AX, CX.
#define GATHER_LOADMASK_Y \
	LEAQ    gtailmask<>(SB), CX; \
	MOVQ    R15, AX; \
	SHLQ    $2, AX; \
	NEGQ    AX; \
	VMOVDQU 32(CX)(AX*1), Y15

#define REDUCE_Y(y, x, xT) \
	VEXTRACTF128 $1, y, xT; \
	VADDPS       xT, x, x; \
	VMOVHLPS     x, x, xT; \
	VADDPS       xT, x, x; \
	VMOVSHDUP    x, xT; \
	VADDSS       xT, x, x

// GATHER_RED4_Y stores [ΣY0, ΣY1, ΣY2, ΣY3] at (DI). Clobbers Y4-Y7.
#define GATHER_RED4_Y \
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
	VMOVUPS      X0, (DI)

// GATHER_ROWPTR_Y loads into r the address of row ids[off/4] of x.
#define GATHER_ROWPTR_Y(off, r) \
	MOVL  off(R8), AX; \
	IMULQ R10, AX; \
	LEAQ  (BX)(AX*1), r

// func dotGatherAVX2(q, x []float32, ids []uint32, out []float32)
TEXT ·dotGatherAVX2(SB), NOSPLIT, $0-96
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), DX
	MOVQ x_base+24(FP), BX
	MOVQ ids_base+48(FP), R8
	MOVQ ids_len+56(FP), R9
	MOVQ out_base+72(FP), DI
	MOVQ DX, R10
	SHLQ $2, R10
	MOVQ DX, R11
	SHRQ $3, R11
	MOVQ DX, R15
	ANDQ $7, R15
	GATHER_LOADMASK_Y

dotgy_rows4:
	CMPQ R9, $4
	JB   dotgy_rows1
	// Prefetch the rows of the next group: ids[4 .. min(8, rows left)).
	MOVQ R9, DX
	SUBQ $4, DX
	JZ   dotgy_cur
	CMPQ DX, $4
	JBE  dotgy_pfgo
	MOVQ $4, DX

dotgy_pfgo:
	LEAQ 16(R8), R12

dotgy_pfrow:
	MOVL       (R12), AX
	IMULQ      R10, AX
	ADDQ       BX, AX
	MOVQ       R10, CX
	PREFETCHT0 -4(AX)(CX*1)

dotgy_pfline:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	SUBQ       $64, CX
	JG         dotgy_pfline
	ADDQ       $4, R12
	DECQ       DX
	JNZ        dotgy_pfrow

dotgy_cur:
	GATHER_ROWPTR_Y(0, R12)
	GATHER_ROWPTR_Y(4, R13)
	GATHER_ROWPTR_Y(8, R14)
	GATHER_ROWPTR_Y(12, DX)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ   AX, AX
	MOVQ   R11, CX

dotgy_chunk16:
	CMPQ CX, $2
	JB   dotgy_chunk8
	VMOVUPS     0(SI)(AX*1), Y4
	VFMADD231PS 0(R12)(AX*1), Y4, Y0
	VFMADD231PS 0(R13)(AX*1), Y4, Y1
	VFMADD231PS 0(R14)(AX*1), Y4, Y2
	VFMADD231PS 0(DX)(AX*1), Y4, Y3
	VMOVUPS     32(SI)(AX*1), Y12
	VFMADD231PS 32(R12)(AX*1), Y12, Y8
	VFMADD231PS 32(R13)(AX*1), Y12, Y9
	VFMADD231PS 32(R14)(AX*1), Y12, Y10
	VFMADD231PS 32(DX)(AX*1), Y12, Y11
	ADDQ $64, AX
	SUBQ $2, CX
	JMP  dotgy_chunk16

dotgy_chunk8:
	TESTQ CX, CX
	JZ    dotgy_tail4
	VMOVUPS     (SI)(AX*1), Y4
	VFMADD231PS (R12)(AX*1), Y4, Y0
	VFMADD231PS (R13)(AX*1), Y4, Y1
	VFMADD231PS (R14)(AX*1), Y4, Y2
	VFMADD231PS (DX)(AX*1), Y4, Y3
	ADDQ  $32, AX

dotgy_tail4:
	TESTQ R15, R15
	JZ    dotgy_red4
	VMASKMOVPS  (SI)(AX*1), Y15, Y12
	VMASKMOVPS  (R12)(AX*1), Y15, Y5
	VMASKMOVPS  (R13)(AX*1), Y15, Y6
	VMASKMOVPS  (R14)(AX*1), Y15, Y7
	VMASKMOVPS  (DX)(AX*1), Y15, Y13
	VFMADD231PS Y5, Y12, Y8
	VFMADD231PS Y6, Y12, Y9
	VFMADD231PS Y7, Y12, Y10
	VFMADD231PS Y13, Y12, Y11

dotgy_red4:
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y1, Y1
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y3, Y3
	GATHER_RED4_Y
	ADDQ $16, DI
	ADDQ $16, R8
	SUBQ $4, R9
	JMP  dotgy_rows4

dotgy_rows1:
	TESTQ  R9, R9
	JZ     dotgy_done
	GATHER_ROWPTR_Y(0, R12)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ   AX, AX
	MOVQ   R11, CX

dotgy_chunk1:
	TESTQ CX, CX
	JZ    dotgy_tail1
	VMOVUPS     (SI)(AX*1), Y4
	VFMADD231PS (R12)(AX*1), Y4, Y0
	ADDQ  $32, AX
	DECQ  CX
	JMP   dotgy_chunk1

dotgy_tail1:
	TESTQ R15, R15
	JZ    dotgy_red1
	VMASKMOVPS  (SI)(AX*1), Y15, Y4
	VMASKMOVPS  (R12)(AX*1), Y15, Y5
	VFMADD231PS Y5, Y4, Y1

dotgy_red1:
	VADDPS Y1, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   $4, R8
	DECQ   R9
	JMP    dotgy_rows1

dotgy_done:
	VZEROUPPER
	RET

// func l2SqGatherAVX2(q, x []float32, ids []uint32, out []float32)
TEXT ·l2SqGatherAVX2(SB), NOSPLIT, $0-96
	MOVQ q_base+0(FP), SI
	MOVQ q_len+8(FP), DX
	MOVQ x_base+24(FP), BX
	MOVQ ids_base+48(FP), R8
	MOVQ ids_len+56(FP), R9
	MOVQ out_base+72(FP), DI
	MOVQ DX, R10
	SHLQ $2, R10
	MOVQ DX, R11
	SHRQ $3, R11
	MOVQ DX, R15
	ANDQ $7, R15
	GATHER_LOADMASK_Y

l2gy_rows4:
	CMPQ R9, $4
	JB   l2gy_rows1
	// Prefetch the rows of the next group: ids[4 .. min(8, rows left)).
	MOVQ R9, DX
	SUBQ $4, DX
	JZ   l2gy_cur
	CMPQ DX, $4
	JBE  l2gy_pfgo
	MOVQ $4, DX

l2gy_pfgo:
	LEAQ 16(R8), R12

l2gy_pfrow:
	MOVL       (R12), AX
	IMULQ      R10, AX
	ADDQ       BX, AX
	MOVQ       R10, CX
	PREFETCHT0 -4(AX)(CX*1)

l2gy_pfline:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	SUBQ       $64, CX
	JG         l2gy_pfline
	ADDQ       $4, R12
	DECQ       DX
	JNZ        l2gy_pfrow

l2gy_cur:
	GATHER_ROWPTR_Y(0, R12)
	GATHER_ROWPTR_Y(4, R13)
	GATHER_ROWPTR_Y(8, R14)
	GATHER_ROWPTR_Y(12, DX)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ   AX, AX
	MOVQ   R11, CX

l2gy_chunk16:
	CMPQ CX, $2
	JB   l2gy_chunk8
	VMOVUPS     0(SI)(AX*1), Y4
	VSUBPS      0(R12)(AX*1), Y4, Y5
	VSUBPS      0(R13)(AX*1), Y4, Y6
	VSUBPS      0(R14)(AX*1), Y4, Y7
	VSUBPS      0(DX)(AX*1), Y4, Y13
	VFMADD231PS Y5, Y5, Y0
	VFMADD231PS Y6, Y6, Y1
	VFMADD231PS Y7, Y7, Y2
	VFMADD231PS Y13, Y13, Y3
	VMOVUPS     32(SI)(AX*1), Y12
	VSUBPS      32(R12)(AX*1), Y12, Y5
	VSUBPS      32(R13)(AX*1), Y12, Y6
	VSUBPS      32(R14)(AX*1), Y12, Y7
	VSUBPS      32(DX)(AX*1), Y12, Y13
	VFMADD231PS Y5, Y5, Y8
	VFMADD231PS Y6, Y6, Y9
	VFMADD231PS Y7, Y7, Y10
	VFMADD231PS Y13, Y13, Y11
	ADDQ $64, AX
	SUBQ $2, CX
	JMP  l2gy_chunk16

l2gy_chunk8:
	TESTQ CX, CX
	JZ    l2gy_tail4
	VMOVUPS     (SI)(AX*1), Y4
	VSUBPS      (R12)(AX*1), Y4, Y5
	VSUBPS      (R13)(AX*1), Y4, Y6
	VSUBPS      (R14)(AX*1), Y4, Y7
	VSUBPS      (DX)(AX*1), Y4, Y13
	VFMADD231PS Y5, Y5, Y0
	VFMADD231PS Y6, Y6, Y1
	VFMADD231PS Y7, Y7, Y2
	VFMADD231PS Y13, Y13, Y3
	ADDQ  $32, AX

l2gy_tail4:
	TESTQ R15, R15
	JZ    l2gy_red4
	VMASKMOVPS  (SI)(AX*1), Y15, Y12
	VMASKMOVPS  (R12)(AX*1), Y15, Y5
	VMASKMOVPS  (R13)(AX*1), Y15, Y6
	VMASKMOVPS  (R14)(AX*1), Y15, Y7
	VMASKMOVPS  (DX)(AX*1), Y15, Y13
	VSUBPS      Y5, Y12, Y5
	VSUBPS      Y6, Y12, Y6
	VSUBPS      Y7, Y12, Y7
	VSUBPS      Y13, Y12, Y13
	VFMADD231PS Y5, Y5, Y8
	VFMADD231PS Y6, Y6, Y9
	VFMADD231PS Y7, Y7, Y10
	VFMADD231PS Y13, Y13, Y11

l2gy_red4:
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y1, Y1
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y3, Y3
	GATHER_RED4_Y
	ADDQ $16, DI
	ADDQ $16, R8
	SUBQ $4, R9
	JMP  l2gy_rows4

l2gy_rows1:
	TESTQ  R9, R9
	JZ     l2gy_done
	GATHER_ROWPTR_Y(0, R12)
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ   AX, AX
	MOVQ   R11, CX

l2gy_chunk1:
	TESTQ CX, CX
	JZ    l2gy_tail1
	VMOVUPS     (SI)(AX*1), Y4
	VSUBPS      (R12)(AX*1), Y4, Y4
	VFMADD231PS Y4, Y4, Y0
	ADDQ  $32, AX
	DECQ  CX
	JMP   l2gy_chunk1

l2gy_tail1:
	TESTQ R15, R15
	JZ    l2gy_red1
	VMASKMOVPS  (SI)(AX*1), Y15, Y4
	VMASKMOVPS  (R12)(AX*1), Y15, Y5
	VSUBPS      Y5, Y4, Y4
	VFMADD231PS Y4, Y4, Y1

l2gy_red1:
	VADDPS Y1, Y0, Y0
	REDUCE_Y(Y0, X0, X1)
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	ADDQ   $4, R8
	DECQ   R9
	JMP    l2gy_rows1

l2gy_done:
	VZEROUPPER
	RET
