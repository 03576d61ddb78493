package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// The read path is a plan, built once per search (newPlan): the
// validated, embedded query; the pinned snapshot; the query's key space
// over the tiers; and the candidates scope, ACL and filter allow, resolved
// once into per-row-set bitmaps. The shaping loop (shape.go) then calls
// retrieve at a depth — fan-out to the lexical and dense retrievers, then
// fusion and envelopes — and again at a deeper depth when a page comes up
// short, without re-validating the query or re-resolving its candidates;
// the final page goes through verification, min_score and staging once
// (finish).

// plan is one search's resolved read path. Read-only once built, so
// retrievals may share it.
type plan struct {
	c      *Collection
	q      contract.Query // defaulted, validated and embedded
	rerank bool           // hybrid under the rerank default (rerank.go)
	pin    *pinnedSnap    // the search's pinned snapshot
	sn     *tier.Snapshot // pin's snapshot (WithCold when the query reads cold)

	// Key space: the warm rows (catalog order), then each hot MemTable's
	// versions (tier.Snapshot.HotLexical order: the frozen MemTables a
	// running flush is turning into a segment, then the active one; key
	// hotBase[i] + version), then the cold rows when the query reads cold.
	infos []verInfo
	keyOf func(*tier.Document) (uint32, bool)
	// The lexical views (one per row set, key bases[i] + local row) whose
	// Allow bitmaps hold the rows visible at the epoch that pass scope,
	// ACL and filter; built when the query is lexical or restricted.
	views []bm25.View
	bases []uint32
	// terms is the warm segments' shared term dictionary; views start
	// with those segments, so the lexical retriever's statistics go
	// through it.
	terms *bm25.TermTable
	// statsAllow: the rows a tenant-scoped query's BM25 statistics count
	// (tenantStats), per view; nil otherwise.
	statsAllow []*roaring.Bitmap
	// allowDoc: the hot and cold documents scope, ACL and filter allow
	// (the dense retriever's filter outside the warm segments); nil when
	// nothing is restricted or the query is lexical.
	allowDoc map[*tier.Document]struct{}
	// denseWarm: per warm segment (views[i].Allow of its view), the rows
	// scope, ACL and filter allow, live at the epoch: the dense
	// retriever's restriction there; set with allowDoc.
	denseWarm []*roaring.Bitmap
}

// denseAllow is a restricted dense retrieval's candidates: warm[i] the
// allowed rows of warm segment i, doc the test of every other tier's
// documents. The zero value restricts nothing.
type denseAllow struct {
	warm []*roaring.Bitmap
	doc  func(*tier.Document) bool
}

// newPlan resolves q at pin's snapshot. validated says the caller has
// validated q (before embedding): it is validated again only when
// embedded (its vector came from the embedder). Errors: validation,
// ErrNoEmbedder, the embedder's, a catalog's.
func (c *Collection) newPlan(ctx context.Context, q contract.Query, pin *pinnedSnap, validated, embedded bool) (*plan, error) {
	if h := c.testHookPlan; h != nil {
		h()
	}
	fusionUnset := q.Fusion.Method == "" && q.Fusion.K == 0 && len(q.Fusion.Weights) == 0 && q.Fusion.Window == 0
	q.EnsureDefaults()
	pl := &plan{c: c, pin: pin, sn: pin.sn}
	pl.rerank = q.Mode == contract.Hybrid && (q.Fusion.Method == FusionRerankMaxNorm || fusionUnset && c.o.HybridDefault != HybridRRF)
	if !validated || embedded {
		if err := q.Validate(c.o.Dim, c.validateOpts()); err != nil {
			return nil, err
		}
	}
	if fe, bad := c.zeroCosine(q.Vector, []any{"query", "vector"}); bad {
		return nil, &contract.ValidationError{Errors: []contract.FieldError{fe}}
	}
	// Query embedding (embedding.go): text and no vector in dense or
	// hybrid mode → the live embedder, or ErrNoEmbedder.
	if err := c.embedQuery(ctx, &q); err != nil {
		return nil, err
	}
	pl.q = q
	sn := pl.sn
	var hots []*hotIndex
	for _, li := range sn.HotLexical() {
		h, _ := li.(*hotIndex)
		if h == nil {
			return nil, fmt.Errorf("engine: MemTable has no lexical index")
		}
		hots = append(hots, h)
	}
	wc, err := c.warm.Get(sn)
	if err != nil {
		return nil, err
	}
	nW := uint32(len(wc.Rows))
	hotSegs := make([]*bm25.Segment, len(hots))
	hotBase := make([]uint32, len(hots))
	hotInfos := make([][]verInfo, len(hots))
	next := nW
	for i, h := range hots {
		seg, memInfos, err := h.view()
		if err != nil {
			return nil, err
		}
		hotSegs[i], hotBase[i], hotInfos[i] = seg, next, memInfos
		next += uint32(len(memInfos))
	}
	infos := c.keys.get(wc, hotInfos)
	keyOf := func(d *tier.Document) (uint32, bool) {
		for i, h := range hots {
			if v, ok := h.versionOf(d); ok {
				return hotBase[i] + v, true
			}
		}
		k, ok := wc.ByDoc[d]
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
			if wb, ok = wc.Fields.Compile(q.Filter, nW); ok {
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
	// scope: pred without the indexed filter (its test once the tier
	// visits only filterBM's rows).
	scope := pred
	if filterBM != nil {
		pred = func(vi *verInfo, v uint32) bool { return filterBM.Contains(v) && (scope == nil || scope(vi, v)) }
	}
	bases := make([]uint32, 0, len(wc.Segs)+len(hots))
	bases = append(append(bases, wc.Bases[:len(wc.Segs)]...), hotBase...)
	var allowDoc map[*tier.Document]struct{}
	if pred != nil && q.Mode != contract.Lexical { // only dense retrieval reads it
		allowDoc = map[*tier.Document]struct{}{}
	}
	// In a MultiTenant collection, and for every query that carries a
	// principal (a server with API keys), the BM25 statistics are
	// collected over the rows the principal may read in the query's
	// namespace only (see tenantStats), so no score depends on documents
	// the caller cannot read.
	var statsAllow []*roaring.Bitmap
	tenancy := compileTenancy(&q)
	if (c.o.MultiTenant || q.Principal != nil) && q.Mode != contract.Dense {
		statsAllow = make([]*roaring.Bitmap, len(bases))
		for i := range statsAllow {
			statsAllow[i] = roaring.New()
		}
	}
	var views []bm25.View
	nWarmSegs := len(wc.Segs)
	if q.Mode != contract.Dense || pred != nil {
		// The tier knows which rows are live at the epoch; keep sees each
		// of them once. With nothing to restrict or count, the tier's
		// cached live-row bitmaps are the Allow bitmaps (shared).
		// only: the tier visits filterBM's rows only (ls.Only below), so
		// keep tests them with scope alone.
		only := filterBM != nil && statsAllow == nil
		rowPred := pred
		if only {
			rowPred = scope
		}
		var keep func(int, uint32) bool
		if pred != nil || statsAllow != nil {
			keep = func(p int, local uint32) bool {
				k := bases[p] + local
				if statsAllow != nil && (tenancy == nil || tenancy(&infos[k])) {
					statsAllow[p].Add(local)
				}
				if rowPred != nil && !rowPred(&infos[k], k) {
					return false
				}
				if allowDoc != nil && p >= nWarmSegs {
					// Warm rows reach the dense retriever as the
					// view's Allow bitmap (denseWarm).
					allowDoc[infos[k].Doc] = struct{}{}
				}
				return true
			}
		}
		ls := tier.LexicalSets{Warm: wc.Segs, Hot: hotSegs}
		if only {
			// Only the filter's rows can pass: the tier visits those
			// instead of every live row. filterBM holds keys; view p's
			// local rows are keys − bases[p] (the tier drops the rows
			// past a view's end).
			ls.Only = make([]*roaring.Bitmap, len(bases))
			for p, b := range bases {
				ls.Only[p] = roaring.AddOffset64(filterBM, -int64(b))
			}
		}
		// Tenancy as bitmaps: a query whose row test is only its
		// namespace scope and principal (and an indexed filter) selects
		// each warm segment's rows from its access classes (one test per
		// class, catalog.AccessIndex) instead of calling keep on every
		// live row.
		if tenancy != nil && q.Scope.URIPrefix == "" && (q.Filter == nil || filterBM != nil) && !testNoAccessIndex {
			for p := 0; p < nWarmSegs; p++ {
				ai := wc.Access[p]
				if ai == nil {
					continue
				}
				if ls.Only == nil {
					ls.Only = make([]*roaring.Bitmap, len(bases))
				}
				if ls.Final == nil {
					ls.Final = make([]bool, len(bases))
				}
				ten := roaring.And(sn.WarmLive(p), ai.Allowed(q.Scope.Namespace, q.Principal))
				if statsAllow != nil {
					statsAllow[p] = ten
				}
				rows := ten
				if filterBM != nil {
					rows = roaring.And(ten, roaring.AddOffset64(filterBM, -int64(bases[p])))
				}
				ls.Only[p], ls.Final[p] = rows, true
			}
		}
		views, err = sn.LexicalViews(ls, keep)
		if err != nil {
			return nil, err
		}
	} else {
		for _, seg := range append(wc.Segs[:len(wc.Segs):len(wc.Segs)], hotSegs...) {
			views = append(views, bm25.View{Seg: seg, Allow: roaring.New()})
		}
	}

	// --- cold tier hook (archive.go): only when q.Tiers includes cold ---
	if q.HasTier(contract.Cold) {
		cq := coldQuery{sn: sn, infos: infos, views: views, bases: bases, keyOf: keyOf, allowDoc: allowDoc, statsAllow: statsAllow}
		if err := c.addCold(&q, &cq); err != nil {
			return nil, err
		}
		sn, infos, views, bases, keyOf, statsAllow = cq.sn, cq.infos, cq.views, cq.bases, cq.keyOf, cq.statsAllow
	}
	// --- end cold tier hook ---
	pl.sn, pl.infos, pl.keyOf, pl.views, pl.bases, pl.statsAllow, pl.allowDoc = sn, infos, keyOf, views, bases, statsAllow, allowDoc
	if allowDoc != nil {
		pl.denseWarm = make([]*roaring.Bitmap, nWarmSegs)
		for i := range pl.denseWarm {
			if pl.denseWarm[i] = views[i].Allow; pl.denseWarm[i] == nil {
				// A nil Allow is every row; restricted views always
				// hold their own bitmap, but keep the meaning.
				pl.denseWarm[i] = roaring.New()
				pl.denseWarm[i].AddRange(0, uint64(views[i].Seg.NumDocs()))
			}
		}
	}
	pl.terms = wc.Terms
	return pl, nil
}

// retrieval is one retrieve's output: the fused envelopes, best first,
// and whether the budget cut a retriever short.
type retrieval struct {
	hits    []contract.Envelope
	partial bool
	reason  string
}

// retrieve runs the plan's retrievers for the top depth hits (lexical and
// dense in parallel under budget: > 0 is a deadline from now) and fuses
// them into envelopes. The pinned snapshot stays pinned until every
// retriever returned, even those the deadline left behind. Errors:
// ErrClosed, the caller's context, a retriever's or fusion's (a budget
// expiry is a partial retrieval, not an error).
func (pl *plan) retrieve(ctx context.Context, depth int, budget time.Duration) (retrieval, error) {
	c := pl.c
	var out retrieval
	if err := c.check(ctx); err != nil {
		return out, err
	}
	q := pl.q
	q.TopK, q.Budget = depth, budget
	parent := ctx
	if q.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.Budget)
		defer cancel()
	}
	// The retrievers search under ctx (budget deadline included) and stop
	// when it is done; a retrieval that returns early (an error, or a
	// retriever the budget left behind) cancels the rest, so no work
	// outlives the call.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	lexDepth, denseDepth := q.TopK, q.TopK
	switch {
	case pl.rerank:
		// The lexical list supplies the RerankWindow candidates and the
		// tail; the dense list (depth TopK) only back-fills a lexical list
		// shorter than TopK.
		w, _ := c.rerankParams(q.Fusion)
		lexDepth = max(w, q.TopK)
	case q.Mode == contract.Hybrid:
		lexDepth = q.Fusion.Window
		if lexDepth == 0 {
			lexDepth = max(100, q.TopK)
		}
		lexDepth = max(lexDepth, q.TopK)
		denseDepth = lexDepth
	}

	hook, hookDone := c.testHookRetriever, c.testHookRetrieverDone
	var wg sync.WaitGroup
	ch := make(chan retrieved, 2)
	// Under the rerank strategy the dense retriever scores the lexical
	// candidates, so it waits for the lexical list.
	var lexCh chan retrieved
	if pl.rerank {
		lexCh = make(chan retrieved, 1)
	}
	want := 0
	pl.pin.acquire()
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
			r := c.lexical(ctx, pl.sn, pl.views, pl.bases, pl.statsAllow, pl.terms, &q, lexDepth)
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
			var allow denseAllow
			if pl.allowDoc != nil {
				allow.warm = pl.denseWarm
				allow.doc = func(d *tier.Document) bool { _, ok := pl.allowDoc[d]; return ok }
			}
			if pl.rerank {
				w, _ := c.rerankParams(q.Fusion)
				ch <- c.denseRerank(ctx, pl.sn, pl.keyOf, <-lexCh, pl.infos, q.Vector, q.TopK, w, allow)
				return
			}
			ch <- c.dense(ctx, pl.sn, pl.keyOf, q.Vector, denseDepth, allow)
		}()
	}
	go func() { wg.Wait(); pl.pin.release() }()

	got := map[string]retrieved{}
	if ctx.Err() == nil {
	wait:
		for len(got) < want {
			select {
			case r := <-ch:
				if r.err != nil {
					if ctx.Err() != nil && cancelled(r.err) {
						break wait // the budget stopped it: a partial result
					}
					return out, r.err
				}
				got[r.name] = r
			case <-ctx.Done():
				break wait
			}
		}
	}
	if len(got) < want {
		if err := parent.Err(); err != nil {
			return out, err
		}
		var missing []string
		for _, n := range []string{retrieverLexical, retrieverDense} {
			needed := (n == retrieverLexical && q.Mode != contract.Dense) || (n == retrieverDense && q.Mode != contract.Lexical)
			if _, ok := got[n]; needed && !ok {
				missing = append(missing, n)
			}
		}
		out.partial = true
		out.reason = fmt.Sprintf("budget of %v expired before the %s retriever(s) finished", q.Budget, strings.Join(missing, " and "))
	}
	var err error
	if pl.rerank {
		out.hits, err = c.rerankEnvelopes(&q, pl.infos, got)
	} else {
		out.hits, err = c.envelopes(&q, pl.infos, got)
	}
	if err != nil {
		return retrieval{}, err
	}
	return out, nil
}

// finish turns the final page of a retrieval into the result: source
// verification (verifyHits), min_score, and staging when the query sets a
// token budget (the staged result is then returned too).
func (pl *plan) finish(r retrieval, hits []contract.Envelope) (contract.Result, *contract.StagedResult, error) {
	q := &pl.q
	res := contract.Result{Epoch: pl.sn.Epoch(), Partial: r.partial, Reason: r.reason}
	hits, dropped := pl.c.verifyHits(q, hits)
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
		st, err := contract.Stage(res.Hits, contract.StageOptionsFrom(q))
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

// filterRows returns the rows of a view (local ids 0..n-1, global ids
// base..base+n-1) that are in filterBM (global ids) and in live (local
// ids; nil: every row), as a new bitmap: O(|filterBM ∩ [base, base+n)|).
func filterRows(filterBM, live *roaring.Bitmap, base, n uint32) *roaring.Bitmap {
	out := roaring.New()
	it := filterBM.Iterator()
	it.AdvanceIfNeeded(base)
	for it.HasNext() {
		k := it.Next()
		if uint64(k) >= uint64(base)+uint64(n) {
			break
		}
		if live == nil || live.Contains(k-base) {
			out.Add(k - base)
		}
	}
	return out
}

// testNoAccessIndex makes every query test tenancy row by row (the
// reference the access-index path is compared with). Tests only.
var testNoAccessIndex bool
