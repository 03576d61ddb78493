package tier

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratasearch/strata/vfs"
)

// view is one consistent set of tiers: the active MemTable, the frozen
// MemTables a running (or failed) Flush is turning into a segment, the
// warm segments (ascending segment ID) and the cold archives. A Snapshot
// holds a reference to the view current when it was taken, so a segment
// removed by compaction is closed and its file deleted only after the
// last such Snapshot closes.
type view struct {
	mem    *memTable
	frozen []*memTable // oldest first; no new versions, only deaths
	segs   []*warmSegment
	cold   []*coldArchive // cold.go, ascending ID
	refs   atomic.Int64
}

func newView(mem *memTable, segs []*warmSegment, cold []*coldArchive) *view {
	v := &view{mem: mem, segs: segs, cold: cold}
	v.refs.Store(1)
	for _, sg := range segs {
		sg.ref()
	}
	for _, a := range cold {
		a.ref()
	}
	return v
}

// derive returns a new view with v's MemTables (active and frozen) and
// the given warm segments and archives (Compact, Archive, Promote).
func (v *view) derive(segs []*warmSegment, cold []*coldArchive) *view {
	nv := newView(v.mem, segs, cold)
	nv.frozen = v.frozen
	return nv
}

// hotGet returns id's version visible at e in the view's MemTables
// (active first, then the frozen ones, newest first).
func (v *view) hotGet(id string, e uint64) (*version, bool) {
	if x, ok := v.mem.get(id, e); ok {
		return x, true
	}
	for i := len(v.frozen) - 1; i >= 0; i-- {
		if x, ok := v.frozen[i].get(id, e); ok {
			return x, true
		}
	}
	return nil, false
}

// hotSize returns the bytes of the active and frozen MemTables (the
// MemTable bound of backpressure).
func (v *view) hotSize() int64 {
	n := v.mem.size()
	for _, m := range v.frozen {
		n += m.size()
	}
	return n
}

func (v *view) unref() {
	if v.refs.Add(-1) == 0 {
		for _, sg := range v.segs {
			sg.unref()
		}
		for _, a := range v.cold {
			a.unref()
		}
	}
}

// currentView returns the current view with a reference the caller must
// drop with unref.
func (s *Store) currentView() *view {
	s.viewMu.Lock()
	v := s.cur
	v.refs.Add(1)
	s.viewMu.Unlock()
	return v
}

// swapView installs nv as current (caller holds applyMu).
func (s *Store) swapView(nv *view) {
	s.viewMu.Lock()
	old := s.cur
	s.cur = nv
	s.viewMu.Unlock()
	old.unref()
}

func (s *Store) newMem() *memTable {
	lex := s.o.Lexical
	if s.o.NewLexical != nil {
		lex = s.o.NewLexical()
	}
	m := newMemTable(s.o.Dim, s.o.Metric, lex)
	m.skipTombstone = s.o.TestingSkipTombstone
	return m
}

// applyLocked applies batch b at epoch e to view v: first the tombstone
// step for frozen MemTable versions and warm and cold rows (an upsert or
// delete of an id that is no longer in the active MemTable ends its live
// version there at e), then the active MemTable. The caller holds applyMu (or is
// the single-threaded replay in Open), and e is not yet visible.
func (s *Store) applyLocked(v *view, b *Batch, e uint64) {
	if !s.o.TestingSkipTombstone && (len(v.frozen) > 0 || len(v.segs) > 0 || len(v.cold) > 0) {
	ops:
		for i := range b.Ops {
			id := b.Ops[i].Doc.ID
			// A frozen MemTable's version dies like a warm row: Flush
			// carries the death over to the segment row it becomes.
			for j := len(v.frozen) - 1; j >= 0; j-- {
				if v.frozen[j].kill(id, e) {
					continue ops
				}
			}
			for j := len(v.segs) - 1; j >= 0; j-- {
				if v.segs[j].kill(id, e) {
					continue ops
				}
			}
			v.coldKill(id, e) // cold.go: a cold row dies the same way
		}
	}
	v.mem.apply(b, e)
}

func segFileName(id uint64) string { return fmt.Sprintf("seg-%06d.sst", id) }

func isSegFile(name string) bool {
	return strings.HasPrefix(name, "seg-") && (strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".sst.tmp"))
}

// openSegments opens the manifest's segments and applies its tombstones.
// Files the manifest does not list are left alone here: Open deals with
// them (sweepUnreferenced, recovery.go) once the WAL has been validated
// too.
func (s *Store) openSegments(st ManifestState) ([]*warmSegment, error) {
	var segs []*warmSegment
	byID := map[uint64]*warmSegment{}
	fail := func(err error) ([]*warmSegment, error) {
		for _, sg := range segs {
			sg.free()
		}
		return nil, err
	}
	// Segments open in parallel (each decodes its own doc store), at most
	// GOMAXPROCS at a time; errors are reported in manifest order, so the
	// first damaged segment of the manifest is the one named.
	opened := make([]*warmSegment, len(st.Segments))
	errs := make([]error, len(st.Segments))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, m := range st.Segments {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			opened[i], errs[i] = s.loadSegment(m.File)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			for _, sg := range opened {
				if sg != nil {
					sg.free()
				}
			}
			return nil, err
		}
	}
	for i, m := range st.Segments {
		sg := opened[i]
		opened[i] = nil
		if sg.meta.Rows != m.Rows {
			sg.free()
			for _, rest := range opened {
				if rest != nil {
					rest.free()
				}
			}
			sg.free()
			return fail(segCorrupt(sg.path, 0, "segment has %d rows, manifest says %d", sg.meta.Rows, m.Rows))
		}
		sg.meta.ID, sg.meta.File = m.ID, m.File
		segs = append(segs, sg)
		byID[m.ID] = sg
	}
	for _, t := range st.Tombstones {
		sg := byID[t.Segment]
		if _, cold := st.archiveRows(t.Segment); sg == nil && cold {
			continue // an archive's tombstone (openArchives)
		}
		if sg == nil || uint64(t.Row) >= sg.meta.Rows {
			return fail(fmt.Errorf("%w: tier: manifest tombstone %+v names no row", ErrCorrupt, t))
		}
		if sg.death[t.Row].Load() != epochLive {
			return fail(fmt.Errorf("%w: tier: manifest has two tombstones for segment %d row %d", ErrCorrupt, t.Segment, t.Row))
		}
		sg.setDeath(t.Row, t.Death)
	}
	return segs, nil
}

// loadSegment maps (or reads) and parses a segment file.
func (s *Store) loadSegment(name string) (*warmSegment, error) {
	path := filepath.Join(s.o.Dir, name)
	data, release, err := loadFile(s.o.FS, path)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, segCorrupt(path, 0, "listed in the manifest but missing")
		}
		return nil, fmt.Errorf("tier: open segment %s: %w", path, err)
	}
	sg, err := openSegmentFetch(data, path, s.o.Dim, s.o.Metric, s.o.Fetch, s.o.IndexedMetadata...)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	sg.meta.File = name
	sg.release = release
	sg.nprobe, sg.kfactor = s.o.IVFNprobe, s.o.IVFKFactor
	fs, dir := s.o.FS, s.o.Dir
	sg.onFree = func(w *warmSegment) {
		if w.obsolete.Load() {
			fs.Remove(w.path)
			vfs.SyncDir(fs, dir)
		}
	}
	return sg, nil
}

// writeSegment writes the concatenation of parts as name: temp file → fsync → rename → fsync
// the directory. On error nothing is left under name (best effort).
func (s *Store) writeSegment(name string, parts ...[]byte) error {
	path := filepath.Join(s.o.Dir, name)
	err := vfs.WriteFileAtomic(s.o.FS, path, func(w io.Writer) error {
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.o.FS.Remove(path)
		return fmt.Errorf("tier: write segment: %w", err)
	}
	return nil
}

func (s *Store) buildOptions() segBuildOptions {
	return segBuildOptions{dim: s.o.Dim, metric: s.o.Metric, m: s.o.SegmentM,
		efConstruction: s.o.SegmentEfConstruction, threads: s.o.BuildThreads, lexical: s.o.LexicalSegments,
		index: s.o.SegmentIndex, ivf: ivfBuildParams{nlist: s.o.IVFNlist, m: s.o.IVFM, nbits: s.o.IVFNbits,
			minRows: s.o.IVFMinRows, seed: s.o.IVFSeed}}
}

// Flush turns the MemTable's versions live at the newest applied epoch F
// into an immutable warm segment and makes F durable. Writes wait only
// for two short steps; reads continue throughout:
//
//  1. freeze (under the apply lock): the active MemTable becomes a frozen
//     one and an empty MemTable takes its place; views hold both, so
//     readers see every version at their pinned epoch, and a later upsert
//     or delete of a frozen version's id ends it (e_death) as it would a
//     warm row;
//  2. build (writes continue): the frozen MemTables' versions live at F
//     become a segment file (temp → fsync → rename → fsync dir);
//  3. swap (under the apply lock): deaths of those versions after F are
//     carried over to the new rows, one manifest edit adds the segment,
//     records the tombstones of warm and cold rows that died in (old
//     durable epoch, F] and sets the durable epoch to F, the view drops
//     the frozen MemTables, and WAL files holding only epochs ≤ F are
//     deleted (the active one too, after a rotation, when nothing after F
//     was written).
//
// A crash at any point recovers by WAL replay after the manifest's durable
// epoch. A failed segment write leaves the frozen MemTables in the view
// (their writes are still in the WAL) and the store writable: the next
// Flush builds them together with anything written since. A failed
// manifest edit makes the store read-only (ErrReadOnly) until reopened.
// Nothing to flush is not an error. The vector index is built with
// max(Options.BuildThreads, GOMAXPROCS) goroutines: the caller is waiting.
//
// Then Flush builds the vector indexes that background flushes deferred
// (deferred.go): every segment of the view with a flat section that
// Options.SegmentIndex would index is rewritten with it, on
// max(BuildThreads, GOMAXPROCS) goroutines, and a build or merge already
// running on such a segment is waited for (and given every core from its
// next HNSW step). Flush returns once none of the segments pending when
// it started is left (a background flush meanwhile may add another). If
// ctx is done meanwhile, Flush returns ctx.Err() with the data flushed
// and the remaining builds left to the background index lane (with
// ManualIndex, to the next Flush).
func (s *Store) Flush(ctx context.Context) error {
	threads := max(s.o.BuildThreads, runtime.GOMAXPROCS(0))
	if err := s.flush(ctx, threads, false); err != nil {
		return err
	}
	return s.buildDeferred(ctx, threads) // deferred.go
}

// flush turns the MemTables into a segment (Flush without the deferred
// index builds) whose vector index is built by threads goroutines, or,
// with deferIndex, not built: the segment gets a flat section and the
// deferred index pass builds its index later (deferred.go).
func (s *Store) flush(ctx context.Context, threads int, deferIndex bool) error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.maintMu.Lock()
	defer s.maintMu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.Err(); err != nil {
		return err
	}
	// 1. Freeze.
	s.applyMu.Lock()
	F := s.applied
	st := s.manifest.State()
	cur := s.cur
	if F <= st.DurableEpoch && len(cur.frozen) == 0 {
		s.applyMu.Unlock()
		return nil
	}
	if cur.mem.versionCount() > 0 {
		nv := newView(s.newMem(), cur.segs, cur.cold)
		nv.frozen = append(append([]*memTable(nil), cur.frozen...), cur.mem)
		s.swapView(nv)
	}
	v := s.currentView() // frozen MemTables, segments and archives as of F
	s.applyMu.Unlock()
	defer v.unref()
	frozen := v.frozen
	if s.o.TestingFlushHook != nil {
		s.o.TestingFlushHook()
	}

	// 2. Build: rows live at F are fixed (later writes only set deaths
	// after F), and so are the warm and cold deaths ≤ F.
	type src struct {
		m   *memTable
		ver int32
	}
	var rows []segRow
	var srcs []src
	for _, m := range frozen {
		for _, r := range m.liveRows(F) {
			rows = append(rows, r)
			srcs = append(srcs, src{m, r.ver})
		}
	}
	bo := s.buildOptions()
	bo.threads = threads
	bo.boost = func() bool { slow, _, _ := s.pressure(); return slow }
	if deferIndex {
		bo.index = segmentIndexFlat
	}
	var lexDone chan struct{} // closed once the lexical section is built
	if len(frozen) == 1 && bo.lexical != nil && len(rows) > 0 {
		if lf, ok := frozen[0].lexical.(LexicalFlusher); ok {
			// The MemTable's own lexical index, minus the dead versions:
			// no re-analysis. With several frozen MemTables (a retry
			// after a failed flush) BuildLexical re-analyses instead. It
			// is serialised on another goroutine while the doc store and
			// the vector index are built.
			vers := make([]uint32, len(rows))
			for i := range rows {
				vers[i] = uint32(rows[i].ver)
			}
			var lb []byte
			var lerr error
			lexDone = make(chan struct{})
			go func() {
				defer close(lexDone)
				defer func() {
					if r := recover(); r != nil {
						lerr = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
					}
				}()
				lb, lerr = lf.FlushLexical(vers)
			}()
			bo.lexicalWait = func() ([]byte, error) {
				<-lexDone
				if lerr != nil {
					return nil, fmt.Errorf("tier: flush lexical index: %w", lerr)
				}
				return lb, nil
			}
		}
	}
	if lexDone != nil {
		defer func() { <-lexDone }() // also when the build fails before it waits
	}
	var tombs []Tombstone
	for _, sg := range v.segs {
		for r := range sg.death {
			if d := sg.death[r].Load(); d != epochLive && d > st.DurableEpoch && d <= F {
				tombs = append(tombs, Tombstone{Segment: sg.meta.ID, Row: uint32(r), Death: d})
			}
		}
	}
	for _, a := range v.cold {
		for r := range a.death {
			if d := a.death[r].Load(); d != epochLive && d > st.DurableEpoch && d <= F {
				tombs = append(tombs, Tombstone{Segment: a.meta.ID, Row: uint32(r), Death: d})
			}
		}
	}
	id := s.allocSegmentID()
	edit := Edit{DurableEpoch: F, NextSegmentID: s.segmentIDCounter(id), Tombstones: tombs}
	var seg *warmSegment
	if len(rows) > 0 {
		var err error
		// A flush that has started completes: its ctx is not looked at here.
		if seg, err = s.buildSegmentFile(context.Background(), id, rows, bo); err != nil {
			return err
		}
		edit.Add = []SegmentMeta{seg.meta}
	}

	// 3. Swap, writes held.
	s.applyMu.Lock()
	if seg != nil {
		// Deaths after F (writes during the build) carry over to the new
		// rows. They are not persisted here: WAL replay after F rebuilds
		// them by id.
		for i, sr := range srcs {
			if d := sr.m.deathOf(sr.ver); d != epochLive {
				seg.setDeath(uint32(i), d)
			}
		}
	}
	if err := s.manifest.Apply(edit); err != nil {
		s.applyMu.Unlock()
		if seg != nil {
			seg.free()
		}
		if s.manifest.Err() != nil {
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return err
	}
	cur = s.cur // the same frozen list: only Flush adds to it (maintMu)
	segs := append([]*warmSegment(nil), cur.segs...)
	if seg != nil {
		segs = append(segs, seg)
	}
	nv := newView(cur.mem, segs, cur.cold)
	nv.frozen = cur.frozen[len(frozen):]
	if len(nv.frozen) == 0 {
		nv.frozen = nil
	}
	s.swapView(nv)
	s.applyMu.Unlock()
	s.flushes.Add(1)
	// WAL appends do not take applyMu: recycling needs no write stop.
	// The manifest edit above made every record ≤ F durable in the
	// segment: the WAL files holding only such records go, the active
	// one too when nothing after F was written (wal.RetireThrough).
	if err := s.wal.RetireThrough(F); err != nil {
		s.o.Logger.Warn("tier: WAL recycling after flush failed", "err", err)
	}
	return nil
}

func containsSeg(list []*warmSegment, sg *warmSegment) bool {
	for _, x := range list {
		if x == sg {
			return true
		}
	}
	return false
}

// WarmSegments returns the manifest's segment list (for tests, stats and
// storage-amplification reports).
func (s *Store) WarmSegments() []SegmentMeta { return s.manifest.State().Segments }

func (s *Store) kick() {
	select {
	case s.bgKick <- struct{}{}:
	default:
	}
}

// background runs automatic flushes (MemTableSizeBytes), the deferred
// index lane (deferred.go; not with ManualIndex) and, with AutoCompact,
// the merge lanes (compact.go); it kicks the index lane and the merge
// lanes after each flush, and runs archive compactions after that.
func (s *Store) background() {
	var lanes sync.WaitGroup
	defer func() {
		lanes.Wait()
		close(s.bgDone)
	}()
	if s.o.AutoCompact {
		for range compactLanes {
			lanes.Add(1)
			go s.compactLane(&lanes)
		}
		s.kickCompact() // segments due since before Open
	}
	if !s.o.ManualIndex {
		lanes.Add(1)
		go s.indexLane(&lanes) // deferred.go
	}
	for {
		select {
		case <-s.bgStop:
			return
		case <-s.bgKick:
		}
		// No index: the segment is written flat and the index lane
		// builds it afterwards (deferred.go), so the flush costs no more
		// than its doc store, BM25 section and fsyncs, and the frozen
		// MemTables drain as fast as writes fill them.
		if err := s.flush(context.Background(), s.o.BuildThreads, s.deferFlushIndex()); err != nil && !errors.Is(err, ErrClosed) {
			s.o.Logger.Warn("tier: background flush failed", "err", err)
			continue
		}
		s.kickIndex()
		if s.o.AutoCompact {
			s.kickCompact()
			if err := s.CompactArchives(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
				s.o.Logger.Warn("tier: background archive compaction failed", "err", err)
			}
		}
	}
}

// size returns the MemTable's approximate size in bytes.
func (m *memTable) size() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.bytes
}

// liveRows returns the versions live at e in version order (which is
// epoch order, and op order within a batch): row r of the flushed segment
// is the r-th live version, so a lexical index over the MemTable's
// versions maps to the segment's rows by dropping the dead ones.
func (m *memTable) liveRows(e uint64) []segRow {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var rows []segRow
	for _, idx := range m.latest {
		for i := idx; i >= 0; i = m.versions[i].prev {
			if v := &m.versions[i]; v.visibleAt(e) {
				rows = append(rows, segRow{doc: v.doc, birth: v.birth, ver: i})
				break
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ver < rows[j].ver })
	return rows
}

// buildSegmentFile builds segment id from rows, writes it durably and maps
// it. The file is removed again if it cannot be loaded back. ctx is looked
// at between the build and the write.
func (s *Store) buildSegmentFile(ctx context.Context, id uint64, rows []segRow, bo segBuildOptions) (*warmSegment, error) {
	parts, err := buildSegmentParts(rows, bo)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := segFileName(id)
	if err := s.writeSegment(name, parts...); err != nil {
		return nil, err
	}
	seg, err := s.loadSegment(name)
	if err != nil {
		s.o.FS.Remove(filepath.Join(s.o.Dir, name))
		return nil, err
	}
	seg.meta.ID = id
	return seg, nil
}
