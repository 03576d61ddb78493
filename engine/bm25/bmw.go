package bm25

// Block-Max WAND (Ding & Suel, "Faster top-k document retrieval using
// block-max indexes", SIGIR 2011, §4, Algorithm 2), over the same cursors,
// block-max metadata, θ and tie rule as Block-Max MaxScore (maxScore).
//
// The lists are kept sorted by current doc id. The pivot is the first list
// at which the running sum of list upper bounds (in doc-id order) can reach
// θ; no document before the pivot doc can enter the top k, because only
// the lists before the pivot can hold it. The pivot is extended over the
// lists positioned on the same doc. Then the block-max scores of the lists
// up to the pivot, at the pivot doc, are summed (shallow pointers, no tf
// decoded):
//
//   - if that sum can reach θ and every list up to the pivot is on the pivot
//     doc, the doc is scored (stopping early once its partial score plus the
//     remaining block bounds cannot reach θ) and offered;
//   - if it can reach θ but some lists lag behind, the lagging list nearest
//     the pivot is moved to the pivot doc (NextGEQ);
//   - otherwise no doc from the pivot doc up to the end of the shortest of
//     those blocks (or the next list's doc, whichever comes first) can enter
//     the top k, and the list with the largest upper bound among them jumps
//     there.
//
// Every comparison with θ goes through canSkip (relative slack 1e-9), so a
// document whose bound ties θ is still scored and the ExtID tie rule
// decides, exactly as on the other paths.

// bmw runs Block-Max WAND over the segment's (optional) term cursors.
func (ss *segSearch) bmw() {
	openAll(ss.curs)
	var cs []*tcur
	for _, c := range ss.curs {
		if c != nil && c.doc() != efEnd {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return
	}
	w := &bmwState{ss: ss, cs: cs}
	w.sortAll()
	w.run()
}

type bmwState struct {
	ss  *segSearch
	cs  []*tcur   // live lists, by current doc id ascending
	bbs []float64 // scratch: block bounds of the lists up to the pivot
}

// sortAll restores doc-id order by insertion sort (few lists) and drops
// exhausted lists (which sort last).
func (w *bmwState) sortAll() {
	cs := w.cs
	for i := 1; i < len(cs); i++ {
		c := cs[i]
		d := c.doc()
		j := i
		for j > 0 && cs[j-1].doc() > d {
			cs[j] = cs[j-1]
			j--
		}
		cs[j] = c
	}
	n := len(cs)
	for n > 0 && cs[n-1].doc() == efEnd {
		n--
	}
	w.cs = cs[:n]
}

// bubble restores doc-id order after list i moved forward.
func (w *bmwState) bubble(i int) {
	cs := w.cs
	c := cs[i]
	d := c.doc()
	for i+1 < len(cs) && cs[i+1].doc() < d {
		cs[i] = cs[i+1]
		i++
	}
	cs[i] = c
	if d == efEnd {
		w.cs = cs[:len(cs)-1]
	}
}

// advanceTo moves every list positioned before target to target or
// beyond, and restores the order.
func (w *bmwState) advanceTo(target uint32) {
	for _, c := range w.cs {
		if c.doc() >= target {
			break
		}
		c.nextGEQ(target)
	}
	w.sortAll()
}

func (w *bmwState) run() {
	ss, pl := w.ss, w.ss.pl
	k1, b := pl.k1, pl.b
	theta := ss.top.theta()
	for len(w.cs) > 0 {
		if ss.cn.cancelled() {
			return
		}
		cs := w.cs
		// Pivot: first list where the upper bounds of the lists so far
		// can reach theta.
		p := -1
		acc := 0.0
		for i, c := range cs {
			acc += c.ub
			if !canSkip(acc, theta) {
				p = i
				break
			}
		}
		if p < 0 {
			return
		}
		pd := cs[p].doc()
		for p+1 < len(cs) && cs[p+1].doc() == pd {
			p++
		}
		// Block-max bound of the lists up to the pivot, at the pivot doc.
		// bbs[i] is list i's block bound (0 when no block can hold pd);
		// end is the last doc all those blocks cover.
		bm, end := 0.0, efEnd-1
		w.bbs = w.bbs[:0]
		for _, c := range cs[:p+1] {
			bb, ok := c.blockBound(pd, k1, b)
			if ok {
				bm += bb
				last, _, _ := c.blockMeta(c.sb)
				end = min(end, last)
			}
			w.bbs = append(w.bbs, bb)
		}
		if canSkip(bm, theta) {
			// No doc in [pd, end] can enter the top k, nor any before
			// the next list's doc that only these lists hold: jump the
			// list with the largest bound among them.
			next := end + 1
			if p+1 < len(cs) {
				next = min(next, cs[p+1].doc())
			}
			best := 0
			for i, c := range cs[:p+1] {
				if c.ub > cs[best].ub {
					best = i
				}
			}
			if next <= pd {
				next = pd + 1
			}
			if next == efEnd {
				return
			}
			cs[best].nextGEQ(next)
			w.bubble(best)
			continue
		}
		if cs[0].doc() != pd {
			// Align: move the lagging list nearest the pivot.
			i := p
			for cs[i].doc() == pd {
				i--
			}
			cs[i].nextGEQ(pd)
			w.bubble(i)
			continue
		}
		// Every list in cs[:p+1] is on pd; the rest are beyond it.
		if ss.v.Allow != nil && !ss.v.Allow.Contains(pd) {
			next := ss.nextAllowed(pd)
			if next == efEnd {
				return
			}
			w.advanceTo(next)
			continue
		}
		if len(ss.excl) == 0 || !ss.excluded(pd) {
			// Suffix sums of the block bounds (sums of non-negative
			// terms, so canSkip's relative slack covers their rounding).
			bbs := w.bbs
			rest := 0.0
			for i := len(bbs) - 1; i >= 0; i-- {
				bbs[i], rest = rest, rest+bbs[i]
			}
			s := 0.0
			lost := false
			for i, c := range cs[:p+1] {
				x := termScore(c.w, c.tf(), c.norm(pd, k1, b), k1)
				ss.contrib[c.qi] = x
				s += x
				if canSkip(s+bbs[i], theta) {
					lost = true
					break
				}
			}
			if lost {
				for i := range ss.contrib {
					ss.contrib[i] = 0
				}
			} else if ss.top.offer(Hit{ExtID: ss.v.Seg.ExtID(pd), Score: ss.finalScore(), View: ss.vi, Doc: pd}) {
				theta = ss.top.theta()
			}
		}
		for _, c := range cs[:p+1] {
			c.next()
		}
		w.sortAll()
	}
}
