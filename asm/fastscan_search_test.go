package asm

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"unsafe"
)

// Flat 4-bit PQ search (kernel + top-k), the Go side of the FAISS
// IndexPQFastScan comparison in bench/peers/faiss_fastscan.py. Per query it
// does what FAISS does: float LUT from the query and the codebooks (L2),
// QuantizeLUT4, the fast-scan kernel (queries batched by 4 so the codes
// stream once per 4 queries), and a top-k over the uint16 sums with a
// threshold test.

// fs4EnvInt reads a positive integer from the environment, else def.
func fs4EnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// fs4TopK keeps the k smallest (acc, id) pairs in a max-heap.
type fs4TopK struct {
	acc []uint16
	id  []int32
}

func (h *fs4TopK) Len() int           { return len(h.acc) }
func (h *fs4TopK) Less(i, j int) bool { return h.acc[i] > h.acc[j] }
func (h *fs4TopK) Swap(i, j int) {
	h.acc[i], h.acc[j] = h.acc[j], h.acc[i]
	h.id[i], h.id[j] = h.id[j], h.id[i]
}
func (h *fs4TopK) Push(x any) { panic("unused") }
func (h *fs4TopK) Pop() any   { panic("unused") }

// scan offers acc[0:n] (ids base..base+n-1) to the heap. small15: every
// value of acc is below 0x8000.
func (h *fs4TopK) scan(acc []uint16, base, k int, small15 bool) {
	i := 0
	for ; len(h.acc) < k && i < len(acc); i++ {
		h.acc = append(h.acc, acc[i])
		h.id = append(h.id, int32(base+i))
		if len(h.acc) == k {
			heap.Init(h)
		}
	}
	if len(h.acc) < k {
		return
	}
	t := h.acc[0]
	// Fast path, 4 sums per uint64 (SWAR), valid while every sum and t are
	// below 0x8000 (small15 says the LUTs guarantee it): (x | H) − t keeps a
	// lane's top bit iff x ≥ t, and no borrow crosses lanes.
	if small15 {
		const hi = 0x8000800080008000
		for ; i%4 != 0 && i < len(acc); i++ {
			if a := acc[i]; a < t {
				h.acc[0], h.id[0] = a, int32(base+i)
				heap.Fix(h, 0)
				t = h.acc[0]
			}
		}
		for ; i+4 <= len(acc); i += 4 {
			x := *(*uint64)(unsafe.Pointer(&acc[i]))
			if ^((x|hi)-uint64(t)*0x0001000100010001)&hi == 0 {
				continue
			}
			for j := i; j < i+4; j++ {
				if a := acc[j]; a < t {
					h.acc[0], h.id[0] = a, int32(base+j)
					heap.Fix(h, 0)
					t = h.acc[0]
				}
			}
		}
	}
	for ; i < len(acc); i++ {
		if a := acc[i]; a < t {
			h.acc[0], h.id[0] = a, int32(base+i)
			heap.Fix(h, 0)
			t = h.acc[0]
		}
	}
}

// fs4Searcher holds a flat 4-bit PQ index: M codebooks of 16 centroids of
// dsub = d/M dimensions, and the packed codes of n vectors.
type fs4Searcher struct {
	n, d, m, dsub int
	cb            []float32 // M × 16 × dsub
	packed        []uint8
	nb            int
	acc           [4][]uint16
}

func newFS4Searcher(r *rand.Rand, n, d, m int) *fs4Searcher {
	s := &fs4Searcher{n: n, d: d, m: m, dsub: d / m, nb: FastScan4Blocks(n)}
	s.cb = make([]float32, m*16*s.dsub)
	for i := range s.cb {
		s.cb[i] = float32(r.NormFloat64())
	}
	codes := make([]uint8, n*m)
	for i := range codes {
		codes[i] = uint8(r.IntN(16))
	}
	s.packed = PackCodes4(codes, n, m)
	for i := range s.acc {
		s.acc[i] = make([]uint16, s.nb*32)
	}
	return s
}

// search writes the k nearest ids of each query (≤ 4) into ids[qi].
func (s *fs4Searcher) search(qs [][]float32, k int, ids [][]int32) {
	luts := make([][]uint8, len(qs))
	small := make([]bool, len(qs))
	scale := make([]float32, len(qs))
	bias := make([]float32, len(qs))
	flut := make([]float32, s.m*16)
	for qi, q := range qs {
		for j := 0; j < s.m; j++ {
			qj := q[j*s.dsub : (j+1)*s.dsub]
			for c := 0; c < 16; c++ {
				flut[j*16+c] = L2Sq(qj, s.cb[(j*16+c)*s.dsub:(j*16+c+1)*s.dsub])
			}
		}
		luts[qi], scale[qi], bias[qi] = QuantizeLUT4(flut, s.m)
		worst := 0
		for j := 0; j < len(luts[qi]); j += 16 {
			worst += int(slices.Max(luts[qi][j : j+16]))
		}
		small[qi] = worst < 0x8000
	}
	FastScan4(s.packed, s.nb, s.m, luts, s.acc[:len(qs)])
	for qi := range qs {
		h := &fs4TopK{acc: make([]uint16, 0, k), id: make([]int32, 0, k)}
		h.scan(s.acc[qi][:s.n], 0, k, small[qi])
		ids[qi] = append(ids[qi][:0], h.id...)
	}
}

// BenchmarkFastScan4Search: n, d, M from STRATA_FS_N (default 100000),
// STRATA_FS_D (128), STRATA_FS_M (64); k = 10; 16 queries per op. Reports
// queries/s, the figure bench/peers/faiss_fastscan.py divides by FAISS's.
func BenchmarkFastScan4Search(b *testing.B) {
	n := fs4EnvInt("STRATA_FS_N", 100000)
	d := fs4EnvInt("STRATA_FS_D", 128)
	m := fs4EnvInt("STRATA_FS_M", 64)
	if d%m != 0 {
		b.Skipf("d=%d not a multiple of M=%d", d, m)
	}
	const k, nq = 10, 16
	r := rand.New(rand.NewPCG(21, 22))
	s := newFS4Searcher(r, n, d, m)
	qs := make([][]float32, nq)
	for i := range qs {
		qs[i] = make([]float32, d)
		for j := range qs[i] {
			qs[i][j] = float32(r.NormFloat64())
		}
	}
	ids := make([][]int32, 4)
	for _, l := range SupportedLevels() {
		b.Run(fmt.Sprintf("n=%d/d=%d/M=%d/level=%v", n, d, m, l), func(b *testing.B) {
			restore, err := SetLevel(l)
			if err != nil {
				b.Fatal(err)
			}
			defer restore()
			b.SetBytes(int64(len(s.packed)) * nq / 4)
			for b.Loop() {
				for q0 := 0; q0 < nq; q0 += 4 {
					s.search(qs[q0:q0+4], k, ids)
				}
			}
			b.ReportMetric(float64(nq*b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

// TestFastScan4Search checks the benchmark's search against brute force
// over the same quantised distances: the top-k accumulated sums must equal
// the k smallest oracle sums.
func TestFastScan4Search(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	n, d, m, k := 1000, 32, 8, 10
	s := newFS4Searcher(r, n, d, m)
	q := make([]float32, d)
	for j := range q {
		q[j] = float32(r.NormFloat64())
	}
	ids := make([][]int32, 1)
	s.search([][]float32{q}, k, ids)
	// The SWAR and the scalar scans agree (ties may pick other ids, so
	// compare the multiset of sums).
	for _, small := range []bool{true, false} {
		h := &fs4TopK{}
		h.scan(s.acc[0][:n], 0, k, small)
		var got, want []uint16
		for _, id := range h.id {
			got = append(got, s.acc[0][id])
		}
		for _, id := range ids[0] {
			want = append(want, s.acc[0][id])
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("small15=%v: %v vs %v", small, got, want)
		}
	}
	if len(ids[0]) != k {
		t.Fatalf("got %d ids", len(ids[0]))
	}
	acc := s.acc[0][:n]
	// k-th smallest by counting: every returned acc must be ≤ every
	// non-returned acc.
	in := map[int32]bool{}
	var worst uint16
	for _, id := range ids[0] {
		in[id] = true
		worst = max(worst, acc[id])
	}
	for i, a := range acc {
		if !in[int32(i)] && a < worst {
			t.Fatalf("id %d (acc %d) beats returned worst %d", i, a, worst)
		}
	}
}
