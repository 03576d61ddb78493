package bm25

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/internal/testenv"
)

// BenchmarkSearchCtx: BM25 top-10 over one segment of 50,000 random
// documents (Zipf-distributed vocabulary of 5,000 terms, 20–80 terms
// each) for 50 queries per op, OR of 3 terms by MaxScore and Block-Max
// WAND, and AND of 2, with a context that is never done:
// ctx=background (Search) and ctx=live (SearchContext under
// context.WithCancel: its Done channel looked at every 256 traversal
// steps). Compared with the same benchmark run before the context checks
// existed (both calling Search), it shows what the checks cost; cpu-ns/op is the
// benchmark thread's CPU time per op (testenv.ThreadCPU), which other
// processes on a loaded machine do not inflate.
func BenchmarkSearchCtx(b *testing.B) {
	rng := rand.New(rand.NewPCG(41, 41))
	zipf := rand.NewZipf(rng, 1.1, 2, 4999)
	term := func() string { return fmt.Sprintf("w%d", zipf.Uint64()) }
	bl := NewBuilder(Options{})
	for i := range 50000 {
		doc := make([]string, 20+rng.IntN(61))
		for j := range doc {
			doc[j] = term()
		}
		if _, err := bl.Add(uint64(i), toks(doc...)); err != nil {
			b.Fatal(err)
		}
	}
	seg, err := bl.Segment()
	if err != nil {
		b.Fatal(err)
	}
	views := []View{{Seg: seg}}
	for _, c := range []struct{ name, alg string }{{"or/alg=bmm", AlgBMM}, {"or/alg=bmw", AlgBMW}, {"and", ""}} {
		qs := make([]Query, 50)
		for i := range qs {
			if c.name == "and" {
				qs[i] = Query{Must: []string{term(), term()}}
			} else {
				qs[i] = Query{Should: []string{term(), term(), term()}}
			}
		}
		p := DefaultSearchParams()
		p.Algorithm = c.alg
		for _, live := range []bool{false, true} {
			name := "ctx=background"
			if live {
				name = "ctx=live"
			}
			b.Run("docs=50000/"+c.name+"/"+name, func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := testenv.ThreadCPU()
				for b.Loop() {
					for _, q := range qs {
						var err error
						if live {
							_, err = SearchContext(ctx, views, q, p, nil)
						} else {
							_, err = Search(views, q, p, nil)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(testenv.ThreadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
