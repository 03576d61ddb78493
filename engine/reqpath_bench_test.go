package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// BenchmarkStoreRequestPath compares the library request path with the
// bare BM25 query over the same store, back to back: STRATA_BENCH_STORE
// names an existing data directory (searchd index … --data DIR) and
// STRATA_BENCH_COLLECTION its collection (default "code"); without it the
// benchmark is skipped. The queries (STRATA_BENCH_QUERIES of them,
// default 1000) are drawn as bench/lexical.GenerateQueries draws them
// (1–3 distinct words, rare / mid / common buckets, seed 42) from the
// dictionary of the store's largest warm segment, and cycled;
// STRATA_BENCH_QUERIES_OUT, when set, is a file they are written to (one
// a line, for a load client).
//
//	bare:          bm25.ParseQuery + CollectStats + SearchContext over the
//	               snapshot's views (built once, outside the timing)
//	search:        Collection.Search, lexical, top_k 10, verification off
//	search_verify: the same with verify: true (re-hash of each hit's span)
//
// Run with: STRATA_BENCH_STORE=/tmp/rp/data go test -run '^$' -bench StoreRequestPath ./engine/
func BenchmarkStoreRequestPath(b *testing.B) {
	dir := os.Getenv("STRATA_BENCH_STORE")
	if dir == "" {
		b.Skip("STRATA_BENCH_STORE is not set")
	}
	name := os.Getenv("STRATA_BENCH_COLLECTION")
	if name == "" {
		name = "code"
	}
	db, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection(name)
	if err != nil {
		b.Fatal(err)
	}
	sn := c.store.Snapshot()
	defer sn.Close()
	wc, err := c.warm.Get(sn)
	if err != nil {
		b.Fatal(err)
	}
	var hotSegs []*bm25.Segment
	for _, li := range sn.HotLexical() {
		seg, _, err := li.(*hotIndex).view()
		if err != nil {
			b.Fatal(err)
		}
		hotSegs = append(hotSegs, seg)
	}
	views, err := sn.LexicalViews(tier.LexicalSets{Warm: wc.Segs, Hot: hotSegs}, nil)
	if err != nil {
		b.Fatal(err)
	}
	segs := make([]*bm25.Segment, len(views))
	var largest *bm25.Segment
	for i, v := range views {
		segs[i] = v.Seg
		if largest == nil || v.Seg.NumDocs() > largest.NumDocs() {
			largest = v.Seg
		}
	}
	n := 1000
	if s := os.Getenv("STRATA_BENCH_QUERIES"); s != "" {
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			b.Fatalf("STRATA_BENCH_QUERIES=%q: want a positive count", s)
		}
	}
	qs := benchQueries(largest, n)
	if out := os.Getenv("STRATA_BENCH_QUERIES_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(strings.Join(qs, "\n")+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("store %s: %d views, %d queries", dir, len(views), len(qs))
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		p := bm25.DefaultSearchParams()
		p.K = 10
		i := 0
		for b.Loop() {
			bq := bm25.ParseQuery(qs[i%len(qs)], c.an, false)
			st := bm25.CollectStats(segs, bq.Terms())
			if _, err := bm25.SearchContext(ctx, views, bq, p, st); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// search_principal: as a server with API keys searches, with a
	// principal that may read every namespace.
	everyone := &contract.Principal{Name: "bench", Namespaces: []string{"*"}}
	for _, m := range []struct {
		name   string
		verify bool
		p      *contract.Principal
	}{{"search", false, nil}, {"search_verify", true, nil}, {"search_principal", false, everyone}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := c.Search(ctx, contract.Query{Text: qs[i%len(qs)], Mode: contract.Lexical, TopK: 10, Verify: m.verify, Principal: m.p}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// benchQueries is bench/lexical.GenerateQueries (seed 42, df <= 10 rare,
// df > N/10 common) over seg's dictionary, each query joined by spaces.
func benchQueries(seg *bm25.Segment, n int) []string {
	var rare, mid, common []string
	for i := 0; i < seg.NumTerms(); i++ {
		t := seg.Term(i)
		switch df := seg.DocFreq(t); {
		case df <= 10:
			rare = append(rare, t)
		case df > seg.NumDocs()/10:
			common = append(common, t)
		default:
			mid = append(mid, t)
		}
	}
	buckets := [][]string{rare, mid, common}
	for _, bk := range buckets {
		if len(bk) == 0 {
			var all []string
			for i := 0; i < seg.NumTerms(); i++ {
				all = append(all, seg.Term(i))
			}
			buckets = [][]string{all, all, all}
			break
		}
	}
	r := rand.New(rand.NewPCG(42, 0))
	var qs []string
	for len(qs) < n {
		k := 1 + r.IntN(3)
		seen := map[string]bool{}
		var q []string
		for tries := 0; len(q) < k && tries < 100; tries++ {
			bk := buckets[r.IntN(3)]
			w := bk[r.IntN(len(bk))]
			if !seen[w] {
				seen[w] = true
				q = append(q, w)
			}
		}
		qs = append(qs, strings.Join(q, " "))
	}
	return qs
}
