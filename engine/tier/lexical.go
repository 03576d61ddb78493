package tier

import (
	"context"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
)

// Lexical search over a snapshot, the counterpart of SearchVector: the
// caller's catalog opens (or builds) the BM25 segment of each of the
// snapshot's row sets and says which rows its query allows; the tier
// knows which rows are live at the epoch. LexicalViews resolves both into
// one bm25.View per row set, once per query; SearchLexical runs a BM25
// search over them, as often as the query needs.

// LexicalSets are the BM25 segments of a snapshot's row sets: Warm[i] of
// WarmSegments()[i] (local doc id = row), Hot[i] of HotLexical()[i]
// (local doc id = MemTable version number, as passed to
// LexicalIndexer.Add), Cold[i] of ColdArchives()[i] (local doc id = row).
// Any of them may be shorter than the snapshot's list (the sets past its
// end are left out), not longer.
type LexicalSets struct {
	Warm, Hot, Cold []*bm25.Segment
	// Only, when Only[i] is non-nil, bounds the rows of view i (Warm
	// then Hot, as in the result; cold views are not bounded): its Allow
	// holds only live rows in Only[i], and keep is called for those rows
	// only. It turns the per-query pass over every live row into one over
	// the rows an indexed filter already selected (O(|live ∩ Only[i]|)
	// plus a container-wise bitmap AND).
	Only []*roaring.Bitmap
	// Final, when Final[i] is true (and Only[i] is non-nil), makes view
	// i's Allow exactly its live rows in Only[i]: keep is not called for
	// them (the caller has already applied its row test as a bitmap).
	Final []bool
}

// LexicalViews returns one bm25.View per segment of ls, Warm first, then
// Hot, then Cold, whose Allow bitmap holds the rows live at the snapshot
// (and in ls.Only[i], where given) for which keep returns true (nil keep:
// every such row). keep is called
// once per live row, view by view, rows ascending, with the view's index
// in the result; the rows of a segment are 0..NumDocs()-1. The live rows
// of a warm segment or MemTable are cached per segment for the last
// epoch asked, so with a nil keep a repeated query at one epoch costs
// O(#segments); the Allow bitmaps are then shared and must not be
// modified, and a view whose every row is live has a nil Allow (bm25: no
// restriction). Errors: a set the snapshot does not have.
func (sn *Snapshot) LexicalViews(ls LexicalSets, keep func(view int, row uint32) bool) ([]bm25.View, error) {
	if len(ls.Warm) > len(sn.v.segs) || len(ls.Hot) > len(sn.v.frozen)+1 || len(ls.Cold) > len(sn.v.cold) ||
		len(ls.Only) > len(ls.Warm)+len(ls.Hot) {
		return nil, fmt.Errorf("tier: lexical sets %d warm / %d hot / %d cold (%d bounded), snapshot has %d / %d / %d",
			len(ls.Warm), len(ls.Hot), len(ls.Cold), len(ls.Only), len(sn.v.segs), len(sn.v.frozen)+1, len(sn.v.cold))
	}
	views := make([]bm25.View, 0, len(ls.Warm)+len(ls.Hot)+len(ls.Cold))
	// addLive adds the view of seg over its live rows: shared when keep
	// is nil and every live row is a row of seg, else a new bitmap.
	addLive := func(seg *bm25.Segment, live *roaring.Bitmap) {
		i := len(views)
		n := uint64(seg.NumDocs())
		if i < len(ls.Only) && ls.Only[i] != nil {
			allow := roaring.And(live, ls.Only[i])
			if !allow.IsEmpty() && uint64(allow.Maximum()) >= n {
				allow.RemoveRange(n, uint64(allow.Maximum())+1)
			}
			if keep != nil && !(i < len(ls.Final) && ls.Final[i]) {
				kept := roaring.New()
				it := allow.Iterator()
				for it.HasNext() {
					if r := it.Next(); keep(i, r) {
						kept.Add(r)
					}
				}
				allow = kept
			}
			views = append(views, bm25.View{Seg: seg, Allow: allow})
			return
		}
		if keep == nil && (live.IsEmpty() || uint64(live.Maximum()) < n) {
			allow := live
			if live.GetCardinality() == n {
				allow = nil // every row: no per-candidate check
			}
			views = append(views, bm25.View{Seg: seg, Allow: allow})
			return
		}
		allow := roaring.New()
		it := live.Iterator()
		for it.HasNext() {
			r := it.Next()
			if uint64(r) >= n {
				break
			}
			if keep == nil || keep(i, r) {
				allow.Add(r)
			}
		}
		views = append(views, bm25.View{Seg: seg, Allow: allow})
	}
	add := func(seg *bm25.Segment, visible func(uint32) bool) {
		i := len(views)
		allow := roaring.New()
		for r := uint32(0); r < uint32(seg.NumDocs()); r++ {
			if visible(r) && (keep == nil || keep(i, r)) {
				allow.Add(r)
			}
		}
		views = append(views, bm25.View{Seg: seg, Allow: allow})
	}
	for i, seg := range ls.Warm {
		addLive(seg, sn.v.segs[i].liveRows(sn.epoch))
	}
	for i, seg := range ls.Hot {
		m := sn.v.mem
		if i < len(sn.v.frozen) {
			m = sn.v.frozen[i]
		}
		addLive(seg, m.liveSet(sn.epoch))
	}
	for i, seg := range ls.Cold {
		add(seg, func(r uint32) bool { return sn.VisibleColdRow(i, r) })
	}
	return views, nil
}

// WarmLive returns the rows of warm segment i (WarmSegments()[i]) live
// at the snapshot's epoch: cached per segment for the last epoch asked,
// shared, not to be modified.
func (sn *Snapshot) WarmLive(i int) *roaring.Bitmap { return sn.v.segs[i].liveRows(sn.epoch) }

// SearchLexical returns the top p.K documents of views (LexicalViews
// output, possibly joined by the caller's own) for q, best first: one
// BM25 search with statistics st (bm25.CollectStats over the segments, or
// the caller's), each view restricted to its Allow bitmap while
// candidates are generated. A hit's View indexes views and Doc is the
// local doc id there. The traversal stops when ctx is done
// (bm25.SearchContext): it then returns the hits found so far and the
// context's error. Other errors: a corrupt segment's.
func (sn *Snapshot) SearchLexical(ctx context.Context, views []bm25.View, q bm25.Query, p bm25.SearchParams, st *bm25.Stats) ([]bm25.Hit, error) {
	return bm25.SearchContext(ctx, views, q, p, st)
}
