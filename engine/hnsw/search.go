package hnsw

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/cancel"
)

// searchCtx is per-goroutine scratch space, pooled so that a search in
// steady state allocates nothing.
type searchCtx struct {
	vis    visited
	cand   minHeap
	res    maxHeap
	w      []cand
	eps    []cand
	sel    []cand
	pruned []cand
	ext    []cand
	shrink []cand
	nb     []cand
	pool   linearPool
	nbIDs  []uint32
	dists  []float32
	pf     []uint32
	sink   float32
	q      []float32

	// done is the Done channel of the search's context (nil: never
	// cancelled, as for a build); tick counts the candidates scored since
	// the last look at it; stopped records that the search ended early
	// because done was closed.
	done    <-chan struct{}
	tick    uint32
	stopped bool
}

func (ix *Index) getCtx() *searchCtx { return ix.ctxPool.Get().(*searchCtx) }
func (ix *Index) putCtx(c *searchCtx) {
	c.done, c.tick, c.stopped = nil, 0, false
	ix.ctxPool.Put(c)
}

// cancelCheck is how many candidates (distance computations) a search
// scores between two looks at its context. A look is one non-blocking
// receive on the Done channel (none at all for context.Background, whose
// channel is nil), a few nanoseconds against the ~10 µs the candidates
// cost, so a live context costs nothing measurable (BenchmarkSearch),
// while a cancelled search stops within microseconds.
const cancelCheck = 256

// cancelled counts n more scored candidates and reports, once per
// cancelCheck of them, whether the search's context is done (recording it
// in stopped). It is false for a nil done: a test the compiler inlines,
// the rest is lookDone.
func (ctx *searchCtx) cancelled(n int) bool {
	return ctx.done != nil && ctx.lookDone(n)
}

func (ctx *searchCtx) lookDone(n int) bool {
	if ctx.tick += uint32(n); ctx.tick < cancelCheck {
		return false
	}
	ctx.tick = 0
	if cancel.Done(ctx.done) {
		ctx.stopped = true
		return true
	}
	return false
}

// sortedResults drains ctx.res into ctx.w in ascending order.
func (ctx *searchCtx) sortedResults() []cand {
	n := ctx.res.len()
	if cap(ctx.w) < n {
		ctx.w = make([]cand, n)
	}
	w := ctx.w[:n]
	for i := n - 1; i >= 0; i-- {
		w[i] = ctx.res.pop()
	}
	ctx.w = w
	return w
}

// searchLayer is paper Alg. 2 (SEARCH-LAYER) with an acceptance test: it
// walks every reachable node but keeps in the result heap W (ctx.res) only
// nodes that are live, allowed by allow (nil = all) and not skip. It stops
// when the nearest unexpanded candidate is further than the furthest of
// ef accepted results. Caller holds mu.RLock.
func (ix *Index) searchLayer(ctx *searchCtx, q []float32, eps []cand, ef, lc int, allow *roaring.Bitmap, skip uint32, quant bool) {
	ctx.vis.next(len(ix.levels))
	ctx.cand.reset()
	ctx.res.reset()
	for _, e := range eps {
		if ctx.vis.visit(e.id) {
			continue
		}
		ctx.cand.push(e)
		if ix.accept(e.id, allow, skip) {
			ctx.res.push(e)
			if ctx.res.len() > ef {
				ctx.res.pop()
			}
		}
	}
	for ctx.cand.len() > 0 {
		c := ctx.cand.pop()
		if ctx.res.len() >= ef && c.d > ctx.res.top().d {
			break
		}
		l := ix.links(c.id, lc)
		n := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
		// Gather the unvisited neighbours first, then score them: the
		// loads of the next vectors can start while one is scored.
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
		// Prefetch the adjacency list of the nearest unexpanded candidate
		// before scoring, as searchLayer0Pool does: it is usually the
		// next one expanded, and its list arrives during the scoring.
		pfID, pfOK := uint32(0), false
		if lc == 0 && ctx.cand.len() > 0 {
			pfID, pfOK = ctx.cand.top().id, true
			ctx.pf = append(ctx.pf[:0], pfID)
			asm.PrefetchRowsU32(ix.level0, ctx.pf, ix.stride0)
		}
		if !quant {
			// One gather call scores every new neighbour (the AVX-512
			// kernel scores four rows at a time and prefetches the next
			// four).
			ds := ix.distGather(ctx, q, nbs)
			for j, nb := range nbs {
				d := ds[j]
				full := ctx.res.len() >= ef
				if full && d >= ctx.res.top().d {
					continue
				}
				ctx.cand.push(cand{d, nb})
				if nb != skip && !ix.isDeleted(nb) && (allow == nil || allow.Contains(nb)) {
					if full {
						ctx.res.replaceTop(cand{d, nb})
					} else {
						ctx.res.push(cand{d, nb})
					}
				}
			}
			// The nearest unexpanded candidate is expanded next: start
			// loading its adjacency list now, as hnswlib does. Prefetching
			// the lists of every new candidate instead (most are never
			// expanded) competed with the vector loads: GloVe ef=16 ran
			// ~5% slower (BenchmarkSearchGloVe, alternating runs).
			if lc == 0 && ctx.cand.len() > 0 && (!pfOK || ctx.cand.top().id != pfID) {
				ctx.pf = append(ctx.pf[:0], ctx.cand.top().id)
				asm.PrefetchRowsU32(ix.level0, ctx.pf, ix.stride0)
			}
			continue
		}
		for j, nb := range nbs {
			if j+1 < len(nbs) {
				ctx.sink += ix.touch(nbs[j+1], quant)
			}
			d := ix.distQ(q, nb, quant)
			full := ctx.res.len() >= ef
			if full && d >= ctx.res.top().d {
				continue
			}
			ctx.cand.push(cand{d, nb})
			if ix.accept(nb, allow, skip) {
				if full {
					ctx.res.replaceTop(cand{d, nb})
				} else {
					ctx.res.push(cand{d, nb})
				}
			}
		}
	}
}

// distGather returns the metric distances from q to the float32 vectors
// of ids (same values as dist), in ctx.dists.
func (ix *Index) distGather(ctx *searchCtx, q []float32, ids []uint32) []float32 {
	if cap(ctx.dists) < len(ids) {
		ctx.dists = make([]float32, len(ids), 2*len(ids))
	}
	ds := ctx.dists[:len(ids)]
	if ix.metric == L2 {
		asm.L2SqGather(q, ix.vecs, ids, ds)
		return ds
	}
	asm.DotGather(q, ix.vecs, ids, ds)
	for i := range ds {
		ds[i] = 1 - ds[i]
	}
	return ds
}

// touch loads one element of node id's stored vector (software prefetch
// substitute: the CPU starts fetching its first cache lines early).
func (ix *Index) touch(id uint32, quant bool) float32 {
	if quant {
		return float32(ix.codes[int(id)*ix.dim])
	}
	return ix.vecs[int(id)*ix.dim]
}

func (ix *Index) accept(id uint32, allow *roaring.Bitmap, skip uint32) bool {
	if id == skip || ix.isDeleted(id) {
		return false
	}
	return allow == nil || allow.Contains(id)
}

// noSkip is an id no node has (ids stop below MaxUint32).
const noSkip = ^uint32(0)

// Search returns up to k nearest live neighbours of q (length Dim),
// nearest first (paper Alg. 5: greedy descent through the upper layers,
// then SEARCH-LAYER with ef = max(EfSearch, k) at layer 0). With p.Allow
// set, only allowed ids are returned; a small allow-list is scored
// exactly (see doc.go, "Filtered search"). Fewer than k results come back only when
// fewer than k live (allowed) vectors exist; k = 0 returns none. Errors:
// ErrDimension, ErrInvalidVector (a NaN or Inf component), ErrInvalidK
// (k < 0), ErrClosed.
func (ix *Index) Search(q []float32, k int, p SearchParams) ([]Result, error) {
	return ix.SearchIntoContext(context.Background(), nil, q, k, p)
}

// SearchInto is Search appending to dst[:0]; with a dst of capacity ≥ k it
// does not allocate in steady state.
func (ix *Index) SearchInto(dst []Result, q []float32, k int, p SearchParams) ([]Result, error) {
	return ix.SearchIntoContext(context.Background(), dst, q, k, p)
}

// SearchContext is Search that stops early when ctx is done: the graph
// walk, the exact scoring of an allow-list and the exact fallback look at
// ctx every few hundred distance computations. A cancelled search returns
// the nearest of the nodes it had scored (at most k, nearest first; a
// partial, possibly empty and less accurate list) with ctx.Err(); a
// search that completes returns exactly what Search returns.
func (ix *Index) SearchContext(ctx context.Context, q []float32, k int, p SearchParams) ([]Result, error) {
	return ix.SearchIntoContext(ctx, nil, q, k, p)
}

// SearchIntoContext is SearchContext appending to dst[:0] (see
// SearchInto).
func (ix *Index) SearchIntoContext(ctx context.Context, dst []Result, q []float32, k int, p SearchParams) ([]Result, error) {
	dst = dst[:0]
	if len(q) != ix.dim {
		return dst, fmt.Errorf("%w: query has %d values, index dimension is %d", ErrDimension, len(q), ix.dim)
	}
	if k < 0 {
		return dst, fmt.Errorf("%w: k = %d", ErrInvalidK, k)
	}
	for i, x := range q {
		if x != x || x > math.MaxFloat32 || x < -math.MaxFloat32 {
			return dst, fmt.Errorf("%w: query component %d is %v", ErrInvalidVector, i, x)
		}
	}
	if k == 0 {
		return dst, nil
	}
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return dst, ErrClosed
	}
	sc := ix.getCtx()
	defer ix.putCtx(sc)
	sc.done = ctx.Done()
	dst = ix.search(sc, dst, q, k, p)
	if sc.stopped {
		return dst, ctx.Err()
	}
	return dst, nil
}

// search is SearchIntoContext past the argument checks, under mu.RLock;
// sc.stopped tells a cancelled walk.
func (ix *Index) search(ctx *searchCtx, dst []Result, q []float32, k int, p SearchParams) []Result {
	qq := q
	if ix.metric == Cosine {
		ctx.q = append(ctx.q[:0], q...)
		base.UnitVector(ctx.q, ctx.q)
		qq = ctx.q
	}
	ep, maxL, ok := ix.entry()
	if !ok {
		return dst
	}
	if p.Allow != nil {
		if p.Allow.IsEmpty() {
			return dst
		}
		if !p.forceGraph && ix.preferExact(p.Allow, max(p.EfSearch, k)) {
			return ix.exact(ctx, dst, qq, k, p.Allow)
		}
	}
	quant := ix.quant
	cur, curD := ep, ix.distQ(qq, ep, quant)
	for lc := maxL; lc > 0; lc-- {
		cur, curD = ix.greedyQ(ctx, qq, cur, curD, lc, quant)
	}
	ef := p.EfSearch
	if ef <= 0 {
		ef = 64
	}
	ef = max(ef, k)
	var w []cand
	if ix.poolOK(p.Allow) && !p.forceHeap {
		w = ix.searchLayer0Pool(ctx, qq, cand{curD, cur}, ef, quant)
		if afterPoolWalk != nil {
			afterPoolWalk(w)
		}
		if ix.anyDeleted(w) {
			// A Delete ran during the walk: redo it on the path that
			// skips tombstones. (All of W is checked: an SQ8 rerank may
			// lift any of it into the top k.) A cancelled walk is not
			// redone: its tombstoned nodes are dropped instead.
			if ctx.stopped {
				w = ix.dropDeleted(w)
			} else {
				w = nil
			}
		}
	}
	if w == nil {
		ctx.eps = append(ctx.eps[:0], cand{curD, cur})
		ix.searchLayer(ctx, qq, ctx.eps, ef, 0, p.Allow, noSkip, quant)
		if ctx.stopped {
			// Sorting all of W (up to ef) would cost more than the look
			// at the context saved: keep its k nearest first.
			ctx.ext = ctx.res.keepNearest(k, ctx.ext)
		}
		w = ctx.sortedResults()
	}
	if ctx.stopped && len(w) > k {
		w = w[:k] // no SQ8 rerank of all of W either
	}
	if quant {
		// Rerank the ef SQ8 candidates on the exact vectors.
		for i := range w {
			w[i].d = ix.dist(qq, w[i].id)
		}
		sortCands(w)
	}
	if len(w) < k && !p.noFallback && !ctx.stopped && ix.moreExist(len(w), p.Allow) {
		// The walk ran out of reachable accepted nodes (a disconnected
		// graph region or heavy deletion): score exactly so that a top-k
		// is never cut short while enough matches exist.
		return ix.exact(ctx, dst, qq, k, p.Allow)
	}
	for _, c := range w[:min(k, len(w))] {
		dst = append(dst, Result{ID: c.id, Label: ix.labels[c.id], Distance: c.d})
	}
	return dst
}

// dropDeleted removes tombstoned nodes from w in place.
func (ix *Index) dropDeleted(w []cand) []cand {
	out := w[:0]
	for _, c := range w {
		if !ix.isDeleted(c.id) {
			out = append(out, c)
		}
	}
	return out
}

// afterPoolWalk, when set (tests only), runs after every pool walk with
// its W, e.g. to delete a node as a concurrent Delete could.
var afterPoolWalk func(w []cand)

// poolOK reports whether layer 0 may be searched with searchLayer0Pool:
// no allow-list, no tombstone, and ids below the pool's flag bit.
func (ix *Index) poolOK(allow *roaring.Bitmap) bool {
	return allow == nil && ix.numDeleted.Load() == 0 && len(ix.levels) <= poolExpanded
}

func (ix *Index) anyDeleted(w []cand) bool {
	for _, c := range w {
		if ix.isDeleted(c.id) {
			return true
		}
	}
	return false
}

// moreExist reports whether more than got live (allowed) nodes may exist.
func (ix *Index) moreExist(got int, allow *roaring.Bitmap) bool {
	if allow != nil {
		return allow.GetCardinality() > uint64(got)
	}
	live := int64(ix.nextSnapshot()) - ix.numDeleted.Load()
	return live > int64(got)
}

func (ix *Index) nextSnapshot() uint32 {
	ix.allocMu.Lock()
	defer ix.allocMu.Unlock()
	return ix.next
}

// exactCostRatio calibrates the filter planner. A filtered walk must
// expand about ef/s nodes (s = |allowed|/n) before it holds ef allowed
// results, each costing up to Mmax0 distances; exact scoring costs
// |allowed| = s·n distances. Exact wins while |allowed|² ≤ r·ef·Mmax0·n.
// BenchmarkFilteredPlanner on Vaswani (n=11,429, M=16, ef=64) put the
// crossover between 30% (exact 0.30 ms vs walk 0.52 ms) and 50% allowed,
// i.e. r ≈ 1.
var exactCostRatio = 1.0

// exactMinCount: allow-lists this small are always scored exactly.
const exactMinCount = 256

// preferExact decides between exact scoring of the allowed ids and a
// filtered graph walk.
func (ix *Index) preferExact(allow *roaring.Bitmap, ef int) bool {
	c := float64(allow.GetCardinality())
	if c <= exactMinCount {
		return true
	}
	n := float64(ix.nextSnapshot())
	return c*c <= exactCostRatio*float64(ef)*float64(ix.mmax0)*n
}

// exactBatch is the number of ids exact scores per gather call.
const exactBatch = 256

// exact scores every live allowed id (all live ids if allow is nil) and
// returns the k nearest, nearest first (of those scored before ctx's
// context was done, if it was). It scores exactBatch ids per gather call
// (distGather: the kernel keeps several rows' cache misses in flight),
// which is what makes it fast on an allow-list that is a sparse subset of
// a large index: its rows are then scattered in memory, one cache miss
// each, as a graph walk's are.
func (ix *Index) exact(ctx *searchCtx, dst []Result, q []float32, k int, allow *roaring.Bitmap) []Result {
	ctx.res.reset()
	limit := uint32(len(ix.levels))
	if cap(ctx.nbIDs) < exactBatch {
		ctx.nbIDs = make([]uint32, 0, exactBatch)
	}
	ids := ctx.nbIDs[:0]
	score := func() {
		for i, d := range ix.distGather(ctx, q, ids) {
			if ctx.res.len() < k {
				ctx.res.push(cand{d, ids[i]})
			} else if d < ctx.res.top().d {
				ctx.res.replaceTop(cand{d, ids[i]})
			}
		}
		ids = ids[:0]
	}
	add := func(id uint32) {
		if ix.isPresent(id) && !ix.isDeleted(id) {
			ids = append(ids, id)
		}
	}
	if allow != nil {
		var buf [exactBatch]uint32
		it := allow.ManyIterator()
	scan:
		for !ctx.cancelled(exactBatch) {
			n := it.NextMany(buf[:])
			if n == 0 {
				break
			}
			for _, id := range buf[:n] {
				if id >= limit {
					score()
					break scan
				}
				add(id)
			}
			score()
		}
	} else {
		for lo := uint32(0); lo < limit && !ctx.cancelled(exactBatch); lo += exactBatch {
			for id := lo; id < min(lo+exactBatch, limit); id++ {
				add(id)
			}
			score()
		}
	}
	ctx.nbIDs = ids
	w := ctx.sortedResults()
	for _, c := range w {
		dst = append(dst, Result{ID: c.id, Label: ix.labels[c.id], Distance: c.d})
	}
	return dst
}

// Vector copies node id's stored vector (normalised for cosine) into dst
// and returns it. Errors: ErrNotFound.
func (ix *Index) Vector(dst []float32, id uint32) ([]float32, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if int(id) >= len(ix.levels) || !ix.isPresent(id) {
		return dst, ErrNotFound
	}
	return append(dst[:0], ix.vec(id)...), nil
}
