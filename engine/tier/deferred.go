package tier

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
)

// Deferred index builds (after Qdrant's indexing optimizer, and LanceDB,
// which write unindexed data first and index it afterwards).
//
// A background flush (Options.MemTableSizeBytes) writes its segment with
// a flat vector section instead of the configured index (deferFlushIndex):
// the doc store, BM25 section, text blocks and everything else as any
// flush writes them, so the flush costs no graph build and the MemTables
// drain at the speed of the writes. A search over a flat segment scans it
// exactly. A flat segment that the store's SegmentIndex says should have
// an index (pendingIndex) is then rewritten with it by an index build: a
// merge (compact.go, mergePlan.index) of that one segment into a new
// segment with the configured index: every row in its order, with its
// id, document, vector and e_birth, except those dead at every epoch ≥
// the oldest pinned one, which any merge drops; the BM25 section is
// reused byte for byte when no row is dropped. It commits as a merge
// does (commitRewrite: temp file → fsync → rename → fsync dir, then,
// under the maintenance lock with writes held, every death carried over
// and one manifest edit {remove the flat segment, add the indexed one,
// its tombstones ≤ the durable epoch}). An index build changes no
// segment boundary: how many segments there are stays the compactor's
// business (CompactMaxSegments). Merging pending segments into one would
// make bigger graphs, whose packed link lists (engine/hnsw pack.go) cost
// more bits per neighbour and take longer to build
// (bench/results/notes/peers.md, "Deferred vector indexes").
//
// A crash before the edit leaves the flat inputs listed (the new file is
// a .tmp Open removes, or an unlisted segment Open quarantines); after it,
// the new segment (an input file not yet deleted is quarantined, or
// removed once a checkpoint proves it garbage). Either way every listed
// segment is complete: nothing acknowledged is lost, and Open kicks the
// pass again for the flat segments it finds.
//
// Who builds:
//
//   - The background index lane (indexLane; not with Options.ManualIndex),
//     kicked after each background flush and at Open. It starts a build
//     only once no write has arrived for indexQuiet, or a Flush waits, or
//     CompactFanIn segments are pending (indexStartWait): an ingest is
//     not slowed by graph builds, and its flat segments are indexed
//     together when it pauses, while a stream that never pauses still
//     has at most about CompactFanIn flat segments. Before each step of
//     a build (buildStep vectors of HNSW; once for IVF-PQ) it asks
//     backgroundIndexThreads how many goroutines to use: every core
//     (max(BuildThreads, GOMAXPROCS)) while no write arrives or a Flush
//     waits, else BuildThreads, leaving the other cores to the writes.
//   - An explicit Flush (buildDeferred), after its own segment (which it
//     indexes directly): it builds the pending segments with every core,
//     and waits for those a background build or a merge holds, which
//     meanwhile use every core too (indexUrgent). It returns when none of
//     the segments pending when it started is left in the view, so after
//     Flush every segment has its configured index.
//   - A merge whose inputs include a flat segment gives its output the
//     configured index anyway.
//
// Index builds reserve their inputs in the compactor's busy set, as
// merges do, so a merge never takes a segment being indexed nor an index
// build a merge's input (compactor.reserve panics otherwise); both commit
// under the maintenance lock. Index builds do not count as merge lanes
// and run whether or not AutoCompact is on.

// indexQuiet is how long no write must have arrived before a background
// index build takes every core.
const indexQuiet = 100 * time.Millisecond

// deferFlushIndex reports whether a background flush starting now
// writes a flat segment: always. Deferring only while writes are slowed
// (s.pressure) was measured on the GloVe ingest (331k × 100, 32 MiB
// MemTables) and gained nothing over building graphs in the flush: the
// first flushes still build graphs beside the writer, which falls behind
// into the very pressure that defers the later ones.
func (s *Store) deferFlushIndex() bool { return true }

// pendingIndex reports whether sg is a flat segment the store's
// SegmentIndex would index: for "hnsw" every flat segment with vectors,
// for "ivfpq" one with at least IVFMinRows vectors, all finite (as
// buildIVFSection decides).
func (s *Store) pendingIndex(sg *warmSegment) bool {
	if sg.indexKind != segmentIndexFlat || len(sg.vecRow) == 0 {
		return false
	}
	if s.o.SegmentIndex != SegmentIndexIVFPQ {
		return true
	}
	if len(sg.vecRow) < s.o.IVFMinRows {
		return false
	}
	sg.finiteOnce.Do(func() {
		sg.vecsFinite = true
		for _, r := range sg.vecRow {
			if !allFinite(sg.docs[r].Vector) {
				sg.vecsFinite = false
				return
			}
		}
	})
	return sg.vecsFinite
}

// kickIndex wakes the background index lane.
func (s *Store) kickIndex() {
	if s.indexKick == nil {
		return
	}
	select {
	case s.indexKick <- struct{}{}:
	default:
	}
}

// pickIndex reserves the first pending segment of the current view (in
// only, when only is non-nil) that no merge or index build holds, as one
// index build whose goroutines threads picks. When there is none, wait
// reports whether a pending segment (of only) is held by a running merge
// or index build, and ch is closed when one of those ends.
func (s *Store) pickIndex(only map[*warmSegment]bool, threads func() (int, error)) (p *mergePlan, wait bool, ch chan struct{}) {
	P := s.OldestPinnedEpoch()
	c := &s.compactor
	c.mu.Lock()
	// The view is taken under c.mu: a build that committed (swapped the
	// view) has released its segment only after that, so a segment found
	// free here is in the current view, never one already rewritten.
	v := s.currentView()
	defer v.unref()
	defer c.mu.Unlock()
	if s.closed.Load() {
		return nil, false, nil
	}
	for _, sg := range v.segs {
		if (only != nil && !only[sg]) || !s.pendingIndex(sg) {
			continue
		}
		if c.busy[sg] {
			wait = true
			continue
		}
		p = &mergePlan{index: true, threads: threads, P: P, inputs: []*warmSegment{sg}, bytes: sg.meta.SizeBytes}
		break
	}
	if p != nil {
		c.reserve(p, true)
		return p, false, nil
	}
	if wait {
		ch = c.waitCh()
	}
	return nil, wait, ch
}

// indexLane is the background index goroutine: it builds pending
// segments while pickIndex finds one, then waits for a kick (a
// background flush, Open).
func (s *Store) indexLane(done *sync.WaitGroup) {
	defer done.Done()
	for {
		select {
		case <-s.bgStop:
			return
		case <-s.indexKick:
		}
		for !s.closed.Load() && s.Err() == nil {
			if !s.indexStartWait() {
				return
			}
			p, _, _ := s.pickIndex(nil, s.backgroundIndexThreads)
			if p == nil {
				break
			}
			if err := s.runIndex(s.compactCtx, p); err != nil {
				if !errors.Is(err, ErrClosed) && !errors.Is(err, context.Canceled) {
					s.o.Logger.Warn("tier: background index build failed", "err", err)
				}
				break
			}
		}
	}
}

// indexStartWait waits until a background index build may start: while
// writes keep arriving (one within indexQuiet) and fewer than
// CompactFanIn segments are pending, the build waits, so that an ingest
// is not slowed and its flat segments are indexed together afterwards.
// It returns false when the store stops.
func (s *Store) indexStartWait() bool {
	for {
		if s.closed.Load() {
			return false
		}
		idle := time.Duration(monoNano() - s.lastWrite.Load())
		if s.indexUrgent.Load() > 0 || idle >= s.quiet() || s.pendingCount() >= s.o.CompactFanIn {
			return true
		}
		select {
		case <-s.bgStop:
			return false
		case <-time.After(s.quiet() - idle):
		}
	}
}

// monoStart anchors monoNano.
var monoStart = time.Now()

// monoNano is a monotonic clock reading in nanoseconds (time since
// monoStart), for the write-pause test: a wall-clock step does not move
// it.
func monoNano() int64 { return int64(time.Since(monoStart)) }

// quiet is indexQuiet (or the tests' replacement).
func (s *Store) quiet() time.Duration {
	if q := s.o.testingIndexQuiet; q > 0 {
		return q
	}
	return indexQuiet
}

// pendingCount is the number of segments of the current view waiting
// for their index.
func (s *Store) pendingCount() int {
	v := s.currentView()
	defer v.unref()
	n := 0
	for _, sg := range v.segs {
		if s.pendingIndex(sg) {
			n++
		}
	}
	return n
}

// backgroundIndexThreads is the number of goroutines the next step of a
// background index build uses: every core while a Flush waits for it or
// once writes have paused for indexQuiet, else BuildThreads. An error
// (Close) stops the build.
func (s *Store) backgroundIndexThreads() (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if s.indexUrgent.Load() > 0 || time.Duration(monoNano()-s.lastWrite.Load()) >= s.quiet() {
		return max(s.o.BuildThreads, runtime.GOMAXPROCS(0)), nil
	}
	return s.o.BuildThreads, nil
}

// buildDeferred is Flush's index pass: it builds the pending segments
// of the current view with threads goroutines, and waits for those a
// merge or a background build holds, until none of them is left.
func (s *Store) buildDeferred(ctx context.Context, threads int) error {
	only := map[*warmSegment]bool{}
	v := s.currentView()
	for _, sg := range v.segs {
		if s.pendingIndex(sg) {
			only[sg] = true
		}
	}
	v.unref()
	if len(only) == 0 {
		return nil
	}
	s.indexUrgent.Add(1)
	defer s.indexUrgent.Add(-1)
	defer s.kickIndex() // whatever this pass gave up on (ctx) is built in the background
	fixed := func() (int, error) {
		if s.closed.Load() {
			return 0, ErrClosed
		}
		return threads, ctx.Err()
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.Err(); err != nil {
			return err
		}
		if s.closed.Load() {
			return ErrClosed
		}
		p, wait, ch := s.pickIndex(only, fixed)
		if p != nil {
			for _, sg := range p.inputs {
				delete(only, sg)
			}
			if err := s.runIndex(ctx, p); err != nil {
				return err
			}
			continue
		}
		if !wait {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// runIndex builds p's segment with its index and commits it, then
// releases p. An input archived meanwhile is not an error.
func (s *Store) runIndex(ctx context.Context, p *mergePlan) error {
	return s.runMerge(ctx, p) // compact.go: merge with p.index
}

// IndexBuilds returns the number of deferred index builds committed
// since Open (flat segments rewritten with their index).
func (s *Store) IndexBuilds() int64 { return s.indexBuilds.Load() }
