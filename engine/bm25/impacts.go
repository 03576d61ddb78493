package bm25

import (
	"cmp"
	"math"
	"slices"
	"sync"
)

// Impact summaries of long posting lists.
//
// A block's stored bound, (max tf, min |D|) over its postings, takes the
// two from different documents: in a corpus of short chunks where a common
// term has a high tf in some documents and some documents are short, every
// block's bound sits near the term's ceiling w·(k1+1), no block can be
// skipped and a one-term query scores every posting. A summary replaces
// that pair by corners of the block's (tf, |D|) Pareto frontier: every
// posting has tf ≤ some corner's tf and |D| ≥ that corner's |D|. BM25 is
// non-decreasing in tf and non-increasing in |D| for every k1 ≥ 0,
// b ∈ [0, 1] and avgdl, so the largest corner score bounds the block under
// whatever parameters and collection statistics a query brings, and it is
// the exact block maximum when the frontier has at most impactCorners
// points.
//
// A summary also keeps the impactTop postings with the highest score
// under reference parameters (k1 1.2, b 0.75, the segment's own average
// length). Scored exactly under the query's parameters, they give k real
// documents whose scores are known before the traversal starts, so the
// k-th best of them is a lower bound on the final threshold (threshold
// estimation from per-term top-k lists; Mallia, Siedlaczek, Sun & Suel,
// CIKM 2020). MaxScore starts from that threshold instead of from −∞.
//
// Summaries are built lazily, on a list's first pruned query, by one pass
// over its postings, and kept with the segment (which is immutable): at
// most 68 bytes a block of BlockSize postings and about 460 bytes a list,
// for the lists queries have touched. A segment a Builder returns for its
// live documents builds none, since it is replaced on the next Add.

const (
	// impactCorners is the most corners kept for one block.
	impactCorners = 8
	// impactListCorners is the most corners kept for a whole list (its
	// upper bound in the segment).
	impactListCorners = 16
	// impactTop is how many top postings a summary keeps: thresholds are
	// seeded for k ≤ impactTop.
	impactTop = 32
)

// impactMinBlocks is the shortest list (in blocks) that gets a summary;
// a variable so tests can summarise short lists.
var impactMinBlocks = 4

// impactPoint is a (tf, |D|) corner, or a (doc, tf) top posting.
type impactPoint struct{ a, b uint32 }

// termImpacts is one list's summary.
type termImpacts struct {
	// start[j]..start[j+1] are block j's corners in pts, (tf, |D|).
	start []uint32
	pts   []impactPoint
	// list holds the corners of the whole list, (tf, |D|).
	list []impactPoint
	// top holds up to impactTop postings, (doc, tf).
	top []impactPoint
}

// impactCache holds a segment's summaries by term index; nil values mark
// lists that could not be summarised (corrupt: the query's own cursor
// reports it).
type impactCache struct {
	mu sync.RWMutex
	m  map[int]*termImpacts
}

// impactsFor returns term i's summary (record r), building it on first use,
// or nil when the list is too short, the segment builds none, or its
// postings do not decode.
func (s *Segment) impactsFor(i int, r termRec) *termImpacts {
	if s.noImpacts || int(r.nb) < impactMinBlocks {
		return nil
	}
	ic := &s.impacts
	ic.mu.RLock()
	ti, ok := ic.m[i]
	ic.mu.RUnlock()
	if ok {
		return ti
	}
	ti = s.buildImpacts(i, r)
	ic.mu.Lock()
	if prev, ok := ic.m[i]; ok {
		ti = prev
	} else {
		if ic.m == nil {
			ic.m = make(map[int]*termImpacts)
		}
		ic.m[i] = ti
	}
	ic.mu.Unlock()
	return ti
}

// buildImpacts reads term i's whole list once and summarises it.
func (s *Segment) buildImpacts(i int, r termRec) *termImpacts {
	var cu cursor
	if err := s.openCursorRec(&cu, i, r); err != nil {
		return nil
	}
	avgdl := 0.0
	if s.numDocs > 0 {
		avgdl = float64(s.sumDL) / float64(s.numDocs)
	}
	ti := &termImpacts{start: make([]uint32, 1, cu.nb+1)}
	var blk [BlockSize]impactPoint
	var top topPostings
	n := 0
	for d := cu.doc(); d != efEnd; d = cu.doc() {
		tf := cu.tf()
		if cu.err != nil || tf == 0 {
			return nil
		}
		dl := s.DocLen(d)
		blk[n] = impactPoint{tf, dl}
		n++
		top.offer(d, tf, termScore(1, tf, bm25Norm(dl, refK1, refB, avgdl), refK1))
		cu.next()
		if n == BlockSize || cu.doc() == efEnd {
			ti.pts = appendCorners(ti.pts, blk[:n], impactCorners, avgdl)
			ti.start = append(ti.start, uint32(len(ti.pts)))
			n = 0
		}
	}
	if cu.err != nil || len(ti.start) != cu.nb+1 {
		return nil
	}
	all := slices.Clone(ti.pts)
	ti.list = exact(appendCorners(nil, all, impactListCorners, avgdl))
	// The appends left spare room; the cache keeps exactly what it uses.
	ti.pts = exact(ti.pts)
	ti.top = exact(top.h)
	return ti
}

// appendCorners appends to dst at most max corners that dominate pts
// ((tf, |D|) pairs; pts is reordered): the Pareto frontier (no other
// point has a tf as high and a |D| as low, one of them strictly), and when
// it is longer, merged runs of it: a run's corner takes its largest tf
// and its smallest |D|. Runs are merged bottom up, each step joining the
// two neighbours whose corner scores least under the reference parameters
// (k1 1.2, b 0.75, average length avgdl), so the corners stay close to the
// points that score high.
func appendCorners(dst, pts []impactPoint, max int, avgdl float64) []impactPoint {
	// By |D| ascending, then tf descending: a point is on the frontier when
	// its tf beats every point before it.
	slices.SortFunc(pts, func(x, y impactPoint) int {
		if c := cmp.Compare(x.b, y.b); c != 0 {
			return c
		}
		return cmp.Compare(y.a, x.a)
	})
	f := pts[:0]
	for _, p := range pts {
		if len(f) == 0 || p.a > f[len(f)-1].a {
			f = append(f, p)
		}
	}
	// Along the frontier |D| and tf both increase; joining neighbours i
	// and i+1 gives (tf of i+1, |D| of i), which dominates both.
	ref := func(p impactPoint) float64 {
		return termScore(1, p.a, bm25Norm(p.b, refK1, refB, avgdl), refK1)
	}
	for len(f) > max {
		best, bi := math.Inf(1), 0
		for i := 0; i+1 < len(f); i++ {
			if s := ref(impactPoint{f[i+1].a, f[i].b}); s < best {
				best, bi = s, i
			}
		}
		f[bi] = impactPoint{f[bi+1].a, f[bi].b}
		f = append(f[:bi+1], f[bi+2:]...)
	}
	return append(dst, f...)
}

// refK1 and refB are the reference parameters of a summary.
const refK1, refB = 1.2, 0.75

// exact returns a copy of s without spare capacity.
func exact[E any](s []E) []E {
	out := make([]E, len(s))
	copy(out, s)
	return out
}

// cornerBound is the largest score of corners (tf, |D|) for weight w.
func cornerBound(corners []impactPoint, w, k1, b, avgdl float64) float64 {
	best := 0.0
	for _, p := range corners {
		best = max(best, termScore(w, p.a, bm25Norm(p.b, k1, b, avgdl), k1))
	}
	return best
}

// topPostings keeps the impactTop postings with the highest reference
// scores (a min-heap on score; ties keep the earlier doc).
type topPostings struct {
	h []impactPoint // (doc, tf)
	s []float64
}

func (t *topPostings) offer(doc, tf uint32, score float64) {
	if len(t.h) < impactTop {
		t.h = append(t.h, impactPoint{doc, tf})
		t.s = append(t.s, score)
		for j := len(t.h) - 1; j > 0; {
			i := (j - 1) / 2
			if t.s[j] >= t.s[i] {
				break
			}
			t.swap(i, j)
			j = i
		}
		return
	}
	if score <= t.s[0] {
		return
	}
	t.h[0], t.s[0] = impactPoint{doc, tf}, score
	for i := 0; ; {
		j := 2*i + 1
		if j >= len(t.h) {
			return
		}
		if j+1 < len(t.h) && t.s[j+1] < t.s[j] {
			j++
		}
		if t.s[i] <= t.s[j] {
			return
		}
		t.swap(i, j)
		i = j
	}
}

func (t *topPostings) swap(i, j int) {
	t.h[i], t.h[j] = t.h[j], t.h[i]
	t.s[i], t.s[j] = t.s[j], t.s[i]
}

// seedSlack lowers a seeded threshold by a relative 1e-9, as pruneSlack
// makes the pruning tests conservative.
const seedSlack = 1e-9

// seedScanMax is the longest list (postings) without a summary that
// seedTheta scores whole.
const seedScanMax = 4 * BlockSize

// seedTheta raises the plan's seeded threshold from cs's lists in this
// segment: from a list's summary, its allowed top postings; from a short
// list (at most seedScanMax postings) next to one at least four times as
// long, all its allowed postings. Those are distinct documents, each
// scoring at least its contribution from that list, so when there are k of
// them the k-th best contribution is at most the final k-th best score.
// The plan keeps the largest such bound over its lists and views. Without
// it, a rare term next to a common one leaves the common list essential
// until k of the rare term's documents have been met. A query with excluded
// terms is not seeded (the exclusion test moves cursors forward only).
func (ss *segSearch) seedTheta(cs []*tcur) {
	pl := ss.pl
	if len(ss.excl) > 0 {
		return
	}
	maxDF := 0
	for _, c := range cs {
		maxDF = max(maxDF, c.df)
	}
	for _, c := range cs {
		h := pl.seedHeap[:0]
		switch {
		case c.imp != nil:
			if len(c.imp.top) < pl.k {
				continue
			}
			for _, p := range c.imp.top {
				if ss.allowed(p.a) {
					h.push(termScore(c.w, p.b, c.norm(p.a, pl.k1, pl.b), pl.k1), pl.k)
				}
			}
		case c.df >= pl.k && c.df <= seedScanMax && 4*c.df <= maxDF:
			cu := pl.scratchCursor()
			if c.seg.openCursorRec(cu, c.term, c.rec) != nil {
				continue
			}
			for d := cu.doc(); d != efEnd; d = cu.doc() {
				if ss.allowed(d) {
					tf := cu.tf()
					if tf == 0 {
						break
					}
					h.push(termScore(c.w, tf, c.norm(d, pl.k1, pl.b), pl.k1), pl.k)
				}
				cu.next()
			}
			if cu.err != nil {
				h = h[:0]
			}
		default:
			continue
		}
		if len(h) == pl.k && h[0] > 0 {
			pl.seed = max(pl.seed, h[0]*(1-seedSlack))
		}
		pl.seedHeap = h
	}
}

// scoreHeap is a min-heap of the k best partial scores.
type scoreHeap []float64

func (h *scoreHeap) push(s float64, k int) {
	a := *h
	if len(a) < k {
		a = append(a, s)
		for j := len(a) - 1; j > 0; {
			i := (j - 1) / 2
			if a[j] >= a[i] {
				break
			}
			a[i], a[j] = a[j], a[i]
			j = i
		}
		*h = a
		return
	}
	if s <= a[0] {
		return
	}
	a[0] = s
	for i := 0; ; {
		j := 2*i + 1
		if j >= len(a) {
			return
		}
		if j+1 < len(a) && a[j+1] < a[j] {
			j++
		}
		if a[i] <= a[j] {
			return
		}
		a[i], a[j] = a[j], a[i]
		i = j
	}
}

// scratchCursor is a cursor seedTheta may reposition: the one after the
// terms' cursors (newSegSearch), else one of the plan's own.
func (pl *plan) scratchCursor() *cursor {
	if len(pl.cursors) > len(pl.terms) {
		return &pl.cursors[len(pl.terms)]
	}
	if pl.spare == nil {
		pl.spare = new(cursor)
	}
	return pl.spare
}
