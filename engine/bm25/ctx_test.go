package bm25

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/internal/testenv"
)

func toks(terms ...string) []text.Token {
	out := make([]text.Token, len(terms))
	for i, t := range terms {
		out[i] = text.Token{Term: t, Pos: i}
	}
	return out
}

// flatSegments returns segs segments of n/segs identical documents "a x
// b": every document scores the same for any query over a and b, so no
// block-max bound can prune one (a bound that ties θ is never skipped),
// and the phrase "a b" matches none. Every traversal then visits all n
// documents.
func flatSegments(t testing.TB, n, segs int) []View {
	t.Helper()
	var views []View
	for s := range segs {
		b := NewBuilder(Options{})
		for i := range n / segs {
			if _, err := b.Add(uint64(s*n+i), toks("a", "x", "b")); err != nil {
				t.Fatal(err)
			}
		}
		seg, err := b.Segment()
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, View{Seg: seg})
	}
	return views
}

// ctxQueries are the traversals SearchContext must be able to stop.
var ctxQueries = []struct {
	name  string
	q     Query
	alg   string
	exh   bool
	check bool // in the latency test
}{
	{"or/bmm", Query{Should: []string{"a", "b"}}, AlgBMM, false, true},
	{"or/bmw", Query{Should: []string{"a", "b"}}, AlgBMW, false, true},
	{"or/single", Query{Should: []string{"a"}}, AlgBMM, false, true},
	{"and", Query{Must: []string{"a", "b"}}, "", false, true},
	{"phrase", Query{Phrases: [][]PhraseTerm{{{"a", 0}, {"b", 1}}}}, "", false, true},
	{"prefix", Query{Prefixes: []string{"a", "b"}}, AlgBMW, false, true},
	{"exhaustive", Query{Should: []string{"a", "b"}}, "", true, false},
}

// TestSearchContextLiveSame: under a live (cancellable, never cancelled)
// context, SearchContext returns exactly what Search returns, for OR
// (both evaluators), AND, phrase, prefix, excluded-term and filtered
// queries over six random segments (every other one filtered) of 2,000
// documents each (500 under -short).
func TestSearchContextLiveSame(t *testing.T) {
	perSeg := 2000
	if testing.Short() {
		perSeg = 500
	}
	rng := rand.New(rand.NewPCG(21, 22))
	vocab := make([]string, 40)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("t%02d", i)
	}
	var views []View
	for s := range 6 {
		b := NewBuilder(Options{})
		for i := range perSeg {
			doc := make([]string, 3+rng.IntN(30))
			for j := range doc {
				doc[j] = vocab[min(rng.IntN(40), rng.IntN(40))] // skewed
			}
			if _, err := b.Add(uint64(s*10000+i), toks(doc...)); err != nil {
				t.Fatal(err)
			}
		}
		seg, err := b.Segment()
		if err != nil {
			t.Fatal(err)
		}
		v := View{Seg: seg}
		if s%2 == 1 {
			v.Allow = roaring.New()
			for i := uint32(0); i < uint32(perSeg); i += 3 {
				v.Allow.Add(i)
			}
		}
		views = append(views, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	qs := []Query{
		{Should: []string{"t00", "t05", "t17"}},
		{Should: []string{"t30", "t31", "t02", "t39"}},
		{Must: []string{"t01"}, Should: []string{"t03", "t20"}},
		{Phrases: [][]PhraseTerm{{{"t00", 0}, {"t01", 1}}}},
		{Prefixes: []string{"t1"}, MustNot: []string{"t00"}},
	}
	for _, q := range qs {
		for _, alg := range []string{AlgBMM, AlgBMW} {
			for _, k := range []int{1, 10, 100} {
				for _, exh := range []bool{false, true} {
					p := DefaultSearchParams()
					p.K, p.Algorithm, p.Exhaustive = k, alg, exh
					want, err := Search(views, q, p, nil)
					if err != nil {
						t.Fatal(err)
					}
					got, err := SearchContext(ctx, views, q, p, nil)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%+v %s k=%d exhaustive=%v: SearchContext %v, Search %v", q, alg, k, exh, got, want)
					}
				}
			}
		}
	}
}

// TestSearchContextStops: a context found done inside the traversal
// stops every evaluator at its first look, cancelCheck steps in (the
// complete search takes a step per document), and the call returns
// ctx.Err() with at most K hits. A context cancelled before the call
// does no work.
func TestSearchContextStops(t *testing.T) {
	const n = 20000
	views := flatSegments(t, n, 2)
	steps := func(cn *canceller) int { return cn.looks*cancelCheck + int(cn.tick) }
	for _, c := range ctxQueries {
		p := DefaultSearchParams()
		p.Algorithm, p.Exhaustive = c.alg, c.exh
		live, cancel := context.WithCancel(context.Background())
		cn := &canceller{done: live.Done()}
		if _, _, err := searchWith(live, cn, views, c.q, p, nil); err != nil {
			t.Fatal(err)
		}
		cancel()
		if steps(cn) < n {
			t.Fatalf("%s: complete search took %d steps, want ≥ %d", c.name, steps(cn), n)
		}
		dc := testenv.DoneUnseen()
		cn = &canceller{done: dc.Done()}
		hits, _, err := searchWith(dc, cn, views, c.q, p, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: err = %v, want context.Canceled", c.name, err)
		}
		if steps(cn) > cancelCheck || len(hits) > p.K {
			t.Fatalf("%s: a cancelled search took %d steps and returned %d hits", c.name, steps(cn), len(hits))
		}
		if hits, err := SearchContext(live, views, c.q, p, nil); !errors.Is(err, context.Canceled) || len(hits) != 0 {
			t.Fatalf("%s: search under a cancelled context: %d hits, %v", c.name, len(hits), err)
		}
	}
}

// TestSearchContextCancelLatency: each traversal over 2 million
// documents in 4 segments (OR by MaxScore and Block-Max WAND, single-term
// OR, AND, phrase, prefix; each over 50 ms) cancelled 10 ms in returns
// within 2 ms of the cancel (testenv.CheckCancelLatency: median of 5
// trials). Under -race the segments hold 50,000 documents: the detector
// slows the traversal ~10×, so each complete search still takes over
// 100 ms there.
func TestSearchContextCancelLatency(t *testing.T) {
	testenv.SkipIfEmulated(t, "indexes 2 million documents")
	n := 2_000_000
	if raceEnabled {
		n = 50_000
	}
	views := flatSegments(t, n, 4)
	for _, c := range ctxQueries {
		if !c.check {
			continue
		}
		p := DefaultSearchParams()
		p.Algorithm = c.alg
		start := time.Now()
		if _, err := Search(views, c.q, p, nil); err != nil {
			t.Fatal(err)
		}
		full := time.Since(start)
		t.Logf("%s: complete search %v", c.name, full)
		testenv.CheckCancelLatency(t, c.name, 2*time.Millisecond, func(ctx context.Context) error {
			_, err := SearchContext(ctx, views, c.q, p, nil)
			return err
		})
	}
}
