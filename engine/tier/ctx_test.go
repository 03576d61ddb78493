package tier

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/testenv"
	"github.com/stratasearch/strata/vfs"
)

// ctxStore opens a store on an in-memory FS (d = 8) with options o and
// fills it: for each entry of warm, that many documents flushed into one
// warm segment (o.SegmentIndex), then hot documents left in the MemTable.
// Every 7th warm document is deleted afterwards (tombstones force the
// segments' Allow bitmaps). Vectors are seeded.
func ctxStore(t testing.TB, o Options, warm []int, hot int) *Store {
	t.Helper()
	o.FS, o.Dir, o.Dim, o.Sync, o.Logger = vfs.NewCrashableMem(), "/db", testDim, wal.SyncNone, quietLog
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rng := rand.New(rand.NewPCG(9, 9))
	id := 0
	put := func(n int) {
		for i := 0; i < n; i += 1000 {
			b := &Batch{}
			for j := i; j < min(n, i+1000); j++ {
				v := make([]float32, testDim)
				for k := range v {
					v[k] = float32(rng.NormFloat64())
				}
				b.Upsert(Document{ID: fmt.Sprintf("d%07d", id), Vector: v, Metadata: map[string]string{"p": fmt.Sprint(id % 3)}})
				id++
			}
			if _, err := s.Apply(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range warm {
		put(n)
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if id > 0 {
		del := &Batch{}
		for j := 0; j < id; j += 7 {
			del.Delete(fmt.Sprintf("d%07d", j))
		}
		if _, err := s.Apply(del); err != nil {
			t.Fatal(err)
		}
	}
	put(hot)
	return s
}

// TestSearchVectorContextLiveSame: under a live (cancellable, never
// cancelled) context SearchVectorContext and SearchVectorWhereContext
// return exactly what SearchVector and SearchVectorWhere return, over a
// MemTable and HNSW, IVF-PQ and flat warm segments, with and without a
// filter and a where clause.
func TestSearchVectorContextLiveSame(t *testing.T) {
	stores := map[string]*Store{
		"hnsw":  ctxStore(t, Options{SegmentM: 8, SegmentEfConstruction: 32, IndexedMetadata: []string{"p"}}, []int{1500, 1000}, 500),
		"ivfpq": ctxStore(t, Options{SegmentIndex: "ivfpq", IVFNbits: 4, IVFMinRows: 1000}, []int{3000, 500}, 500),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rng := rand.New(rand.NewPCG(1, 1))
	odd := func(d *Document) bool { return d.ID[len(d.ID)-1]%2 == 1 }
	for name, s := range stores {
		sn := s.Snapshot()
		for qi := range 10 {
			q := make([]float32, testDim)
			for k := range q {
				q[k] = float32(rng.NormFloat64())
			}
			for _, f := range []func(*Document) bool{nil, odd} {
				want, err := sn.SearchVector(q, 10, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := sn.SearchVectorContext(ctx, q, 10, f)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s query %d: SearchVectorContext %v, SearchVector %v", name, qi, got, want)
				}
				where := map[string]string{"p": "1"}
				want, err = sn.SearchVectorWhere(q, 10, where, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err = sn.SearchVectorWhereContext(ctx, q, 10, where, f)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s where query %d: SearchVectorWhereContext %v, SearchVectorWhere %v", name, qi, got, want)
				}
			}
		}
		sn.Close()
	}
}

// TestSearchVectorContextStops: with ctx already done, every dense path
// of the tier gives up at its first look, before scoring anything: the
// MemTable scan, each segment kind's search (HNSW, IVF-PQ, flat; with
// and without an Allow bitmap to build), the exact segment scan, the cold
// scan and Snapshot.SearchVectorContext itself; each returns ctx.Err().
func TestSearchVectorContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := make([]float32, testDim)
	q[0] = 1
	all := func(*Document) bool { return true }
	for _, o := range []Options{
		{SegmentM: 8, SegmentEfConstruction: 32},
		{SegmentIndex: "ivfpq", IVFMinRows: 1000},
		{SegmentIndex: "ivfpq", IVFMinRows: 1 << 20}, // flat
	} {
		s := ctxStore(t, o, []int{2000}, 2000)
		sn := s.Snapshot()
		if h, err := sn.v.mem.search(ctx, q, 10, sn.epoch, nil); !errors.Is(err, context.Canceled) || len(h) != 0 {
			t.Fatalf("%s: MemTable scan: %d hits, %v", o.SegmentIndex, len(h), err)
		}
		sg := sn.v.segs[0]
		for _, f := range []func(*Document) bool{nil, all} {
			if h, err := sg.search(ctx, q, 10, 64, sn.epoch, f); !errors.Is(err, context.Canceled) || len(h) != 0 {
				t.Fatalf("%s: segment search: %d hits, %v", o.SegmentIndex, len(h), err)
			}
		}
		if sg.vecs != nil {
			if h, err := sg.scanExact(ctx, q, 10, nil); !errors.Is(err, context.Canceled) || len(h) != 0 {
				t.Fatalf("%s: exact scan: %d hits, %v", o.SegmentIndex, len(h), err)
			}
		}
		if h, err := sn.SearchVectorContext(ctx, q, 10, nil); !errors.Is(err, context.Canceled) || len(h) != 0 {
			t.Fatalf("%s: SearchVectorContext: %d hits, %v", o.SegmentIndex, len(h), err)
		}
		sn.Close()
	}
}

// slowFilter stands for an expensive per-document predicate (ACL and
// metadata checks; about a microsecond of work per call) that matches no
// document: the worst case, where every row is checked.
func slowFilter(d *Document) bool {
	h := uint64(14695981039346656037)
	for range 64 {
		for i := 0; i < len(d.ID); i++ {
			h = (h ^ uint64(d.ID[i])) * 1099511628211
		}
	}
	return h == 0
}

// TestSearchVectorContextCancelLatency: a filtered dense search (about a
// microsecond of filter work per row) over 100,000 MemTable rows, over a
// 100,000-row flat segment, and over a 50,000-row HNSW segment, each
// over 50 ms, cancelled 10 ms in, returns within 2 ms of the cancel
// (testenv.CheckCancelLatency: median of 5 trials).
func TestSearchVectorContextCancelLatency(t *testing.T) {
	testenv.SkipIfEmulated(t, "fills stores of 100,000 documents")
	n := 100_000
	if raceEnabled {
		n = 20_000 // the race detector slows the loops ~10×
	}
	q := make([]float32, testDim)
	q[0] = 1
	for _, c := range []struct {
		name string
		o    Options
		warm []int
		hot  int
	}{
		{"memtable", Options{}, nil, n},
		{"flat", Options{SegmentIndex: "ivfpq", IVFMinRows: 1 << 30}, []int{n}, 0},
		{"hnsw", Options{SegmentM: 8, SegmentEfConstruction: 32, BuildThreads: 2}, []int{n / 2}, 0},
	} {
		s := ctxStore(t, c.o, c.warm, c.hot)
		sn := s.Snapshot()
		start := time.Now()
		if _, err := sn.SearchVector(q, 10, slowFilter); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: complete search %v", c.name, time.Since(start))
		testenv.CheckCancelLatency(t, c.name, 2*time.Millisecond, func(ctx context.Context) error {
			_, err := sn.SearchVectorContext(ctx, q, 10, slowFilter)
			return err
		})
		sn.Close()
	}
}
