package tier

import (
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// Live-row bitmaps: the rows (versions) of a warm segment or MemTable
// visible at an epoch, as one roaring bitmap, cached per segment for the
// last epoch asked. A version's visibility at e is fixed once e is
// visible to readers (a write at epoch e' > e only adds versions born at
// e' and sets deaths to e'), so a bitmap built for e stays exact for
// every later query at e; a query at another epoch rebuilds it.

// liveSet is one cached live-row bitmap: rows visible at epoch. Shared
// and read-only.
type liveSet struct {
	epoch uint64
	rows  *roaring.Bitmap
}

// liveRows returns the rows of w visible at e (shared: do not modify).
// When every row is born by e (e ≥ MaxEpoch) it costs O(#containers +
// #dead) on a miss: all rows, minus those on the dead list dead by e;
// otherwise one pass over the rows.
func (w *warmSegment) liveRows(e uint64) *roaring.Bitmap {
	if c := w.live.Load(); c != nil && c.epoch == e {
		return c.rows
	}
	rows := roaring.New()
	n := uint64(len(w.docs))
	if e >= w.meta.MaxEpoch {
		rows.AddRange(0, n)
		// The dead rows go in one container-wise AndNot (a Remove per
		// row on the run container costs O(#runs) each).
		gone := roaring.New()
		w.deadMu.RLock()
		for _, r := range w.dead {
			if w.death[r].Load() <= e {
				gone.Add(r)
			}
		}
		w.deadMu.RUnlock()
		rows.AndNot(gone)
	} else {
		for r := uint32(0); uint64(r) < n; r++ {
			if w.visible(r, e) {
				rows.Add(r)
			}
		}
	}
	rows.RunOptimize()
	w.live.Store(&liveSet{epoch: e, rows: rows})
	return rows
}

// liveSet returns the version numbers of m visible at e (shared: do not
// modify), one pass over the versions under one read lock on a miss.
func (m *memTable) liveSet(e uint64) *roaring.Bitmap {
	if c := m.live.Load(); c != nil && c.epoch == e {
		return c.rows
	}
	rows := roaring.New()
	m.mu.RLock()
	for i := range m.versions {
		if m.versions[i].visibleAt(e) {
			rows.Add(uint32(i))
		}
	}
	m.mu.RUnlock()
	rows.RunOptimize()
	m.live.Store(&liveSet{epoch: e, rows: rows})
	return rows
}

// liveCache is the per-segment slot of the last live-row bitmap.
type liveCache = atomic.Pointer[liveSet]
