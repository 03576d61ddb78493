package bm25

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// IDF variants.
const (
	// IDFDefault is ln((N − n + 0.5)/(n + 0.5) + 1): the "+1" inside the
	// logarithm keeps it positive for every n (Lucene's BM25Similarity,
	// and Robertson & Zaragoza 2009, eq. 3.3 plus one).
	IDFDefault = "default"
	// IDFRobertson is ln((N − n + 0.5)/(n + 0.5)), the Robertson–Spärck
	// Jones weight without relevance information (Robertson & Zaragoza,
	// "The Probabilistic Relevance Framework: BM25 and Beyond", FnTIR 3(4),
	// 2009, §3.2, eq. 3.3). It is negative when n > N/2; the term weight is
	// clamped at 0 so that block-max upper bounds stay valid.
	IDFRobertson = "robertson"
)

// SearchParams are per-query parameters. Fields are used as given (k1 = 0
// and b = 0 are meaningful); start from DefaultSearchParams.
type SearchParams struct {
	// K is the number of hits returned (top-k), 1..100000. Default 10.
	K int
	// K1 is BM25's term-frequency saturation, >= 0. Default 1.2.
	K1 float64
	// B is BM25's length normalisation, in [0, 1]. Default 0.75.
	B float64
	// IDF is IDFDefault ("" means default) or IDFRobertson.
	IDF string
	// MaxExpansions caps the terms one prefix expands to (first in byte
	// order). Default 64.
	MaxExpansions int
	// Exhaustive scores every matching document without pruning (the
	// reference scorer). Same results, slower.
	Exhaustive bool
}

// DefaultSearchParams returns K 10, K1 1.2, B 0.75, default IDF, 64
// expansions.
func DefaultSearchParams() SearchParams {
	return SearchParams{K: 10, K1: 1.2, B: 0.75, IDF: IDFDefault, MaxExpansions: 64}
}

// Validate reports every problem in p.
func (p SearchParams) Validate() error {
	var probs []string
	if p.K < 1 || p.K > 100000 {
		probs = append(probs, fmt.Sprintf("K %d: want 1..100000", p.K))
	}
	if !(p.K1 >= 0) || math.IsInf(p.K1, 0) {
		probs = append(probs, fmt.Sprintf("K1 %v: want finite >= 0", p.K1))
	}
	if !(p.B >= 0 && p.B <= 1) {
		probs = append(probs, fmt.Sprintf("B %v: want 0..1", p.B))
	}
	if p.IDF != "" && p.IDF != IDFDefault && p.IDF != IDFRobertson {
		probs = append(probs, fmt.Sprintf("IDF %q: want %q or %q", p.IDF, IDFDefault, IDFRobertson))
	}
	if p.MaxExpansions < 0 {
		probs = append(probs, fmt.Sprintf("MaxExpansions %d: want >= 0 (0 = default 64)", p.MaxExpansions))
	}
	if len(probs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidOptions, strings.Join(probs, "; "))
}

// Stats are the collection statistics BM25 needs: N documents, Σ|D| and
// per-term document frequencies. Pass the same Stats to every segment's
// search (Search does) so a document's score does not depend on how the
// collection is split into segments.
type Stats struct {
	N     int64
	SumDL int64
	DF    map[string]int64
}

// CollectStats sums N, Σ|D| and the df of terms over segs. Documents
// deleted but not yet merged away are counted (as Lucene does); callers who
// track live counts can build Stats themselves.
func CollectStats(segs []*Segment, terms []string) *Stats {
	st := &Stats{DF: make(map[string]int64, len(terms))}
	for _, s := range segs {
		st.N += int64(s.numDocs)
		st.SumDL += int64(s.sumDL)
		for _, t := range terms {
			if _, ok := st.DF[t]; !ok {
				st.DF[t] = 0
			}
			st.DF[t] += int64(s.DocFreq(t))
		}
	}
	return st
}

// AvgDL returns Σ|D| / N (0 for an empty collection).
func (st *Stats) AvgDL() float64 {
	if st.N == 0 {
		return 0
	}
	return float64(st.SumDL) / float64(st.N)
}

// IDF returns the (unclamped) IDF of a term with document frequency n.
func IDF(kind string, N, n int64) float64 {
	x := (float64(N) - float64(n) + 0.5) / (float64(n) + 0.5)
	if kind == IDFRobertson {
		return math.Log(x)
	}
	return math.Log(x + 1)
}

// TermScore is one term's BM25 contribution (Robertson & Zaragoza 2009,
// eq. 3.15): w · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)), where w is the
// query term's weight (query tf × IDF, clamped at 0). Exported so callers
// and tests can evaluate the formula directly.
func TermScore(w float64, tf, dl uint32, k1, b, avgdl float64) float64 {
	return termScore(w, tf, bm25Norm(dl, k1, b, avgdl), k1)
}

func bm25Norm(dl uint32, k1, b, avgdl float64) float64 {
	if avgdl <= 0 {
		return k1
	}
	return k1 * (1 - b + b*float64(dl)/avgdl)
}

func termScore(w float64, tf uint32, norm, k1 float64) float64 {
	f := float64(tf)
	return w * (f * (k1 + 1) / (f + norm))
}

// View is one segment as a query sees it. Allow, when non-nil, lists the
// local doc ids that may be returned (deletions, ACLs, filters); it is
// applied during traversal, so k allowed hits come back whenever k allowed
// documents match.
type View struct {
	Seg   *Segment
	Allow *roaring.Bitmap
}

// Hit is one result.
type Hit struct {
	ExtID uint64
	Score float64
	// View is the index into the views slice, Doc the local doc id there.
	View int
	Doc  uint32
}

// ErrNoPositions is returned for a phrase query over a segment built with
// OmitPositions.
var ErrNoPositions = errors.New("bm25: phrase query on a segment without positions")

// qterm is one distinct scored term of a planned query.
type qterm struct {
	term     string
	qtf      int
	required bool
	w        float64 // qtf * max(0, idf)
}

type plan struct {
	terms   []qterm
	index   map[string]int
	exclude []string
	phrases [][]PhraseTerm
	k1, b   float64
	avgdl   float64
	k       int
	empty   bool // no scored clause: nothing matches
}

func planQuery(views []View, q Query, p SearchParams, st *Stats) (*plan, error) {
	if p.K == 0 {
		p.K = 10
	}
	if p.MaxExpansions == 0 {
		p.MaxExpansions = 64
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pl := &plan{index: map[string]int{}, k1: p.K1, b: p.B, k: p.K}
	add := func(t string, required bool) {
		i, ok := pl.index[t]
		if !ok {
			i = len(pl.terms)
			pl.index[t] = i
			pl.terms = append(pl.terms, qterm{term: t})
		}
		pl.terms[i].qtf++
		pl.terms[i].required = pl.terms[i].required || required
	}
	for _, t := range q.Should {
		add(t, false)
	}
	for _, t := range q.Must {
		add(t, true)
	}
	for _, ph := range q.Phrases {
		if len(ph) == 0 {
			continue
		}
		for _, s := range ph {
			add(s.Term, true)
		}
		pl.phrases = append(pl.phrases, ph)
	}
	for _, pre := range q.Prefixes {
		var exp []string
		for _, v := range views {
			exp = v.Seg.PrefixTerms(exp, pre, p.MaxExpansions)
		}
		sort.Strings(exp)
		n := 0
		for i, t := range exp {
			if i > 0 && t == exp[i-1] {
				continue
			}
			if n >= p.MaxExpansions {
				break
			}
			add(t, false)
			n++
		}
	}
	pl.exclude = q.MustNot
	if len(pl.terms) == 0 {
		pl.empty = true
		return pl, nil
	}
	if st == nil {
		segs := make([]*Segment, len(views))
		for i, v := range views {
			segs[i] = v.Seg
		}
		names := make([]string, len(pl.terms))
		for i, t := range pl.terms {
			names[i] = t.term
		}
		st = CollectStats(segs, names)
	}
	if st.N <= 0 {
		pl.empty = true
		return pl, nil
	}
	pl.avgdl = st.AvgDL()
	for i := range pl.terms {
		t := &pl.terms[i]
		idf := IDF(p.IDF, st.N, st.DF[t.term])
		t.w = float64(t.qtf) * math.Max(0, idf)
	}
	return pl, nil
}

// topK keeps the k best hits: score descending, then ExtID ascending.
type topK struct {
	k       int
	h       []Hit
	offered int // documents offered (fully scored)
}

func worse(a, b *Hit) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.ExtID > b.ExtID)
}

func (t *topK) Len() int           { return len(t.h) }
func (t *topK) Less(i, j int) bool { return worse(&t.h[i], &t.h[j]) }
func (t *topK) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }
func (t *topK) Push(x any)         { t.h = append(t.h, x.(Hit)) }
func (t *topK) Pop() any           { x := t.h[len(t.h)-1]; t.h = t.h[:len(t.h)-1]; return x }

// offer inserts h if it belongs to the top k; it reports whether the
// threshold may have changed.
func (t *topK) offer(h Hit) bool {
	t.offered++
	if len(t.h) < t.k {
		heap.Push(t, h)
		return len(t.h) == t.k
	}
	if worse(&t.h[0], &h) {
		t.h[0] = h
		heap.Fix(t, 0)
		return true
	}
	return false
}

// theta is the score a candidate must reach (ties then go by ExtID).
func (t *topK) theta() float64 {
	if len(t.h) < t.k {
		return math.Inf(-1)
	}
	return t.h[0].Score
}

func (t *topK) sorted() []Hit {
	out := append([]Hit(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return worse(&out[j], &out[i]) })
	return out
}

// pruneSlack makes every pruning test conservative by a relative 1e-9: an
// upper bound summed in a different order than the exact score may round a
// few ulps low, and a skipped document must be certain to lose.
const pruneSlack = 1e-9

func canSkip(bound, theta float64) bool {
	return bound+math.Abs(bound)*pruneSlack < theta
}

// Search returns the top p.K documents of the views for q, scored with BM25
// under st (nil: collected from the views for q's terms), score descending
// then ExtID ascending. Disjunctive queries use Block-Max MaxScore (Turtle &
// Flood 1995; block-max bounds after Ding & Suel 2011, as evaluated by
// Mallia et al. 2019); queries with required terms or phrases use
// conjunctive traversal driven by the rarest required term. With
// p.Exhaustive the reference scorer is used instead; both return the same
// hits. Errors: invalid params (ErrInvalidOptions), corrupt postings
// (ErrCorrupt), phrases without positions (ErrNoPositions).
func Search(views []View, q Query, p SearchParams, st *Stats) ([]Hit, error) {
	hits, _, err := search(views, q, p, st)
	return hits, err
}

// search is Search that also returns how many documents were offered to
// the top-k heap (fully scored), for pruning tests.
func search(views []View, q Query, p SearchParams, st *Stats) ([]Hit, int, error) {
	pl, err := planQuery(views, q, p, st)
	if err != nil {
		return nil, 0, err
	}
	if pl.empty {
		return nil, 0, nil
	}
	top := &topK{k: pl.k}
	for vi, v := range views {
		if len(pl.phrases) > 0 && !v.Seg.positions {
			return nil, 0, ErrNoPositions
		}
		var err error
		if p.Exhaustive {
			err = searchExhaustive(vi, v, pl, top)
		} else {
			err = searchPruned(vi, v, pl, top)
		}
		if err != nil {
			return nil, 0, err
		}
	}
	return top.sorted(), top.offered, nil
}

// tcur is a cursor bound to a query term.
type tcur struct {
	*cursor
	qi    int
	w     float64
	ub    float64 // upper bound of this term's contribution in the segment
	avgdl float64 // of the cursor's field
}

// norm returns the BM25 length normalisation of doc d in the cursor's
// segment (field).
func (c *tcur) norm(d uint32, k1, b float64) float64 {
	return bm25Norm(c.seg.DocLen(d), k1, b, c.avgdl)
}

type segSearch struct {
	vi      int
	v       View
	pl      *plan
	top     *topK
	curs    []*tcur // by query term index; nil if absent from the segment
	excl    []*cursor
	contrib []float64
	posBuf  [][]uint32
	allowIt roaring.IntPeekable
}

func newSegSearch(vi int, v View, pl *plan, top *topK) (*segSearch, bool, error) {
	ss := &segSearch{vi: vi, v: v, pl: pl, top: top, curs: make([]*tcur, len(pl.terms)), contrib: make([]float64, len(pl.terms))}
	s := v.Seg
	for qi, t := range pl.terms {
		i, ok := s.lookup(t.term)
		if !ok {
			if t.required {
				return nil, false, nil
			}
			continue
		}
		c, err := s.openCursor(i)
		if err != nil {
			return nil, false, err
		}
		r := s.rec(i)
		ub := termScore(t.w, r.maxTF, bm25Norm(r.minDL, pl.k1, pl.b, pl.avgdl), pl.k1)
		ss.curs[qi] = &tcur{cursor: c, qi: qi, w: t.w, ub: ub, avgdl: pl.avgdl}
	}
	for _, t := range pl.exclude {
		if i, ok := s.lookup(t); ok {
			c, err := s.openCursor(i)
			if err != nil {
				return nil, false, err
			}
			ss.excl = append(ss.excl, c)
		}
	}
	return ss, true, nil
}

func (ss *segSearch) err() error {
	for _, c := range ss.curs {
		if c != nil && c.err != nil {
			return c.err
		}
	}
	for _, c := range ss.excl {
		if c.err != nil {
			return c.err
		}
	}
	return nil
}

func (ss *segSearch) allowed(d uint32) bool {
	return ss.v.Allow == nil || ss.v.Allow.Contains(d)
}

// nextAllowed returns the smallest allowed doc id > d, or efEnd.
func (ss *segSearch) nextAllowed(d uint32) uint32 {
	if ss.allowIt == nil {
		ss.allowIt = ss.v.Allow.Iterator()
	}
	ss.allowIt.AdvanceIfNeeded(d + 1)
	if d == efEnd-1 || !ss.allowIt.HasNext() {
		return efEnd
	}
	return ss.allowIt.PeekNext()
}

func (ss *segSearch) excluded(d uint32) bool {
	for _, c := range ss.excl {
		if c.nextGEQ(d) == d {
			return true
		}
	}
	return false
}

// phrasesMatch checks every phrase at doc d; all phrase cursors are
// positioned on d (they are required).
func (ss *segSearch) phrasesMatch(d uint32) bool {
	for _, ph := range ss.pl.phrases {
		if len(ss.posBuf) < len(ph) {
			ss.posBuf = make([][]uint32, len(ph))
		}
		for j, slot := range ph {
			c := ss.curs[ss.pl.index[slot.Term]]
			ss.posBuf[j] = c.appendPositions(ss.posBuf[j][:0])
		}
		if !phraseAt(ph, ss.posBuf[:len(ph)]) {
			return false
		}
	}
	return true
}

// phraseAt reports whether some start s has ph[j].Term at s+ph[j].Offset
// for all j; pos[j] are the sorted positions of slot j.
func phraseAt(ph []PhraseTerm, pos [][]uint32) bool {
outer:
	for _, p0 := range pos[0] {
		start := int64(p0) - int64(ph[0].Offset)
		for j := 1; j < len(ph); j++ {
			want := start + int64(ph[j].Offset)
			if want < 0 || want > math.MaxUint32 {
				continue outer
			}
			ps := pos[j]
			k := sort.Search(len(ps), func(i int) bool { return ps[i] >= uint32(want) })
			if k == len(ps) || ps[k] != uint32(want) {
				continue outer
			}
		}
		return true
	}
	return false
}

// finalScore sums the contributions in query-term order (the canonical
// order, shared with the reference scorer, so equal inputs give bit-equal
// scores) and clears them.
func (ss *segSearch) finalScore() float64 {
	s := 0.0
	for i, c := range ss.contrib {
		s += c
		ss.contrib[i] = 0
	}
	return s
}

func (ss *segSearch) emit(d uint32) {
	score := ss.finalScore()
	ss.top.offer(Hit{ExtID: ss.v.Seg.ExtID(d), Score: score, View: ss.vi, Doc: d})
}

func searchPruned(vi int, v View, pl *plan, top *topK) error {
	ss, ok, err := newSegSearch(vi, v, pl, top)
	if err != nil || !ok {
		return err
	}
	conj := len(pl.phrases) > 0
	for _, t := range pl.terms {
		conj = conj || t.required
	}
	if conj {
		ss.conjunctive()
	} else {
		ss.maxScore()
	}
	return ss.err()
}

// maxScore is Block-Max MaxScore over the optional terms. Terms are sorted
// by upper bound; the longest prefix whose bounds sum below the threshold
// is "non-essential": a document matching only those cannot enter the top
// k, so candidates come from the essential lists only, and non-essential
// lists are probed (NextGEQ) only while the document can still make it,
// using their block-max bound at the candidate.
func (ss *segSearch) maxScore() {
	pl := ss.pl
	var cs []*tcur
	for _, c := range ss.curs {
		if c != nil {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		return
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].ub < cs[j].ub })
	prefix := make([]float64, len(cs))
	acc := 0.0
	for i, c := range cs {
		acc += c.ub
		prefix[i] = acc
	}
	seg := ss.v.Seg
	theta := ss.top.theta()
	e := 0
	for e < len(cs) && canSkip(prefix[e], theta) {
		e++
	}
	for e < len(cs) {
		d := efEnd
		for _, c := range cs[e:] {
			d = min(d, c.doc())
		}
		if d == efEnd {
			break
		}
		if !ss.allowed(d) {
			// Jump every essential list to the next allowed document.
			next := ss.nextAllowed(d)
			for _, c := range cs[e:] {
				c.nextGEQ(next)
			}
			continue
		}
		if ss.excluded(d) {
			for _, c := range cs[e:] {
				if c.doc() == d {
					c.next()
				}
			}
			continue
		}
		s := 0.0
		for _, c := range cs[e:] {
			if c.doc() == d {
				x := termScore(c.w, c.tf(), c.norm(d, pl.k1, pl.b), pl.k1)
				ss.contrib[c.qi] = x
				s += x
			}
		}
		lost := false
		for i := e - 1; i >= 0; i-- {
			if canSkip(s+prefix[i], theta) {
				lost = true
				break
			}
			c := cs[i]
			mt, md, ok := c.shallowBlock(d)
			if !ok {
				continue
			}
			rest := 0.0
			if i > 0 {
				rest = prefix[i-1]
			}
			if canSkip(s+rest+termScore(c.w, mt, bm25Norm(md, pl.k1, pl.b, c.avgdl), pl.k1), theta) {
				lost = true
				break
			}
			if c.nextGEQ(d) == d {
				x := termScore(c.w, c.tf(), c.norm(d, pl.k1, pl.b), pl.k1)
				ss.contrib[c.qi] = x
				s += x
			}
		}
		if lost {
			for i := range ss.contrib {
				ss.contrib[i] = 0
			}
		} else if ss.top.offer(Hit{ExtID: seg.ExtID(d), Score: ss.finalScore(), View: ss.vi, Doc: d}) {
			theta = ss.top.theta()
			for e < len(cs) && canSkip(prefix[e], theta) {
				e++
			}
		}
		for _, c := range cs {
			if c.doc() == d {
				c.next()
			}
		}
	}
}

// conjunctive handles queries with required terms and/or phrases: the
// required lists are intersected (leapfrog NextGEQ from the rarest), then
// excluded terms, the allow-list and phrases are checked, and optional
// terms are added when the block-max bound says the document can still
// enter the top k.
func (ss *segSearch) conjunctive() {
	pl := ss.pl
	var req, opt []*tcur
	for qi, c := range ss.curs {
		if c == nil {
			continue
		}
		if pl.terms[qi].required {
			req = append(req, c)
		} else {
			opt = append(opt, c)
		}
	}
	sort.SliceStable(req, func(i, j int) bool { return req[i].df < req[j].df })
	optUB := 0.0
	for _, c := range opt {
		optUB += c.ub
	}
	seg := ss.v.Seg
	d := uint32(0)
	for {
		d = req[0].nextGEQ(d)
		if d == efEnd {
			return
		}
		aligned := true
		for _, c := range req[1:] {
			if v := c.nextGEQ(d); v != d {
				d = v
				aligned = false
				break
			}
		}
		if !aligned {
			if d == efEnd {
				return
			}
			continue
		}
		if !ss.allowed(d) {
			if d = ss.nextAllowed(d); d == efEnd {
				return
			}
			continue
		}
		if !ss.excluded(d) {
			theta := ss.top.theta()
			bound := optUB
			for _, c := range req {
				mt, md, _ := c.shallowBlock(d)
				bound += termScore(c.w, mt, bm25Norm(md, pl.k1, pl.b, pl.avgdl), pl.k1)
			}
			if !canSkip(bound, theta) && (len(pl.phrases) == 0 || ss.phrasesMatch(d)) {
				norm := bm25Norm(seg.DocLen(d), pl.k1, pl.b, pl.avgdl)
				for _, c := range req {
					ss.contrib[c.qi] = termScore(c.w, c.tf(), norm, pl.k1)
				}
				for _, c := range opt {
					if c.nextGEQ(d) == d {
						ss.contrib[c.qi] = termScore(c.w, c.tf(), norm, pl.k1)
					}
				}
				ss.emit(d)
			}
		}
		if d == efEnd-1 {
			return
		}
		d++
	}
}

// searchExhaustive is the reference scorer: it decodes every query term's
// whole posting list, scores every candidate document by the formula and
// offers all of them to the top-k. No pruning, no block-max metadata.
func searchExhaustive(vi int, v View, pl *plan, top *topK) error {
	s := v.Seg
	type occ struct {
		tf  uint32
		pos []uint32
	}
	per := make([]map[uint32]occ, len(pl.terms))
	for qi, t := range pl.terms {
		docs, tfs, pos, err := s.Postings(t.term)
		if err != nil {
			return err
		}
		per[qi] = map[uint32]occ{}
		k := 0
		for j, d := range docs {
			o := occ{tf: tfs[j]}
			if s.positions {
				o.pos = pos[k : k+int(tfs[j])]
				k += int(tfs[j])
			}
			per[qi][d] = o
		}
	}
	excluded := map[uint32]bool{}
	for _, t := range pl.exclude {
		docs, _, _, err := s.Postings(t)
		if err != nil {
			return err
		}
		for _, d := range docs {
			excluded[d] = true
		}
	}
	cand := map[uint32]bool{}
	for qi := range pl.terms {
		for d := range per[qi] {
			cand[d] = true
		}
	}
	for d := range cand {
		if excluded[d] || (v.Allow != nil && !v.Allow.Contains(d)) {
			continue
		}
		ok := true
		for qi, t := range pl.terms {
			if _, in := per[qi][d]; t.required && !in {
				ok = false
			}
		}
		for _, ph := range pl.phrases {
			if !ok {
				break
			}
			pos := make([][]uint32, len(ph))
			for j, slot := range ph {
				pos[j] = per[pl.index[slot.Term]][d].pos
			}
			ok = phraseAt(ph, pos)
		}
		if !ok {
			continue
		}
		score := 0.0
		for qi, t := range pl.terms {
			if o, in := per[qi][d]; in {
				score += TermScore(t.w, o.tf, s.DocLen(d), pl.k1, pl.b, pl.avgdl)
			}
		}
		top.offer(Hit{ExtID: s.ExtID(d), Score: score, View: vi, Doc: d})
	}
	return nil
}
