package hnsw

import (
	"sync/atomic"

	"github.com/stratasearch/strata/asm"
)

// linearPool is the layer-0 search state of the unfiltered search path:
// the best ef nodes found so far, sorted by ascending distance, each
// marked expanded or not (the "candidate pool" of NSG, Fu et al. 2019,
// Alg. 1). It replaces SEARCH-LAYER's two heaps (candidates C and
// results W, paper Alg. 2) when every reachable node is acceptable:
//
//   - W is a[:n]; the nearest unexpanded element of C that could still
//     pass the stop test (c.d ≤ furthest of W) is the first unexpanded
//     entry of a[:n], at index cur or later.
//   - A node that falls out of W when a closer one enters is dropped: in
//     Alg. 2 it would stay in C with a distance above W's furthest and
//     never be expanded, because C pops nearest first and the walk stops
//     at the first candidate beyond W.
//
// So the walk expands the same nodes in the same order and returns the
// same W as searchLayer (up to ties in distance), at the cost of a
// binary search and a short memmove per insertion instead of a push on
// each of two heaps, and no drain-and-sort at the end.
//
// Ids carry the expanded flag in their top bit, so the pool is used only
// while every id is below 1<<31 (Search falls back to searchLayer above).
type linearPool struct {
	a   []cand
	n   int // entries in use (≤ ef = len(a))
	cur int // every entry before cur is expanded
}

const poolExpanded = 1 << 31

// reset empties the pool and sizes it for ef entries.
func (p *linearPool) reset(ef int) {
	if cap(p.a) < ef {
		p.a = make([]cand, ef)
	}
	p.a = p.a[:ef]
	p.n, p.cur = 0, 0
}

// full reports whether the pool holds ef entries.
func (p *linearPool) full() bool { return p.n == len(p.a) }

// worst is the distance of the furthest entry; the pool must be non-empty.
func (p *linearPool) worst() float32 { return p.a[p.n-1].d }

// insert adds (d, id) in order, dropping the furthest entry when full.
// The caller has checked !full() || d < worst(). Among equal distances
// the new entry goes last. It shifts the entries beyond d up by one as it
// scans down from the end (an insertion-sort step): new entries mostly
// land near the end, and the scan ends with a single unpredictable branch
// where a binary search takes log₂(ef) of them and a memmove call besides.
// Pools of more than poolScanMax entries use insertSearch instead (see
// add).
func (p *linearPool) insert(d float32, id uint32) {
	a := p.a
	i := p.n
	if i == len(a) {
		i-- // the furthest entry drops out
	} else {
		p.n++
	}
	for i > 0 && a[i-1].d > d {
		a[i] = a[i-1]
		i--
	}
	a[i] = cand{d, id}
	if i < p.cur {
		p.cur = i
	}
}

// poolScanMax: above this many entries insertSearch binary-searches and
// moves the tail with one copy, as the expected shift grows with ef.
// Alternating GloVe batches against the heap walk (20k, M=32): with the
// threshold at 64, ef = 128/256/512 ran 1.13/1.11/1.11× faster than the
// heap walk; at 160, 1.21/1.17/1.16×; scanning only, ef=512 gained
// nothing.
const poolScanMax = 160

// add is insert or insertSearch by pool size (the search loop inlines
// the same choice).
func (p *linearPool) add(d float32, id uint32) {
	if p.n > poolScanMax {
		p.insertSearch(d, id)
	} else {
		p.insert(d, id)
	}
}

// insertSearch is insert by binary search and memmove.
func (p *linearPool) insertSearch(d float32, id uint32) {
	a := p.a
	lo, hi := 0, p.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m].d <= d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := p.n
	if end == len(a) {
		end-- // the furthest entry drops out
	} else {
		p.n++
	}
	copy(a[lo+1:end+1], a[lo:end])
	a[lo] = cand{d, id}
	if lo < p.cur {
		p.cur = lo
	}
}

// next returns the nearest unexpanded entry and marks it expanded;
// ok is false when every entry is expanded (the walk's end).
func (p *linearPool) next() (id uint32, ok bool) {
	for p.cur < p.n && p.a[p.cur].id&poolExpanded != 0 {
		p.cur++
	}
	if p.cur >= p.n {
		return 0, false
	}
	e := &p.a[p.cur]
	id = e.id
	e.id |= poolExpanded
	p.cur++
	return id, true
}

// peek returns the id of the nearest unexpanded entry, if any (for
// prefetching its adjacency list).
func (p *linearPool) peek() (uint32, bool) {
	for i := p.cur; i < p.n; i++ {
		if id := p.a[i].id; id&poolExpanded == 0 {
			return id, true
		}
	}
	return 0, false
}

// results returns W, nearest first, with the flags cleared. It aliases
// the pool.
func (p *linearPool) results() []cand {
	w := p.a[:p.n]
	for i := range w {
		w[i].id &^= poolExpanded
	}
	return w
}

// searchLayer0Pool is searchLayer at layer 0 with no filter, no skipped
// id and no tombstone (the caller checks them): the same walk on a
// linearPool, scoring SQ8 codes when quant. It returns W, nearest first
// (aliasing ctx.pool). Caller holds mu.RLock.
func (ix *Index) searchLayer0Pool(ctx *searchCtx, q []float32, ep cand, ef int, quant bool) []cand {
	ctx.vis.next(len(ix.levels))
	p := &ctx.pool
	p.reset(ef)
	ctx.vis.visit(ep.id)
	p.add(ep.d, ep.id)
	l2 := ix.metric == L2
	for {
		c, ok := p.next()
		if !ok {
			break
		}
		b := int(c) * ix.stride0
		l := ix.level0[b : b+ix.stride0 : b+ix.stride0]
		n := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
		nbs := ctx.nbIDs[:0]
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&l[i])
			if !ctx.vis.visit(nb) {
				nbs = append(nbs, nb)
			}
		}
		ctx.nbIDs = nbs
		if ctx.cancelled(len(nbs)) {
			break
		}
		// Start loading the adjacency list of the node that is nearest
		// unexpanded now: unless a neighbour scored below beats it, it
		// is expanded next, and its list arrives while the vectors are
		// scored. (Prefetching after the scoring instead, when the next
		// node is certain, left the list load a cache miss: 14% of
		// search time in BenchmarkSearchGloVe ef=32, against 3%; a
		// second prefetch after scoring, when a new neighbour became the
		// next node, made no measurable difference.)
		if nx, ok := p.peek(); ok {
			ctx.pf = append(ctx.pf[:0], nx)
			asm.PrefetchRowsU32(ix.level0, ctx.pf, ix.stride0)
		}
		if len(nbs) > 0 {
			if cap(ctx.dists) < len(nbs) {
				ctx.dists = make([]float32, len(nbs), 2*len(nbs))
			}
			ds := ctx.dists[:len(nbs)]
			ip := false
			switch {
			case quant:
				// SQ8 codes are scored one row at a time; touching the
				// next row first starts its load (as searchLayer does).
				for j, nb := range nbs {
					if j+1 < len(nbs) {
						ctx.sink += ix.touch(nbs[j+1], true)
					}
					ds[j] = ix.distQ(q, nb, true)
				}
			case l2:
				asm.L2SqGather(q, ix.vecs, nbs, ds)
			default:
				asm.DotGather(q, ix.vecs, nbs, ds)
				ip = true
			}
			for j, nb := range nbs {
				d := ds[j]
				if ip {
					d = 1 - d
				}
				if p.full() && d >= p.worst() {
					continue
				}
				if p.n > poolScanMax {
					p.insertSearch(d, nb)
				} else {
					p.insert(d, nb)
				}
			}
		}
	}
	return p.results()
}
