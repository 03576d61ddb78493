package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/fusion"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/cancel"
)

// Retriever names, as used in contract.FusionParams.Weights.
const (
	retrieverLexical = "lexical"
	retrieverDense   = "dense"
)

type retrieved struct {
	name string
	hits []fusion.Hit[uint32] // key = version number, score higher = better
	raw  []float64            // per hit: raw BM25 score, or raw dense value (similarity; d² for l2)
	ub   float64              // lexical: the query's BM25 upper bound
	// Rerank strategy, dense retriever only: the exact dense fusion score
	// of each lexical candidate with a vector (best first) and its raw
	// value.
	cand    []fusion.Hit[uint32]
	candRaw map[uint32]float64
	err     error
}

// Search answers q against the collection at the newest epoch.
//
//  1. q gets its defaults (contract.Query.EnsureDefaults) and is validated
//     against the collection (dimension, multi-tenancy): every problem in
//     one *contract.ValidationError. A dense or hybrid query with text but
//     no vector fails with ErrNoEmbedder (also a ValidationError); it is
//     never silently turned lexical.
//  2. Scope (namespace prefix, URI prefix), the principal's ACL and the
//     metadata filter are compiled into one bitmap of allowed versions
//     visible at the pinned epoch; both retrievers apply it while they
//     generate candidates, so a filtered query still returns min(k, #matches)
//     hits.
//  3. Lexical (one BM25 search over the MemTable and every warm segment,
//     global statistics) and dense (MemTable brute force + warm HNSW) run
//     in parallel under the deadline q.Budget, and stop when it expires
//     (or ctx is cancelled, or Search returns). If it expires
//     first, the result holds what completed, with Partial and Reason set.
//     When q.Tiers includes cold, the cold archives join both (archive.go
//     addCold: in-memory BM25 per archive, ADC scan + exact rerank); hot
//     and warm are always searched.
//  4. Hybrid results are fused: with no fusion parameter set, by the
//     collection's HybridDefault ("rerank-maxnorm": the BM25 top
//     RerankWindow re-ranked with their exact dense similarity by
//     fusion.MaxNorm, weights 0.65 / 0.35, the rest of the BM25 list
//     unchanged; package doc "Hybrid default"), otherwise as q.Fusion asks
//     (RRF k=60 when only some parameters are set); scores are mapped into
//     [0,1] (package contract's helpers) with raw values and ranks in
//     Explain.
//  5. When q.Verify is set, or a hit is older than q.Freshness, a file://
//     source is re-hashed; stale hits are dropped (or re-read and flagged,
//     per CollectionOptions.OnStale) and listed in Result.Dropped.
//  6. Hits under q.MinScore are dropped (listed); with TokenBudget or
//     MaxTokensPerHit set, hits are staged (contract.Stage) and Hits hold
//     the sanitised, possibly truncated envelopes (SearchStaged also returns
//     the framed text).
//  7. Result shaping (shape.go; package doc "Result shaping"): between
//     fusion and verification the fused list is cut to the page a
//     Query.Cursor asks for and collapsed by source file (Query.Collapse);
//     Result.NextCursor continues a full page; Query.Highlight sets
//     Envelope.Highlights on the final contents.
//
// Errors: validation (including a cursor of another query, or forged),
// ErrNoEmbedder, ErrClosed, context cancellation by the
// caller (a Budget expiry is a Partial result, not an error).
func (c *Collection) Search(ctx context.Context, q contract.Query) (contract.Result, error) {
	res, _, err := c.search(ctx, q)
	return res, err
}

// SearchStaged is Search that also returns the staged, framed output
// (contract.Stage with q's MinScore, TokenBudget and MaxTokensPerHit; a
// zero budget stages every hit in full).
func (c *Collection) SearchStaged(ctx context.Context, q contract.Query) (contract.Result, contract.StagedResult, error) {
	res, st, err := c.search(ctx, q)
	if err != nil {
		return res, contract.StagedResult{}, err
	}
	if st == nil {
		s, err := contract.Stage(res.Hits, contract.StageOptionsFrom(&q))
		if err != nil {
			return res, contract.StagedResult{}, err
		}
		st = &s
	}
	return res, *st, nil
}

func (c *Collection) search(ctx context.Context, q contract.Query) (contract.Result, *contract.StagedResult, error) {
	var res contract.Result
	if err := c.check(ctx); err != nil {
		return res, nil, err
	}
	// Result shaping (shape.go): cursor, collapse, highlight and
	// NextCursor wrap this search, which they call with a shaper.
	if shaperFrom(ctx) == nil {
		return c.searchShaped(ctx, q)
	}
	fusionUnset := q.Fusion.Method == "" && q.Fusion.K == 0 && len(q.Fusion.Weights) == 0 && q.Fusion.Window == 0
	q.EnsureDefaults()
	rerank := q.Mode == contract.Hybrid && fusionUnset && c.o.HybridDefault != HybridRRF
	if err := q.Validate(c.o.Dim, c.validateOpts()); err != nil {
		return res, nil, err
	}
	if fe, bad := c.zeroCosine(q.Vector, []any{"query", "vector"}); bad {
		return res, nil, &contract.ValidationError{Errors: []contract.FieldError{fe}}
	}
	// Query embedding (embedding.go): text and no vector in dense or
	// hybrid mode → the live embedder, or ErrNoEmbedder.
	if err := c.embedQuery(ctx, &q); err != nil {
		return res, nil, err
	}
	parent := ctx
	if q.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.Budget)
		defer cancel()
	}
	// The retrievers search under ctx (budget deadline included) and stop
	// when it is done; a search that returns early (an error, or a
	// retriever the budget left behind) cancels the rest, so no work
	// outlives the call.
	ctx, stop := context.WithCancel(ctx)
	defer stop()

	sn, release := c.shapeSnapshot(ctx) // shape.go: the cursor's pinned epoch
	res.Epoch = sn.Epoch()
	// Key space of this query: the warm rows (catalog order), then each
	// hot MemTable's versions (tier.Snapshot.HotLexical order: the frozen
	// MemTables a running flush is turning into a segment, then the active
	// one; key hotBase[i] + version).
	var hots []*hotIndex
	for _, li := range sn.HotLexical() {
		h, _ := li.(*hotIndex)
		if h == nil {
			release()
			return res, nil, fmt.Errorf("engine: MemTable has no lexical index")
		}
		hots = append(hots, h)
	}
	wc, err := c.warmCatalog(sn)
	if err != nil {
		release()
		return res, nil, err
	}
	nW := uint32(len(wc.infos))
	infos := wc.infos[:len(wc.infos):len(wc.infos)]
	hotSegs := make([]*bm25.Segment, len(hots))
	hotBase := make([]uint32, len(hots))
	for i, h := range hots {
		seg, memInfos, err := h.view()
		if err != nil {
			release()
			return res, nil, err
		}
		hotSegs[i], hotBase[i] = seg, uint32(len(infos))
		if len(infos) == 0 {
			infos = memInfos
		} else {
			infos = append(infos[:len(infos):len(infos)], memInfos...)
		}
	}
	keyOf := func(d *tier.Document) (uint32, bool) {
		for i, h := range hots {
			if v, ok := h.versionOf(d); ok {
				return hotBase[i] + v, true
			}
		}
		k, ok := wc.byDoc[d]
		return k, ok
	}

	// Candidate bitmaps: per tier view, the rows visible at the epoch and
	// passing scope, ACL and filter.
	// An indexed filter becomes a bitmap; otherwise it is evaluated per
	// version with Filter.Match.
	var filterBM *roaring.Bitmap
	if q.Filter != nil {
		fbm, ok := roaring.New(), true
		if nW > 0 {
			var wb *roaring.Bitmap
			if wb, ok = wc.fi.compile(q.Filter, nW); ok {
				fbm.Or(wb)
			}
		}
		for i := 0; ok && i < len(hots); i++ {
			var mb *roaring.Bitmap
			if mb, ok = hots[i].filterBitmap(q.Filter); ok {
				fbm.Or(roaring.AddOffset(mb, hotBase[i]))
			}
		}
		if ok {
			filterBM = fbm
		}
	}
	pred := compilePredicate(&q, filterBM == nil)
	if filterBM != nil {
		scope := pred
		pred = func(vi *verInfo, v uint32) bool { return filterBM.Contains(v) && (scope == nil || scope(vi, v)) }
	}
	views := make([]bm25.View, 0, len(wc.segs)+len(hots))
	bases := make([]uint32, 0, len(wc.segs)+len(hots))
	for i, sg := range wc.segs {
		views = append(views, bm25.View{Seg: sg, Allow: roaring.New()})
		bases = append(bases, wc.bases[i])
	}
	for i, seg := range hotSegs {
		views = append(views, bm25.View{Seg: seg, Allow: roaring.New()})
		bases = append(bases, hotBase[i])
	}
	var allowDoc map[*tier.Document]struct{}
	if pred != nil {
		allowDoc = map[*tier.Document]struct{}{}
	}
	// In a MultiTenant collection the BM25 statistics are collected over
	// the rows the principal may read in the query's namespace only (see
	// tenantStats), so no score depends on another tenant's documents.
	var statsAllow []*roaring.Bitmap
	tenancy := compileTenancy(&q)
	if c.o.MultiTenant && q.Mode != contract.Dense {
		statsAllow = make([]*roaring.Bitmap, len(views))
		for i := range statsAllow {
			statsAllow[i] = roaring.New()
		}
	}
	if q.Mode != contract.Dense || pred != nil {
		// O(rows): it looks at ctx every 4096 rows; when the budget
		// expires here the retrievers start under a done ctx, return at
		// once, and the result is partial.
		done := ctx.Done()
	rows:
		for p := range views {
			lo, hi := bases[p], uint32(len(infos))
			if p+1 < len(bases) {
				hi = bases[p+1]
			}
			allow := views[p].Allow
			for k := lo; k < hi; k++ {
				if (k-lo)%4096 == 0 && cancel.Done(done) {
					break rows
				}
				local := k - lo
				var vis bool
				if p < len(wc.segs) {
					vis = sn.VisibleRow(p, local)
				} else {
					vis = sn.VisibleHot(p-len(wc.segs), local)
				}
				if !vis {
					continue
				}
				if statsAllow != nil && (tenancy == nil || tenancy(&infos[k])) {
					statsAllow[p].Add(local)
				}
				if pred == nil || pred(&infos[k], k) {
					allow.Add(local)
					if pred != nil {
						allowDoc[infos[k].doc] = struct{}{}
					}
				}
			}
		}
	}

	// --- cold tier hook (archive.go): only when q.Tiers includes cold ---
	if q.HasTier(contract.Cold) {
		cq := coldQuery{sn: sn, infos: infos, views: views, bases: bases, keyOf: keyOf, allowDoc: allowDoc, statsAllow: statsAllow}
		if err := c.addCold(&q, &cq); err != nil {
			release()
			return res, nil, err
		}
		sn, infos, views, bases, keyOf, statsAllow = cq.sn, cq.infos, cq.views, cq.bases, cq.keyOf, cq.statsAllow
	}
	// --- end cold tier hook ---

	depth, denseDepth := q.TopK, q.TopK
	switch {
	case rerank:
		// The lexical list supplies the RerankWindow candidates and the
		// tail; the dense list (depth TopK) only back-fills a lexical list
		// shorter than TopK.
		depth = max(RerankWindow, q.TopK)
	case q.Mode == contract.Hybrid:
		depth = q.Fusion.Window
		if depth == 0 {
			depth = max(100, q.TopK)
		}
		depth = max(depth, q.TopK)
		denseDepth = depth
	}

	hook, hookDone := c.testHookRetriever, c.testHookRetrieverDone
	var wg sync.WaitGroup
	ch := make(chan retrieved, 2)
	// Under the rerank strategy the dense retriever scores the lexical
	// candidates, so it waits for the lexical list.
	var lexCh chan retrieved
	if rerank {
		lexCh = make(chan retrieved, 1)
	}
	want := 0
	if q.Mode != contract.Dense {
		want++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h := hookDone; h != nil {
				defer h(retrieverLexical)
			}
			if h := hook; h != nil {
				h(retrieverLexical)
			}
			r := c.lexical(ctx, views, bases, statsAllow, &q, depth)
			if lexCh != nil {
				lexCh <- r
			}
			ch <- r
		}()
	}
	if q.Mode != contract.Lexical {
		want++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if h := hookDone; h != nil {
				defer h(retrieverDense)
			}
			if h := hook; h != nil {
				h(retrieverDense)
			}
			var filter func(*tier.Document) bool
			if allowDoc != nil {
				filter = func(d *tier.Document) bool { _, ok := allowDoc[d]; return ok }
			}
			if rerank {
				ch <- c.denseRerank(ctx, sn, keyOf, <-lexCh, infos, q.Vector, q.TopK, filter)
				return
			}
			ch <- c.dense(ctx, sn, keyOf, q.Vector, denseDepth, filter)
		}()
	}
	// The snapshot stays pinned until every retriever returned, even those
	// a deadline left behind.
	go func() { wg.Wait(); release() }()

	got := map[string]retrieved{}
	var missing []string
	if ctx.Err() == nil {
	wait:
		for len(got) < want {
			select {
			case r := <-ch:
				if r.err != nil {
					if ctx.Err() != nil && cancelled(r.err) {
						break wait // cut short by the deadline: missing
					}
					return res, nil, r.err
				}
				got[r.name] = r
			case <-ctx.Done():
				break wait
			}
		}
	}
	if len(got) < want {
		if err := parent.Err(); err != nil {
			return res, nil, err
		}
		for _, n := range []string{retrieverLexical, retrieverDense} {
			needed := (n == retrieverLexical && q.Mode != contract.Dense) || (n == retrieverDense && q.Mode != contract.Lexical)
			if _, ok := got[n]; needed && !ok {
				missing = append(missing, n)
			}
		}
		res.Partial = true
		res.Reason = fmt.Sprintf("budget of %v expired before the %s retriever(s) finished", q.Budget, strings.Join(missing, " and "))
	}

	var hits []contract.Envelope
	if rerank {
		hits, err = c.rerankEnvelopes(&q, infos, got)
	} else {
		hits, err = c.envelopes(&q, infos, got)
	}
	if err != nil {
		return res, nil, err
	}
	hits = shaperFrom(ctx).page(hits) // shape.go: cursor page + collapse
	hits, dropped := c.verifyHits(&q, hits)
	res.Dropped = append(res.Dropped, dropped...)
	kept := hits[:0]
	for _, h := range hits {
		if h.Score < q.MinScore {
			res.Dropped = append(res.Dropped, contract.Dropped{DocID: h.DocID, Reason: contract.DropBelowMinScore,
				Detail: fmt.Sprintf("score %.6f < min_score %.6f", h.Score, q.MinScore)})
			continue
		}
		kept = append(kept, h)
	}
	res.Hits = kept
	if q.TokenBudget > 0 || q.MaxTokensPerHit > 0 {
		st, err := contract.Stage(res.Hits, contract.StageOptionsFrom(&q))
		if err != nil {
			return res, nil, err
		}
		res.Hits = make([]contract.Envelope, len(st.Hits))
		for i := range st.Hits {
			res.Hits[i] = st.Hits[i].Envelope
		}
		res.Dropped = append(res.Dropped, st.Dropped...)
		return res, &st, nil
	}
	return res, nil, nil
}

// cancelled reports whether err is a context's cancellation or deadline
// error: a retriever cut short, not failed.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// compileTenancy returns the test of the rows a MultiTenant query's BM25
// statistics count: the query's namespace prefix and the principal's read
// rights (not its URI prefix or metadata filter, which narrow the results,
// not the collection), or nil when neither is set.
func compileTenancy(q *contract.Query) func(*verInfo) bool {
	ns, p := q.Scope.Namespace, q.Principal
	if ns == "" && p == nil {
		return nil
	}
	return func(vi *verInfo) bool {
		d := vi.doc
		return strings.HasPrefix(d.Namespace, ns) && (p == nil || p.CanRead(d.Namespace, d.ACL))
	}
}

// tenantStats collects BM25 statistics over the rows of views that allow
// marks (views[i] uses allow[i], or its own Allow bitmap past the end of
// allow): N = the number of such rows, Σ|D| their lengths, and the df of
// each term the number of them holding it. It costs O(rows + Σ df) per
// query, against O(#segments) for bm25.CollectStats; it is what keeps a
// tenant's scores independent of the other tenants' documents (otherwise
// a probe could read another tenant's term frequencies from IDF changes).
func tenantStats(views []bm25.View, allow []*roaring.Bitmap, terms []string) *bm25.Stats {
	st := &bm25.Stats{DF: make(map[string]int64, len(terms))}
	seen := make(map[string]bool, len(terms))
	for i, v := range views {
		a := v.Allow
		if i < len(allow) {
			a = allow[i]
		}
		if a == nil || a.IsEmpty() {
			continue
		}
		st.N += int64(a.GetCardinality())
		it := a.Iterator()
		for it.HasNext() {
			st.SumDL += int64(v.Seg.DocLen(it.Next()))
		}
		clear(seen)
		for _, t := range terms {
			if seen[t] {
				continue
			}
			seen[t] = true
			st.DF[t] += allowedDF(v.Seg, a, t, false)
		}
	}
	return st
}

// allowedDF is the number of rows of seg that allow marks and term occurs
// in (at most 1 when any: the caller only asks whether it is > 0). It
// decodes doc ids only (bm25.Segment.CountIn): O(min(df, |allow|·log))
// per term, where df counts every tenant's postings.
func allowedDF(seg *bm25.Segment, allow *roaring.Bitmap, term string, any bool) int64 {
	limit := 0
	if any {
		limit = 1
	}
	n, err := seg.CountIn(term, allow, limit)
	if err != nil {
		return 0 // the search reports a corrupt postings list itself
	}
	return int64(n)
}

// tenantExpand expands prefix to the first max terms, in byte order, that
// occur in at least one row allow marks (views[i] uses allow[i], or its
// own Allow past the end of allow). It reads the segments' term
// dictionaries in growing chunks until it has max terms or none are left,
// so its cost grows with the other tenants' terms that sort first.
func tenantExpand(views []bm25.View, allow []*roaring.Bitmap, prefix string, max int) []string {
	if max <= 0 {
		return nil
	}
	bitmap := func(i int) *roaring.Bitmap {
		if i < len(allow) {
			return allow[i]
		}
		return views[i].Allow
	}
	checked := map[string]bool{}
	for limit := max; ; limit *= 4 {
		var cand []string
		truncated := false
		for _, v := range views {
			before := len(cand)
			cand = v.Seg.PrefixTerms(cand, prefix, limit)
			if len(cand)-before >= limit {
				truncated = true
			}
		}
		slices.Sort(cand)
		cand = slices.Compact(cand)
		var out []string
		for _, t := range cand {
			ok, seen := checked[t]
			if !seen {
				for i, v := range views {
					if a := bitmap(i); a != nil && !a.IsEmpty() && allowedDF(v.Seg, a, t, true) > 0 {
						ok = true
						break
					}
				}
				checked[t] = ok
			}
			if ok {
				out = append(out, t)
				if len(out) == max {
					return out
				}
			}
		}
		if !truncated {
			return out
		}
	}
}

// compilePredicate returns the scope + ACL (+ filter, when withFilter) test
// of one version, or nil when it restricts nothing.
func compilePredicate(q *contract.Query, withFilter bool) func(*verInfo, uint32) bool {
	ns, up, p, f := q.Scope.Namespace, q.Scope.URIPrefix, q.Principal, q.Filter
	if !withFilter {
		f = nil
	}
	if ns == "" && up == "" && p == nil && f == nil {
		return nil
	}
	var ups []string // the prefix as given and as redaction stores it
	if up != "" {
		ups = uriMatchForms(up)
	}
	return func(vi *verInfo, _ uint32) bool {
		d := vi.doc
		if ns != "" && !strings.HasPrefix(d.Namespace, ns) {
			return false
		}
		if up != "" && !slices.ContainsFunc(ups, func(u string) bool { return strings.HasPrefix(d.SourceURI, u) }) {
			return false
		}
		if p != nil && !p.CanRead(d.Namespace, d.ACL) {
			return false
		}
		if f != nil && !f.Match(vi.meta) {
			return false
		}
		return true
	}
}

// lexical runs one BM25 search over every tier's segment (warm segments'
// BM25 sections and the MemTable's sealed builder), each restricted to its
// Allow bitmap during traversal, with global statistics (CollectStats over
// all of them, so a score does not depend on how rows are split into
// segments). Hit keys are bases[view] + local doc id.
//
// statsAllow, when not nil (MultiTenant collections), restricts the
// statistics to the rows it marks per view (tenantStats); views past its
// end (cold archives) use their Allow bitmap.
//
// The BM25 traversal stops when ctx is done; r.err is then ctx's error.
func (c *Collection) lexical(ctx context.Context, views []bm25.View, bases []uint32, statsAllow []*roaring.Bitmap, q *contract.Query, k int) retrieved {
	r := retrieved{name: retrieverLexical}
	bq := bm25.ParseQuery(q.Text, c.an, false)
	if len(bq.Terms()) == 0 && len(bq.Prefixes) == 0 {
		return r
	}
	p := bm25.DefaultSearchParams()
	p.K = k
	segs := make([]*bm25.Segment, len(views))
	for i := range views {
		segs[i] = views[i].Seg
	}
	// The df of every term a prefix may expand to is collected too (the
	// expansion itself happens inside bm25.Search, which scores each
	// expanded term with st.DF).
	var expanded []string // every prefix's expansion, as bm25 plans it
	if statsAllow != nil {
		// MultiTenant: a prefix expands only to terms the tenant's own
		// rows hold (the first MaxExpansions of them in byte order), and
		// the expansion is handed to bm25 as plain optional terms (what
		// bm25 makes of an expansion), so no other tenant's vocabulary can
		// change a tenant's hits or scores.
		for _, pre := range bq.Prefixes {
			expanded = append(expanded, tenantExpand(views, statsAllow, pre, p.MaxExpansions)...)
		}
		bq.Should = append(bq.Should, expanded...)
		bq.Prefixes = nil
	} else {
		for _, pre := range bq.Prefixes {
			var exp []string
			for _, sg := range segs {
				exp = sg.PrefixTerms(exp, pre, p.MaxExpansions)
			}
			slices.Sort(exp)
			exp = slices.Compact(exp)
			exp = exp[:min(len(exp), p.MaxExpansions)]
			expanded = append(expanded, exp...)
		}
	}
	terms := append(bq.Terms(), expanded...)
	var st *bm25.Stats
	if statsAllow != nil {
		st = tenantStats(views, statsAllow, terms)
	} else {
		st = bm25.CollectStats(segs, terms)
	}
	hits, err := bm25.SearchContext(ctx, views, bq, p, st)
	if err != nil {
		r.err = fmt.Errorf("engine: lexical search: %w", err)
		return r
	}
	// Upper bound: Σ over query term occurrences (prefix expansions
	// included) of w_t·(k1+1), the saturation limit of each term's
	// contribution.
	ubTerms := append(append([]string(nil), bq.Should...), bq.Must...)
	if statsAllow == nil {
		// (In the MultiTenant branch the expansion is already in Should.)
		ubTerms = append(ubTerms, expanded...)
	}
	for _, ph := range bq.Phrases {
		for _, pt := range ph {
			ubTerms = append(ubTerms, pt.Term)
		}
	}
	for _, t := range ubTerms {
		w := bm25.IDF(p.IDF, st.N, st.DF[t])
		if w > 0 {
			r.ub += w * (p.K1 + 1)
		}
	}
	for _, h := range hits {
		r.hits = append(r.hits, fusion.Hit[uint32]{Key: bases[h.View] + h.Doc, Score: h.Score})
		r.raw = append(r.raw, h.Score)
	}
	return r
}

// dense runs the tier's vector search (MemTable brute force + warm HNSW);
// keyOf maps a hit's document to its key. The search stops when ctx is
// done; r.err is then ctx's error.
func (c *Collection) dense(ctx context.Context, sn *tier.Snapshot, keyOf func(*tier.Document) (uint32, bool), vec []float32, k int, filter func(*tier.Document) bool) retrieved {
	r := retrieved{name: retrieverDense}
	hits, err := sn.SearchVectorContext(ctx, vec, k, filter)
	if err != nil {
		r.err = fmt.Errorf("engine: dense search: %w", err)
		return r
	}
	// Raw values are recomputed exactly from each hit's stored vector
	// (denseScorer), so they do not depend on the tier that found the hit
	// (the MemTable's kernel and a segment's HNSW may differ in the last
	// float32 bit); hits are re-sorted by them, ties by document id.
	ds := newDenseScorer(c.metric, vec)
	type dh struct {
		key        uint32
		id         string
		raw, score float64
	}
	out := make([]dh, 0, len(hits))
	for _, h := range hits {
		v, ok := keyOf(h.Doc)
		if !ok {
			r.err = fmt.Errorf("engine: dense hit %q has no indexed version", h.Doc.ID)
			return r
		}
		raw, _, ok := ds.score(h.Doc.Vector)
		if !ok {
			raw = float64(h.Distance)
			switch c.metric {
			case tier.Cosine:
				raw = 1 - raw
			case tier.IP:
				raw = -raw
			}
		}
		// Higher is better for fusion: similarity, or −d² for l2.
		score := raw
		if c.metric == tier.L2 {
			score = -raw
		}
		out = append(out, dh{v, h.Doc.ID, raw, score})
	}
	slices.SortStableFunc(out, func(a, b dh) int {
		if a.score != b.score {
			return -cmp.Compare(a.score, b.score)
		}
		return strings.Compare(a.id, b.id)
	})
	for _, h := range out {
		r.hits = append(r.hits, fusion.Hit[uint32]{Key: h.key, Score: h.score})
		r.raw = append(r.raw, h.raw)
	}
	return r
}

// envelopeOf is the envelope of version v without score and explanation.
func envelopeOf(infos []verInfo, v uint32) (contract.Envelope, error) {
	if int(v) >= len(infos) {
		return contract.Envelope{}, fmt.Errorf("engine: hit version %d beyond the index (%d)", v, len(infos))
	}
	vi := &infos[v]
	d := vi.doc
	return contract.Envelope{
		DocID:       d.ID,
		Content:     d.Content,
		SourceURI:   d.SourceURI,
		VersionHash: hexHash(d.VersionHash),
		Timestamp:   time.Unix(0, d.UpdatedUnixNano).UTC(),
		Trust:       trustFromTier(d.Trust),
		Namespace:   d.Namespace,
		Metadata:    vi.meta,
	}, nil
}

// envelopes builds the top-k envelopes from the completed retrievers.
func (c *Collection) envelopes(q *contract.Query, infos []verInfo, got map[string]retrieved) ([]contract.Envelope, error) {
	env := func(v uint32) (contract.Envelope, error) { return envelopeOf(infos, v) }
	var out []contract.Envelope
	switch q.Mode {
	case contract.Lexical, contract.Dense:
		name := retrieverLexical
		if q.Mode == contract.Dense {
			name = retrieverDense
		}
		r, ok := got[name]
		if !ok {
			return nil, nil
		}
		for i, h := range r.hits {
			if i == q.TopK {
				break
			}
			e, err := env(h.Key)
			if err != nil {
				return nil, err
			}
			if name == retrieverLexical {
				e.Score = contract.LexicalScore(r.raw[i], r.ub)
				e.Explain = contract.Explain{LexicalRank: i + 1, LexicalScore: r.raw[i]}
			} else {
				e.Score = contract.DenseScore(c.o.Metric, float32(r.raw[i]))
				e.Explain = contract.Explain{DenseRank: i + 1, DenseScore: r.raw[i]}
			}
			out = append(out, e)
		}
		return out, nil
	}
	// Hybrid.
	method, err := fusion.ParseMethod(q.Fusion.Method)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	k := q.Fusion.K
	if k == 0 {
		k = fusion.DefaultK
	}
	var lists []fusion.List[uint32]
	var weights []float64
	raws := map[string]map[uint32]float64{}
	for _, n := range []string{retrieverLexical, retrieverDense} {
		w := q.Fusion.Weight(n)
		if w == 0 {
			continue // contributes nothing
		}
		weights = append(weights, w)
		r, ok := got[n]
		if !ok {
			continue
		}
		lists = append(lists, fusion.List[uint32]{Name: n, Weight: w, Hits: r.hits})
		m := make(map[uint32]float64, len(r.hits))
		for i, h := range r.hits {
			m[h.Key] = r.raw[i]
		}
		raws[n] = m
	}
	if len(lists) == 0 {
		return nil, nil
	}
	fused, err := fusion.Fuse(lists, fusion.Options{Method: method, K: k, TopK: q.TopK, Window: q.Fusion.Window})
	if err != nil {
		return nil, fmt.Errorf("engine: fuse: %w", err)
	}
	for _, f := range fused {
		e, err := env(f.Key)
		if err != nil {
			return nil, err
		}
		e.Score = f.Normalized
		if method == fusion.RRF {
			e.Score = contract.HybridScore(f.Score, k, weights...)
		}
		e.Explain.FusedScore = f.Score
		for _, ct := range f.Explain {
			if ct.Rank == 0 {
				continue
			}
			switch ct.List {
			case retrieverLexical:
				e.Explain.LexicalRank = ct.Rank
				e.Explain.LexicalScore = raws[retrieverLexical][f.Key]
			case retrieverDense:
				e.Explain.DenseRank = ct.Rank
				e.Explain.DenseScore = raws[retrieverDense][f.Key]
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// verifyHits re-checks file:// sources when the query asks (Verify) or a
// hit is older than q.Freshness. A stale hit is dropped (OnStale "drop") or
// re-read and flagged ("reread"). Sources that cannot be checked (not
// file://) are kept as they are.
func (c *Collection) verifyHits(q *contract.Query, hits []contract.Envelope) ([]contract.Envelope, []contract.Dropped) {
	if !q.Verify && q.Freshness <= 0 {
		return hits, nil
	}
	now := time.Now()
	var dropped []contract.Dropped
	kept := hits[:0]
	for _, h := range hits {
		if !q.Verify && now.Sub(h.Timestamp) <= q.Freshness {
			kept = append(kept, h)
			continue
		}
		live, ok, err := c.verify.liveHash(h.SourceURI)
		if err != nil {
			kept = append(kept, h) // not verifiable
			continue
		}
		if ok && live == h.VersionHash {
			kept = append(kept, h)
			continue
		}
		if c.o.OnStale == OnStaleReread && ok && c.underSourceRoots(h.SourceURI) {
			b, err := ReadSpan(h.SourceURI)
			if err == nil && VersionHash(b) == live {
				h.Content = string(b)
				h.VersionHash = live
				h.Reread = true
				kept = append(kept, h)
				continue
			}
		}
		// One message whether the span changed or is gone, and never the
		// live hash: a document may name any file, so either would turn
		// verification into an oracle for files the caller cannot read.
		detail := "source changed or missing since this version was indexed"
		dropped = append(dropped, contract.Dropped{DocID: h.DocID, Reason: contract.DropStale, Detail: detail})
	}
	return kept, dropped
}

// underSourceRoots reports whether uri's file lies under one of the
// collection's SourceRoots (after cleaning, so ".." cannot escape a root;
// symbolic links are resolved on both sides).
func (c *Collection) underSourceRoots(uri string) bool {
	path, _, _, err := ParseFileURI(uri)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return false
	}
	for _, r := range c.o.SourceRoots {
		root, err := filepath.EvalSymlinks(filepath.Clean(r))
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func hexHash(h [32]byte) string {
	const digits = "0123456789abcdef"
	var b [64]byte
	for i, x := range h {
		b[2*i], b[2*i+1] = digits[x>>4], digits[x&15]
	}
	return string(b[:])
}
