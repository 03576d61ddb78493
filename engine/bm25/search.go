package bm25

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/internal/cancel"
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
	// Algorithm selects the disjunctive (OR) dynamic-pruning evaluator:
	// AlgBMM (Block-Max MaxScore), AlgBMW (Block-Max WAND) or "" for the
	// default, AlgDefault. Both return exactly the exhaustive top-k; only
	// speed differs (measurements in the package doc). Ignored with
	// Exhaustive and for queries with required terms or phrases.
	Algorithm string
}

// Disjunctive evaluators (SearchParams.Algorithm).
const (
	// AlgBMM is Block-Max MaxScore (Turtle & Flood 1995; block-max
	// bounds after Ding & Suel 2011; Mallia et al., ECIR 2019).
	AlgBMM = "bmm"
	// AlgBMW is Block-Max WAND (Ding & Suel, SIGIR 2011).
	AlgBMW = "bmw"
	// AlgDefault is the evaluator used when Algorithm is "".
	AlgDefault = AlgBMM
)

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
	if p.Algorithm != "" && p.Algorithm != AlgBMM && p.Algorithm != AlgBMW {
		probs = append(probs, fmt.Sprintf("Algorithm %q: want %q or %q (\"\" = default %q)", p.Algorithm, AlgBMM, AlgBMW, AlgDefault))
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
// collection is split into segments. A df outside [0, N] is read as the
// nearer bound.
type Stats struct {
	N     int64
	SumDL int64
	DF    map[string]int64

	// looked, when CollectStats built the Stats, keeps the dictionary
	// index of every term in every segment it read, so a Search over the
	// same segments looks no term up twice.
	looked *statsLookups
}

// statsLookups: rows[ti][si] is term terms[ti]'s place in segs[si]
// (term-major, so a TermTable's cached row serves as is).
type statsLookups struct {
	segs []*Segment
	pos  map[string]int // term → ti
	rows [][]termRef
}

// CollectStats sums N, Σ|D| and the df of terms over segs. Documents
// deleted but not yet merged away are counted (as Lucene does); callers who
// track live counts can build Stats themselves. TermTable.CollectStats
// returns the same Stats with fewer dictionary lookups.
func CollectStats(segs []*Segment, terms []string) *Stats {
	return collectStats(segs, terms, nil)
}

// collectStats is CollectStats; when tt is not nil, segs starts with
// tt's segments and their part of each term comes from the table.
func collectStats(segs []*Segment, terms []string, tt *TermTable) *Stats {
	st := &Stats{DF: make(map[string]int64, len(terms))}
	// A term listed twice (e.g. a word and a prefix expansion of it)
	// counts once.
	uniq := make([]string, 0, len(terms))
	for _, t := range terms {
		if _, ok := st.DF[t]; !ok {
			st.DF[t] = 0
			uniq = append(uniq, t)
		}
	}
	from := 0 // segs[:from] are answered by tt
	if tt != nil {
		from = len(tt.segs)
		st.N, st.SumDL = tt.n, tt.sumDL
	}
	for _, s := range segs[from:] {
		st.N += int64(s.numDocs)
		st.SumDL += int64(s.sumDL)
	}
	lk := &statsLookups{segs: segs, pos: make(map[string]int, len(uniq)), rows: make([][]termRef, len(uniq))}
	var flat []termRef
	if from < len(segs) {
		flat = make([]termRef, len(segs)*len(uniq))
	}
	for ti, t := range uniq {
		lk.pos[t] = ti
		var row []termRef
		if tt != nil {
			r := tt.row(t)
			st.DF[t] += r.df
			row = r.refs
		}
		if from < len(segs) {
			own := flat[ti*len(segs) : (ti+1)*len(segs) : (ti+1)*len(segs)]
			copy(own, row)
			for si, s := range segs[from:] {
				own[from+si] = s.ref(t)
				st.DF[t] += int64(own[from+si].rec.df)
			}
			row = own
		}
		lk.rows[ti] = row
	}
	st.looked = lk
	return st
}

// lookupsFor returns, when st was collected over exactly the views'
// segments, each plan term's place per view (tidx[qi][vi]), looking up
// only terms st did not see; nil otherwise.
func (st *Stats) lookupsFor(views []View, terms []qterm) [][]termRef {
	lk := st.looked
	if lk == nil || len(lk.segs) != len(views) {
		return nil
	}
	for vi, v := range views {
		if lk.segs[vi] != v.Seg {
			return nil
		}
	}
	tidx := make([][]termRef, len(terms))
	for qi, t := range terms {
		if ti, ok := lk.pos[t.term]; ok {
			tidx[qi] = lk.rows[ti]
			continue
		}
		tidx[qi] = lookupRow(views, t.term)
	}
	return tidx
}

// lookupRow returns term's place in each view's segment.
func lookupRow(views []View, term string) []termRef {
	row := make([]termRef, len(views))
	for vi, v := range views {
		row[vi] = v.Seg.ref(term)
	}
	return row
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
	// The explicit conversion rounds the product here, so no caller can
	// have it fused into an FMA (Go fuses on arm64, ppc64, s390x): the
	// cached norm table and the inline path must give identical scores.
	return float64(k1 * (1 - b + b*float64(dl)/avgdl))
}

func termScore(w float64, tf uint32, norm, k1 float64) float64 {
	f := float64(tf)
	// Rounded explicitly (see bm25Norm): a caller's s += termScore(...)
	// must not fuse into an FMA differently on different paths.
	return float64(w * (f * (k1 + 1) / (f + norm)))
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
	alg     string // AlgBMM or AlgBMW
	empty   bool   // no scored clause: nothing matches
	// tidx[qi][vi] is term qi's place in view vi, when planQuery looked
	// the terms up itself or CollectStats did; nil otherwise.
	tidx [][]termRef
	// tcurs and cursors hold one cursor per query term, reused by each
	// segment in turn (segments are searched one after the other), as are
	// the per-segment search state ss, its per-term slices (curs,
	// contrib) and MaxScore's (msCurs, msPrefix), so a segment costs no
	// allocation.
	tcurs    []tcur
	cursors  []cursor
	ss       segSearch
	curs     []*tcur
	contrib  []float64
	msCurs   []*tcur
	msPrefix []float64
	// seed is a lower bound on the final k-th best score, from the
	// summaries' top postings and short lists (seedTheta); seedHeap is
	// its scratch, as is scratchCursor's cursor (spare when the plan has
	// no pooled one).
	seed     float64
	seedHeap scoreHeap
	spare    *cursor
}

// ref is query term qi's place in view vi's segment s: as the plan's
// statistics found it, else looked up.
func (pl *plan) ref(qi, vi int, s *Segment) termRef {
	if pl.tidx != nil {
		return pl.tidx[qi][vi]
	}
	return s.ref(pl.terms[qi].term)
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
	for vi, v := range views {
		if v.Seg != nil && v.Seg.missingExt() {
			return nil, errNoExtIDs(vi, v.Seg)
		}
	}
	pl := &plan{index: map[string]int{}, k1: p.K1, b: p.B, k: p.K, alg: p.Algorithm, seed: math.Inf(-1)}
	if pl.alg == "" {
		pl.alg = AlgDefault
	}
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
		// CollectStats, keeping each term's dictionary index per view so
		// the search does not look the terms up again.
		st = &Stats{DF: make(map[string]int64, len(pl.terms))}
		for _, v := range views {
			st.N += int64(v.Seg.numDocs)
			st.SumDL += int64(v.Seg.sumDL)
		}
		pl.tidx = make([][]termRef, len(pl.terms))
		flat := make([]termRef, len(pl.terms)*len(views))
		for qi, t := range pl.terms {
			row := flat[qi*len(views) : (qi+1)*len(views) : (qi+1)*len(views)]
			for vi, v := range views {
				row[vi] = v.Seg.ref(t.term)
				st.DF[t.term] += int64(row[vi].rec.df)
			}
			pl.tidx[qi] = row
		}
	} else {
		pl.tidx = st.lookupsFor(views, pl.terms)
	}
	if st.N <= 0 {
		pl.empty = true
		return pl, nil
	}
	pl.avgdl = st.AvgDL()
	for i := range pl.terms {
		t := &pl.terms[i]
		// A caller's Stats may claim a df above N (or below 0), which
		// would make Robertson's IDF the log of a negative number: df is
		// clamped to [0, N].
		idf := IDF(p.IDF, st.N, min(max(st.DF[t.term], 0), st.N))
		t.w = float64(t.qtf) * math.Max(0, idf)
		if f, ok := q.Weights[t.term]; ok && f > 0 && !math.IsInf(f, 1) {
			t.w *= f
		}
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

// offer inserts h if it belongs to the top k; it reports whether the
// threshold may have changed. t.h is a binary min-heap under worse (the
// weakest hit at the root), maintained by hand to avoid boxing each Hit
// through container/heap's interface.
func (t *topK) offer(h Hit) bool {
	t.offered++
	if len(t.h) < t.k {
		t.h = append(t.h, h)
		t.up(len(t.h) - 1)
		return len(t.h) == t.k
	}
	if worse(&t.h[0], &h) {
		t.h[0] = h
		t.down(0)
		return true
	}
	return false
}

func (t *topK) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !worse(&t.h[j], &t.h[i]) {
			break
		}
		t.h[i], t.h[j] = t.h[j], t.h[i]
		j = i
	}
}

func (t *topK) down(i int) {
	n := len(t.h)
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if j+1 < n && worse(&t.h[j+1], &t.h[j]) {
			j++
		}
		if !worse(&t.h[j], &t.h[i]) {
			return
		}
		t.h[i], t.h[j] = t.h[j], t.h[i]
		i = j
	}
}

// accepts reports whether offer(*h) would insert h.
func (t *topK) accepts(h *Hit) bool {
	return len(t.h) < t.k || worse(&t.h[0], h)
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
	slices.SortFunc(out, func(a, b Hit) int {
		if worse(&b, &a) {
			return -1
		}
		if worse(&a, &b) {
			return 1
		}
		return 0
	})
	return out
}

// pruneSlack makes every pruning test conservative by a relative 1e-9: an
// upper bound summed in a different order than the exact score may round a
// few ulps low, and a skipped document must be certain to lose.
const pruneSlack = 1e-9

// minQuickReject is the smallest threshold margin for which single's
// multiplied-out test is trusted: far above the subnormal range, where a
// relative slack stops covering a rounding step.
const minQuickReject = 1e-290

func canSkip(bound, theta float64) bool {
	return bound+math.Abs(bound)*pruneSlack < theta
}

// Search returns the top p.K documents of the views for q, scored with BM25
// under st (nil: collected from the views for q's terms), score descending
// then ExtID ascending. Disjunctive queries use Block-Max MaxScore (Turtle &
// Flood 1995; block-max bounds after Ding & Suel 2011, as evaluated by
// Mallia et al. 2019) or, with p.Algorithm = AlgBMW, Block-Max WAND (Ding &
// Suel 2011), with identical results; queries with required terms or phrases use
// conjunctive traversal driven by the rarest required term. With
// p.Exhaustive the reference scorer is used instead; both return the same
// hits. Errors: invalid params (ErrInvalidOptions), corrupt postings
// (ErrCorrupt), phrases without positions (ErrNoPositions).
func Search(views []View, q Query, p SearchParams, st *Stats) ([]Hit, error) {
	hits, _, err := search(context.Background(), views, q, p, st)
	return hits, err
}

// SearchContext is Search that stops early when ctx is done: it looks at
// ctx before each view and, inside a view, once every cancelCheck steps
// of the traversal (a step scores, rejects or skips past one candidate
// document: Block-Max WAND, MaxScore, the conjunctive and phrase loop,
// and the reference scorer alike). A cancelled search returns the best
// hits found so far (at most p.K, in Search's order; a partial, possibly
// empty list) with ctx.Err(); a search that completes returns exactly
// what Search returns.
func SearchContext(ctx context.Context, views []View, q Query, p SearchParams, st *Stats) ([]Hit, error) {
	hits, _, err := search(ctx, views, q, p, st)
	return hits, err
}

// search is SearchContext that also returns how many documents were
// offered to the top-k heap (fully scored), for pruning tests.
func search(ctx context.Context, views []View, q Query, p SearchParams, st *Stats) ([]Hit, int, error) {
	return searchWith(ctx, &canceller{done: ctx.Done()}, views, q, p, st)
}

// searchWith is search watching ctx through cn (whose done is ctx.Done()).
func searchWith(ctx context.Context, cn *canceller, views []View, q Query, p SearchParams, st *Stats) ([]Hit, int, error) {
	for i, v := range views {
		if v.Seg == nil {
			return nil, 0, fmt.Errorf("%w: views[%d] has no segment", ErrInvalidOptions, i)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	pl, err := planQuery(views, q, p, st)
	if err != nil {
		return nil, 0, err
	}
	if pl.empty {
		return nil, 0, nil
	}
	defer putCursors(pl) // nothing of pl outlives the search
	if err := prefetch(views, pl); err != nil {
		return nil, 0, err
	}
	top := &topK{k: pl.k, h: make([]Hit, 0, min(pl.k, 128))}
	for vi, v := range views {
		if len(pl.phrases) > 0 && !v.Seg.positions {
			return nil, 0, ErrNoPositions
		}
		if cn.lookNow() {
			break
		}
		var err error
		if p.Exhaustive {
			err = searchExhaustive(vi, v, pl, top, cn)
		} else {
			err = searchPruned(vi, v, pl, top, cn)
		}
		if err != nil {
			return nil, 0, err
		}
		if cn.stopped {
			break
		}
	}
	if cn.stopped {
		return top.sorted(), top.offered, ctx.Err()
	}
	return top.sorted(), top.offered, nil
}

// cursorPool recycles the per-term cursors of finished searches (about
// 800 bytes each, most of what a query allocates), as *[]cursor.
var cursorPool sync.Pool

// getCursors returns n zeroed cursors, recycled when the pool has enough.
func getCursors(n int) []cursor {
	if p, _ := cursorPool.Get().(*[]cursor); p != nil && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]cursor, n)
}

// putCursors gives pl's cursors back to the pool, cleared so that they
// hold no segment; pl must not use them again.
func putCursors(pl *plan) {
	cs := pl.cursors
	pl.cursors, pl.tcurs, pl.curs = nil, nil, nil
	if cap(cs) == 0 || cap(cs) > 64 {
		return
	}
	cs = cs[:cap(cs)]
	clear(cs)
	cs = cs[:0]
	cursorPool.Put(&cs)
}

// cancelCheck is how many traversal steps a search takes between two
// looks at its context. A look is one non-blocking receive on the Done
// channel (none at all for context.Background, whose channel is nil), a
// few nanoseconds against the microseconds the steps cost, so a live
// context costs nothing measurable (BenchmarkOR), while a cancelled
// search stops within microseconds.
const cancelCheck = 256

// canceller watches one search's context.
type canceller struct {
	done    <-chan struct{} // nil: never cancelled
	tick    uint32
	looks   int  // periodic looks so far (steps = looks·cancelCheck + tick)
	stopped bool // the search saw done closed and stopped early
}

// cancelled counts one traversal step and reports, once per cancelCheck
// steps, whether the context is done. The nil test inlines; the rest is
// look.
func (c *canceller) cancelled() bool { return c.done != nil && c.look() }

func (c *canceller) look() bool {
	if c.tick++; c.tick < cancelCheck {
		return false
	}
	c.tick = 0
	c.looks++
	return c.lookNow()
}

// lookNow reports whether the context is done, now.
func (c *canceller) lookNow() bool {
	if cancel.Done(c.done) {
		c.stopped = true
		return true
	}
	return false
}

// normTable holds bm25Norm(DocLen(d), k1, b, avgdl) for every doc d of a
// segment: the same function, so scores stay bit-identical to the
// reference scorer, without a division and a length load per posting.
type normTable struct {
	k1, b, avgdl float64
	norm         []float64
}

// normsFor returns the segment's normalisation table for (k1, b, avgdl),
// or nil. The table is built (O(NumDocs)) only when the query is going to
// touch at least a quarter of the documents (postings >= NumDocs/4), so a
// rare-term query on a large segment never pays for it.
func (s *Segment) normsFor(k1, b, avgdl float64, postings int) []float64 {
	if t := s.norms.Load(); t != nil && t.k1 == k1 && t.b == b && t.avgdl == avgdl {
		return t.norm
	}
	if s.numDocs == 0 || postings < s.numDocs/4 {
		return nil
	}
	t := &normTable{k1: k1, b: b, avgdl: avgdl, norm: make([]float64, s.numDocs)}
	for d := range t.norm {
		t.norm[d] = bm25Norm(s.DocLen(uint32(d)), k1, b, avgdl)
	}
	s.norms.Store(t)
	return t.norm
}

// attachNorms gives each cursor its segment's normalisation table when the
// query's postings in that segment make building one worthwhile.
func attachNorms(curs []*tcur, k1, b float64) {
	// done marks the cursors whose (segment, field) group is settled, so
	// a query of n terms over one segment costs O(n), not O(n²).
	var small [64]bool
	done := small[:0]
	if len(curs) <= len(small) {
		done = small[:len(curs)]
	} else {
		done = make([]bool, len(curs))
	}
	for i, c := range curs {
		if c == nil || done[i] {
			continue
		}
		postings := 0
		for _, o := range curs[i:] {
			if o != nil && o.seg == c.seg && o.avgdl == c.avgdl {
				postings += o.df
			}
		}
		t := c.seg.normsFor(k1, b, c.avgdl, postings)
		for j, o := range curs[i:] {
			if o != nil && o.seg == c.seg && o.avgdl == c.avgdl {
				done[i+j] = true
				if o.norms == nil {
					o.norms = t
				}
			}
		}
	}
}

// tcur is a cursor bound to a query term.
type tcur struct {
	*cursor
	rec   termRec // the term's record in the cursor's segment
	qi    int
	w     float64
	ub    float64      // upper bound of this term's contribution in the segment
	imp   *termImpacts // the list's summary, or nil (impacts.go)
	avgdl float64      // of the cursor's field
	norms []float64    // normalisation table of the cursor's segment, or nil

	bbBlock int     // block whose bound is in bbScore; 0 until computed (stored +1)
	bbScore float64 // block-max score of block bbBlock-1

	// lazy: the cursor is half open (newSegSearch): its block metadata
	// (blob, meta, nb, the shallow pointer) is usable, its doc ids are
	// not decoded yet (doc() = efEnd) until open.
	lazy bool
}

// open decodes a half-open cursor's doc ids, keeping its shallow block
// pointer; it reports whether the cursor is usable (false: corrupt
// postings, err set).
func (c *tcur) open() bool {
	if c.lazy {
		c.lazy = false
		s, term, sb := c.seg, c.term, c.sb
		if err := s.openCursorRec(c.cursor, term, c.rec); err != nil {
			c.err = err
			c.c = efCursor{val: efEnd}
			c.pc = nil
			return false
		}
		c.sb = sb
	}
	return c.err == nil
}

// openAll opens every half-open cursor of curs.
func openAll(curs []*tcur) {
	for _, c := range curs {
		if c != nil {
			c.open()
		}
	}
}

// blockBound moves the shallow pointer to the block that may hold doc d
// and returns that block's block-max score (computed once per block); ok
// is false when no block can hold d.
func (c *tcur) blockBound(d uint32, k1, b float64) (float64, bool) {
	mt, md, ok := c.shallowBlock(d)
	if !ok {
		return 0, false
	}
	if c.bbBlock != c.sb+1 {
		c.bbBlock = c.sb + 1
		if c.imp != nil {
			c.bbScore = cornerBound(c.imp.pts[c.imp.start[c.sb]:c.imp.start[c.sb+1]], c.w, k1, b, c.avgdl)
		} else {
			c.bbScore = termScore(c.w, mt, bm25Norm(md, k1, b, c.avgdl), k1)
		}
	}
	return c.bbScore, true
}

// norm returns the BM25 length normalisation of doc d in the cursor's
// segment (field).
func (c *tcur) norm(d uint32, k1, b float64) float64 {
	if c.norms != nil {
		return c.norms[d]
	}
	return bm25Norm(c.seg.DocLen(d), k1, b, c.avgdl)
}

type segSearch struct {
	cn      *canceller
	vi      int
	v       View
	pl      *plan
	top     *topK
	curs    []*tcur // by query term index; nil if absent from the segment
	excl    []*cursor
	contrib []float64
	posIts  []posIter
	allowIt roaring.IntPeekable
}

func newSegSearch(vi int, v View, pl *plan, top *topK, cn *canceller) (*segSearch, bool, error) {
	if pl.tcurs == nil {
		pl.tcurs = make([]tcur, len(pl.terms))
		// One cursor per term, and seedTheta's scratch cursor last.
		pl.cursors = getCursors(len(pl.terms) + 1)
		pl.curs = make([]*tcur, len(pl.terms))
		pl.contrib = make([]float64, len(pl.terms))
	}
	clear(pl.curs)
	clear(pl.contrib)
	ss := &pl.ss
	*ss = segSearch{cn: cn, vi: vi, v: v, pl: pl, top: top, curs: pl.curs, contrib: pl.contrib, excl: ss.excl[:0], posIts: ss.posIts[:0]}
	s := v.Seg
	for qi, t := range pl.terms {
		ref := pl.ref(qi, vi, s)
		if ref.idx < 0 {
			if t.required {
				return nil, false, nil
			}
			continue
		}
		// The cursor starts half open (tcur.open): block metadata only,
		// so block-max bounds work, while the doc ids are decoded only
		// when the traversal first needs them. A list that a MaxScore
		// traversal only bounds in this segment is never decoded.
		c := &pl.cursors[qi]
		i, r := int(ref.idx), ref.rec
		if err := s.need(i, r); err != nil {
			return nil, false, err
		}
		s.initCursor(c, i, r)
		imp := s.impactsFor(i, r)
		var ub float64
		if imp != nil {
			ub = cornerBound(imp.list, t.w, pl.k1, pl.b, pl.avgdl)
		} else {
			ub = termScore(t.w, r.maxTF, bm25Norm(r.minDL, pl.k1, pl.b, pl.avgdl), pl.k1)
		}
		tc := &pl.tcurs[qi]
		*tc = tcur{cursor: c, rec: r, qi: qi, w: t.w, ub: ub, imp: imp, avgdl: pl.avgdl, lazy: true}
		ss.curs[qi] = tc
	}
	attachNorms(ss.curs, pl.k1, pl.b)
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

// theta is the score a MaxScore candidate must reach: the top k's
// threshold, or the seeded one (seedTheta) while it is higher.
func (ss *segSearch) theta() float64 { return max(ss.top.theta(), ss.pl.seed) }

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
		its := ss.posIts[:0]
		for _, slot := range ph {
			its = append(its, ss.curs[ss.pl.index[slot.Term]].positions())
		}
		ss.posIts = its
		if !phraseMatch(ph, its) {
			return false
		}
	}
	return true
}

// phraseMatch reports what phraseAt does, over lazy position iterators:
// driven by the slot with the fewest positions (its tf), the other slots'
// iterators only move forward (seek), so a document costs at most one
// pass over each slot's positions and stops at the first match.
func phraseMatch(ph []PhraseTerm, its []posIter) bool {
	drv := 0
	for j := range its {
		if its[j].left < its[drv].left {
			drv = j
		}
	}
outer:
	for its[drv].next() {
		start := its[drv].cur - int64(ph[drv].Offset)
		for j := range ph {
			if j == drv {
				continue
			}
			want := start + int64(ph[j].Offset)
			if want < 0 {
				continue outer
			}
			if want > math.MaxUint32 || !its[j].seek(want) {
				return false // starts only grow: no later match either
			}
			if its[j].cur != want {
				continue outer
			}
		}
		return true
	}
	return false
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

func searchPruned(vi int, v View, pl *plan, top *topK, cn *canceller) error {
	ss, ok, err := newSegSearch(vi, v, pl, top, cn)
	if err != nil || !ok {
		return err
	}
	conj := len(pl.phrases) > 0
	for _, t := range pl.terms {
		conj = conj || t.required
	}
	if conj {
		openAll(ss.curs)
		ss.conjunctive()
	} else {
		ss.disjunctive()
	}
	return ss.err()
}

// disjunctive runs the plan's OR evaluator (SearchParams.Algorithm).
func (ss *segSearch) disjunctive() {
	if ss.pl.alg == AlgBMW {
		ss.bmw()
	} else {
		ss.maxScore()
	}
}

// maxScore is Block-Max MaxScore over the optional terms. Terms are sorted
// by upper bound; the longest prefix whose bounds sum below the threshold
// is "non-essential": a document matching only those cannot enter the top
// k, so candidates come from the essential lists only, and non-essential
// lists are probed (NextGEQ) only while the document can still make it,
// using their block-max bound at the candidate.
func (ss *segSearch) maxScore() {
	cs := ss.pl.msCurs[:0]
	for _, c := range ss.curs {
		if c != nil {
			cs = append(cs, c)
		}
	}
	ss.pl.msCurs = cs
	if len(cs) == 0 {
		return
	}
	slices.SortStableFunc(cs, func(a, b *tcur) int { return cmp.Compare(a.ub, b.ub) })
	if cap(ss.pl.msPrefix) < len(cs) {
		ss.pl.msPrefix = make([]float64, len(cs))
	}
	ms := &msState{ss: ss, cs: cs, prefix: ss.pl.msPrefix[:len(cs)]}
	acc := 0.0
	for i, c := range cs {
		acc += c.ub
		ms.prefix[i] = acc
	}
	ss.seedTheta(cs)
	ms.theta = ss.theta()
	ms.raise()
	// The essential lists are decoded from the start; a non-essential
	// one when a candidate first probes it (finish).
	openAll(ms.cs[ms.e:])
	for ms.e < len(ms.cs) {
		var done bool
		if ms.e == len(ms.cs)-1 {
			done = ms.single()
		} else {
			done = ms.multi()
		}
		if done {
			return
		}
	}
}

// msState is the state of one Block-Max MaxScore traversal. cs are the
// lists by increasing upper bound, prefix their running sums; cs[:e] are
// non-essential. The current block-max region [.., regionEnd]: every
// list's block that may hold a doc in it is known, and regionBound sums
// their block-max scores, so no doc in the region can score more. When
// that cannot beat theta, the essential lists jump past the whole region
// without decoding a term frequency (Block-Max MaxScore's block skipping,
// Mallia et al. 2019 §3; Ding & Suel 2011 shallow pointers).
type msState struct {
	ss          *segSearch
	cs          []*tcur
	prefix      []float64
	e           int
	theta       float64
	regionEnd   uint32
	regionBound float64
	haveRegion  bool
	regionSkip  bool // canSkip(regionBound, theta)
}

// raise moves lists into the non-essential prefix while their bounds sum
// below theta.
func (ms *msState) raise() {
	for ms.e < len(ms.cs) && canSkip(ms.prefix[ms.e], ms.theta) {
		ms.e++
	}
}

// skipRegion reports whether no doc in the region holding d can enter the
// top k, recomputing the region when d is past it.
func (ms *msState) skipRegion(d uint32) bool {
	if d > ms.regionEnd || !ms.haveRegion {
		ms.regionEnd, ms.regionBound = ms.ss.region(ms.cs, d)
		ms.haveRegion = true
		ms.regionSkip = canSkip(ms.regionBound, ms.theta)
	}
	return ms.regionSkip
}

// finish completes candidate d whose essential contributions sum to s (and
// are in ss.contrib): non-essential lists are probed from the largest
// bound down while d can still make it, then d is offered. It reports
// whether e changed.
func (ms *msState) finish(d uint32, s float64) bool {
	ss, pl, cs, prefix := ms.ss, ms.ss.pl, ms.cs, ms.prefix
	lost := false
	for i := ms.e - 1; i >= 0; i-- {
		if canSkip(s+prefix[i], ms.theta) {
			lost = true
			break
		}
		c := cs[i]
		bb, ok := c.blockBound(d, pl.k1, pl.b)
		if !ok {
			continue
		}
		rest := 0.0
		if i > 0 {
			rest = prefix[i-1]
		}
		if canSkip(s+rest+bb, ms.theta) {
			lost = true
			break
		}
		if !c.open() {
			continue
		}
		if c.nextGEQ(d) == d {
			x := termScore(c.w, c.tf(), c.norm(d, pl.k1, pl.b), pl.k1)
			ss.contrib[c.qi] = x
			s += x
		}
	}
	if lost || canSkip(s, ms.theta) {
		for i := range ss.contrib {
			ss.contrib[i] = 0
		}
		return false
	}
	if ss.top.offer(Hit{ExtID: ss.v.Seg.ExtID(d), Score: ss.finalScore(), View: ss.vi, Doc: d}) {
		ms.theta = ss.theta()
		ms.regionSkip = ms.haveRegion && canSkip(ms.regionBound, ms.theta)
		e := ms.e
		ms.raise()
		return ms.e != e
	}
	return false
}

// multi runs the traversal while two or more lists are essential; it
// returns true when the lists are exhausted, false when e reached
// len(cs)-1.
func (ms *msState) multi() bool {
	ss, pl, cs := ms.ss, ms.ss.pl, ms.cs
	// next is the smallest essential doc id when known (haveNext): the
	// scoring pass computes it while it advances the lists past d.
	next, haveNext := efEnd, false
	for ms.e < len(cs)-1 {
		if ss.cn.cancelled() {
			return true
		}
		d := next
		if !haveNext {
			d = efEnd
			for _, c := range cs[ms.e:] {
				d = min(d, c.doc())
			}
		}
		haveNext = false
		if d == efEnd {
			return true
		}
		if ms.skipRegion(d) {
			if ms.regionEnd >= efEnd-1 {
				return true
			}
			for _, c := range cs[ms.e:] {
				c.nextGEQ(ms.regionEnd + 1)
			}
			continue
		}
		if !ss.allowed(d) {
			// Jump every essential list to the next allowed document.
			next := ss.nextAllowed(d)
			for _, c := range cs[ms.e:] {
				c.nextGEQ(next)
			}
			continue
		}
		if ss.excluded(d) {
			for _, c := range cs[ms.e:] {
				if c.doc() == d {
					c.next()
				}
			}
			continue
		}
		// Score d on the essential lists, moving each past it; a
		// non-essential list finish probes stays on d until a later
		// candidate moves it on.
		s := 0.0
		next = efEnd
		for _, c := range cs[ms.e:] {
			if c.doc() == d {
				x := termScore(c.w, c.tf(), c.norm(d, pl.k1, pl.b), pl.k1)
				ss.contrib[c.qi] = x
				s += x
				c.next()
			}
			next = min(next, c.doc())
		}
		haveNext = !ms.finish(d, s)
	}
	return ms.e >= len(cs)
}

// single runs the traversal while exactly one list is essential: only its
// documents are candidates. A candidate whose own score plus the
// non-essential bounds cannot beat theta is dropped before the division
// (the test is done multiplied out, with the same conservative slack as
// canSkip). It returns true when the list is exhausted or every list
// became non-essential.
func (ms *msState) single() bool {
	ss, pl := ms.ss, ms.ss.pl
	c := ms.cs[ms.e]
	kp1 := pl.k1 + 1
	for {
		if ss.cn.cancelled() {
			return true
		}
		d := c.doc()
		if d == efEnd {
			return true
		}
		if ms.skipRegion(d) {
			if ms.regionEnd >= efEnd-1 {
				return true
			}
			c.nextGEQ(ms.regionEnd + 1)
			continue
		}
		if ss.v.Allow != nil && !ss.v.Allow.Contains(d) {
			c.nextGEQ(ss.nextAllowed(d))
			continue
		}
		if len(ss.excl) > 0 && ss.excluded(d) {
			c.next()
			continue
		}
		tf := c.tf()
		norm := c.norm(d, pl.k1, pl.b)
		rest := 0.0
		if ms.e > 0 {
			rest = ms.prefix[ms.e-1]
		}
		// s + rest < theta  <=>  w·tf·(k1+1) < (theta − rest)·(tf + norm).
		// The relative slack covers rounding only for normal numbers: with
		// a threshold near the subnormal range the exact score decides.
		lim := ms.theta - rest - (math.Abs(ms.theta)+rest)*pruneSlack
		f := float64(tf)
		if lim > minQuickReject && c.w*f*kp1*(1+pruneSlack) < lim*(f+norm) {
			c.next()
			continue
		}
		x := termScore(c.w, tf, norm, pl.k1)
		ss.contrib[c.qi] = x
		changed := ms.finish(d, x)
		c.next()
		if changed {
			return ms.e >= len(ms.cs)
		}
	}
}

// region moves every list's shallow block pointer to the block that may
// hold doc d and returns the last doc id those blocks all cover and the sum
// of their block-max scores (an upper bound on the score of any doc in
// [d, end]). Exhausted lists contribute nothing. A list in its last block
// does not end the region: past that block it contributes nothing, so its
// block-max score bounds it on [d, ∞) (otherwise a segment's many short
// lists would cut it into many small regions, each costing a pass over
// every list), unless its doc ids are open and its next doc is past d:
// then the region ends before that doc and the list adds nothing.
func (ss *segSearch) region(cs []*tcur, d uint32) (end uint32, bound float64) {
	pl := ss.pl
	end = efEnd - 1
	for _, c := range cs {
		if bb, ok := c.blockBound(d, pl.k1, pl.b); ok {
			if c.sb < c.nb-1 {
				last, _, _ := c.blockMeta(c.sb)
				end = min(end, last)
			} else if !c.lazy && c.doc() > d {
				// In its last block, with its doc ids open and its next doc
				// past d: nothing on [d, doc()-1]. A rare term's one block
				// would otherwise add its bound to every region.
				end = min(end, c.doc()-1)
				continue
			}
			bound += bb
		}
	}
	return end, bound
}

// conjunctive handles queries with required terms and/or phrases: the
// required lists are intersected (leapfrog NextGEQ from the rarest); a
// document in all of them is then put through the cheapest test that can
// reject it first: the block-max bound of the region where every required
// list stays in its block (plus the optional lists' bounds; a failing
// region is skipped whole), the allow-list, excluded terms, the exact
// score with the optional terms added (would it enter the top k?), and
// only then phrase positions (phrasesMatch). The score of a phrase does
// not depend on its positions, so the order changes cost, not results.
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
	d := uint32(0)
	for {
		if ss.cn.cancelled() {
			return
		}
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
		if theta := ss.top.theta(); !math.IsInf(theta, -1) {
			// Block-max bound of the region [d, end] where every
			// required list stays in its current block: when it cannot
			// reach theta, no document of the region can, so jump past
			// it without touching tfs or positions.
			bound, end := optUB, efEnd-1
			for _, c := range req {
				bb, ok := c.blockBound(d, pl.k1, pl.b)
				if !ok {
					// c holds d, so a block must cover it.
					c.fail("block metadata does not cover doc %d", d)
					return
				}
				bound += bb
				last, _, _ := c.blockMeta(c.sb)
				end = min(end, last)
			}
			if canSkip(bound, theta) {
				if end >= efEnd-1 {
					return
				}
				d = end + 1
				continue
			}
		}
		if !ss.allowed(d) {
			if d = ss.nextAllowed(d); d == efEnd {
				return
			}
			continue
		}
		if !ss.excluded(d) {
			// The exact score first (tfs and |D| only): positions are
			// decoded only for a document that would enter the top k.
			norm := req[0].norm(d, pl.k1, pl.b)
			for _, c := range req {
				ss.contrib[c.qi] = termScore(c.w, c.tf(), norm, pl.k1)
			}
			for _, c := range opt {
				if c.nextGEQ(d) == d {
					ss.contrib[c.qi] = termScore(c.w, c.tf(), norm, pl.k1)
				}
			}
			h := Hit{ExtID: ss.v.Seg.ExtID(d), Score: ss.finalScore(), View: ss.vi, Doc: d}
			if ss.top.accepts(&h) && (len(pl.phrases) == 0 || ss.phrasesMatch(d)) {
				ss.top.offer(h)
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
func searchExhaustive(vi int, v View, pl *plan, top *topK, cn *canceller) error {
	s := v.Seg
	type occ struct {
		tf  uint32
		pos []uint32
	}
	per := make([]map[uint32]occ, len(pl.terms))
	for qi, t := range pl.terms {
		if cn.lookNow() {
			return nil
		}
		docs, tfs, pos, err := s.Postings(t.term)
		if err != nil {
			return err
		}
		per[qi] = map[uint32]occ{}
		k := 0
		for j, d := range docs {
			if cn.cancelled() {
				return nil
			}
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
		if cn.cancelled() {
			return nil
		}
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
