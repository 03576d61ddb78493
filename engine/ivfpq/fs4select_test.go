package ivfpq

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFS4SelectMatchesScan: fs4Select leaves the heap exactly as offering
// every vector's distance and comparing it with h.worst() does (the
// obvious scan), over heaps of several k, sums with many ties and the
// whole uint16 range, scales that map many sums to one distance, list
// terms of both signs, and a visibility filter.
func TestFS4SelectMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 23))
	for trial := 0; trial < 400; trial++ {
		k := []int{1, 3, 10, 100}[trial%4]
		n := 1 + rng.IntN(700)
		span := []int{4, 300, 65536}[trial%3]
		acc := make([]uint16, n)
		ids := make([]uint32, n)
		for i := range acc {
			acc[i] = uint16(rng.IntN(span))
			ids[i] = uint32(rng.IntN(1 << 20))
		}
		f := fs4Dist{inv: []float32{1e-3, 0.37, 3, 1e-7}[trial%4], bias: float32(rng.NormFloat64() * 10), cterm: float32(rng.NormFloat64())}
		visible := func(id uint32) bool { return id%7 != 3 }
		if trial%5 == 0 {
			visible = func(uint32) bool { return true }
		}
		want, got := &topk{k: k}, &topk{k: k}
		// Both heaps first receive the same earlier chunk, so the chunk
		// under test starts with a full heap in some trials.
		pre := rng.IntN(2 * k)
		for j := 0; j < pre; j++ {
			d, id := f.of(uint16(rng.IntN(span))), uint32(1<<21+j)
			want.push(d, id)
			got.push(d, id)
		}
		for i, a := range acc {
			dv := f.of(a)
			if want.full() && dv >= want.worst() {
				continue
			}
			if id := ids[i]; visible(id) {
				want.push(dv, id)
			}
		}
		fs4Select(got, acc, ids, f, visible)
		if !slices.Equal(got.e, want.e) {
			t.Fatalf("trial %d (k=%d n=%d span=%d %+v): heaps differ:\n got %v\nwant %v", trial, k, n, span, f, got.e, want.e)
		}
	}
}

// TestFS4DistBelow: below(w) is the smallest sum whose distance is not
// under w, checked against a linear search over every sum.
func TestFS4DistBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 60; trial++ {
		f := fs4Dist{inv: []float32{1e-3, 0.37, 3, 1e-7, 1}[trial%5], bias: float32(rng.NormFloat64() * 100), cterm: float32(rng.NormFloat64())}
		ws := []float32{f.of(0), f.of(1), f.of(65535), f.of(65535) + 1, f.of(0) - 1, f.of(uint16(rng.IntN(65536)))}
		for _, w := range ws {
			want := 65536
			for a := 0; a <= 0xFFFF; a++ {
				if f.of(uint16(a)) >= w {
					want = a
					break
				}
			}
			if got := f.below(w); got != want {
				t.Fatalf("%+v w=%v: below %d, want %d", f, w, got, want)
			}
		}
	}
}

// swapHeap is the textbook binary max-heap with swaps, the reference for
// topk's hole-moving push: the same entries in the same slots after every
// push.
type swapHeap struct {
	k int
	e []topkEntry
}

func (h *swapHeap) push(d float32, id uint32) {
	if len(h.e) < h.k {
		h.e = append(h.e, topkEntry{d, id})
		for i := len(h.e) - 1; i > 0; {
			p := (i - 1) / 2
			if h.e[p].d >= h.e[i].d {
				break
			}
			h.e[p], h.e[i] = h.e[i], h.e[p]
			i = p
		}
		return
	}
	if d >= h.e[0].d {
		return
	}
	h.e[0] = topkEntry{d, id}
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h.e) {
			return
		}
		if r := c + 1; r < len(h.e) && h.e[r].d > h.e[c].d {
			c = r
		}
		if h.e[c].d <= h.e[i].d {
			return
		}
		h.e[c], h.e[i] = h.e[i], h.e[c]
		i = c
	}
}

func TestTopkMatchesSwapHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 9))
	for trial := 0; trial < 300; trial++ {
		k := 1 + rng.IntN(130)
		got, want := &topk{}, &swapHeap{k: k}
		got.reset(k)
		span := []int{3, 50, 1 << 30}[trial%3]
		for j := 0; j < 2000; j++ {
			d, id := float32(rng.IntN(span)), uint32(j)
			got.push(d, id)
			want.push(d, id)
			if !slices.Equal(got.e, want.e) {
				t.Fatalf("trial %d k=%d push %d: heaps differ", trial, k, j)
			}
		}
	}
}

// TestInsertBest: keeping candidates with insertBest gives the first k of
// all of them sorted by (distance, id), for every k, with many ties.
func TestInsertBest(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 8))
	for trial := 0; trial < 300; trial++ {
		n, k := rng.IntN(150), 1+rng.IntN(40)
		all := make([]Result, n)
		for i, id := range rng.Perm(n) {
			all[i] = Result{ID: uint32(id), Distance: float32(rng.IntN(1 + trial%20))}
		}
		var best []Result
		for _, r := range all {
			best = insertBest(best, k, r)
		}
		want := slices.Clone(all)
		sortResults(want)
		want = want[:min(k, n)]
		if !slices.Equal(best, want) {
			t.Fatalf("trial %d n=%d k=%d: got %v, want %v", trial, n, k, best, want)
		}
	}
}
