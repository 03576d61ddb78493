package ivfpq

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/internal/testenv"
)

// BenchmarkSearchCtx: top-10 search over 20,000 random unit 64-dim
// vectors (IP, nlist = 64, nprobe = 16, refined ×4), 8-bit (M = 16) and
// 4-bit (M = 32) codes, one query per op, with a context that is never
// done: ctx=background (Search) and ctx=live (SearchContext under
// context.WithCancel: its Done channel looked at once per 256-code
// chunk). Compared with the same benchmark run before the context checks
// existed (both calling Search), it shows what the checks cost; cpu-ns/op is the
// benchmark thread's CPU time per op (testenv.ThreadCPU), which other
// processes on a loaded machine do not inflate.
func BenchmarkSearchCtx(b *testing.B) {
	x := randVecs(31, 20000, 64, true)
	qs := randVecs(32, 100, 64, true)
	for _, c := range []struct{ nbits, m int }{{8, 16}, {4, 32}} {
		ix := buildIndex(b, Options{Dim: 64, Metric: IP, Nlist: 64, M: c.m, Nbits: c.nbits, Seed: 1}, x)
		if err := ix.SetRefineVectors(x); err != nil {
			b.Fatal(err)
		}
		p := SearchParams{Nprobe: 16, KFactor: 4}
		for _, live := range []bool{false, true} {
			name := "ctx=background"
			if live {
				name = "ctx=live"
			}
			b.Run(fmt.Sprintf("n=20000/nbits=%d/nprobe=16/%s", c.nbits, name), func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := testenv.ThreadCPU()
				i := 0
				for b.Loop() {
					q := qs[(i%100)*64 : (i%100+1)*64]
					var err error
					if live {
						_, err = ix.SearchContext(ctx, q, 10, p)
					} else {
						_, err = ix.Search(q, 10, p)
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(testenv.ThreadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
