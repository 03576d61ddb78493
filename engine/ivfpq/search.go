package ivfpq

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/internal/cancel"
)

// topk is a bounded max-heap of (distance, id): it keeps the k smallest.
type topk struct {
	k int
	e []topkEntry // a max-heap on d
}

type topkEntry struct {
	d  float32
	id uint32
}

// reset empties h and sets its capacity to k.
func (h *topk) reset(k int) { h.k, h.e = k, h.e[:0] }

func (h *topk) full() bool { return len(h.e) >= h.k }

// worst returns the largest kept distance (valid when full).
func (h *topk) worst() float32 { return h.e[0].d }

// ids appends the kept ids, in storage order, to dst.
func (h *topk) ids(dst []uint32) []uint32 {
	for _, x := range h.e {
		dst = append(dst, x.id)
	}
	return dst
}

// push offers (d, id): kept while h is not full, then only if d is below
// the worst kept distance, which it replaces. The entry moves through a
// hole (one write per level), with the comparisons of a swapping
// binary heap.
func (h *topk) push(d float32, id uint32) {
	e := h.e
	if len(e) < h.k {
		e = append(e, topkEntry{})
		i := len(e) - 1
		for i > 0 {
			p := (i - 1) / 2
			if e[p].d >= d {
				break
			}
			e[i] = e[p]
			i = p
		}
		e[i] = topkEntry{d, id}
		h.e = e
		return
	}
	if d >= e[0].d {
		return
	}
	i, n := 0, len(e)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && e[r].d > e[l].d {
			c = r
		}
		if e[c].d <= d {
			break
		}
		e[i] = e[c]
		i = c
	}
	e[i] = topkEntry{d, id}
}

// reservoir keeps the k smallest (distance, id) pairs it is offered, as
// topk does, at a lower cost per entry: an offer under the threshold is
// appended, and when the buffer holds reservoirFactor·k entries a
// selection keeps the k smallest and the threshold becomes the largest
// of them (FAISS's ReservoirTopN). Offers at or above the threshold are
// rejected, as topk rejects those at or above its worst.
type reservoir struct {
	k   int
	thr float32 // +Inf until the first shrink
	e   []topkEntry
	lim int // len(e) that makes it shrink
}

// reservoirFactor is the buffer's size in multiples of k.
const reservoirFactor = 4

// reset empties r for k entries, of at most n offers: the buffer holds
// reservoirFactor·k before it shrinks, or n+1 when that is fewer (it
// then never fills, and finish selects once).
func (r *reservoir) reset(k, n int) {
	r.k, r.thr = k, float32(math.Inf(1))
	r.lim = reservoirLimit(k, n)
	if cap(r.e) < r.lim {
		r.e = make([]topkEntry, 0, r.lim)
	}
	r.e = r.e[:0]
}

// reservoirLimit is min(reservoirFactor·k, n+1) without overflow (k ≥ 1,
// n ≥ 0).
func reservoirLimit(k, n int) int {
	if k > n/reservoirFactor {
		return n + 1
	}
	return reservoirFactor * k
}

// add appends (d, id), which must be under r.thr; it reports whether the
// buffer was shrunk (and r.thr lowered).
func (r *reservoir) add(d float32, id uint32) bool {
	r.e = append(r.e, topkEntry{d, id})
	if len(r.e) < r.lim {
		return false
	}
	r.shrink()
	return true
}

// shrink keeps the k smallest entries (ties at the k-th in any order) and
// sets the threshold to the largest kept distance.
func (r *reservoir) shrink() {
	if len(r.e) <= r.k {
		return
	}
	selectSmallest(r.e, r.k)
	r.e = r.e[:r.k]
	w := r.e[0].d
	for _, x := range r.e[1:] {
		w = max(w, x.d)
	}
	r.thr = w
}

// selectSmallest reorders e so that e[:k] hold k smallest distances
// (0 < k < len(e)): quickselect (Hoare partition, median-of-three pivot),
// with a sort of the part left when it stops narrowing fast.
func selectSmallest(e []topkEntry, k int) {
	lo, hi := 0, len(e)-1
	for budget := 2 * bits.Len(uint(len(e))); hi > lo; budget-- {
		if budget == 0 {
			slices.SortFunc(e[lo:hi+1], func(a, b topkEntry) int { return cmp.Compare(a.d, b.d) })
			return
		}
		mid := lo + (hi-lo)/2
		a, b, c := e[lo].d, e[mid].d, e[hi].d
		pivot := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for e[i].d < pivot {
				i++
			}
			for e[j].d > pivot {
				j--
			}
			if i <= j {
				e[i], e[j] = e[j], e[i]
				i++
				j--
			}
		}
		// e[lo..j] ≤ pivot ≤ e[i..hi], and e[j+1..i-1] == pivot.
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// finish shrinks the buffer to the k smallest.
func (r *reservoir) finish() { r.shrink() }

// sumReservoir is reservoir over fast-scan sums, for a search whose lists
// all map a sum to its distance the same way (one LUT, no list term):
// the order of the sums is the order of the distances, and the k smallest
// are selected by counting (two 256-bin histograms) instead of comparing.
type sumReservoir struct {
	k   int
	t   int // offers with a sum ≥ t are rejected (65536 until the first shrink)
	e   []sumEntry
	lim int // len(e) that makes it shrink
	// hist4 and hist are shrink's histograms (a buffer holds at most
	// reservoirFactor·k entries).
	hist4 [4][256]uint32
	hist  [256]uint32
}

type sumEntry struct {
	a  uint16
	id uint32
}

// reset empties r for k entries of at most n offers (reservoir.reset).
func (r *sumReservoir) reset(k, n int) {
	r.k, r.t = k, 1<<16
	r.lim = reservoirLimit(k, n)
	if cap(r.e) < r.lim {
		r.e = make([]sumEntry, 0, r.lim)
	}
	r.e = r.e[:0]
}

// shrink keeps the k smallest sums (ties at the k-th in the order they
// came) and lowers the threshold to the largest kept sum: a later sum
// equal to it is rejected, as topk rejects a distance equal to its worst.
func (r *sumReservoir) shrink() {
	if len(r.e) <= r.k {
		return
	}
	// The k-th smallest sum v: its high byte by a histogram of high
	// bytes, then its low byte among the sums with that high byte.
	// Four histograms, summed after, keep the increments of runs of
	// equal high bytes (the common case) from waiting on each other.
	hs := &r.hist4
	*hs = [4][256]uint32{}
	e := r.e
	i := 0
	for ; i+4 <= len(e); i += 4 {
		hs[0][e[i].a>>8]++
		hs[1][e[i+1].a>>8]++
		hs[2][e[i+2].a>>8]++
		hs[3][e[i+3].a>>8]++
	}
	for ; i < len(e); i++ {
		hs[0][e[i].a>>8]++
	}
	need := uint32(r.k)
	hi := 0
	for ; ; hi++ {
		c := uint32(hs[0][hi] + hs[1][hi] + hs[2][hi] + hs[3][hi])
		if need <= c {
			break
		}
		need -= c
	}
	h := &r.hist
	*h = [256]uint32{}
	for _, x := range r.e {
		h[x.a&0xFF] += b2u32(int(x.a>>8) == hi)
	}
	lo := 0
	for ; need > h[lo]; lo++ {
		need -= h[lo]
	}
	v := uint16(hi<<8 | lo)
	// Keep every sum under v and the first need sums equal to it
	// (without branches: which entries stay is unpredictable).
	n := 0
	for _, x := range r.e {
		take := b2u32(x.a == v) & b2u32(need > 0)
		r.e[n] = x
		n += int(b2u32(x.a < v) | take)
		need -= take
	}
	r.e = r.e[:n]
	r.t = int(v)
}

// b2u32 is 1 for true, 0 for false.
func b2u32(b bool) uint32 {
	var x uint32
	if b {
		x = 1
	}
	return x
}

// fs4SelectSums offers r the chunk's visible vectors (sums acc, ids;
// visible nil: all are) whose sum is under r's threshold.
func fs4SelectSums(r *sumReservoir, acc []uint16, ids []uint32, visible func(uint32) bool) {
	for i := 0; i < len(acc); i++ {
		if r.t <= 0xFFFF {
			i += asm.IndexBelowU16(acc[i:], uint16(r.t))
			if i == len(acc) {
				return
			}
		}
		id := ids[i]
		if visible != nil && !visible(id) {
			continue
		}
		r.e = append(r.e, sumEntry{acc[i], id})
		if len(r.e) == r.lim {
			r.shrink()
		}
	}
}

// sorted returns the kept entries best first (ties by id).
func (h *topk) sorted() []Result {
	out := make([]Result, len(h.e))
	for i, x := range h.e {
		out[i] = Result{ID: x.id, Distance: x.d}
	}
	sortResults(out)
	return out
}

func sortResults(r []Result) {
	slices.SortFunc(r, func(a, b Result) int {
		switch {
		case a.Distance < b.Distance:
			return -1
		case a.Distance > b.Distance:
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

// scratch holds one search's buffers; pooled per Index.
type scratch struct {
	cd, lut, r, out []float32
	qr              []float32 // OPQ-rotated query
	qt              []float32 // query term of the precomputed tables
	rd              []float32 // refine distances
	rids            []uint32  // refine candidates
	acc             []uint16
	q4              []uint8
	luts            [1][]uint8
	accs            [1][]uint16
	heap, probe     topk
	res             reservoir
	sres            sumReservoir
	sample          []float32 // probeBound's samples
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// scanChunk is the number of vectors scanned per kernel call (a multiple
// of the fast-scan block).
const scanChunk = 256

// Search returns the k nearest live vectors to q (Dim float32), best first
// (ascending distance, ties by id); fewer when the probed lists hold fewer
// allowed live vectors.
//
// The Nprobe coarse centroids nearest to q (L2: smallest ‖q−c‖²; IP:
// largest ⟨q,c⟩) select the lists. Per probed list the PQ LUT is built
// (L2 by residual: the list's precomputed table plus the query's
// −2⟨q_j, C_j[c]⟩ table, with ‖q − c‖² added to every code's distance, or
// above Options.MaxPrecomputedTableBytes the LUT of q − c; IP by
// residual: shared, with the list's centroid term −⟨q,c⟩ added to every
// code's distance; no residual: shared) and the codes are scanned with
// asm.ADCScan8 (Nbits 8) or asm.FastScan4 on uint8-quantised LUTs
// (Nbits 4); tombstoned and disallowed ids are skipped inside the scan.
// With refine vectors and KFactor ≥ 1, the best k·KFactor candidates are
// rescored exactly. With OPQ the query is first rotated (R·q, d²
// multiply-adds) and everything up to refinement runs in the rotated
// space; refinement uses q and the unrotated vectors. The first L2 search
// by residual builds the precomputed tables (O(Nlist·2^Nbits·Dim)).
// Errors: ErrNotTrained, ErrDimension, ErrInvalidArgument (k < 1, NaN or
// Inf in q, a refined id with no refine vector).
// Cost: O(Nlist·d + 2^Nbits·d + Nprobe·(M·2^Nbits + list length·M)).
func (ix *Index) Search(q []float32, k int, p SearchParams) ([]Result, error) {
	return ix.SearchContext(context.Background(), q, k, p)
}

// SearchContext is Search that stops early when ctx is done: the list
// scan looks at ctx once per scanChunk (256) codes, in the 8-bit ADC and
// the 4-bit fast-scan loops alike. A cancelled search refines (when
// asked) and returns the best of the codes it had scanned, at most k, best
// first (a partial, possibly empty list), with ctx.Err(); a search that
// completes returns exactly what Search returns.
func (ix *Index) SearchContext(ctx context.Context, q []float32, k int, p SearchParams) ([]Result, error) {
	o := ix.opts
	if len(q) != o.Dim {
		return nil, fmt.Errorf("%w: query has %d floats, want %d", ErrDimension, len(q), o.Dim)
	}
	if k < 1 {
		return nil, fmt.Errorf("%w: k = %d, want ≥ 1", ErrInvalidArgument, k)
	}
	if !finite(q) {
		return nil, fmt.Errorf("%w: query contains NaN or Inf", ErrInvalidArgument)
	}
	if p.KFactor < 0 || p.Nprobe < 0 {
		return nil, fmt.Errorf("%w: negative Nprobe or KFactor", ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if !ix.trained {
		return nil, ErrNotTrained
	}
	refine := ix.refine != nil && p.KFactor >= 1
	kk := k
	if refine {
		kk = k * p.KFactor
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	h := &sc.heap
	h.reset(kk)
	sq := q
	if ix.rot != nil {
		// Lists, centroids and codebooks are in the rotated space; the
		// refine vectors are not, so refinement below uses q.
		sc.qr = grow(sc.qr, o.Dim)
		sq = sc.qr
		asm.DotBatch(q, ix.rot, sq)
	}
	var cerr error // ctx.Err() when the scan stopped early
	if !ix.scan(ctx.Done(), sq, p, h, sc) {
		cerr = ctx.Err()
	}
	if !refine {
		res := h.sorted()
		return res[:min(k, len(res))], cerr
	}
	d := o.Dim
	rows := len(ix.refine) / d
	sc.rids = h.ids(sc.rids[:0])
	ids := sc.rids
	for _, id := range ids {
		if int64(id) >= int64(rows) {
			return nil, fmt.Errorf("%w: id %d has no refine vector (%d rows)", ErrInvalidArgument, id, rows)
		}
	}
	// One gathered kernel call rescoring every candidate (the next row is
	// prefetched while one is scored).
	sc.rd = grow(sc.rd, len(ids))
	dist := sc.rd
	if o.Metric == IP {
		asm.DotGather(q, ix.refine, ids, dist)
	} else {
		asm.L2SqGather(q, ix.refine, ids, dist)
	}
	res := make([]Result, 0, min(k, len(ids)))
	for i, id := range ids {
		dv := dist[i]
		if o.Metric == IP {
			dv = -dv
		}
		res = insertBest(res, k, Result{ID: id, Distance: dv})
	}
	return res, cerr
}

// insertBest inserts r into best (sorted by distance, then id; at most k
// long), dropping the entry past k: kept this way over all candidates,
// best is the first k of all of them sorted (ids are distinct).
func insertBest(best []Result, k int, r Result) []Result {
	n := len(best)
	if n == k {
		if w := best[n-1]; r.Distance > w.Distance || r.Distance == w.Distance && r.ID > w.ID {
			return best
		}
		n--
	} else {
		best = append(best, Result{})
	}
	i := n
	for i > 0 {
		p := best[i-1]
		if p.Distance < r.Distance || p.Distance == r.Distance && p.ID < r.ID {
			break
		}
		best[i] = p
		i--
	}
	best[i] = r
	return best
}

// probe returns the nprobe lists nearest to q and their coarse terms
// (L2: ‖q−c‖²; IP: −⟨q,c⟩), best first.
func (ix *Index) probe(q []float32, nprobe int, sc *scratch) ([]int, []float32) {
	o := ix.opts
	if sc == nil {
		sc = new(scratch)
	}
	sc.cd = grow(sc.cd, o.Nlist)
	cd := sc.cd
	if o.Metric == IP {
		asm.DotBatch(q, ix.coarse, cd)
		for i := range cd {
			cd[i] = -cd[i]
		}
	} else {
		asm.L2SqBatch(q, ix.coarse, cd)
	}
	r := selectProbes(cd, nprobe, sc)
	lists := make([]int, len(r))
	terms := make([]float32, len(r))
	for i, x := range r {
		lists[i] = int(x.ID)
		terms[i] = x.Distance
	}
	return lists, terms
}

// selectProbes returns the nprobe smallest coarse distances of cd with
// their lists (Result.ID), best first, ties by list.
func selectProbes(cd []float32, nprobe int, sc *scratch) []Result {
	h := &sc.probe
	h.reset(nprobe)
	if tau, ok := probeBound(cd, nprobe, &sc.sample); ok {
		// Every one of the nprobe nearest is ≤ tau when at least nprobe
		// are: offer only those (about 2·nprobe instead of all).
		n := 0
		for _, v := range cd {
			n += int(b2u32(v <= tau))
		}
		if n >= nprobe {
			for l, v := range cd {
				if v <= tau && (!h.full() || v < h.worst()) {
					h.push(v, uint32(l))
				}
			}
		}
	}
	if len(h.e) == 0 {
		for l, v := range cd {
			if h.full() && v >= h.worst() {
				continue // push would reject it: spare the call
			}
			h.push(v, uint32(l))
		}
	}
	return h.sorted()
}

// probeBound estimates a bound under which about 2·nprobe of the coarse
// distances cd lie: the m-th smallest of every probeStride-th distance,
// m = 2·nprobe/probeStride + 1. ok is false when cd is too short for a
// sample to pay off (or nprobe too close to len(cd)); the caller checks
// that at least nprobe distances are within the bound before relying on
// it.
func probeBound(cd []float32, nprobe int, buf *[]float32) (tau float32, ok bool) {
	const probeStride = 16
	m := 2*nprobe/probeStride + 1
	if len(cd) < 8*probeStride || m*probeStride*2 > len(cd) {
		return 0, false
	}
	// The m smallest samples, sorted, by insertion.
	best := (*buf)[:0]
	for i := 0; i < len(cd); i += probeStride {
		v := cd[i]
		if len(best) == m && v >= best[m-1] {
			continue
		}
		if len(best) < m {
			best = append(best, v)
		} else {
			best[m-1] = v
		}
		for j := len(best) - 1; j > 0 && best[j] < best[j-1]; j-- {
			best[j], best[j-1] = best[j-1], best[j]
		}
	}
	*buf = best
	return best[m-1], true
}

// scan offers every allowed live vector of the probed lists with its PQ
// distance estimate and leaves in h the h.k best (8 bits: pushed into the
// heap; 4 bits: collected in a reservoir and copied into h.e at the end,
// not in heap order, for h.sorted or h.ids). It looks at done (nil: never
// closed) before every chunk of scanChunk codes and reports false when it
// found it closed and stopped (h then holds the best of what the scanned
// codes gave).
func (ix *Index) scan(done <-chan struct{}, q []float32, p SearchParams, h *topk, sc *scratch) bool {
	o := ix.opts
	nprobe := min(max(p.Nprobe, 1), o.Nlist)
	lists, terms := ix.probe(q, nprobe, sc)
	pq := ix.pq
	sc.lut = grow(sc.lut, o.M*pq.Ksub)
	lut := sc.lut
	perList := o.byResidual() && o.Metric == L2
	if !perList {
		pq.LUT(q, o.Metric, lut)
	}
	var r, ptab, qt []float32
	if perList {
		if ptab = ix.precomputed(); ptab != nil {
			sc.qt = grow(sc.qt, o.M*pq.Ksub)
			qt = sc.qt
			pq.queryTerm(q, qt)
		} else {
			sc.r = grow(sc.r, o.Dim)
			r = sc.r
		}
	}
	var deleted *roaring.Bitmap
	if !ix.deleted.IsEmpty() {
		deleted = ix.deleted
	}
	visible := func(id uint32) bool {
		return (deleted == nil || !deleted.Contains(id)) && (p.Allow == nil || p.Allow.Contains(id)) &&
			(p.AllowFunc == nil || p.AllowFunc(id))
	}
	var fsVisible func(uint32) bool // nil: every vector is visible
	if deleted != nil || p.Allow != nil || p.AllowFunc != nil {
		fsVisible = visible
	}
	var q4 []uint8
	var scale, bias float32
	if o.Nbits == 4 {
		sc.q4 = grow(sc.q4, asm.FastScan4BlockBytes(o.M))
		q4 = sc.q4
		if !perList {
			scale, bias = quantizeLUT4(lut, o.M, q4)
		}
	}
	sc.out = grow(sc.out, scanChunk)
	sc.acc = grow(sc.acc, scanChunk)
	out, acc := sc.out, sc.acc
	// The 4-bit path collects into a reservoir, handed to h at the end:
	// of sums when every list maps them to distances alike (no residual:
	// one LUT, no list term), else of distances.
	sums := o.Nbits == 4 && !o.byResidual()
	if o.Nbits == 4 {
		res, sres := &sc.res, &sc.sres
		codes := 0 // the most offers the reservoir can get
		for _, l := range lists {
			codes += len(ix.lists[l].ids)
		}
		if sums {
			sres.reset(h.k, codes)
		} else {
			res.reset(h.k, codes)
		}
		defer func() {
			if sums {
				sres.shrink()
				f := fs4Dist{inv: 1 / scale, bias: bias}
				h.e = h.e[:0]
				for _, x := range sres.e {
					h.e = append(h.e, topkEntry{f.of(x.a), x.id})
				}
				return
			}
			res.finish()
			h.e = append(h.e[:0], res.e...)
		}()
	}
	for pi, l := range lists {
		L := &ix.lists[l]
		n := len(L.ids)
		if n == 0 {
			continue
		}
		var cterm float32
		if o.byResidual() && o.Metric == IP {
			cterm = terms[pi]
		}
		if perList {
			if ptab != nil {
				// LUT = ptab[l] + query term; + ‖q − y_l‖² per code.
				asm.AddF32(lut, ptab[l*len(lut):(l+1)*len(lut)], qt)
				cterm = terms[pi]
			} else {
				copy(r, q)
				subtract(r, ix.coarse[l*o.Dim:(l+1)*o.Dim])
				pq.LUT(r, L2, lut)
			}
			if o.Nbits == 4 {
				scale, bias = quantizeLUT4(lut, o.M, q4)
			}
		}
		if o.Nbits == 8 {
			for off := 0; off < n; off += scanChunk {
				if cancel.Done(done) {
					return false
				}
				cnt := min(scanChunk, n-off)
				asm.ADCScan8(L.codes[off*o.M:(off+cnt)*o.M], o.M, lut, out[:cnt])
				for i, dv := range out[:cnt] {
					dv += cterm
					if h.full() && dv >= h.worst() {
						continue
					}
					if id := L.ids[off+i]; visible(id) {
						h.push(dv, id)
					}
				}
			}
			continue
		}
		bsz := asm.FastScan4BlockBytes(o.M)
		for off := 0; off < n; off += scanChunk {
			if cancel.Done(done) {
				return false
			}
			cnt := min(scanChunk, n-off)
			nb := asm.FastScan4Blocks(cnt)
			b0 := off / asm.FastScanBlock
			sc.luts[0], sc.accs[0] = q4, acc
			asm.FastScan4(L.codes[b0*bsz:(b0+nb)*bsz], nb, o.M, sc.luts[:], sc.accs[:])
			if sums {
				fs4SelectSums(&sc.sres, acc[:cnt], L.ids[off:off+cnt], fsVisible)
			} else {
				fs4Select(&sc.res, acc[:cnt], L.ids[off:off+cnt], fs4Dist{inv: 1 / scale, bias: bias, cterm: cterm}, fsVisible)
			}
		}
	}
	return true
}

// fs4Dist maps a fast-scan sum to its distance: bias + a/scale (as
// asm.FastScan4Distances) plus the list's constant term. It is
// non-decreasing in a.
type fs4Dist struct{ inv, bias, cterm float32 }

func (f fs4Dist) of(a uint16) float32 {
	dv := f.bias + float32(a)*f.inv
	return dv + f.cterm
}

// below returns the smallest sum whose distance is not below w (65536
// when every sum's is): the sums that enter a full heap whose worst is w
// are exactly those under it.
func (f fs4Dist) below(w float32) int {
	a := 0
	if x := (w - f.cterm - f.bias) / f.inv; x > 0 {
		a = int(min(x, 65536))
	}
	for a > 0 && f.of(uint16(a-1)) >= w {
		a--
	}
	for a <= 0xFFFF && f.of(uint16(a)) < w {
		a++
	}
	return a
}

// fs4Select offers r the chunk's visible vectors (fast-scan sums acc,
// ids; visible nil: all are) whose sum is below the threshold of r's
// (found by asm.IndexBelowU16), which are exactly those whose distance
// is below it.
func fs4Select(r *reservoir, acc []uint16, ids []uint32, f fs4Dist, visible func(uint32) bool) {
	t := f.below(r.thr)
	for i := 0; i < len(acc); i++ {
		if t <= 0xFFFF {
			i += asm.IndexBelowU16(acc[i:], uint16(t))
			if i == len(acc) {
				return
			}
		}
		id := ids[i]
		if visible != nil && !visible(id) {
			continue
		}
		if dv := f.of(acc[i]); dv < r.thr && r.add(dv, id) {
			t = f.below(r.thr)
		}
	}
}

// SearchBatch searches nq = len(queries)/Dim queries (nq×Dim float32,
// row-major) with Search's semantics, on up to threads goroutines (≤ 0:
// Options.Threads), and returns one result list per query. The first
// error (by query index) is returned.
func (ix *Index) SearchBatch(queries []float32, k int, p SearchParams, threads int) ([][]Result, error) {
	d := ix.opts.Dim
	if len(queries)%d != 0 {
		return nil, fmt.Errorf("%w: %d query floats is not a multiple of Dim = %d", ErrDimension, len(queries), d)
	}
	nq := len(queries) / d
	if threads <= 0 {
		threads = ix.opts.Threads
	}
	threads = max(1, min(threads, nq))
	out := make([][]Result, nq)
	errs := make([]error, nq)
	var wg sync.WaitGroup
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := t; i < nq; i += threads {
				out[i], errs[i] = ix.Search(queries[i*d:(i+1)*d], k, p)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
	}
	return out, nil
}
