package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/internal/testenv/s3gw"
	"github.com/stratasearch/strata/vfs/objstore"
)

// TestShardFanOut: 16 shards (documents split by ShardOf), each
// published by its own writer under its own prefix of one gateway and
// served by its own reader. Fanned out to all 16 and merged, a query
// returns exactly the hits, ids and scores, of one collection holding
// every document: dense (MergeTopK; segments below IVFMinRows vectors
// are scanned exactly, SegmentIndex "ivfpq" → flat, so both sides are
// exact), lexical (with the summed Collection.LexicalStats of the shards
// in Query.LexicalStats; shard-local statistics are shown to differ),
// hybrid RRF (MergeHybridRRF over the shards' lexical and dense lists)
// and the default hybrid, rerank-maxnorm (MergeHybridRerank over the
// shards' heads and dense lists, including the dense back-fill).
func TestShardFanOut(t *testing.T) {
	g := s3gw.Start(t)
	ctx := context.Background()
	const shards, docs, k = 16, 192, 10
	newSt := func(prefix string) *objstore.Store {
		st, err := objstore.New(objstore.Config{Endpoint: g.Endpoint, AccessKey: s3gw.AccessKey, SecretKey: s3gw.SecretKey,
			Bucket: "strata", Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	opts := engine.CollectionOptions{Dim: testDim, Metric: "l2", SegmentIndex: "ivfpq"}
	whole := newDBT(t)
	wc, err := whole.db.CreateCollection("docs", opts)
	if err != nil {
		t.Fatal(err)
	}
	parts := make([][]contract.Document, shards)
	var all []contract.Document
	for i := 0; i < docs; i++ {
		d := doc(i, 11)
		all = append(all, d)
		s := ShardOf(d.ID, shards)
		parts[s] = append(parts[s], d)
	}
	if _, err := wc.Upsert(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := wc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	root := ShardMap{Version: 1}
	readers := make([]*Reader, shards)
	for s := 0; s < shards; s++ {
		if len(parts[s]) == 0 {
			t.Fatalf("shard %d empty", s)
		}
		d := newDBT(t)
		c, err := d.db.CreateCollection("docs", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Upsert(ctx, parts[s]); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("cluster/shard-%02d", s)
		st := newSt(prefix)
		if err := st.EnsureBucket(ctx); err != nil {
			t.Fatal(err)
		}
		w, err := OpenWriter(ctx, st, d.db, WriterOptions{LeaseTTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		v, err := w.Publish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		root.Prefixes = append(root.Prefixes, prefix)
		root.Epochs = append(root.Epochs, v)
		readers[s] = openReader(t, st)
	}
	rootSt := newSt("cluster")
	if err := PublishShardMap(ctx, rootSt, root); err != nil {
		t.Fatal(err)
	}
	b, _, err := rootSt.Get(ctx, "root/00000000000000000001.json")
	var got ShardMap
	if err != nil || json.Unmarshal(b, &got) != nil || len(got.Prefixes) != shards {
		t.Fatalf("root manifest: %v", err)
	}
	// search runs q on every shard at the root's versions.
	search := func(q contract.Query) [][]contract.Envelope {
		t.Helper()
		var lists [][]contract.Envelope
		for s, r := range readers {
			v := r.Acquire()
			if v.Version != got.Epochs[s] {
				t.Fatalf("shard %d serves version %d, root says %d", s, v.Version, got.Epochs[s])
			}
			res, err := mustCol(t, v.DB, "docs").Search(ctx, q)
			v.Release()
			if err != nil {
				t.Fatal(err)
			}
			lists = append(lists, res.Hits)
		}
		return lists
	}
	// globalStats is the distributed-frequency phase: the sum of every
	// shard's statistics for q's terms.
	globalStats := func(q contract.Query) *contract.LexicalStats {
		t.Helper()
		var sum contract.LexicalStats
		for _, r := range readers {
			v := r.Acquire()
			st, err := mustCol(t, v.DB, "docs").LexicalStats(ctx, q)
			v.Release()
			if err != nil {
				t.Fatal(err)
			}
			sum.Add(st)
		}
		return &sum
	}
	same := func(a, b []contract.Envelope) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i].DocID != b[i].DocID || a[i].Score != b[i].Score {
				return false
			}
		}
		return true
	}
	check := func(what string, qi int, merged, want []contract.Envelope) {
		t.Helper()
		if len(merged) != len(want) {
			t.Fatalf("%s query %d: %d merged hits, %d from one collection", what, qi, len(merged), len(want))
		}
		for i := range merged {
			if merged[i].DocID != want[i].DocID || merged[i].Score != want[i].Score {
				t.Fatalf("%s query %d rank %d: merged %s %v, one collection %s %v", what, qi, i, merged[i].DocID,
					merged[i].Score, want[i].DocID, want[i].Score)
			}
		}
	}

	// Lexical: with the global statistics the merge is exact; with each
	// shard's own it is not (the check can fail).
	localDiffers := 0
	for qi := 0; qi < 10; qi++ {
		w := strings.Fields(doc(6000+qi, 5).Content)
		q := contract.Query{Text: w[0] + " " + w[1], Mode: contract.Lexical, TopK: k}
		want, err := wc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := wc.LexicalStats(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		gs := globalStats(q)
		if fmt.Sprint(*gs) != fmt.Sprint(whole) || gs.Docs != docs {
			t.Fatalf("query %d: summed shard statistics %+v, one collection's %+v", qi, *gs, whole)
		}
		if !same(MergeLexicalTopK(search(q), k), want.Hits) {
			localDiffers++
		}
		gq := q
		gq.LexicalStats = gs
		check("lexical", qi, MergeLexicalTopK(search(gq), k), want.Hits)
	}
	t.Logf("lexical: shard-local statistics merged differently from one collection on %d of 10 queries", localDiffers)
	if localDiffers == 0 {
		t.Fatal("shard-local statistics merged exactly on every query: the lexical check cannot fail")
	}

	// Hybrid (RRF): each shard's lexical (global statistics) and dense
	// lists at the fusion depth, merged, then fused once.
	for qi := 0; qi < 10; qi++ {
		d := doc(7000+qi, 5)
		w := strings.Fields(d.Content)
		q := contract.Query{Text: w[0] + " " + w[1], Vector: d.Vector, Mode: contract.Hybrid, TopK: k,
			Fusion: contract.FusionParams{Method: "rrf"}}
		want, err := wc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		depth := HybridRRFDepth(q)
		lq := contract.Query{Text: q.Text, Mode: contract.Lexical, TopK: depth, LexicalStats: globalStats(q)}
		dq := contract.Query{Vector: q.Vector, Mode: contract.Dense, TopK: depth}
		merged, err := MergeHybridRRF(q, search(lq), search(dq))
		if err != nil {
			t.Fatal(err)
		}
		check("hybrid", qi, merged, want.Hits)
		for i := range merged {
			if merged[i].Explain.LexicalRank != want.Hits[i].Explain.LexicalRank ||
				merged[i].Explain.DenseRank != want.Hits[i].Explain.DenseRank {
				t.Fatalf("hybrid query %d rank %d: explain %+v, one collection %+v", qi, i, merged[i].Explain, want.Hits[i].Explain)
			}
		}
	}

	// Hybrid under the default (rerank-maxnorm): each shard's head (its
	// lexical top RerankWindow with their dense scores, global statistics)
	// and dense list, merged and fused once. The last query's text matches
	// nothing, so its result is the dense back-fill alone.
	for qi := 0; qi < 11; qi++ {
		d := doc(8000+qi, 5)
		w := strings.Fields(d.Content)
		text := w[0] + " " + w[1]
		if qi == 10 {
			text = "unmatched"
		}
		q := contract.Query{Text: text, Vector: d.Vector, Mode: contract.Hybrid, TopK: k}
		want, err := wc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		n, alpha := wc.RerankParams(q.Fusion)
		hq := q
		hq.TopK, hq.LexicalStats = n, globalStats(q)
		dq := contract.Query{Vector: q.Vector, Mode: contract.Dense, TopK: k}
		merged, err := MergeHybridRerank(q, "l2", n, alpha, search(hq), search(dq))
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Hits) != k || (qi == 10) != (want.Hits[0].Explain.LexicalRank == 0) {
			t.Fatalf("hybrid rerank query %d: %d hits, first %+v: not the case it tests", qi, len(want.Hits), want.Hits[0].Explain)
		}
		check("hybrid rerank", qi, merged, want.Hits)
		for i := range merged {
			if merged[i].Explain != want.Hits[i].Explain {
				t.Fatalf("hybrid rerank query %d rank %d: explain %+v, one collection %+v", qi, i, merged[i].Explain, want.Hits[i].Explain)
			}
		}
	}

	for qi := 0; qi < 10; qi++ {
		q := contract.Query{Vector: doc(5000+qi, 3).Vector, Mode: contract.Dense, TopK: k}
		want, err := wc.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var lists [][]contract.Envelope
		for s, r := range readers {
			v := r.Acquire()
			if v.Version != got.Epochs[s] {
				t.Fatalf("shard %d serves version %d, root says %d", s, v.Version, got.Epochs[s])
			}
			res, err := mustCol(t, v.DB, "docs").Search(ctx, q)
			v.Release()
			if err != nil {
				t.Fatal(err)
			}
			lists = append(lists, res.Hits)
		}
		merged := MergeTopK(lists, k)
		if len(merged) != len(want.Hits) {
			t.Fatalf("query %d: %d merged hits, %d from one collection", qi, len(merged), len(want.Hits))
		}
		for i := range merged {
			if merged[i].DocID != want.Hits[i].DocID || merged[i].Score != want.Hits[i].Score {
				t.Fatalf("query %d rank %d: merged %s %v, one collection %s %v", qi, i, merged[i].DocID, merged[i].Score,
					want.Hits[i].DocID, want.Hits[i].Score)
			}
		}
	}
}
