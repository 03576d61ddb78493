//go:build amd64 && gc && !noasm && !purego

#include "textflag.h"

// func prefetchRowsU32(x []uint32, ids []uint32, stride, bytes int)
// Registers: BX x, R8 ids cursor, R9 ids left, R10 stride in bytes,
// R11 rows in x, DX bytes, AX row address, CX line offset.
TEXT ·prefetchRowsU32(SB), NOSPLIT, $0-64
	MOVQ x_base+0(FP), BX
	MOVQ ids_base+24(FP), R8
	MOVQ ids_len+32(FP), R9
	MOVQ stride+48(FP), R10
	// R11 = len(x) / stride (rows inside x); stride ≥ 1.
	MOVQ x_len+8(FP), AX
	XORQ DX, DX
	DIVQ R10
	MOVQ AX, R11
	MOVQ bytes+56(FP), DX
	SHLQ $2, R10
	TESTQ R9, R9
	JZ    done

row:
	MOVL  (R8), AX
	CMPQ  AX, R11
	JAE   next
	IMULQ R10, AX
	ADDQ  BX, AX
	XORQ  CX, CX

line:
	PREFETCHT0 (AX)(CX*1)
	ADDQ       $64, CX
	CMPQ       CX, DX
	JB         line
	PREFETCHT0 -1(AX)(DX*1)

next:
	ADDQ $4, R8
	DECQ R9
	JNZ  row

done:
	RET
