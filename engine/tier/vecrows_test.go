package tier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// TestSearchVectorRowsMatchesFilter: SearchVectorRowsContext with a row
// bitmap per warm segment returns exactly what SearchVectorContext returns
// with the equivalent per-document filter (the same documents for the warm
// segments, the given filter for the MemTable), over segments with
// deleted rows and rows without a vector, for row sets from 0.5% to all
// rows, including rows past a segment's end; and each hit's document is
// live and allowed.
func TestSearchVectorRowsMatchesFilter(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := Open(Options{FS: fs, Dir: "/db", Dim: testDim, Sync: wal.SyncNone, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(21, 5))
	id := 0
	put := func(n int) {
		b := &Batch{}
		for range n {
			var v []float32
			if rng.IntN(12) != 0 { // every 12th document or so has no vector
				v = make([]float32, testDim)
				for k := range v {
					v[k] = float32(rng.NormFloat64())
				}
			}
			b.Upsert(Document{ID: fmt.Sprintf("d%05d", id), Vector: v})
			id++
		}
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{1200, 700} {
		put(n)
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	del := &Batch{}
	for j := 0; j < id; j += 9 {
		del.Delete(fmt.Sprintf("d%05d", j))
	}
	if _, err := s.Apply(del); err != nil {
		t.Fatal(err)
	}
	put(150)
	sn := s.Snapshot()
	defer sn.Close()
	segs := sn.WarmSegments()
	if len(segs) != 2 {
		t.Fatalf("%d warm segments, want 2", len(segs))
	}
	hotOK := func(d *Document) bool { return d.ID[len(d.ID)-1]%2 == 0 }
	ctx := context.Background()
	for _, frac := range []float64{0.005, 0.05, 0.1, 0.5, 1} {
		rows := make([]*roaring.Bitmap, len(segs))
		allowed := map[*Document]bool{}
		for i, sg := range segs {
			rows[i] = roaring.New()
			for r := range len(sg.Docs) + 10 { // 10 rows past the end
				if rng.Float64() < frac {
					rows[i].Add(uint32(r))
					if r < len(sg.Docs) {
						allowed[sg.Docs[r]] = true
					}
				}
			}
		}
		var warmDocs = map[*Document]bool{}
		for _, sg := range segs {
			for _, d := range sg.Docs {
				warmDocs[d] = true
			}
		}
		filter := func(d *Document) bool {
			if warmDocs[d] {
				return allowed[d]
			}
			return hotOK(d)
		}
		for qi := range 20 {
			q := make([]float32, testDim)
			for k := range q {
				q[k] = float32(rng.NormFloat64())
			}
			for _, k := range []int{1, 10, 60} {
				got, err := sn.SearchVectorRowsContext(ctx, q, k, rows, hotOK)
				if err != nil {
					t.Fatal(err)
				}
				want, err := sn.SearchVectorContext(ctx, q, k, filter)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got, want, func(a, b Hit) bool { return a.Doc == b.Doc && a.Distance == b.Distance }) {
					t.Fatalf("frac %v query %d k %d: rows search %d hits, filter search %d hits; differ", frac, qi, k, len(got), len(want))
				}
				for _, h := range got {
					if !filter(h.Doc) {
						t.Fatalf("frac %v query %d: hit %s not allowed", frac, qi, h.Doc.ID)
					}
					if d, _, ok := sn.Get(h.Doc.ID); !ok || d != h.Doc {
						t.Fatalf("frac %v query %d: hit %s not live", frac, qi, h.Doc.ID)
					}
				}
			}
		}
	}
	if _, err := sn.SearchVectorRowsContext(ctx, make([]float32, testDim), 5, make([]*roaring.Bitmap, 3), nil); err == nil {
		t.Fatal("3 row sets for 2 warm segments: no error")
	}
}
