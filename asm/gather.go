package asm

import "fmt"

// DotGather computes out[i] = Dot(q, x[ids[i]*d : ids[i]*d+d]) for
// i < len(ids), where d = len(q): the inner products of q with the rows of
// the row-major matrix x (n×d, n = len(x)/d) named by ids, in ids order.
// It is the graph-search form of DotBatch (HNSW scores the unvisited
// neighbours of a node, which are scattered rows): one call per node
// instead of one per neighbour. On AVX-512 and AVX2 the kernel scores
// four rows at a time (each q chunk loaded once, one combined reduction)
// and prefetches the next four rows while it scores them (hnswlib's
// _mm_prefetch, Malkov & Yashunin 2018 reference code). len(out) ≥ len(ids). It panics if an id is ≥ n or
// out is short, like an out-of-range slice index; no memory outside x is
// read either way. The AVX-512 kernel checks each id as it reaches it (no
// separate pass over ids), so when it panics for a bad id, out may
// already hold the distances of some rows before it.
func DotGather(q, x []float32, ids []uint32, out []float32) {
	if len(ids) == 0 {
		return
	}
	out = out[:len(ids)]
	if f := k.dotGatherChk; f != nil && gatherChkOK(len(q), len(x)) {
		if f(q, x, ids, out) != 0 {
			checkGather(len(q), len(x), ids) // panics with the bad id
		}
		return
	}
	checkGather(len(q), len(x), ids)
	k.dotGather(q, x, ids, out)
}

// L2SqGather is DotGather for the squared Euclidean distance:
// out[i] = L2Sq(q, x[ids[i]*d : ids[i]*d+d]).
func L2SqGather(q, x []float32, ids []uint32, out []float32) {
	if len(ids) == 0 {
		return
	}
	out = out[:len(ids)]
	if f := k.l2SqGatherChk; f != nil && gatherChkOK(len(q), len(x)) {
		if f(q, x, ids, out) != 0 {
			checkGather(len(q), len(x), ids) // panics with the bad id
		}
		return
	}
	checkGather(len(q), len(x), ids)
	k.l2SqGather(q, x, ids, out)
}

// gatherChkMaxD bounds d for the self-checking kernels: a row's byte
// offset id·4d must fit in 62 bits.
const gatherChkMaxD = 1 << 28

// gatherChkOK reports whether the self-checking gather kernels may run
// for d = len(q), nx = len(x): at least one full row and d below
// gatherChkMaxD (the rest go through checkGather).
func gatherChkOK(d, nx int) bool { return d >= 1 && d <= nx && d < gatherChkMaxD }

// checkGather panics unless every row ids[i] lies inside x.
func checkGather(d, nx int, ids []uint32) {
	if d == 0 {
		return
	}
	n := uint64(nx / d)
	var mx uint32
	for _, id := range ids {
		mx = max(mx, id)
	}
	if uint64(mx) >= n {
		panic(fmt.Sprintf("asm: gather row %d out of range [0:%d]", mx, n))
	}
}

func dotGatherRef(q, x []float32, ids []uint32, out []float32) {
	d := len(q)
	for i, id := range ids {
		b := int(id) * d
		out[i] = dotRef(q, x[b:b+d])
	}
}

func l2SqGatherRef(q, x []float32, ids []uint32, out []float32) {
	d := len(q)
	for i, id := range ids {
		b := int(id) * d
		out[i] = l2SqRef(q, x[b:b+d])
	}
}

// gatherVia builds a gather kernel from a single-pair kernel (levels
// without a dedicated gather kernel).
func gatherVia(f func(a, b []float32) float32) func(q, x []float32, ids []uint32, out []float32) {
	return func(q, x []float32, ids []uint32, out []float32) {
		d := len(q)
		for i, id := range ids {
			b := int(id) * d
			out[i] = f(q, x[b:b+d])
		}
	}
}
