package hnsw

import (
	"sync"
	"sync/atomic"
)

// repairState is the incremental repair sweep (see RepairDeleted).
type repairState struct {
	mu       sync.Mutex // serialises RepairDeleted calls
	pendMu   sync.Mutex
	pending  []uint32 // deleted, not yet covered by a finished sweep
	sweeping bool
	sweepSet []uint32 // deleted before the current sweep started
	cursor   uint32
	phase    int      // 1: repair lists, 2: reachability walk, 3: reattach orphans
	reached  []uint64 // phase 2/3: bitset of nodes reached from the entry point
	frontier []uint32
	orphans  int // nodes reattached in this sweep (for tests and stats)
}

// Delete tombstones id: from the moment Delete returns no search returns
// it, while the graph still routes through it. If id is the entry point a
// live node of the highest available level replaces it. Deleting a
// deleted id is a no-op. The node's links are removed by RepairDeleted;
// its memory is reclaimed only by rewriting the index (compaction).
// Errors: ErrNotFound, ErrReadOnly.
func (ix *Index) Delete(id uint32) error {
	if ix.readOnly {
		return ErrReadOnly
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if int(id) >= len(ix.levels) || !ix.isPresent(id) {
		return ErrNotFound
	}
	bit := uint32(1) << (id & 31)
	if atomic.OrUint32(&ix.deleted[id>>5], bit)&bit != 0 {
		return nil
	}
	ix.numDeleted.Add(1)
	ix.rep.pendMu.Lock()
	ix.rep.pending = append(ix.rep.pending, id)
	ix.rep.pendMu.Unlock()
	if e, _, ok := ix.entry(); ok && e == id {
		ix.replaceEntry()
	}
	return nil
}

// IsDeleted reports whether id is tombstoned.
func (ix *Index) IsDeleted(id uint32) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return int(id) < len(ix.levels) && ix.isDeleted(id)
}

// replaceEntry moves the entry point to a live node of the highest level
// that has one. The scan covers the (few) nodes of levels ≥ 1, top down;
// only when all of them are deleted does it scan the level-0 bitsets.
// Caller holds mu.RLock.
func (ix *Index) replaceEntry() {
	ix.epMu.Lock()
	defer ix.epMu.Unlock()
	e, _, ok := ix.entry()
	if !ok || !ix.isDeleted(e) {
		return
	}
	for l := len(ix.byLevel) - 1; l >= 1; l-- {
		for _, id := range ix.byLevel[l] {
			if !ix.isDeleted(id) {
				ix.setEntry(id, l)
				return
			}
		}
	}
	for w := range ix.present {
		live := atomic.LoadUint32(&ix.present[w]) &^ atomic.LoadUint32(&ix.deleted[w])
		if live == 0 {
			continue
		}
		for b := uint32(0); b < 32; b++ {
			id := uint32(w)*32 + b
			if live&(1<<b) != 0 && ix.levels[id] == 0 {
				ix.setEntry(id, 0)
				return
			}
		}
	}
	// Everything is deleted: keep the old entry; searches return nothing.
}

// RepairDeleted performs one bounded step of the repair sweep and reports
// whether repair work remains.
//
// A sweep removes deleted ids from the adjacency lists of live nodes: a
// list that held deleted neighbours is rebuilt with the selection
// heuristic (paper Alg. 4) from its live neighbours plus the live
// neighbours of its deleted neighbours (two hops through deleted nodes),
// as hnswlib's repairConnectionsForUpdate and Weaviate's tombstone
// cleanup do. Each call visits at most maxNodes nodes (maxNodes ≤ 0
// means 1024), so work per call is O(maxNodes · Mmax0² · d) and searches
// and inserts proceed between and during calls. Starting a sweep waits
// for in-flight inserts to finish (a brief barrier, so that no insert
// can still link to a node deleted before the sweep). When a sweep ends,
// the nodes deleted before it began lose their own links too.
func (ix *Index) RepairDeleted(maxNodes int) (more bool, err error) {
	if ix.readOnly {
		return false, ErrReadOnly
	}
	if maxNodes <= 0 {
		maxNodes = 1024
	}
	r := &ix.rep
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sweeping {
		// Barrier: every insert holds mu.RLock for its whole duration.
		ix.mu.Lock()
		r.pendMu.Lock()
		r.sweepSet, r.pending = r.pending, nil
		r.pendMu.Unlock()
		ix.mu.Unlock()
		if len(r.sweepSet) == 0 {
			return false, nil
		}
		r.sweeping = true
		r.cursor = 0
		r.phase = 1
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ctx := ix.getCtx()
	defer ix.putCtx(ctx)
	// Ids reserved by a concurrent Add whose arrays are not grown yet
	// (alloc before ensureCap) are not present: stop at the capacity,
	// which cannot change while mu is read-locked.
	end := min(ix.nextSnapshot(), uint32(len(ix.levels)))
	budget := maxNodes
	if r.phase == 1 {
		stop := uint32(min(uint64(r.cursor)+uint64(budget), uint64(end)))
		for id := r.cursor; id < stop; id++ {
			if !ix.isPresent(id) || ix.isDeleted(id) {
				continue
			}
			for lc := 0; lc <= int(ix.levels[id]); lc++ {
				ix.repairList(ctx, id, lc)
			}
		}
		budget -= int(stop - r.cursor)
		r.cursor = stop
		if stop < end {
			return true, nil
		}
		r.phase = 2
		r.reached = make([]uint64, (len(ix.levels)+63)/64)
		r.frontier = r.frontier[:0]
		if ep, _, ok := ix.entry(); ok && !ix.isDeleted(ep) {
			r.reach(ep)
		}
		r.cursor = 0
		r.orphans = 0
	}
	if r.phase == 2 || r.phase == 3 {
		ix.reachStep(ctx, r, end, &budget)
		if r.phase == 2 || r.cursor < end || len(r.frontier) > 0 {
			return true, nil
		}
		r.phase = 4
		r.cursor = 0
		r.reached = nil
	}
	// Phase 4: nothing links to the nodes of sweepSet any more; drop their
	// own links (bounded by the remaining budget too).
	for budget > 0 && int(r.cursor) < len(r.sweepSet) {
		d := r.sweepSet[r.cursor]
		r.cursor++
		budget--
		mu := ix.lock(d)
		mu.Lock()
		for lc := 0; lc <= int(ix.levels[d]); lc++ {
			atomic.StoreUint32(&ix.links(d, lc)[0], 0)
		}
		mu.Unlock()
	}
	if int(r.cursor) < len(r.sweepSet) {
		return true, nil
	}
	r.sweepSet = r.sweepSet[:0]
	r.sweeping = false
	r.phase = 0
	r.reached = nil
	r.pendMu.Lock()
	more = len(r.pending) > 0
	r.pendMu.Unlock()
	return more, nil
}

// Phases 2–3: removing a deleted node also removes the in-links it
// gave its neighbours, which can leave live nodes unreachable. Walk
// the graph from the entry point (all layers), then give every live
// node the walk missed an in-link from its nearest live node that has
// room (paper Alg. 2 search from the entry point to find it).
func (ix *Index) reachStep(ctx *searchCtx, r *repairState, end uint32, budget *int) {
	for *budget > 0 {
		if len(r.frontier) > 0 {
			u := r.frontier[len(r.frontier)-1]
			r.frontier = r.frontier[:len(r.frontier)-1]
			*budget--
			for lc := 0; lc <= int(ix.levels[u]); lc++ {
				l := ix.links(u, lc)
				n := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
				for i := 1; i <= n; i++ {
					if v := atomic.LoadUint32(&l[i]); int(v) < len(r.reached)*64 && !ix.isDeleted(v) {
						r.reach(v)
					}
				}
			}
			continue
		}
		r.phase = 3
		if r.cursor >= end {
			break
		}
		id := r.cursor
		r.cursor++
		*budget--
		if int(id) >= len(r.reached)*64 || !ix.isPresent(id) || ix.isDeleted(id) || r.reached[id>>6]&(1<<(id&63)) != 0 {
			continue
		}
		ix.reattach(ctx, id)
		r.orphans++
		r.reach(id)
	}
}

func (r *repairState) reach(id uint32) {
	if r.reached[id>>6]&(1<<(id&63)) != 0 {
		return
	}
	r.reached[id>>6] |= 1 << (id & 63)
	r.frontier = append(r.frontier, id)
}

// reattach links an unreachable live node v back into layer 0: the
// nearest live node (found by a search from the entry point) with a free
// slot gets the edge →v; if none of the efConstruction nearest has room,
// the nearest one's furthest neighbour is replaced. If v lost all its own
// links, it gets the heuristic's selection from the same candidates.
func (ix *Index) reattach(ctx *searchCtx, v uint32) {
	ep, maxL, ok := ix.entry()
	if !ok || ep == v {
		return
	}
	q := ix.vec(v)
	cur, curD := ep, ix.dist(q, ep)
	for lc := maxL; lc > 0; lc-- {
		cur, curD = ix.greedy(ctx, q, cur, curD, lc)
	}
	ctx.eps = append(ctx.eps[:0], cand{curD, cur})
	ix.searchLayer(ctx, q, ctx.eps, ix.opts.EfConstruction, 0, nil, v, false)
	w := ctx.sortedResults()
	if len(w) == 0 {
		return
	}
	own := ix.links(v, 0)
	if atomic.LoadUint32(&own[0]) == 0 {
		sel := ix.selectNeighbors(ctx, q, w, ix.m, 0, false, v)
		ix.setLinks(v, 0, sel)
	}
	target := w[0].id
	for _, c := range w {
		l := ix.links(c.id, 0)
		if int(atomic.LoadUint32(&l[0])) < ix.mmax0 {
			target = c.id
			break
		}
	}
	mu := ix.lock(target)
	mu.Lock()
	defer mu.Unlock()
	l := ix.links(target, 0)
	n := int(l[0])
	for i := 1; i <= n; i++ {
		if l[i] == v {
			return
		}
	}
	if n < ix.mmax0 {
		atomic.StoreUint32(&l[1+n], v)
		atomic.StoreUint32(&l[0], uint32(n+1))
		return
	}
	tv := ix.vec(target)
	worst, worstD := 1, float32(-1)
	for i := 1; i <= n; i++ {
		if d := ix.dist(tv, l[i]); d > worstD {
			worst, worstD = i, d
		}
	}
	atomic.StoreUint32(&l[worst], v)
}

// repairList rebuilds id's layer-lc list if it holds deleted ids: like a
// re-insertion of id at that layer (paper Alg. 1, lines 9–17), with
// SEARCH-LAYER(efConstruction) started from id's live neighbours and the
// live nodes two hops away through deleted ones, the selection heuristic,
// and reverse links so that nodes which lost in-links through the
// deleted node get them back.
func (ix *Index) repairList(ctx *searchCtx, id uint32, lc int) {
	l := ix.links(id, lc)
	n := min(int(atomic.LoadUint32(&l[0])), len(l)-1)
	dirty := false
	for i := 1; i <= n; i++ {
		if ix.isDeleted(atomic.LoadUint32(&l[i])) {
			dirty = true
			break
		}
	}
	if !dirty {
		return
	}
	base := ix.vec(id)
	ctx.vis.next(len(ix.levels))
	ctx.vis.visit(id)
	eps := ctx.eps[:0]
	var add func(x uint32, depth int)
	add = func(x uint32, depth int) {
		if ctx.vis.visit(x) {
			return
		}
		if !ix.isDeleted(x) {
			eps = append(eps, cand{ix.dist(base, x), x})
			return
		}
		if depth == 0 {
			return
		}
		dl := ix.links(x, lc)
		dn := min(int(atomic.LoadUint32(&dl[0])), len(dl)-1)
		for j := 1; j <= dn; j++ {
			add(atomic.LoadUint32(&dl[j]), depth-1)
		}
	}
	for i := 1; i <= n; i++ {
		add(atomic.LoadUint32(&l[i]), 2)
	}
	ctx.eps = eps
	if len(eps) == 0 {
		ix.setLinks(id, lc, nil)
		return
	}
	// Keep the surviving links (often the long, diverse ones a fresh
	// search would not rediscover) as candidates beside the search result.
	ctx.ext = append(ctx.ext[:0], eps...)
	ix.searchLayer(ctx, base, eps, ix.opts.EfConstruction, lc, nil, id, false)
	w := ctx.sortedResults()
	cs := append(ctx.ext, w...)
	sortCands(cs)
	k := 0
	for i, c := range cs {
		if i > 0 && c.id == cs[k-1].id {
			continue
		}
		cs[k] = c
		k++
	}
	cs = cs[:k]
	ctx.ext = cs
	ctx.eps = append(ctx.eps[:0], cs...)
	sel := ix.selectNeighbors(ctx, base, ctx.eps, ix.mmax(lc), lc, false, id)
	ctx.nb = append(ctx.nb[:0], sel...)
	ix.setLinks(id, lc, ctx.nb)
	for _, c := range ctx.nb {
		ix.addLink(ctx, c.id, id, lc)
	}
}
