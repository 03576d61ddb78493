package bm25

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// randCuts splits n documents into parts non-empty contiguous segments
// of seeded random sizes (some of one document).
func randCuts(r *rand.Rand, n, parts int) []int {
	set := map[int]bool{}
	for len(set) < parts-1 {
		set[1+r.IntN(n-1)] = true
	}
	cuts := slices.Sorted(maps.Keys(set))
	return cuts
}

func viewsOf(segs []*Segment) []View {
	vs := make([]View, len(segs))
	for i, s := range segs {
		vs[i] = View{Seg: s}
	}
	return vs
}

// statsTerms is q's terms and its prefixes' expansions over segs, the
// terms the engine collects statistics for.
func statsTerms(segs []*Segment, q Query, maxExp int) []string {
	terms := q.Terms()
	for _, pre := range q.Prefixes {
		var exp []string
		for _, s := range segs {
			exp = s.PrefixTerms(exp, pre, maxExp)
		}
		slices.Sort(exp)
		exp = slices.Compact(exp)
		terms = append(terms, exp[:min(len(exp), maxExp)]...)
	}
	return terms
}

func sameStats(t *testing.T, label string, got, want *Stats) {
	t.Helper()
	if got.N != want.N || got.SumDL != want.SumDL || !maps.Equal(got.DF, want.DF) {
		t.Fatalf("%s: stats N %d Σ|D| %d DF %v, want N %d Σ|D| %d DF %v", label, got.N, got.SumDL, got.DF, want.N, want.SumDL, want.DF)
	}
}

// identicalHits: the same ids, scores bit for bit, views and docs.
func identicalHits(t *testing.T, label string, got, want []Hit) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: hits differ\n got %v\nwant %v", label, got, want)
	}
}

// TestTermTableMatchesCollectStats: over 40 segments of seeded random
// sizes, the first 37 in a TermTable (the warm set) and 3 after it (a
// MemTable's), TermTable.CollectStats returns CollectStats's Stats, and
// a Search with them returns exactly CollectStats's hits, which equal the
// naive formula over the raw tokens: for short and 20-term OR queries,
// +required terms, excluded terms and phrases, each query twice (the
// second from the cache), with the table at its normal size and emptied
// every few terms, and for segment lists the table does not cover.
func TestTermTableMatchesCollectStats(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 5))
	docs := synthCorpus(r, 1500, 1200)
	m := &model{docs: docs}
	segs := buildSegs(t, docs, randCuts(r, len(docs), 40), Options{})
	nq := 60
	if testing.Short() {
		nq = 10
	}
	var qs []Query
	for i := 0; i < nq; i++ {
		q := randQuery(r, docs, 1200)
		if i%3 == 0 {
			q = multiSegQueries(docs, 1, 20, uint64(i))[0]
		}
		qs = append(qs, q)
	}
	small := NewTermTable(segs[:37])
	small.maxEntries = 3 * 37 // emptied every few terms
	tables := map[string]*TermTable{"normal": NewTermTable(segs[:37]), "small": small}
	reversed := slices.Clone(segs)
	slices.Reverse(reversed)
	for _, k := range []int{1, 10} {
		p := DefaultSearchParams()
		p.K = k
		for qi, q := range qs {
			want := m.search(q, p, nil, p.MaxExpansions)
			for _, name := range []string{"normal", "small"} {
				tt := tables[name]
				for pass := 0; pass < 2; pass++ {
					for _, lay := range []struct {
						name string
						segs []*Segment
					}{{"warm+hot", segs}, {"warm", segs[:37]}, {"reversed", reversed}, {"short", segs[:20]}} {
						label := fmt.Sprintf("%s/%s/pass%d/k=%d/q%d %v", name, lay.name, pass, k, qi, q)
						terms := statsTerms(lay.segs, q, p.MaxExpansions)
						ref := CollectStats(lay.segs, terms)
						st := tt.CollectStats(lay.segs, terms)
						sameStats(t, label, st, ref)
						refHits, err := Search(viewsOf(lay.segs), q, p, ref)
						if err != nil {
							t.Fatal(err)
						}
						got, err := Search(viewsOf(lay.segs), q, p, st)
						if err != nil {
							t.Fatal(err)
						}
						identicalHits(t, label, got, refHits)
						if lay.name == "warm+hot" || lay.name == "reversed" {
							sameHits(t, label+"/model", got, want)
						}
					}
				}
			}
		}
	}
	if n := len(tables["normal"].rows); n == 0 {
		t.Fatal("the table cached no term")
	}
	if small.entries > small.maxEntries {
		t.Fatalf("table holds %d entries, bound %d", small.entries, small.maxEntries)
	}
}

// TestTermTableConcurrent: searches through one TermTable from several
// goroutines (the table emptied every few terms, so fills, reads and
// emptying race) return the hits of CollectStats. Run with -race.
func TestTermTableConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 6))
	docs := synthCorpus(r, 600, 500)
	segs := buildSegs(t, docs, randCuts(r, len(docs), 12), Options{})
	qs := multiSegQueries(docs, 24, 8, 3)
	p := DefaultSearchParams()
	want := make([][]Hit, len(qs))
	for i, q := range qs {
		h, err := Search(viewsOf(segs), q, p, CollectStats(segs, q.Terms()))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = h
	}
	tt := NewTermTable(segs)
	tt.maxEntries = 4 * len(segs)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for pass := 0; pass < 3; pass++ {
				for i := range qs {
					q := qs[(i+g*7)%len(qs)]
					h, err := Search(viewsOf(segs), q, p, tt.CollectStats(segs, q.Terms()))
					if err == nil && !slices.Equal(h, want[(i+g*7)%len(qs)]) {
						err = fmt.Errorf("goroutine %d, query %v: got %v, want %v", g, q, h, want[(i+g*7)%len(qs)])
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
