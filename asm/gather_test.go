package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestGather checks DotGather / L2SqGather against refDot / refL2 on the
// selected rows at every level: every d up to ktMaxLen (masked tails, the
// 64- and 16-float blocks), 1..40 ids with repeats and the last row, and
// an output guard band.
func TestGather(t *testing.T) {
	counts := []int{0, 1, 2, 3, 7, 16, 40}
	ktLevels(t, func(l Level) {
		r := rand.New(rand.NewPCG(11, uint64(l)))
		step := 1
		if testing.Short() {
			step = 3
		}
		for d := 0; d <= ktMaxLen(t); d += step {
			nrows := 1 + r.IntN(50)
			off := d % 4
			q := ktRandF32(r, d, off)
			x := ktRandF32(r, nrows*d+3, (off+1)%4) // 3 spare floats: never a row
			for _, n := range counts {
				ids := make([]uint32, n)
				for i := range ids {
					ids[i] = uint32(r.IntN(nrows))
				}
				if n > 1 {
					ids[n-1] = uint32(nrows - 1)
					ids[0] = ids[n-1] // repeated id
				}
				what := fmt.Sprintf("level %v d=%d rows=%d n=%d", l, d, nrows, n)
				out, all := ktGuarded(n)
				DotGather(q, x, ids, out)
				ktCheckGuard(t, all, n, what+" DotGather")
				for i, id := range ids {
					row := x[int(id)*d : int(id)*d+d]
					if want, tol := refDot(q, row); !ktClose(out[i], want, tol) {
						t.Fatalf("%s: DotGather[%d] (row %d) = %v, want %v", what, i, id, out[i], want)
					}
				}
				out, all = ktGuarded(n)
				L2SqGather(q, x, ids, out)
				ktCheckGuard(t, all, n, what+" L2SqGather")
				for i, id := range ids {
					row := x[int(id)*d : int(id)*d+d]
					if want, tol := refL2(q, row); !ktClose(out[i], want, tol) {
						t.Fatalf("%s: L2SqGather[%d] (row %d) = %v, want %v", what, i, id, out[i], want)
					}
				}
			}
		}
	})
}

// TestGatherBounds: an id past the last full row, or a short out, panics
// (a short out before any kernel runs; a bad id before its row is read —
// the AVX-512 kernels check ids themselves, see TestGatherFencedEdges).
func TestGatherBounds(t *testing.T) {
	q := make([]float32, 8)
	x := make([]float32, 3*8+7) // 3 full rows
	out := make([]float32, 2)
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s: no panic", what)
			}
		}()
		f()
	}
	mustPanic("DotGather row 3", func() { DotGather(q, x, []uint32{0, 3}, out) })
	mustPanic("L2SqGather row 3", func() { L2SqGather(q, x, []uint32{3}, out) })
	mustPanic("DotGather short out", func() { DotGather(q, x, []uint32{0, 1, 2}, out) })
	DotGather(q, x, []uint32{2, 0}, out) // in range: no panic
	DotGather(q, x, nil, nil)
}

// BenchmarkDotGather: 32 scattered rows of a 20k×d matrix (larger than
// L2, as in an HNSW walk) per op, against one Dot call per row.
func BenchmarkDotGather(b *testing.B) {
	for _, d := range []int{100, 512} {
		r := rand.New(rand.NewPCG(5, uint64(d)))
		const n, m = 20000, 32
		x := ktRandF32(r, n*d, 0)
		q := ktRandF32(r, d, 0)
		ids := make([]uint32, 1024*m)
		for i := range ids {
			ids[i] = uint32(r.IntN(n))
		}
		out := make([]float32, m)
		benchLevels(b, fmt.Sprintf("dim=%d/rows=%d/mode=gather", d, m), func(b *testing.B) {
			b.SetBytes(int64(4 * d * m))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				j := (i % 1024) * m
				DotGather(q, x, ids[j:j+m], out)
			}
		})
		benchLevels(b, fmt.Sprintf("dim=%d/rows=%d/mode=loop", d, m), func(b *testing.B) {
			b.SetBytes(int64(4 * d * m))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				j := (i % 1024) * m
				for k, id := range ids[j : j+m] {
					out[k] = Dot(q, x[int(id)*d:int(id)*d+d])
				}
			}
		})
	}
}

// TestPrefetchRowsU32: a hint only — it must leave memory unchanged and
// never fault, including ids past the end, tiny or huge strides and an
// empty x.
func TestPrefetchRowsU32(t *testing.T) {
	x := make([]uint32, 65*10+3)
	for i := range x {
		x[i] = uint32(i * 7)
	}
	ids := []uint32{0, 9, 10, 11, 1 << 31, ^uint32(0), 3}
	ktLevels(t, func(l Level) {
		for _, stride := range []int{-1, 0, 1, 3, 16, 65, 200, len(x), len(x) + 1} {
			PrefetchRowsU32(x, ids, stride)
			PrefetchRowsU32(nil, ids, stride)
			PrefetchRowsU32(x, nil, stride)
		}
	})
	for i := range x {
		if x[i] != uint32(i*7) {
			t.Fatalf("x[%d] changed", i)
		}
	}
}
