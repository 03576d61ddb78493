package hnsw

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/internal/testenv"
)

var (
	ctxIxOnce sync.Once
	ctxIx     *Index
	ctxData   []float32
)

const ctxDim = 32

// ctxN is the size of ctxIndex: 60,000 natively, 6,000 under the race
// detector (which slows the build ~40×; the search stays well over the
// 10 ms the latency test waits).
var ctxN = map[bool]int{false: 60000, true: 6000}[raceEnabled]

// ctxIndex is a ctxN × 32 L2 index (seeded, built once): an ef = n walk
// over it visits the whole graph and takes tens of milliseconds.
func ctxIndex(t *testing.T) (*Index, []float32) {
	ctxIxOnce.Do(func() {
		ctxData = randVecs(rand.New(rand.NewPCG(7, 7)), ctxN, ctxDim)
		ix, err := New(Options{Dim: ctxDim, Metric: L2, M: 8, EfConstruction: 32, Seed: 3})
		if err != nil {
			panic(err)
		}
		labels := make([]uint64, ctxN)
		for i := range labels {
			labels[i] = uint64(i)
		}
		if _, err := ix.AddBatch(labels, ctxData, 2); err != nil {
			panic(err)
		}
		ctxIx = ix
	})
	return ctxIx, ctxData
}

// TestSearchContextLiveSame: with a live (cancellable, never cancelled)
// context every search path returns exactly what Search returns.
func TestSearchContextLiveSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := randVecs(rng, 3000, 8)
	ix := build(t, Options{Dim: 8, Metric: Cosine, M: 8, EfConstruction: 40, Seed: 1}, base)
	half := roaring.New()
	for i := uint32(0); i < 3000; i += 2 {
		half.Add(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := map[string]SearchParams{
		"pool":     {EfSearch: 64},
		"heap":     {EfSearch: 64, forceHeap: true},
		"filtered": {EfSearch: 64, Allow: half, forceGraph: true},
		"exact":    {EfSearch: 64, Allow: roaring.BitmapOf(1, 5, 9, 200, 2999)},
		"big-ef":   {EfSearch: 3000},
	}
	for name, p := range params {
		for i := range 20 {
			q := randVecs(rng, 1, 8)
			want, err := ix.Search(q, 10+i, p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ix.SearchContext(ctx, q, 10+i, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s query %d: SearchContext %v, Search %v", name, i, got, want)
			}
		}
	}
}

// TestSearchContextStopsEveryPath: a context found done inside the loops
// stops the graph walk (pool and heap), the filtered walk and exact
// scoring after at most a few hundred candidates, and the
// call returns ctx.Err() with a partial list of live (allowed) nodes,
// nearest first. The complete searches return thousands of hits.
func TestSearchContextStopsEveryPath(t *testing.T) {
	ix, data := ctxIndex(t)
	even := roaring.New()
	for i := uint32(0); i < uint32(ctxN); i += 2 {
		even.Add(i)
	}
	cases := []struct {
		name string
		p    SearchParams
	}{
		{"pool", SearchParams{EfSearch: ctxN}},
		{"heap", SearchParams{EfSearch: ctxN, forceHeap: true}},
		{"filtered", SearchParams{EfSearch: ctxN, Allow: even, forceGraph: true}},
		{"exact", SearchParams{EfSearch: ctxN, Allow: even}},
	}
	q := data[:ctxDim]
	for _, c := range cases {
		full, err := ix.Search(q, ctxN, c.p)
		if err != nil || len(full) < ctxN/4 {
			t.Fatalf("%s: complete search: %d hits, %v", c.name, len(full), err)
		}
		got, err := ix.SearchContext(testenv.DoneUnseen(), q, ctxN, c.p)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err = %v, want context.Canceled", c.name, err)
		}
		// The walk stops at the first look (cancelCheck candidates, plus
		// the seed of the walk and one expansion's neighbours).
		if len(got) > cancelCheck+2*ix.mmax0+1 {
			t.Fatalf("%s: a cancelled search returned %d hits", c.name, len(got))
		}
		for i, r := range got {
			if i > 0 && r.Distance < got[i-1].Distance {
				t.Fatalf("%s: hits not sorted at %d", c.name, i)
			}
			if c.p.Allow != nil && !c.p.Allow.Contains(r.ID) {
				t.Fatalf("%s: hit %d not allowed", c.name, r.ID)
			}
		}
	}
	// A context cancelled before the call: no work at all.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := ix.SearchContext(ctx, q, 10, SearchParams{}); !errors.Is(err, context.Canceled) || len(got) != 0 {
		t.Fatalf("search under a cancelled context: %d hits, %v", len(got), err)
	}
}

// TestSearchContextCancelLatency: an ef = n search over 60,000 vectors
// (tens of milliseconds) cancelled 10 ms in returns within 2 ms of the
// cancel (testenv.CheckCancelLatency: median of 5 trials). The context
// is looked at every cancelCheck candidates, about 10 µs of work
// natively and well under 1 ms under -race.
func TestSearchContextCancelLatency(t *testing.T) {
	ix, data := ctxIndex(t)
	q := data[ctxDim : 2*ctxDim]
	for _, c := range []struct {
		name string
		p    SearchParams
	}{
		{"pool", SearchParams{EfSearch: ctxN}},
		{"heap", SearchParams{EfSearch: ctxN, forceHeap: true}},
	} {
		start := time.Now()
		if _, err := ix.Search(q, 10, c.p); err != nil {
			t.Fatal(err)
		}
		full := time.Since(start)
		t.Logf("%s: complete search %v", c.name, full)
		testenv.CheckCancelLatency(t, c.name, 2*time.Millisecond, func(ctx context.Context) error {
			_, err := ix.SearchContext(ctx, q, 10, c.p)
			return err
		})
	}
}
