package tier

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/vfs"
)

// docsLex records one MemTable's versions in order (local id = version).
type docsLex struct {
	mu   sync.Mutex
	docs []*Document
}

func (d *docsLex) Add(v uint32, doc *Document) {
	d.mu.Lock()
	d.docs = append(d.docs, doc)
	d.mu.Unlock()
}

func lexSegment(t *testing.T, an *text.Analyzer, docs []*Document) *bm25.Segment {
	t.Helper()
	b := bm25.NewBuilder(bm25.Options{})
	for _, d := range docs {
		if _, err := b.Add(uint64(len(d.ID)), an.Analyze(d.Content)); err != nil {
			t.Fatal(err)
		}
	}
	seg, err := b.Segment()
	if err != nil {
		t.Fatal(err)
	}
	return seg
}

// TestLexicalViewsAndSearch: over warm segments and a MemTable holding
// overwritten and deleted versions, LexicalViews allows exactly the rows
// live at the snapshot (each live id once, the version Get returns),
// calls keep once per live row in order and drops the rows keep refuses;
// SearchLexical finds every allowed row and stops on a cancelled context.
func TestLexicalViewsAndSearch(t *testing.T) {
	an, err := text.New(text.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var hots []*docsLex
	o := testOptions(vfs.NewCrashableMem())
	o.NewLexical = func() LexicalIndexer { h := &docsLex{}; hots = append(hots, h); return h }
	s := mustOpen(t, o)
	defer s.Close()
	m := model{}
	ctx := context.Background()
	for i := uint64(1); i <= 60; i++ {
		b := genBatch(5, i)
		if _, err := s.Apply(b); err != nil {
			t.Fatal(err)
		}
		m.apply(b)
		if i == 20 || i == 40 {
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	sn := s.Snapshot()
	defer sn.Close()
	var ls LexicalSets
	for _, w := range sn.WarmSegments() {
		ls.Warm = append(ls.Warm, lexSegment(t, an, w.Docs))
	}
	hotDocs := hots[len(hots)-1].docs
	ls.Hot = []*bm25.Segment{lexSegment(t, an, hotDocs)}
	if len(ls.Warm) == 0 || len(hotDocs) == 0 {
		t.Fatalf("%d warm segments, %d hot versions: the test needs both", len(ls.Warm), len(hotDocs))
	}
	docOf := func(view int, row uint32) *Document {
		if view < len(ls.Warm) {
			return sn.WarmSegments()[view].Docs[row]
		}
		return hotDocs[row]
	}
	type vr struct {
		view int
		row  uint32
	}
	var calls []vr
	views, err := sn.LexicalViews(ls, func(view int, row uint32) bool {
		calls = append(calls, vr{view, row})
		return docOf(view, row).ID != "doc-03"
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sort.SliceIsSorted(calls, func(i, j int) bool {
		return calls[i].view < calls[j].view || (calls[i].view == calls[j].view && calls[i].row < calls[j].row)
	}) {
		t.Fatal("keep calls out of order")
	}
	seen := map[string]bool{}
	for _, c := range calls {
		d := docOf(c.view, c.row)
		live, _, ok := sn.Get(d.ID)
		if !ok || live != d || seen[d.ID] {
			t.Fatalf("keep called on view %d row %d (%s), not the live version", c.view, c.row, d.ID)
		}
		seen[d.ID] = true
	}
	if len(seen) != len(m) {
		t.Fatalf("keep saw %d live ids, model has %d", len(seen), len(m))
	}
	allowed := 0
	for i, v := range views {
		it := v.Allow.Iterator()
		for it.HasNext() {
			if d := docOf(i, it.Next()); d.ID == "doc-03" || !seen[d.ID] {
				t.Fatalf("view %d allows %s", i, d.ID)
			}
			allowed++
		}
	}
	want := len(m)
	if _, ok := m["doc-03"]; ok {
		want--
	}
	if allowed != want {
		t.Fatalf("%d rows allowed, want %d", allowed, want)
	}
	q := bm25.ParseQuery("written", an, false)
	p := bm25.DefaultSearchParams()
	p.K = 100
	segs := append(append([]*bm25.Segment(nil), ls.Warm...), ls.Hot...)
	hits, err := sn.SearchLexical(ctx, views, q, p, bm25.CollectStats(segs, q.Terms()))
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != want {
		t.Fatalf("%d hits, want every allowed row (%d)", len(hits), want)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sn.SearchLexical(cctx, views, q, p, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
	if _, err := sn.LexicalViews(LexicalSets{Warm: make([]*bm25.Segment, len(ls.Warm)+1)}, nil); err == nil {
		t.Fatal("more warm sets than the snapshot has: accepted")
	}

	// Only bounds each view: Allow = live ∩ Only[i] ∩ keep, keep called on
	// exactly the live rows of Only[i], and rows past the segment's end
	// (or a nil Only[i], which leaves the view unbounded) change nothing.
	full, err := sn.LexicalViews(ls, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	for trial := range 20 {
		bounded := ls
		bounded.Only = make([]*roaring.Bitmap, len(views))
		for i := range bounded.Only {
			if trial%5 == 4 && i == 0 {
				continue // nil: unbounded
			}
			o := roaring.New()
			n := full[i].Seg.NumDocs()
			for range r.IntN(n + 1) {
				o.Add(uint32(r.IntN(n + 8))) // some past the end
			}
			bounded.Only[i] = o
		}
		calls = calls[:0]
		got, err := sn.LexicalViews(bounded, func(view int, row uint32) bool {
			calls = append(calls, vr{view, row})
			return row%3 != 0
		})
		if err != nil {
			t.Fatal(err)
		}
		var wantCalls []vr
		for i, v := range full {
			n := uint32(v.Seg.NumDocs())
			want := roaring.New()
			for row := uint32(0); row < n; row++ {
				live := v.Allow == nil || v.Allow.Contains(row)
				if !live || (bounded.Only[i] != nil && !bounded.Only[i].Contains(row)) {
					continue
				}
				wantCalls = append(wantCalls, vr{i, row})
				if row%3 != 0 {
					want.Add(row)
				}
			}
			if got[i].Allow == nil || !got[i].Allow.Equals(want) {
				t.Fatalf("trial %d view %d: Allow %v, want %v", trial, i, got[i].Allow, want)
			}
		}
		if !slices.Equal(calls, wantCalls) {
			t.Fatalf("trial %d: keep calls %v, want %v", trial, calls, wantCalls)
		}
	}
	if _, err := sn.LexicalViews(LexicalSets{Warm: ls.Warm, Only: make([]*roaring.Bitmap, len(ls.Warm)+1)}, nil); err == nil {
		t.Fatal("more bounds than views: accepted")
	}
}
