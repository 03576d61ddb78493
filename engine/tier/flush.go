package tier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/internal/vfs"
)

// view is one consistent set of tiers: the MemTable plus the warm
// segments (ascending segment ID). A Snapshot holds a reference to the
// view current when it was taken, so a segment removed by compaction is
// closed and its file deleted only after the last such Snapshot closes.
type view struct {
	mem  *memTable
	segs []*warmSegment
	cold []*coldArchive // cold.go, ascending ID
	refs atomic.Int64
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
// step for warm rows (an upsert or delete of a flushed id ends its live
// segment row at e), then the MemTable. The caller holds applyMu (or is
// the single-threaded replay in Open), and e is not yet visible.
func (s *Store) applyLocked(v *view, b *Batch, e uint64) {
	if !s.o.TestingSkipTombstone && (len(v.segs) > 0 || len(v.cold) > 0) {
	ops:
		for i := range b.Ops {
			id := b.Ops[i].Doc.ID
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

// openSegments opens the manifest's segments, applies its tombstones, and
// deletes segment files the manifest does not list (left by a crash
// between a segment write and its manifest edit, or by a compaction
// whose old inputs were not yet deleted).
func (s *Store) openSegments(st ManifestState) ([]*warmSegment, error) {
	var segs []*warmSegment
	byID := map[uint64]*warmSegment{}
	listed := map[string]bool{}
	fail := func(err error) ([]*warmSegment, error) {
		for _, sg := range segs {
			sg.free()
		}
		return nil, err
	}
	for _, m := range st.Segments {
		sg, err := s.loadSegment(m.File)
		if err != nil {
			return fail(err)
		}
		if sg.meta.Rows != m.Rows {
			sg.free()
			return fail(segCorrupt(sg.path, 0, "segment has %d rows, manifest says %d", sg.meta.Rows, m.Rows))
		}
		sg.meta.ID, sg.meta.File = m.ID, m.File
		segs = append(segs, sg)
		byID[m.ID] = sg
		listed[m.File] = true
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
	if names, err := s.o.FS.List(s.o.Dir); err == nil {
		removed := false
		for _, n := range names {
			if isSegFile(n) && !listed[n] {
				s.o.Logger.Warn("tier: removing unreferenced segment file", "file", filepath.Join(s.o.Dir, n))
				s.o.FS.Remove(filepath.Join(s.o.Dir, n))
				removed = true
			}
		}
		if removed {
			vfs.SyncDir(s.o.FS, s.o.Dir)
		}
	}
	return segs, nil
}

// loadSegment maps (or reads) and parses a segment file.
func (s *Store) loadSegment(name string) (*warmSegment, error) {
	path := filepath.Join(s.o.Dir, name)
	data, release, err := loadFile(s.o.FS, path)
	if err != nil {
		return nil, fmt.Errorf("tier: open segment %s: %w", path, err)
	}
	sg, err := openSegment(data, path, s.o.Dim, s.o.Metric, s.o.IndexedMetadata...)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	sg.meta.File = name
	sg.release = release
	fs, dir := s.o.FS, s.o.Dir
	sg.onFree = func(w *warmSegment) {
		if w.obsolete.Load() {
			fs.Remove(w.path)
			vfs.SyncDir(fs, dir)
		}
	}
	return sg, nil
}

// writeSegment writes data as name: temp file → fsync → rename → fsync
// the directory. On error nothing is left under name (best effort).
func (s *Store) writeSegment(name string, data []byte) error {
	path := filepath.Join(s.o.Dir, name)
	err := vfs.WriteFileAtomic(s.o.FS, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		s.o.FS.Remove(path)
		return fmt.Errorf("tier: write segment: %w", err)
	}
	return nil
}

func (s *Store) buildOptions() segBuildOptions {
	return segBuildOptions{dim: s.o.Dim, metric: s.o.Metric, m: s.o.SegmentM,
		efConstruction: s.o.SegmentEfConstruction, threads: s.o.BuildThreads, lexical: s.o.LexicalSegments}
}

// Flush turns the MemTable's versions live at the newest applied epoch F
// into an immutable warm segment and makes F durable: the segment file is
// written (temp → fsync → rename → fsync dir), then one manifest edit adds
// it, records the tombstones of warm rows that died since the last flush
// and sets the durable epoch to F, then the MemTable is replaced by an
// empty one and WAL files holding only epochs ≤ F are deleted. Writes
// wait for the flush (reads continue). A failed segment write leaves the
// store unchanged and writable; a failed manifest edit makes it read-only
// (ErrReadOnly) until reopened. Nothing to flush is not an error.
func (s *Store) Flush(ctx context.Context) error {
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
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	v := s.cur
	F := s.applied
	st := s.manifest.State()
	if F <= st.DurableEpoch {
		return nil
	}
	rows := v.mem.liveRows(F)
	bo := s.buildOptions()
	if lf, ok := v.mem.lexical.(LexicalFlusher); ok && bo.lexical != nil && len(rows) > 0 {
		// The MemTable's own lexical index, minus the dead versions: no
		// re-analysis while writes wait.
		vers := make([]uint32, len(rows))
		for i := range rows {
			vers[i] = uint32(rows[i].ver)
		}
		lb, err := lf.FlushLexical(vers)
		if err != nil {
			return fmt.Errorf("tier: flush lexical index: %w", err)
		}
		bo.lexicalBytes = lb
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
	id := max(st.NextSegmentID, 1)
	edit := Edit{DurableEpoch: F, NextSegmentID: id + 1, Tombstones: tombs}
	var seg *warmSegment
	if len(rows) > 0 {
		data, err := buildSegment(rows, bo)
		if err != nil {
			return err
		}
		name := segFileName(id)
		if err := s.writeSegment(name, data); err != nil {
			return err
		}
		if seg, err = s.loadSegment(name); err != nil {
			s.o.FS.Remove(filepath.Join(s.o.Dir, name))
			return err
		}
		seg.meta.ID = id
		edit.Add = []SegmentMeta{seg.meta}
	}
	if err := s.manifest.Apply(edit); err != nil {
		if seg != nil {
			seg.free()
		}
		if s.manifest.Err() != nil {
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return err
	}
	segs := append([]*warmSegment(nil), v.segs...)
	if seg != nil {
		segs = append(segs, seg)
	}
	s.swapView(newView(s.newMem(), segs, v.cold))
	s.flushes.Add(1)
	if err := s.wal.TruncateBefore(F + 1); err != nil {
		s.o.Logger.Warn("tier: WAL recycling after flush failed", "err", err)
	}
	return nil
}

// Compact rewrites warm segments without their dead rows: every segment
// whose dead fraction ρ_dead (rows dead at every epoch ≥ the oldest
// pinned one) exceeds CompactDeadFraction, or all segments when there are
// more than CompactMaxSegments. The surviving rows (with their e_birth
// and any later e_death) go into one new segment with a rebuilt HNSW;
// one manifest edit removes the inputs and adds it; the inputs' files are
// deleted once no Snapshot uses them. Queries and writes continue while
// the new segment is built; writes wait only for the final swap.
func (s *Store) Compact(ctx context.Context) error {
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
	v := s.currentView()
	defer v.unref()
	P := s.OldestPinnedEpoch()
	var victims []*warmSegment
	if len(v.segs) > s.o.CompactMaxSegments {
		victims = v.segs
	} else {
		for _, sg := range v.segs {
			if sg.meta.Rows == 0 || float64(sg.deadRows(P)) > s.o.CompactDeadFraction*float64(sg.meta.Rows) {
				victims = append(victims, sg)
			}
		}
	}
	if len(victims) == 0 {
		return nil
	}
	type src struct {
		sg  *warmSegment
		row uint32
	}
	var rows []segRow
	var srcs []src
	bo := s.buildOptions()
	lm, merge := bo.lexical.(LexicalMerger)
	var lexSecs [][]byte
	var lexPaths []string
	var lexDel []*roaring.Bitmap
	for _, sg := range victims {
		del := roaring.New()
		for r := range sg.docs {
			if sg.death[r].Load() > P {
				rows = append(rows, segRow{doc: sg.docs[r], birth: sg.birth[r]})
				srcs = append(srcs, src{sg, uint32(r)})
			} else {
				del.Add(uint32(r))
			}
		}
		merge = merge && sg.lex != nil
		lexSecs, lexPaths, lexDel = append(lexSecs, sg.lex), append(lexPaths, sg.path), append(lexDel, del)
	}
	if merge && len(rows) > 0 {
		// Merge the inputs' BM25 sections without their dropped rows
		// (same row order as rows), instead of re-analysing.
		lb, err := lm.MergeLexical(lexSecs, lexPaths, lexDel)
		if err != nil {
			return fmt.Errorf("tier: compaction lexical merge: %w", err)
		}
		bo.lexicalBytes = lb
	}
	id := max(s.manifest.State().NextSegmentID, 1)
	var seg *warmSegment
	if len(rows) > 0 {
		data, err := buildSegment(rows, bo)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := segFileName(id)
		if err := s.writeSegment(name, data); err != nil {
			return err
		}
		if seg, err = s.loadSegment(name); err != nil {
			s.o.FS.Remove(filepath.Join(s.o.Dir, name))
			return err
		}
		seg.meta.ID = id
	}
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	// Writes are held: carry every death (including those that happened
	// during the build) over to the new rows. Deaths after the durable
	// epoch are not persisted here: WAL replay rebuilds them by id.
	D := s.manifest.State().DurableEpoch
	edit := Edit{NextSegmentID: id + 1}
	for _, sg := range victims {
		edit.Remove = append(edit.Remove, sg.meta.ID)
	}
	if seg != nil {
		edit.Add = []SegmentMeta{seg.meta}
		for i, sr := range srcs {
			d := sr.sg.death[sr.row].Load()
			if d == epochLive {
				continue
			}
			seg.setDeath(uint32(i), d)
			if d <= D {
				edit.Tombstones = append(edit.Tombstones, Tombstone{Segment: id, Row: uint32(i), Death: d})
			}
		}
	}
	if err := s.manifest.Apply(edit); err != nil {
		if seg != nil {
			seg.obsolete.Store(true)
			seg.free()
		}
		if s.manifest.Err() != nil {
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return err
	}
	cur := s.cur
	var segs []*warmSegment
	for _, sg := range cur.segs {
		if !containsSeg(victims, sg) {
			segs = append(segs, sg)
		}
	}
	if seg != nil {
		segs = append(segs, seg)
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].meta.ID < segs[j].meta.ID })
	for _, sg := range victims {
		sg.obsolete.Store(true)
	}
	s.swapView(newView(cur.mem, segs, cur.cold))
	s.compactions.Add(1)
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

// background runs automatic flushes (MemTableSizeBytes) and, with
// AutoCompact, compactions after them.
func (s *Store) background() {
	defer close(s.bgDone)
	for {
		select {
		case <-s.bgStop:
			return
		case <-s.bgKick:
		}
		if err := s.Flush(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			s.o.Logger.Warn("tier: background flush failed", "err", err)
			continue
		}
		if s.o.AutoCompact {
			if err := s.Compact(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
				s.o.Logger.Warn("tier: background compaction failed", "err", err)
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
