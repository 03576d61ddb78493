//go:build !(amd64 && gc && !noasm && !purego)

package asm

func prefetchRowsU32(x []uint32, ids []uint32, stride, bytes int) {}
