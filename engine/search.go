package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/fusion"
	"github.com/stratasearch/strata/engine/redact"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/verify"
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
	if err := c.check(ctx); err != nil {
		return contract.Result{}, nil, err
	}
	// Result shaping (shape.go) drives the read path (plan.go): cursor,
	// collapse, highlight and NextCursor around one plan's retrievals.
	return c.searchShaped(ctx, q)
}

// cancelled reports whether err is a context's cancellation or deadline
// error: a retriever cut short, not failed.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// compileTenancy returns the test of the rows a tenant-scoped query's BM25
// statistics count (MultiTenant collections, queries with a principal): the query's namespace prefix and the principal's read
// rights (not its URI prefix or metadata filter, which narrow the results,
// not the collection), or nil when neither is set.
func compileTenancy(q *contract.Query) func(*verInfo) bool {
	ns, p := q.Scope.Namespace, q.Principal
	if ns == "" && p == nil {
		return nil
	}
	return func(vi *verInfo) bool {
		d := vi.Doc
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
		n := a.GetCardinality()
		st.N += int64(n)
		// Every row of the segment (a tenant who may read them all): its
		// own totals.
		all := n == uint64(v.Seg.NumDocs()) && (n == 0 || uint64(a.Maximum()) == n-1)
		if all {
			st.SumDL += int64(v.Seg.SumDocLen())
		} else {
			it := a.Iterator()
			for it.HasNext() {
				st.SumDL += int64(v.Seg.DocLen(it.Next()))
			}
		}
		clear(seen)
		for _, t := range terms {
			if seen[t] {
				continue
			}
			seen[t] = true
			if all {
				st.DF[t] += int64(v.Seg.DocFreq(t))
			} else {
				st.DF[t] += allowedDF(v.Seg, a, t, false)
			}
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
		ups = redact.URIMatchForms(up)
	}
	return func(vi *verInfo, _ uint32) bool {
		d := vi.Doc
		if ns != "" && !strings.HasPrefix(d.Namespace, ns) {
			return false
		}
		if up != "" && !slices.ContainsFunc(ups, func(u string) bool { return strings.HasPrefix(d.SourceURI, u) }) {
			return false
		}
		if p != nil && !p.CanRead(d.Namespace, d.ACL) {
			return false
		}
		if f != nil && !f.MatchFunc(vi.Value) {
			return false
		}
		return true
	}
}

// lexicalQuery parses q's lexical side: the BM25 query (text and
// expansion terms), every prefix's expansion as bm25 plans it (for a
// tenant-scoped query, already moved into bq.Should), the search
// parameters and the views' segments; ok is false when q has no lexical
// terms.
func (c *Collection) lexicalQuery(views []bm25.View, statsAllow []*roaring.Bitmap, q *contract.Query) (bq bm25.Query, expanded []string, p bm25.SearchParams, segs []*bm25.Segment, ok bool) {
	p = bm25.DefaultSearchParams()
	bq = bm25.Parse(q.Text, c.an, false, q.Syntax == contract.SyntaxOperators)
	if len(q.Expansion) > 0 {
		// Expansion terms: optional, scaled by their weights; a term the
		// text already scores keeps its own weight.
		have := map[string]bool{}
		for _, t := range bq.Terms() {
			have[t] = true
		}
		for _, e := range q.Expansion {
			if !have[e.Term] {
				have[e.Term] = true
				bq.Should = append(bq.Should, e.Term)
				if bq.Weights == nil {
					bq.Weights = map[string]float64{}
				}
				bq.Weights[e.Term] = e.Weight
			}
		}
	}
	if len(bq.Terms()) == 0 && len(bq.Prefixes) == 0 {
		return bq, nil, p, nil, false
	}
	segs = make([]*bm25.Segment, len(views))
	for i := range views {
		segs[i] = views[i].Seg
	}
	// The df of every term a prefix may expand to is collected too (the
	// expansion itself happens inside bm25.Search, which scores each
	// expanded term with st.DF).
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
	return bq, expanded, p, segs, true
}

// lexical runs one BM25 search (tier.Snapshot.SearchLexical) over every
// tier's segment (warm segments' BM25 sections and the MemTable's sealed
// builder), each restricted to its Allow bitmap during traversal, with global statistics (CollectStats over
// all of them, so a score does not depend on how rows are split into
// segments), or q.LexicalStats when set (a shard scoring with its
// collection's global statistics). Hit keys are bases[view] + local doc
// id.
//
// statsAllow, when not nil (MultiTenant collections, queries with a
// principal), restricts the statistics to the rows it marks per view
// (tenantStats); views past its end (cold archives) use their Allow
// bitmap.
//
// Otherwise the statistics come through tt, the warm segments' shared
// dictionary (bm25.TermTable.CollectStats: the same Stats as
// CollectStats, with one lookup per cached term for the warm segments;
// nil, or views not starting with its segments: plain CollectStats).
//
// The BM25 traversal stops when ctx is done; r.err is then ctx's error.
func (c *Collection) lexical(ctx context.Context, sn *tier.Snapshot, views []bm25.View, bases []uint32, statsAllow []*roaring.Bitmap, tt *bm25.TermTable, q *contract.Query, k int) retrieved {
	r := retrieved{name: retrieverLexical}
	bq, expanded, p, segs, ok := c.lexicalQuery(views, statsAllow, q)
	if !ok {
		return r
	}
	p.K = k
	terms := append(bq.Terms(), expanded...)
	var st *bm25.Stats
	switch ls := q.LexicalStats; {
	case statsAllow != nil:
		st = tenantStats(views, statsAllow, terms)
	case ls != nil:
		// A sharded collection's global statistics (LexicalStats).
		st = &bm25.Stats{N: ls.Docs, SumDL: ls.SumDocLen, DF: ls.DocFreq}
		if st.DF == nil {
			st.DF = map[string]int64{}
		}
	default:
		st = tt.CollectStats(segs, terms)
	}
	hits, err := sn.SearchLexical(ctx, views, bq, p, st)
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
		if f, ok := bq.Weights[t]; ok {
			w *= f
		}
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

// dense runs the tier's vector search (MemTable brute force + warm HNSW)
// over the candidates allow admits (warm segments: its row bitmaps, one
// AND with the live rows each; other tiers: its document test); keyOf
// maps a hit's document to its key. The search stops when ctx is
// done; r.err is then ctx's error.
func (c *Collection) dense(ctx context.Context, sn *tier.Snapshot, keyOf func(*tier.Document) (uint32, bool), vec []float32, k int, allow denseAllow) retrieved {
	r := retrieved{name: retrieverDense}
	var hits []tier.Hit
	var err error
	if allow.warm != nil {
		hits, err = sn.SearchVectorRowsContext(ctx, vec, k, allow.warm, allow.doc)
	} else {
		hits, err = sn.SearchVectorContext(ctx, vec, k, allow.doc)
	}
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
	d := vi.Doc
	meta, err := vi.Metadata()
	if err != nil {
		return contract.Envelope{}, fmt.Errorf("engine: hit %q: %w", d.ID, err)
	}
	text, err := d.Text()
	if err != nil {
		return contract.Envelope{}, fmt.Errorf("engine: hit %q: %w", d.ID, err)
	}
	hash, err := d.Hash()
	if err != nil {
		return contract.Envelope{}, fmt.Errorf("engine: hit %q: %w", d.ID, err)
	}
	return contract.Envelope{
		DocID:       d.ID,
		Content:     text,
		SourceURI:   d.SourceURI,
		VersionHash: hexHash(hash),
		Timestamp:   time.Unix(0, d.UpdatedUnixNano).UTC(),
		Trust:       trustFromTier(d.Trust),
		Namespace:   d.Namespace,
		Metadata:    meta,
	}, nil
}

// envelopes builds the top-k envelopes from the completed retrievers.
func (c *Collection) envelopes(q *contract.Query, infos []verInfo, got map[string]retrieved) ([]contract.Envelope, error) {
	env := func(v uint32) (contract.Envelope, error) { return envelopeOf(infos, v) }
	// preload loads the hits' lazily stored contents at once (their text
	// blocks in parallel); a failure shows again in env.
	preload := func(n int, key func(i int) uint32) {
		docs := make([]*tier.Document, 0, n)
		for i := 0; i < n; i++ {
			if v := key(i); int(v) < len(infos) {
				docs = append(docs, infos[v].Doc)
			}
		}
		_ = tier.LoadTexts(docs)
	}
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
		preload(min(len(r.hits), q.TopK), func(i int) uint32 { return r.hits[i].Key })
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
	preload(len(fused), func(i int) uint32 { return fused[i].Key })
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

// VerifyHits checks hits, envelopes that this collection's Search or
// Fetch returned, against their sources as q asks, exactly as Search
// checks its final page: it returns the hits that pass, in their order,
// and a Dropped (reason stale) for each that does not. Only q's Verify,
// Freshness, Scope and Principal are read; with neither Verify nor
// Freshness set, hits are returned as they are. A hit whose id, version
// hash or source URI is not the current version of a stored document
// that q's scope admits and q.Principal may read is dropped without
// reading any file. A caller can so search without Verify, choose its
// page (merging several searches, re-ranking), and verify only the hits
// it returns. hits is reused for the result. Errors: ErrClosed and the
// context's.
func (c *Collection) VerifyHits(ctx context.Context, q contract.Query, hits []contract.Envelope) ([]contract.Envelope, []contract.Dropped, error) {
	if err := c.check(ctx); err != nil {
		return nil, nil, err
	}
	kept, dropped := c.verifyHits(&q, hits)
	return kept, dropped, nil
}

// verifyHits re-checks file:// sources when the query asks (Verify) or a
// hit is older than q.Freshness. A stale hit is dropped (OnStale "drop") or
// re-read and flagged ("reread"); a hit whose document was replaced or
// deleted after the search's snapshot is dropped as stale without reading
// anything. Sources that cannot be checked (not
// file://) and file:// sources the collection is not entitled to read
// (verify.go: VerifiableSources, Options.VerifyRoots, SourceRoots) are
// kept as they are, without reading anything: the outcome then depends on
// the stored documents only.
func (c *Collection) verifyHits(q *contract.Query, hits []contract.Envelope) ([]contract.Envelope, []contract.Dropped) {
	if !q.Verify && q.Freshness <= 0 {
		return hits, nil
	}
	now := time.Now()
	var sn *tier.Snapshot
	var dropped []contract.Dropped
	kept := hits[:0]
	for _, h := range hits {
		if !q.Verify && now.Sub(h.Timestamp) <= q.Freshness {
			kept = append(kept, h)
			continue
		}
		path, from, to, err := verify.ParseFileURI(h.SourceURI)
		if err != nil {
			kept = append(kept, h) // not verifiable
			continue
		}
		if sn == nil {
			sn = c.store.Snapshot()
			defer sn.Close()
		}
		// A version replaced or deleted since the search's snapshot is
		// stale whatever its source holds (this reads no file).
		// A document q may not see (VerifyHits takes envelopes from its
		// caller) gets the same answer, so the outcome does not tell
		// whether it exists.
		if d, _, found := sn.Get(h.DocID); !found || storedHash(d) != h.VersionHash || d.SourceURI != h.SourceURI ||
			!strings.HasPrefix(d.Namespace, q.Scope.Namespace) || !strings.HasPrefix(d.SourceURI, q.Scope.URIPrefix) ||
			(q.Principal != nil && !q.Principal.CanRead(d.Namespace, d.ACL)) {
			dropped = append(dropped, contract.Dropped{DocID: h.DocID, Reason: contract.DropStale,
				Detail: "a newer version of this document was written after this search's snapshot"})
			continue
		}
		real, entitled := c.sourcePath(sn, &h, path)
		if !entitled {
			kept = append(kept, h) // never read (see VerifiableSources)
			continue
		}
		live, ok := c.verify.LiveHash(real, from, to)
		if ok && live == h.VersionHash {
			kept = append(kept, h)
			continue
		}
		if c.o.OnStale == OnStaleReread && ok {
			if rp, under := verify.Confined(h.SourceURI, c.o.SourceRoots); under {
				b, err := verify.ReadPathSpan(rp, from, to)
				if err == nil && verify.VersionHash(b) == live {
					h.Content = string(b)
					h.VersionHash = live
					h.Reread = true
					kept = append(kept, h)
					continue
				}
			}
		}
		// One message whether the span changed or is gone, and never the
		// live hash.
		detail := "source changed or missing since this version was indexed"
		dropped = append(dropped, contract.Dropped{DocID: h.DocID, Reason: contract.DropStale, Detail: detail})
	}
	return kept, dropped
}

// storedHash is d's version hash in hex (tier.Document.Hash), or "" when
// it cannot be had (its content could not be loaded): callers comparing
// it with an envelope's hash then see a mismatch.
func storedHash(d *tier.Document) string {
	h, err := d.Hash()
	if err != nil {
		return ""
	}
	return hexHash(h)
}

func hexHash(h [32]byte) string {
	const digits = "0123456789abcdef"
	var b [64]byte
	for i, x := range h {
		b[2*i], b[2*i+1] = digits[x>>4], digits[x&15]
	}
	return string(b[:])
}
