package bm25

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/text"
)

// multiSegQueries draws n seeded queries of `terms` distinct terms from
// the collection's token stream (so terms come in proportion to their
// collection frequency: many common terms, some rare ones), the shape of
// a long natural-language or expanded OR query.
func multiSegQueries(docs []modelDoc, n, terms int, seed uint64) []Query {
	r := rand.New(rand.NewPCG(seed, 50))
	qs := make([]Query, n)
	for i := range qs {
		seen := map[string]bool{}
		for len(qs[i].Should) < terms {
			d := docs[r.IntN(len(docs))]
			if len(d.toks) == 0 {
				continue
			}
			t := d.toks[r.IntN(len(d.toks))].Term
			if !seen[t] {
				seen[t] = true
				qs[i].Should = append(qs[i].Should, t)
			}
		}
	}
	return qs
}

// vaswaniDocs is Vaswani (11,429 abstracts, oracle analyzer) as model
// documents, external id = document number.
func vaswaniDocs(t testing.TB) []modelDoc {
	c := loadCollection(t, "vaswani")
	a := text.MustNew(text.OracleOptions())
	docs := make([]modelDoc, len(c.Docs))
	for i, d := range c.Docs {
		ext, err := strconv.ParseUint(d.ID, 10, 64)
		if err != nil {
			ext = uint64(i)
		}
		docs[i] = modelDoc{ext: ext, toks: a.Analyze(docText(d))}
	}
	return docs
}

// evenCuts splits n documents into parts contiguous segments.
func evenCuts(n, parts int) []int {
	var cuts []int
	for i := 1; i < parts; i++ {
		cuts = append(cuts, i*n/parts)
	}
	return cuts
}

// searchAsEngine runs q the way engine.Collection's lexical retriever
// does: statistics collected over every segment for the query's terms,
// then one Search over all views with them.
func searchAsEngine(views []View, segs []*Segment, q Query, p SearchParams) ([]Hit, error) {
	st := CollectStats(segs, q.Terms())
	return Search(views, q, p, st)
}

// TestMultiSegmentORExact: 50-term OR queries over Vaswani return the
// same top k (ids, and scores within 1e-9 relative) in 1 segment and in
// 35, with statistics collected as the engine does and by Search itself,
// and both equal the naive formula over the raw tokens.
func TestMultiSegmentORExact(t *testing.T) {
	docs := vaswaniDocs(t)
	m := &model{docs: docs}
	one := buildSegs(t, docs, nil, Options{})
	many := buildSegs(t, docs, evenCuts(len(docs), 35), Options{})
	views := func(segs []*Segment) []View {
		vs := make([]View, len(segs))
		for i, s := range segs {
			vs[i] = View{Seg: s}
		}
		return vs
	}
	nq := 40
	if testing.Short() {
		nq = 10
	}
	qs := multiSegQueries(docs, nq, 50, 7)
	for _, k := range []int{10, 100} {
		for _, alg := range []string{AlgBMM, AlgBMW} {
			p := DefaultSearchParams()
			p.K, p.Algorithm = k, alg
			for qi, q := range qs {
				want := m.search(q, p, nil, 0)
				for _, lay := range []struct {
					name string
					segs []*Segment
				}{{"1seg", one}, {"35seg", many}} {
					label := lay.name + "/" + alg + "/k=" + strconv.Itoa(k) + "/q" + strconv.Itoa(qi)
					got, err := searchAsEngine(views(lay.segs), lay.segs, q, p)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, label+"/engine-stats", got, want)
					got, err = Search(views(lay.segs), q, p, nil)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, label+"/own-stats", got, want)
				}
			}
		}
	}
}

// BenchmarkMultiSegmentOR: 200 seeded 50-term OR queries (k = 10,
// default algorithm) over Vaswani built as 1 segment and as 35 segments
// of the same documents, searched as the engine does (CollectStats, then
// Search). Each query runs on both layouts back to back, so load from
// other processes hits both alike; a query's latency is its fastest run
// over the b.N passes. Reported: p50 and p90 over the queries of those
// latencies per layout (p50-ns-1seg, p90-ns-35seg, ...) and the ratios
// 35 segments / 1 segment (p50-ratio, p90-ratio).
func BenchmarkMultiSegmentOR(b *testing.B) {
	docs := vaswaniDocs(b)
	qs := multiSegQueries(docs, 200, 50, 7)
	type layout struct {
		segs  []*Segment
		views []View
		best  []time.Duration
	}
	var lays []*layout
	for _, parts := range []int{1, 35} {
		l := &layout{segs: buildSegs(b, docs, evenCuts(len(docs), parts), Options{}), best: make([]time.Duration, len(qs))}
		for _, s := range l.segs {
			l.views = append(l.views, View{Seg: s})
		}
		lays = append(lays, l)
	}
	p := DefaultSearchParams()
	p.K = 10
	b.ReportAllocs()
	for b.Loop() {
		for qi, q := range qs {
			for _, l := range lays {
				t0 := time.Now()
				if _, err := searchAsEngine(l.views, l.segs, q, p); err != nil {
					b.Fatal(err)
				}
				if d := time.Since(t0); l.best[qi] == 0 || d < l.best[qi] {
					l.best[qi] = d
				}
			}
		}
	}
	pct := func(l *layout, f float64) float64 {
		s := slices.Clone(l.best)
		slices.Sort(s)
		return float64(s[int(f*float64(len(s)-1))].Nanoseconds())
	}
	b.ReportMetric(pct(lays[0], 0.5), "p50-ns-1seg")
	b.ReportMetric(pct(lays[0], 0.9), "p90-ns-1seg")
	b.ReportMetric(pct(lays[1], 0.5), "p50-ns-35seg")
	b.ReportMetric(pct(lays[1], 0.9), "p90-ns-35seg")
	b.ReportMetric(pct(lays[1], 0.5)/pct(lays[0], 0.5), "p50-ratio")
	b.ReportMetric(pct(lays[1], 0.9)/pct(lays[0], 0.9), "p90-ratio")
}

// TestLookupHashIndex: lookup finds every dictionary term at its index
// and no absent term, by binary search before the segment's hash index is
// built and through it afterwards (it is built after T/16 lookups).
func TestLookupHashIndex(t *testing.T) {
	docs := synthCorpus(rand.New(rand.NewPCG(4, 4)), 800, 3000)
	s := buildSegs(t, docs, nil, Options{})[0]
	if s.NumTerms() < 16*termHashMinTerms {
		t.Fatalf("only %d terms", s.NumTerms())
	}
	check := func(phase string) {
		for i := 0; i < s.NumTerms(); i++ {
			term := string(s.termBytes(i))
			if j, ok := s.lookup(term); !ok || j != i {
				t.Fatalf("%s: lookup(%q) = %d, %v; want %d", phase, term, j, ok, i)
			}
			for _, absent := range []string{term + "\x00", term[:len(term)-1] + "~", "zz" + term} {
				if j := s.lowerBound(absent); j < s.NumTerms() && string(s.termBytes(j)) == absent {
					continue // actually present
				}
				if _, ok := s.lookup(absent); ok {
					t.Fatalf("%s: lookup(%q) found an absent term", phase, absent)
				}
			}
		}
	}
	check("first pass (binary search until the index is built)")
	if s.thash.Load() == nil {
		t.Fatal("no hash index after T lookups")
	}
	check("through the index")
}
