package asm

// PrefetchRowsU32 hints the CPU to bring into cache the first
// min(stride, 64) uint32 of every row ids[i] of the row-major matrix x
// (row r = x[r*stride : (r+1)*stride]). It changes no memory and has no
// result: on amd64 it issues PREFETCHT0 per cache line, elsewhere (and
// with -tags noasm) it does nothing. A prefetch never faults, but rows
// outside x are skipped anyway. HNSW uses it for the adjacency lists of
// the candidates it will expand next (hnswlib prefetches the same lists
// with _mm_prefetch). stride ≤ 0 does nothing.
func PrefetchRowsU32(x []uint32, ids []uint32, stride int) {
	if stride <= 0 || len(ids) == 0 || len(x) < stride {
		return
	}
	prefetchRowsU32(x, ids, stride, min(stride, 64)*4)
}
