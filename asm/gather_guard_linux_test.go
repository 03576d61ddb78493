//go:build linux

package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// gatherFenced returns n float32 that end exactly where an inaccessible
// page begins (fs4Fenced), so a gather kernel reading past x faults.
func gatherFenced(t *testing.T, n int) []float32 {
	t.Helper()
	b := fs4Fenced(t, 4*n+4)[4:] // 4-byte aligned, still ending at the fence
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

// TestGatherFencedEdges: at every level, the last row of x (id = n−1) is
// scored correctly wherever it falls in ids (first or later row of a
// four-row group, prefetched next group, single-row tail) with x ending
// at a guard page (for the AVX-512 kernels; see below), and id = n — with or without a partial row after the
// last full one — panics at every such position without reading past x.
func TestGatherFencedEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	ktLevels(t, func(l Level) {
		for _, d := range []int{1, 15, 16, 17, 100, 128} {
			for _, spare := range []int{0, 1, d - 1} {
				if spare < 0 || (spare > 0 && spare >= d) {
					continue
				}
				const nrows = 5
				// Only the self-checking AVX-512 kernels are run against the
				// fence. The other levels score rows with the single-pair
				// kernels, whose AVX2 tail is a VMASKMOVPS: it never faults on
				// masked-out lanes on hardware, but qemu-user (the CI's AVX2
				// run) reads the whole vector and faults at the fence.
				var x []float32
				if k.dotGatherChk != nil {
					x = gatherFenced(t, nrows*d+spare)
				} else {
					x = make([]float32, nrows*d+spare)
				}
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				q := ktRandF32(r, d, 0)
				for n := 1; n <= 10; n++ {
					for pos := 0; pos < n; pos++ {
						what := fmt.Sprintf("level %v d=%d spare=%d n=%d pos=%d", l, d, spare, n, pos)
						ids := make([]uint32, n)
						for i := range ids {
							ids[i] = uint32(r.IntN(nrows))
						}
						ids[pos] = nrows - 1
						out := make([]float32, n)
						DotGather(q, x, ids, out)
						for i, id := range ids {
							row := x[int(id)*d : int(id)*d+d]
							if want, tol := refDot(q, row); !ktClose(out[i], want, tol) {
								t.Fatalf("%s: DotGather[%d] (row %d) = %v, want %v", what, i, id, out[i], want)
							}
						}
						L2SqGather(q, x, ids, out)
						for i, id := range ids {
							row := x[int(id)*d : int(id)*d+d]
							if want, tol := refL2(q, row); !ktClose(out[i], want, tol) {
								t.Fatalf("%s: L2SqGather[%d] (row %d) = %v, want %v", what, i, id, out[i], want)
							}
						}
						for _, bad := range []uint32{nrows, nrows + 1, 1 << 31, ^uint32(0)} {
							ids[pos] = bad
							gatherMustPanic(t, what+fmt.Sprintf(" DotGather id=%d", bad), func() { DotGather(q, x, ids, out) })
							gatherMustPanic(t, what+fmt.Sprintf(" L2SqGather id=%d", bad), func() { L2SqGather(q, x, ids, out) })
						}
					}
				}
			}
		}
	})
}

func gatherMustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s: no panic", what)
		}
	}()
	f()
}
