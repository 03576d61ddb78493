package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// SegmentMeta describes one warm segment file recorded in the manifest.
type SegmentMeta struct {
	ID        uint64
	File      string // name inside the store directory
	MinEpoch  uint64 // smallest e_birth in the segment
	MaxEpoch  uint64 // largest e_birth in the segment
	Rows      uint64
	SizeBytes uint64
}

// ManifestState is the durable state the manifest records.
type ManifestState struct {
	// DurableEpoch: every epoch ≤ DurableEpoch is durable in segments,
	// so the WAL is replayed only after it.
	DurableEpoch  uint64
	NextSegmentID uint64
	Segments      []SegmentMeta // sorted by ID
	// Tombstones are the persisted deaths of warm-segment rows (an
	// upsert or delete of a flushed id), each with e_death ≤
	// DurableEpoch; later deaths are rebuilt by WAL replay. Removing a
	// segment drops its tombstones. A tombstone may also name a cold
	// archive (archives share the segment id space).
	Tombstones []Tombstone
	// Archives are the cold Parquet archives (cold.go), sorted by ID.
	Archives []ArchiveMeta
}

// Tombstone records that row Row of segment Segment died at epoch Death
// (its version is live in [e_birth, Death)).
type Tombstone struct {
	Segment uint64
	Row     uint32
	Death   uint64
}

func (s ManifestState) clone() ManifestState {
	s.Segments = append([]SegmentMeta(nil), s.Segments...)
	s.Tombstones = append([]Tombstone(nil), s.Tombstones...)
	s.Archives = append([]ArchiveMeta(nil), s.Archives...)
	return s
}

// Edit is one atomic change to the manifest state.
type Edit struct {
	// DurableEpoch, if non-zero, must be ≥ the current one and replaces it.
	DurableEpoch uint64
	// NextSegmentID, if non-zero, replaces the counter.
	NextSegmentID uint64
	Add           []SegmentMeta
	Remove        []uint64 // segment IDs
	// Tombstones are added after Remove and Add are applied; each must
	// name a segment or archive present after the edit.
	Tombstones []Tombstone
	// AddArchives and RemoveArchives change the cold archive set
	// (applied with Add and Remove; removing an archive drops its
	// tombstones).
	AddArchives    []ArchiveMeta
	RemoveArchives []uint64
}

func (s *ManifestState) apply(e Edit) error {
	if e.DurableEpoch != 0 {
		if e.DurableEpoch < s.DurableEpoch {
			return fmt.Errorf("tier: manifest edit lowers durable epoch %d to %d", s.DurableEpoch, e.DurableEpoch)
		}
		s.DurableEpoch = e.DurableEpoch
	}
	if e.NextSegmentID != 0 {
		s.NextSegmentID = e.NextSegmentID
	}
	for _, id := range e.Remove {
		i := sort.Search(len(s.Segments), func(i int) bool { return s.Segments[i].ID >= id })
		if i == len(s.Segments) || s.Segments[i].ID != id {
			return fmt.Errorf("tier: manifest edit removes unknown segment %d", id)
		}
		s.Segments = append(s.Segments[:i], s.Segments[i+1:]...)
	}
	for _, sg := range e.Add {
		i := sort.Search(len(s.Segments), func(i int) bool { return s.Segments[i].ID >= sg.ID })
		if i < len(s.Segments) && s.Segments[i].ID == sg.ID {
			return fmt.Errorf("tier: manifest edit adds duplicate segment %d", sg.ID)
		}
		s.Segments = append(s.Segments, SegmentMeta{})
		copy(s.Segments[i+1:], s.Segments[i:])
		s.Segments[i] = sg
	}
	if err := s.applyArchives(e); err != nil {
		return err
	}
	if len(e.Remove) > 0 || len(e.RemoveArchives) > 0 {
		keep := s.Tombstones[:0:0]
		for _, t := range s.Tombstones {
			if !slices.Contains(e.Remove, t.Segment) && !slices.Contains(e.RemoveArchives, t.Segment) {
				keep = append(keep, t)
			}
		}
		s.Tombstones = keep
	}
	for _, t := range e.Tombstones {
		i := sort.Search(len(s.Segments), func(i int) bool { return s.Segments[i].ID >= t.Segment })
		if i == len(s.Segments) || s.Segments[i].ID != t.Segment {
			if rows, ok := s.archiveRows(t.Segment); ok {
				if uint64(t.Row) >= rows {
					return fmt.Errorf("tier: manifest tombstone row %d beyond archive %d's %d rows", t.Row, t.Segment, rows)
				}
				s.Tombstones = append(s.Tombstones, t)
				continue
			}
			return fmt.Errorf("tier: manifest tombstone names unknown segment %d", t.Segment)
		}
		if uint64(t.Row) >= s.Segments[i].Rows {
			return fmt.Errorf("tier: manifest tombstone row %d beyond segment %d's %d rows", t.Row, t.Segment, s.Segments[i].Rows)
		}
		s.Tombstones = append(s.Tombstones, t)
	}
	return nil
}

// manifestFormatVersion 3 appends the archive lists (cold.go) to every
// edit, version 2 the tombstone list; version 1 and 2 payloads are still
// read.
const manifestFormatVersion = 3

func appendSeg(dst []byte, s SegmentMeta) []byte {
	dst = binary.AppendUvarint(dst, s.ID)
	dst = putStr(dst, s.File)
	for _, v := range []uint64{s.MinEpoch, s.MaxEpoch, s.Rows, s.SizeBytes} {
		dst = binary.AppendUvarint(dst, v)
	}
	return dst
}

func readSeg(d *decoder) SegmentMeta {
	var s SegmentMeta
	s.ID = d.uvarint("segment id")
	s.File = d.str("segment file")
	s.MinEpoch = d.uvarint("min epoch")
	s.MaxEpoch = d.uvarint("max epoch")
	s.Rows = d.uvarint("rows")
	s.SizeBytes = d.uvarint("size")
	return s
}

// encodeEdit serialises an edit; a checkpoint is the edit that builds the
// whole state from empty.
func encodeEdit(e Edit) []byte {
	dst := []byte{manifestFormatVersion}
	dst = binary.AppendUvarint(dst, e.DurableEpoch)
	dst = binary.AppendUvarint(dst, e.NextSegmentID)
	dst = binary.AppendUvarint(dst, uint64(len(e.Add)))
	for _, s := range e.Add {
		dst = appendSeg(dst, s)
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.Remove)))
	for _, id := range e.Remove {
		dst = binary.AppendUvarint(dst, id)
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.Tombstones)))
	for _, t := range e.Tombstones {
		dst = binary.AppendUvarint(dst, t.Segment)
		dst = binary.AppendUvarint(dst, uint64(t.Row))
		dst = binary.AppendUvarint(dst, t.Death)
	}
	return appendArchiveEdit(dst, e)
}

func decodeEdit(p []byte) (Edit, error) {
	d := &decoder{b: p}
	v := d.byte1("version")
	if d.err == nil && (v < 1 || v > manifestFormatVersion) {
		return Edit{}, fmt.Errorf("%w: unknown manifest format version %d", errBatch, v)
	}
	var e Edit
	e.DurableEpoch = d.uvarint("durable epoch")
	e.NextSegmentID = d.uvarint("next segment id")
	na := d.count(7, "added segments")
	for i := 0; i < na && d.err == nil; i++ {
		e.Add = append(e.Add, readSeg(d))
	}
	nr := d.count(1, "removed segments")
	for i := 0; i < nr && d.err == nil; i++ {
		e.Remove = append(e.Remove, d.uvarint("removed id"))
	}
	if v >= 2 {
		nt := d.count(3, "tombstones")
		for i := 0; i < nt && d.err == nil; i++ {
			t := Tombstone{Segment: d.uvarint("tombstone segment")}
			row := d.uvarint("tombstone row")
			if row > math.MaxUint32 {
				d.fail("tombstone row out of range")
			}
			t.Row = uint32(row)
			t.Death = d.uvarint("tombstone death")
			e.Tombstones = append(e.Tombstones, t)
		}
	}
	if v >= 3 {
		readArchiveEdit(d, &e)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return e, d.err
}

// ManifestOptions configures a Manifest.
type ManifestOptions struct {
	// CheckpointEdits: after this many edits in one manifest file, the next
	// edit is followed by a checkpoint into a fresh file. Default 128.
	CheckpointEdits int
	// Logger receives recovery warnings. Default slog.Default().
	Logger *slog.Logger
}

// Manifest is the store's durable record of its segment set and durable
// epoch: an append-only log of edits (MANIFEST-<n>, same record framing as
// the WAL) that starts with a checkpoint of the full state; CURRENT names
// the live log and is replaced atomically. Safe for concurrent use.
type Manifest struct {
	fs  vfs.FS
	dir string
	o   ManifestOptions

	mu    sync.Mutex
	state ManifestState
	num   uint64   // current MANIFEST file number
	f     vfs.File // open for append
	seq   uint64   // last record sequence number in f
	edits int      // edits since the checkpoint
	err   error    // sticky
}

const currentName = "CURRENT"

func manifestName(n uint64) string { return fmt.Sprintf("MANIFEST-%06d", n) }

// OpenManifest opens the manifest in dir, or creates an empty one. A torn
// final edit (never acknowledged) is truncated with a warning; damage
// before it is an error matching ErrCorrupt.
func OpenManifest(fs vfs.FS, dir string, o ManifestOptions) (*Manifest, error) {
	if o.CheckpointEdits <= 0 {
		o.CheckpointEdits = 128
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Manifest{fs: fs, dir: dir, o: o}
	cur, err := readAllFile(fs, filepath.Join(dir, currentName))
	if err != nil {
		if _, serr := fs.Stat(filepath.Join(dir, currentName)); serr == nil {
			return nil, fmt.Errorf("tier: read CURRENT: %w", err)
		}
		// No CURRENT: a new store (a crash before the first CURRENT
		// was durable also lands here; nothing depended on it yet).
		if err := m.checkpoint(1); err != nil {
			return nil, err
		}
		return m, nil
	}
	name := strings.TrimSpace(string(cur))
	n, ok := parseManifestName(name)
	if !ok {
		return nil, &wal.CorruptError{Kind: kindManifest, Path: filepath.Join(dir, currentName), Offset: 0, Reason: fmt.Sprintf("bad manifest name %q", name)}
	}
	path := filepath.Join(dir, name)
	data, err := readAllFile(fs, path)
	if err != nil {
		return nil, fmt.Errorf("tier: read %s: %w", path, err)
	}
	var st ManifestState
	records := 0
	res, err := wal.Scan(data, path, 1, func(r wal.Record) error {
		wantType := wal.TypeManifestEdit
		if records == 0 {
			wantType = wal.TypeManifestCheckpoint
		}
		if r.Type != wantType {
			return &wal.CorruptError{Kind: kindManifest, Path: path, Offset: r.Offset, Reason: fmt.Sprintf("record type %d, want %d", r.Type, wantType)}
		}
		e, err := decodeEdit(r.Payload)
		if err == nil {
			err = st.apply(e)
		}
		if err != nil {
			return &wal.CorruptError{Kind: kindManifest, Path: path, Offset: r.Offset, Reason: err.Error()}
		}
		records++
		return nil
	})
	if err != nil {
		// Framing damage found by Scan: the file is a manifest, not a WAL
		// segment.
		if ce := (*wal.CorruptError)(nil); errors.As(err, &ce) && ce.Kind == wal.KindRecordLog {
			ce.Kind = kindManifest
		}
		return nil, err
	}
	if records == 0 {
		return nil, &wal.CorruptError{Kind: kindManifest, Path: path, Offset: 0, Reason: "manifest has no checkpoint record"}
	}
	if res.Torn {
		o.Logger.Warn("tier: truncating torn manifest tail", "file", path, "offset", res.End, "reason", res.TornReason)
	}
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		return nil, fmt.Errorf("tier: open %s: %w", path, err)
	}
	if res.Torn {
		if err := f.Truncate(res.End); err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("tier: truncate %s: %w", path, err)
		}
	}
	m.state, m.num, m.f, m.seq, m.edits = st, n, f, res.LastSeq, records-1
	m.removeStale()
	return m, nil
}

func parseManifestName(s string) (uint64, bool) {
	if !strings.HasPrefix(s, "MANIFEST-") {
		return 0, false
	}
	n, err := strconv.ParseUint(s[len("MANIFEST-"):], 10, 64)
	return n, err == nil && n > 0
}

func readAllFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// removeStale deletes manifest files other than the live one (left by a
// crash between a checkpoint's CURRENT update and the old file's removal).
func (m *Manifest) removeStale() {
	names, err := m.fs.List(m.dir)
	if err != nil {
		return
	}
	for _, nm := range names {
		if n, ok := parseManifestName(nm); ok && n != m.num {
			m.fs.Remove(filepath.Join(m.dir, nm))
		}
	}
}

// checkpoint writes the current state into MANIFEST-<num>, makes it
// durable, points CURRENT at it, and removes the previous file. Called
// with mu held (or before m is shared).
func (m *Manifest) checkpoint(num uint64) error {
	path := filepath.Join(m.dir, manifestName(num))
	f, err := m.fs.Create(path)
	if err != nil {
		return fmt.Errorf("tier: create %s: %w", path, err)
	}
	st := m.state
	rec := wal.AppendRecord(nil, wal.TypeManifestCheckpoint, 1, encodeEdit(Edit{DurableEpoch: st.DurableEpoch, NextSegmentID: st.NextSegmentID, Add: st.Segments, Tombstones: st.Tombstones, AddArchives: st.Archives}))
	if _, err := f.Write(rec); err != nil {
		f.Close()
		return fmt.Errorf("tier: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("tier: sync %s: %w", path, err)
	}
	if err := vfs.SyncDir(m.fs, m.dir); err != nil {
		f.Close()
		return fmt.Errorf("tier: sync dir %s: %w", m.dir, err)
	}
	if err := vfs.WriteFileAtomic(m.fs, filepath.Join(m.dir, currentName), func(w io.Writer) error {
		_, err := io.WriteString(w, manifestName(num)+"\n")
		return err
	}); err != nil {
		f.Close()
		return fmt.Errorf("tier: %w", err)
	}
	old, oldF := m.num, m.f
	m.num, m.f, m.seq, m.edits = num, f, 1, 0
	if oldF != nil {
		oldF.Close()
	}
	if old != 0 && old != num {
		m.fs.Remove(filepath.Join(m.dir, manifestName(old)))
	}
	return nil
}

// Apply makes e durable (append + fsync) and then applies it to the
// in-memory state. An invalid edit is rejected without writing. After a
// write or fsync failure the manifest is read-only: every later call
// returns the sticky error.
func (m *Manifest) Apply(e Edit) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	next := m.state.clone()
	if err := next.apply(e); err != nil {
		return err
	}
	rec := wal.AppendRecord(nil, wal.TypeManifestEdit, m.seq+1, encodeEdit(e))
	if _, err := m.f.Write(rec); err != nil {
		m.err = fmt.Errorf("tier: manifest write failed, read-only until reopened: %w", err)
		return m.err
	}
	if err := m.f.Sync(); err != nil {
		m.err = fmt.Errorf("tier: manifest fsync failed, read-only until reopened: %w", err)
		return m.err
	}
	m.seq++
	m.edits++
	m.state = next
	if m.edits >= m.o.CheckpointEdits {
		if err := m.checkpoint(m.num + 1); err != nil {
			// The edit is durable in the old file; a failed
			// checkpoint leaves the old CURRENT in charge, but its
			// file handle may be in an unknown state: fail closed.
			m.err = fmt.Errorf("tier: manifest checkpoint failed, read-only until reopened: %w", err)
			return nil
		}
	}
	return nil
}

// State returns a copy of the current state.
func (m *Manifest) State() ManifestState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.clone()
}

// FileNumber returns the number of the live MANIFEST file.
func (m *Manifest) FileNumber() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.num
}

// Err returns the sticky failure, or nil.
func (m *Manifest) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Close closes the manifest file.
func (m *Manifest) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return errors.New("tier: manifest already closed")
	}
	err := m.f.Close()
	m.f = nil
	return err
}
