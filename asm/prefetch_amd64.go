//go:build amd64 && gc && !noasm && !purego

package asm

// prefetchRowsU32 prefetches bytes bytes (≥ 1) from &x[ids[i]*stride] for
// each i whose row lies inside x (see prefetch_amd64.s).
//
//go:noescape
func prefetchRowsU32(x []uint32, ids []uint32, stride, bytes int)
