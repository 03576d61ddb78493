package tier

import (
	"context"
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/vfs"
)

// TestLexicalViewsLiveCache: the cached live-row bitmaps LexicalViews
// hands out with a nil keep equal, at every pinned snapshot of a seeded
// workload (overwrites and deletes of flushed rows, three flushes, a
// growing MemTable), the row-by-row reference (VisibleRow / VisibleHot)
// and the keep-everything path (a nil Allow, every row live, included);
// snapshots are revisited out of epoch
// order, so a segment's cache switches epochs back and forth.
func TestLexicalViewsLiveCache(t *testing.T) {
	an, err := text.New(text.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hots []*docsLex
	o := testOptions(vfs.NewCrashableMem())
	o.NewLexical = func() LexicalIndexer { h := &docsLex{}; hots = append(hots, h); return h }
	s := mustOpen(t, o)
	defer s.Close()
	ctx := context.Background()
	type pinned struct {
		sn *Snapshot
		ls LexicalSets
	}
	var pins []pinned
	for i := uint64(1); i <= 90; i++ {
		if _, err := s.Apply(genBatch(7, i)); err != nil {
			t.Fatal(err)
		}
		if i == 20 || i == 45 || i == 70 {
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if i%6 == 0 {
			sn := s.Snapshot()
			defer sn.Close()
			var ls LexicalSets
			for _, w := range sn.WarmSegments() {
				ls.Warm = append(ls.Warm, lexSegment(t, an, w.Docs))
			}
			hot := hots[len(hots)-1]
			hot.mu.Lock()
			docs := append([]*Document(nil), hot.docs...)
			hot.mu.Unlock()
			ls.Hot = []*bm25.Segment{lexSegment(t, an, docs)}
			pins = append(pins, pinned{sn, ls})
		}
	}
	reference := func(sn *Snapshot, ls LexicalSets) []*roaring.Bitmap {
		var out []*roaring.Bitmap
		for i, seg := range ls.Warm {
			b := roaring.New()
			for r := uint32(0); r < uint32(seg.NumDocs()); r++ {
				if sn.VisibleRow(i, r) {
					b.Add(r)
				}
			}
			out = append(out, b)
		}
		for i, seg := range ls.Hot {
			b := roaring.New()
			for v := uint32(0); v < uint32(seg.NumDocs()); v++ {
				if sn.VisibleHot(i, v) {
					b.Add(v)
				}
			}
			out = append(out, b)
		}
		return out
	}
	keepAll := func(int, uint32) bool { return true }
	warmSeen, deadSeen, nilSeen := false, false, false
	// Forward, backward, then forward again: every step changes the
	// epoch the shared segments were last asked for.
	var order []int
	for i := range pins {
		order = append(order, i)
	}
	for i := len(pins) - 1; i >= 0; i-- {
		order = append(order, i)
	}
	order = append(order, order[:len(pins)]...)
	for step, pi := range order {
		p := pins[pi]
		want := reference(p.sn, p.ls)
		shared, err := p.sn.LexicalViews(p.ls, nil)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := p.sn.LexicalViews(p.ls, keepAll)
		if err != nil {
			t.Fatal(err)
		}
		if len(shared) != len(want) || len(kept) != len(want) {
			t.Fatalf("step %d: %d / %d views, want %d", step, len(shared), len(kept), len(want))
		}
		for v := range want {
			name := fmt.Sprintf("step %d (epoch %d) view %d", step, p.sn.Epoch(), v)
			if shared[v].Allow == nil {
				// Documented: nil = every row of the view is live.
				all := roaring.New()
				all.AddRange(0, uint64(shared[v].Seg.NumDocs()))
				if !all.Equals(want[v]) {
					t.Fatalf("%s: nil Allow, but the reference allows %v of %d rows", name, want[v].ToArray(), shared[v].Seg.NumDocs())
				}
				nilSeen = true
			} else if !shared[v].Allow.Equals(want[v]) {
				t.Fatalf("%s: nil keep allows %v, reference %v", name, shared[v].Allow.ToArray(), want[v].ToArray())
			}
			if !kept[v].Allow.Equals(want[v]) {
				t.Fatalf("%s: keep-all allows %v, reference %v", name, kept[v].Allow.ToArray(), want[v].ToArray())
			}
			if v < len(p.ls.Warm) {
				warmSeen = true
				if want[v].GetCardinality() < uint64(p.ls.Warm[v].NumDocs()) {
					deadSeen = true
				}
			}
		}
	}
	if !warmSeen || !deadSeen || !nilSeen {
		t.Fatalf("workload covered warm views %v, dead warm rows %v, all-live views %v: the test needs all", warmSeen, deadSeen, nilSeen)
	}
}
