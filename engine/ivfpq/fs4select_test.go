package ivfpq

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFS4SelectMatchesScan: fs4Select (a reservoir behind the
// IndexBelowU16 threshold) keeps the k smallest distances of the visible
// vectors, as offering every vector's distance and keeping the k smallest
// (the obvious scan) does: the same distances, each kept id a visible
// vector with its distance. Over several k, sums with many ties and the
// whole uint16 range, scales that map many sums to one distance, list
// terms of both signs, a visibility filter, and reservoirs that start
// part full or already shrunk.
func TestFS4SelectMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 23))
	for trial := 0; trial < 400; trial++ {
		k := []int{1, 3, 10, 100}[trial%4]
		n := 1 + rng.IntN(3000)
		span := []int{4, 300, 65536}[trial%3]
		acc := make([]uint16, n)
		ids := make([]uint32, n)
		for i := range acc {
			acc[i] = uint16(rng.IntN(span))
			ids[i] = uint32(i)
		}
		f := fs4Dist{inv: []float32{1e-3, 0.37, 3, 1e-7}[trial%4], bias: float32(rng.NormFloat64() * 10), cterm: float32(rng.NormFloat64())}
		visible := func(id uint32) bool { return id%7 != 3 }
		if trial%5 == 0 {
			visible = func(uint32) bool { return true }
		}
		var got reservoir
		got.reset(k, 1<<30)
		var all []topkEntry
		dist := map[uint32]float32{}
		// An earlier chunk first, so the chunk under test starts with a
		// part-full or already shrunk reservoir in some trials.
		for j := range rng.IntN(6 * k) {
			d, id := f.of(uint16(rng.IntN(span))), uint32(1<<21+j)
			all = append(all, topkEntry{d, id})
			dist[id] = d
			if d < got.thr {
				got.add(d, id)
			}
		}
		for i, a := range acc {
			if visible(ids[i]) {
				all = append(all, topkEntry{f.of(a), ids[i]})
				dist[ids[i]] = f.of(a)
			}
		}
		fs4Select(&got, acc, ids, f, visible)
		got.finish()
		byDist := func(a, b topkEntry) int { return cmp.Compare(a.d, b.d) }
		slices.SortStableFunc(all, byDist)
		want := all[:min(k, len(all))]
		kept := slices.Clone(got.e)
		slices.SortStableFunc(kept, byDist)
		if len(kept) != len(want) {
			t.Fatalf("trial %d (k=%d n=%d): kept %d, want %d", trial, k, n, len(kept), len(want))
		}
		for i := range kept {
			if kept[i].d != want[i].d {
				t.Fatalf("trial %d (k=%d n=%d span=%d %+v): distance %d is %v, want %v", trial, k, n, span, f, i, kept[i].d, want[i].d)
			}
			if d, ok := dist[kept[i].id]; !ok || d != kept[i].d {
				t.Fatalf("trial %d: kept id %d with distance %v, not a visible vector's", trial, kept[i].id, kept[i].d)
			}
		}
	}
}

// TestSelectSmallest: e[:k] holds the k smallest distances afterwards,
// against a sort, for every k of random lists with few and many distinct
// values (the pivot's ties), sorted and reversed inputs.
func TestSelectSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 300; trial++ {
		n := 2 + rng.IntN(500)
		e := make([]topkEntry, n)
		for i := range e {
			e[i] = topkEntry{float32(rng.IntN([]int{2, 10, 1 << 20}[trial%3])), uint32(i)}
		}
		switch trial % 5 {
		case 3:
			slices.SortFunc(e, func(a, b topkEntry) int { return cmp.Compare(a.d, b.d) })
		case 4:
			slices.SortFunc(e, func(a, b topkEntry) int { return cmp.Compare(b.d, a.d) })
		}
		ref := make([]float32, n)
		for i, x := range e {
			ref[i] = x.d
		}
		slices.Sort(ref)
		for _, k := range []int{1, n / 2, n - 1, 1 + rng.IntN(n-1)} {
			c := slices.Clone(e)
			selectSmallest(c, k)
			head := make([]float32, k)
			for i := range head {
				head[i] = c[i].d
			}
			slices.Sort(head)
			if !slices.Equal(head, ref[:k]) {
				t.Fatalf("trial %d n=%d k=%d: e[:k] is not the k smallest", trial, n, k)
			}
			seen := map[uint32]bool{}
			for _, x := range c {
				seen[x.id] = true
			}
			if len(seen) != n {
				t.Fatalf("trial %d: entries lost", trial)
			}
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

// TestFS4SelectSumsMatchesScan: fs4SelectSums keeps the k smallest sums
// of the visible vectors (the obvious scan: sort every visible sum),
// each kept id a visible vector with its sum, over several k, sums with
// many ties (span 4) and the whole uint16 range, chunks offered in
// pieces (a reservoir part full or already shrunk), and a filter.
func TestFS4SelectSumsMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 29))
	for trial := 0; trial < 400; trial++ {
		k := []int{1, 3, 10, 100}[trial%4]
		n := 1 + rng.IntN(4000)
		span := []int{4, 300, 65536, 1 << 12}[trial%4]
		acc := make([]uint16, n)
		ids := make([]uint32, n)
		for i := range acc {
			acc[i] = uint16(rng.IntN(span))
			if trial%7 == 0 {
				acc[i] = uint16(65535 - rng.IntN(span)) // near the top of the range
			}
			ids[i] = uint32(i)
		}
		var visible func(uint32) bool
		if trial%3 == 1 {
			visible = func(id uint32) bool { return id%5 != 2 }
		}
		var r sumReservoir
		r.reset(k, n)
		for off := 0; off < n; {
			c := min(n-off, 1+rng.IntN(300))
			fs4SelectSums(&r, acc[off:off+c], ids[off:off+c], visible)
			off += c
		}
		r.shrink()
		var want []uint16
		for i, a := range acc {
			if visible == nil || visible(ids[i]) {
				want = append(want, a)
			}
		}
		slices.Sort(want)
		want = want[:min(k, len(want))]
		got := make([]uint16, len(r.e))
		for i, x := range r.e {
			got[i] = x.a
			if acc[x.id] != x.a || (visible != nil && !visible(x.id)) {
				t.Fatalf("trial %d: kept id %d with sum %d, not a visible vector's", trial, x.id, x.a)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (k=%d n=%d span=%d): kept sums %v, want %v", trial, k, n, span, got, want)
		}
	}
}

// TestFloatKey: floatKey orders finite floats as < does (−0 just below
// +0), and keyFloat inverts it bit for bit; over random bit patterns,
// the extremes, subnormals and zeros.
func TestFloatKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	vals := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1, -1}
	for len(vals) < 5000 {
		if v := math.Float32frombits(rng.Uint32()); !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
			vals = append(vals, v)
		}
	}
	for i, a := range vals {
		if got := keyFloat(floatKey(a)); math.Float32bits(got) != math.Float32bits(a) {
			t.Fatalf("keyFloat(floatKey(%v)) = %v", a, got)
		}
		b := vals[(i*7919+1)%len(vals)]
		if a < b && !(floatKey(a) < floatKey(b)) || a > b && !(floatKey(a) > floatKey(b)) {
			t.Fatalf("order of %v, %v not kept: keys %d, %d", a, b, floatKey(a), floatKey(b))
		}
	}
}

// TestSearchHugeK: a k far above the index's size (up to math.MaxInt)
// returns every vector, best first, without sizing buffers by k; with
// and without residuals, with refine.
func TestSearchHugeK(t *testing.T) {
	const d = 8
	x := randVecs(5, 200, d, false)
	for _, res := range []Residual{ResidualOff, ResidualOn} {
		ix := buildIndex(t, Options{Dim: d, Metric: L2, Nlist: 4, M: 4, Nbits: 4, Residual: res, KMeansIters: 4, Seed: 1}, x)
		for _, k := range []int{199, 200, 201, 1 << 40, math.MaxInt} {
			got, err := ix.SearchContext(context.Background(), x[:d], k, SearchParams{Nprobe: 4})
			if err != nil || len(got) != min(k, 200) {
				t.Fatalf("residual %v k=%d: %d results, %v", res, k, len(got), err)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Distance < got[i-1].Distance {
					t.Fatalf("k=%d: results not sorted", k)
				}
			}
		}
	}
}

// TestReservoirLimit: min(4·k, n+1) without overflow.
func TestReservoirLimit(t *testing.T) {
	for _, c := range []struct{ k, n, want int }{{1, 0, 1}, {1, 3, 4}, {1, 4, 4}, {100, 1000, 400}, {100, 399, 400}, {100, 398, 399},
		{math.MaxInt, 10, 11}, {math.MaxInt / 3, math.MaxInt - 1, math.MaxInt}} {
		if got := reservoirLimit(c.k, c.n); got != c.want {
			t.Errorf("reservoirLimit(%d, %d) = %d, want %d", c.k, c.n, got, c.want)
		}
	}
}

// TestSelectProbes: the nprobe nearest lists by the sampled bound are the
// heap's over every distance (the reference): exactly, for distinct
// distances; the same distances where many tie. Over list counts around
// the sample's cut-offs, every nprobe from 1 to all lists, and skewed
// distances (a few near, most far) where the bound may miss.
func TestSelectProbes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var sc scratch
	for trial := 0; trial < 300; trial++ {
		n := []int{1, 64, 127, 128, 200, 1024, 4096}[trial%7]
		cd := make([]float32, n)
		ties := trial%3 == 0
		for i := range cd {
			switch {
			case ties:
				cd[i] = float32(rng.IntN(20))
			case trial%3 == 1:
				cd[i] = float32(rng.NormFloat64())
			default:
				cd[i] = float32(math.Exp(rng.NormFloat64() * 3)) // heavy tail
			}
		}
		for _, np := range []int{1, 2, 7, 48, n / 3, n - 1, n} {
			if np < 1 || np > n {
				continue
			}
			var ref topk
			ref.reset(np)
			for l, v := range cd {
				ref.push(v, uint32(l))
			}
			want := ref.sorted()
			got := selectProbes(cd, np, &sc)
			if len(got) != len(want) {
				t.Fatalf("n=%d nprobe=%d: %d lists, want %d", n, np, len(got), len(want))
			}
			for i := range got {
				if got[i].Distance != want[i].Distance || (!ties && got[i].ID != want[i].ID) {
					t.Fatalf("n=%d nprobe=%d ties=%v: probe %d is %+v, want %+v", n, np, ties, i, got[i], want[i])
				}
			}
		}
	}
}
