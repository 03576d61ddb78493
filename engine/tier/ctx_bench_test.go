package tier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/internal/testenv"
)

// BenchmarkSearchVectorCtx: top-10 dense search over a warm HNSW segment
// of 10,000 128-dim documents (every 10th deleted) plus 1,000 MemTable
// rows, and over a MemTable of 20,000 rows alone, one query per op, with
// a context that is never done: ctx=background (SearchVector) and
// ctx=live (SearchVectorContext under context.WithCancel). Compared with
// the same benchmark run before the context checks existed (both calling
// SearchVector), it shows what the checks cost; cpu-ns/op is the
// benchmark thread's CPU time per op (testenv.ThreadCPU), which other
// processes on a loaded machine do not inflate.
func BenchmarkSearchVectorCtx(b *testing.B) {
	const d = 128
	warm := benchStore(b, 10000, d, Options{BuildThreads: 2})
	defer warm.Close()
	if err := warm.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	del := &Batch{}
	for j := 0; j < 10000; j += 10 {
		del.Delete(fmt.Sprintf("doc-%07d", j))
	}
	if _, err := warm.Apply(del); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	hot := &Batch{}
	for j := 0; j < 1000; j++ {
		v := make([]float32, d)
		for k := range v {
			v[k] = float32(rng.NormFloat64())
		}
		hot.Upsert(Document{ID: fmt.Sprintf("hot-%d", j), Vector: v})
	}
	if _, err := warm.Apply(hot); err != nil {
		b.Fatal(err)
	}
	mem := benchStore(b, 20000, d, Options{})
	defer mem.Close()
	q := make([]float32, d)
	for k := range q {
		q[k] = float32(rng.NormFloat64())
	}
	for _, c := range []struct {
		name string
		s    *Store
	}{{"warm=10000/hot=1000", warm}, {"hot=20000", mem}} {
		for _, live := range []bool{false, true} {
			name := "ctx=background"
			if live {
				name = "ctx=live"
			}
			b.Run(c.name+"/dim=128/"+name, func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				sn := c.s.Snapshot()
				defer sn.Close()
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := testenv.ThreadCPU()
				for b.Loop() {
					var err error
					if live {
						_, err = sn.SearchVectorContext(ctx, q, 10, nil)
					} else {
						_, err = sn.SearchVector(q, 10, nil)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(testenv.ThreadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
