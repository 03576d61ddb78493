package bm25

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// TestNormTable checks the cached BM25 length normalisations: bit-equal to
// bm25Norm for every doc, built only for queries touching >= N/4 postings,
// reused for equal parameters and never returned for other parameters.
func TestNormTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	docs := synthCorpus(r, 400, 100)
	s := buildSegs(t, docs, nil, Options{})[0]
	n := s.NumDocs()
	avgdl := float64(s.SumDocLen()) / float64(n)
	if got := s.normsFor(1.2, 0.75, avgdl, n/4-1); got != nil {
		t.Fatalf("table built for a query under N/4 postings")
	}
	tab := s.normsFor(1.2, 0.75, avgdl, n/4)
	if len(tab) != n {
		t.Fatalf("table has %d entries, want %d", len(tab), n)
	}
	for d := 0; d < n; d++ {
		if want := bm25Norm(s.DocLen(uint32(d)), 1.2, 0.75, avgdl); tab[d] != want {
			t.Fatalf("doc %d: norm %v, want %v", d, tab[d], want)
		}
	}
	if again := s.normsFor(1.2, 0.75, avgdl, 0); len(again) != n || &again[0] != &tab[0] {
		t.Fatalf("cached table not reused")
	}
	if other := s.normsFor(1.2, 0.5, avgdl, 0); other != nil {
		t.Fatalf("table for b=0.75 returned for b=0.5")
	}
	if other := s.normsFor(0.9, 0.75, avgdl, n); len(other) != n || other[5] != bm25Norm(s.DocLen(5), 0.9, 0.75, avgdl) {
		t.Fatalf("replacement table wrong")
	}
}

// TestSearchConcurrentParams runs pruned queries with alternating k1/b from
// several goroutines (the normalisation cache is replaced under them) and
// compares each with the exhaustive scorer; run with -race.
func TestSearchConcurrentParams(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	nDocs, nQ := 1500, 60
	if testing.Short() {
		nDocs, nQ = 500, 20
	}
	docs := synthCorpus(r, nDocs, 60)
	views := []View{{Seg: buildSegs(t, docs, nil, Options{})[0]}}
	qs := make([]Query, nQ)
	for i := range qs {
		qs[i] = randQuery(r, docs, 60)
		qs[i].Must, qs[i].MustNot, qs[i].Phrases = nil, nil, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*nQ)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i, q := range qs {
				p := DefaultSearchParams()
				if (i+g)%2 == 1 {
					p.K1, p.B = 0.9, 0.4
				}
				got, err := Search(views, q, p, nil)
				if err != nil {
					errs <- err
					return
				}
				p.Exhaustive = true
				want, err := Search(views, q, p, nil)
				if err != nil {
					errs <- err
					return
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					errs <- fmt.Errorf("g%d q%d %+v: pruned %v, exhaustive %v", g, i, q, got, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSearchRecyclesCursors: a search's per-term cursors (most of what a
// query allocates) go back to a pool when it ends, so repeated searches
// allocate less than a cursor per term each, and give the same hits.
func TestSearchRecyclesCursors(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	r := rand.New(rand.NewPCG(11, 12))
	segs := buildSegs(t, synthCorpus(r, 400, 40), nil, Options{})
	views := []View{{Seg: segs[0]}}
	q := Query{Should: []string{segs[0].Term(1), segs[0].Term(5), segs[0].Term(9)}}
	want, err := Search(views, q, DefaultSearchParams(), nil)
	if err != nil || len(want) == 0 {
		t.Fatalf("hits %v, err %v", want, err)
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		got, err := Search(views, q, DefaultSearchParams(), nil)
		if err != nil || len(got) != len(want) || got[0] != want[0] {
			t.Fatalf("search %d: %v, %v", i, got, err)
		}
	}
	runtime.ReadMemStats(&after)
	per := float64(after.TotalAlloc-before.TotalAlloc) / n
	if cur := float64(unsafe.Sizeof(cursor{})); per > 3*cur {
		t.Errorf("%.0f bytes allocated a search for a 3-term query, more than its 3 cursors (%.0f bytes each)", per, cur)
	}
}
