package hnsw

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/stratasearch/strata/internal/testenv"
)

var (
	ctxBenchOnce sync.Once
	ctxBenchIx   *Index
	ctxBenchQs   [][]float32
)

// BenchmarkSearchCtx: top-10 search (ef = 64) over 20,000 random 64-dim
// cosine vectors (M = 16), one query per op, with a context that is never
// done: ctx=background (SearchInto, no Done channel) and ctx=live
// (SearchIntoContext under context.WithCancel: a Done channel looked at
// every cancelCheck candidates). Compared with the same benchmark run
// before the context checks existed (both calling SearchInto), it shows
// what the checks cost.
func BenchmarkSearchCtx(b *testing.B) {
	ctxBenchOnce.Do(func() {
		rng := rand.New(rand.NewPCG(5, 5))
		base := randVecs(rng, 20000, 64)
		ix, err := New(Options{Dim: 64, Metric: Cosine, M: 16, EfConstruction: 100, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		labels := make([]uint64, 20000)
		if _, err := ix.AddBatch(labels, base, 2); err != nil {
			b.Fatal(err)
		}
		ctxBenchIx = ix
		ctxBenchQs = rows(randVecs(rng, 100, 64), 64)
	})
	ix, qs := ctxBenchIx, ctxBenchQs
	p := SearchParams{EfSearch: 64}
	for _, live := range []bool{false, true} {
		name := "ctx=background"
		if live {
			name = "ctx=live"
		}
		b.Run("n=20000/dim=64/ef=64/"+name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dst := make([]Result, 0, 10)
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := testenv.ThreadCPU()
			i := 0
			for b.Loop() {
				if live {
					dst, _ = ix.SearchIntoContext(ctx, dst, qs[i%len(qs)], 10, p)
				} else {
					dst, _ = ix.SearchInto(dst, qs[i%len(qs)], 10, p)
				}
				i++
			}
			b.ReportMetric(float64(testenv.ThreadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkCancelCheck is the cost of one look-up of the cancellation
// state as the search loops make it (ctx.cancelled(n) per expansion of a
// node with n = 16 new neighbours), with no context (done=nil, as under
// context.Background) and a live one; one op is one call. Against the
// ~1 µs of scoring 16 neighbours it is the whole cost of the checks.
func BenchmarkCancelCheck(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name string
		done <-chan struct{}
	}{{"done=nil", nil}, {"done=live", ctx.Done()}} {
		b.Run(c.name, func(b *testing.B) {
			sc := &searchCtx{done: c.done}
			n := 0
			for b.Loop() {
				if sc.cancelled(16) {
					n++
				}
			}
			if n != 0 {
				b.Fatal("cancelled")
			}
		})
	}
}
