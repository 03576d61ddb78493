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
	// SyncedEpoch: every epoch ≤ SyncedEpoch was acknowledged as
	// durable, so it is in a segment (≤ DurableEpoch) or in the WAL;
	// recovery refuses a WAL that lacks one (wal.Options.SyncedSeq), and
	// never hands it out again. Recorded when the store opens, at each
	// WAL rotation and at Close. 0 in manifests written before format
	// version 4.
	SyncedEpoch uint64
	// ActiveWAL is the first sequence number of the WAL segment that
	// was active when last recorded (Open, WAL rotation): that segment is
	// never deleted, so recovery refuses a WAL directory without it
	// (wal.Options.ActiveSeq). 0: unknown (before format version 4).
	ActiveWAL uint64
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
	// SyncedEpoch and ActiveWAL, if greater than the current ones,
	// replace them (they never decrease).
	SyncedEpoch, ActiveWAL uint64
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
	s.SyncedEpoch = max(s.SyncedEpoch, e.SyncedEpoch)
	s.ActiveWAL = max(s.ActiveWAL, e.ActiveWAL)
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

// manifestFormatVersion 4 appends the synced epoch and active WAL
// segment to every edit,
// version 3 the archive lists (cold.go), version 2 the tombstone list;
// version 1 to 3 payloads are still read.
const manifestFormatVersion = 4

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
	dst = appendArchiveEdit(dst, e)
	dst = binary.AppendUvarint(dst, e.SyncedEpoch)
	return binary.AppendUvarint(dst, e.ActiveWAL)
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
	if v >= 4 {
		e.SyncedEpoch = d.uvarint("synced epoch")
		e.ActiveWAL = d.uvarint("active WAL segment")
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

	// Noted by openManifest for commitOpen and the store's validation.
	tornAt     int64  // offset of a torn final edit, or -1
	tornReason string // why it did not parse
	stale      []string
	ckptNext   uint64          // NextSegmentID of the live file's checkpoint
	named      map[uint64]bool // ids named by the edits after it
}

const currentName = "CURRENT"

func manifestName(n uint64) string { return fmt.Sprintf("MANIFEST-%06d", n) }

// OpenManifest opens the manifest in dir, or creates an empty one when
// dir holds no store file. A torn final edit (a record cut short by the
// end of the file: an interrupted, never acknowledged write) is truncated
// with a warning; damage before it, a complete final record that fails
// its checksum (every edit is fsynced before it takes effect), a missing
// CURRENT beside store files, and a CURRENT naming a missing manifest are
// errors matching ErrCorrupt with the file and offset.
func OpenManifest(fs vfs.FS, dir string, o ManifestOptions) (*Manifest, error) {
	m, err := openManifest(fs, dir, o, false)
	if err != nil {
		return nil, err
	}
	if err := m.commitOpen(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// openManifest reads and validates the manifest without changing any
// file, except that it creates the first manifest of a directory holding
// no store file (unless readOnly). A torn tail and stale manifest files
// are only noted: commitOpen acts on them once the caller has validated
// the rest of the store against the state.
func openManifest(fs vfs.FS, dir string, o ManifestOptions, readOnly bool) (*Manifest, error) {
	if o.CheckpointEdits <= 0 {
		o.CheckpointEdits = 128
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	m := &Manifest{fs: fs, dir: dir, o: o, tornAt: -1, named: map[uint64]bool{}}
	curPath := filepath.Join(dir, currentName)
	cur, err := readAllFile(fs, curPath)
	if err != nil {
		if _, serr := fs.Stat(curPath); serr == nil {
			return nil, fmt.Errorf("tier: read CURRENT: %w", err)
		}
		// No CURRENT: a new store, or a crash before the first CURRENT
		// was durable (nothing depended on it yet). Anything else
		// holding data means CURRENT was lost.
		if evidence := storeEvidence(fs, dir); evidence != "" {
			return nil, &wal.CorruptError{Kind: "CURRENT", Path: curPath, Offset: 0,
				Reason: "missing, but the directory holds store data (" + evidence + "); restore CURRENT (it names the live MANIFEST-<n>)"}
		}
		if readOnly {
			return m, nil
		}
		if err := m.checkpoint(1); err != nil {
			return nil, err
		}
		return m, nil
	}
	name := strings.TrimSpace(string(cur))
	n, ok := parseManifestName(name)
	if !ok {
		return nil, &wal.CorruptError{Kind: "CURRENT", Path: curPath, Offset: 0, Reason: fmt.Sprintf("bad manifest name %q", name)}
	}
	path := filepath.Join(dir, name)
	data, err := readAllFile(fs, path)
	if err != nil {
		if _, serr := fs.Stat(path); serr != nil {
			return nil, &wal.CorruptError{Kind: "CURRENT", Path: curPath, Offset: 0, Reason: fmt.Sprintf("names %s, which cannot be read: %v", name, err)}
		}
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
		if records == 0 {
			m.ckptNext = st.NextSegmentID
		} else {
			for _, sg := range e.Add {
				m.named[sg.ID] = true
			}
			for _, a := range e.AddArchives {
				m.named[a.ID] = true
			}
			for _, id := range append(append([]uint64(nil), e.Remove...), e.RemoveArchives...) {
				m.named[id] = true
			}
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
		reason := "manifest has no checkpoint record"
		if res.Torn {
			reason += " (" + res.TornReason + ")"
		}
		return nil, &wal.CorruptError{Kind: kindManifest, Path: path, Offset: 0, Reason: reason}
	}
	if res.Torn && !res.TornIncomplete {
		// A whole record is there but fails its checks: damage to an
		// edit that was fsynced (and so may have been acted on), not an
		// interrupted write.
		return nil, &wal.CorruptError{Kind: kindManifest, Path: path, Offset: res.End, Reason: "final edit is damaged (" + res.TornReason + ")"}
	}
	if res.Torn {
		m.tornAt, m.tornReason = res.End, res.TornReason
	}
	if names, err := fs.List(dir); err == nil {
		for _, nm := range names {
			if k, ok := parseManifestName(nm); ok && k != n {
				m.stale = append(m.stale, nm)
			}
		}
	}
	m.state, m.num, m.seq, m.edits = st, n, res.LastSeq, records-1
	if !readOnly {
		f, err := fs.OpenReadWrite(path)
		if err != nil {
			return nil, fmt.Errorf("tier: open %s: %w", path, err)
		}
		m.f = f
	}
	return m, nil
}

// storeEvidence names store files in dir that a new store would not
// have: segment and archive files, WAL segments holding bytes, and any
// manifest but an empty first one. "" when there is none.
func storeEvidence(fs vfs.FS, dir string) string {
	names, err := fs.List(dir)
	if err != nil {
		return ""
	}
	var found []string
	for _, nm := range names {
		switch {
		case (strings.HasPrefix(nm, "seg-") && strings.HasSuffix(nm, ".sst")) ||
			(strings.HasPrefix(nm, "cold-") && strings.HasSuffix(nm, ".parquet")):
			found = append(found, nm)
		case strings.HasPrefix(nm, "MANIFEST-"):
			b, err := readAllFile(fs, filepath.Join(dir, nm))
			if err != nil || !emptyFirstManifest(nm, b) {
				found = append(found, nm)
			}
		}
	}
	walDir := filepath.Join(dir, "wal")
	if ws, err := fs.List(walDir); err == nil {
		for _, nm := range ws {
			if st, err := fs.Stat(filepath.Join(walDir, nm)); err == nil && st.Size() > 0 {
				found = append(found, filepath.Join("wal", nm))
			}
		}
	}
	sort.Strings(found)
	if len(found) > 4 {
		found = append(found[:4], fmt.Sprintf("and %d more", len(found)-4))
	}
	return strings.Join(found, ", ")
}

// emptyFirstManifest reports whether b is MANIFEST-000001 holding only a
// checkpoint of the empty state (what a new store writes before its first
// CURRENT).
func emptyFirstManifest(name string, b []byte) bool {
	if n, _ := parseManifestName(name); n != 1 {
		return false
	}
	records, empty := 0, true
	res, err := wal.Scan(b, name, 1, func(r wal.Record) error {
		records++
		e, err := decodeEdit(r.Payload)
		if err != nil || r.Type != wal.TypeManifestCheckpoint || len(e.Add) > 0 || len(e.AddArchives) > 0 || e.DurableEpoch > 0 || e.SyncedEpoch > 0 || e.ActiveWAL > 0 {
			empty = false
		}
		return nil
	})
	return err == nil && !res.Torn && records == 1 && empty
}

// commitOpen finishes an open once the store has been validated against
// the state: the torn tail is truncated (with a warning) and stale
// manifest files are removed (each is either superseded by the live
// manifest's checkpoint or an unfinished checkpoint CURRENT never named).
func (m *Manifest) commitOpen() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tornAt >= 0 && m.f != nil {
		path := filepath.Join(m.dir, manifestName(m.num))
		m.o.Logger.Warn("tier: truncating torn manifest tail", "file", path, "offset", m.tornAt, "reason", m.tornReason)
		err := m.f.Truncate(m.tornAt)
		if err == nil {
			err = m.f.Sync()
		}
		if err != nil {
			return fmt.Errorf("tier: truncate %s: %w", path, err)
		}
		m.tornAt = -1
	}
	removed := false
	for _, nm := range m.stale {
		if err := m.fs.Remove(filepath.Join(m.dir, nm)); err == nil {
			m.o.Logger.Info("tier: removed stale manifest", "file", filepath.Join(m.dir, nm), "live", manifestName(m.num))
			removed = true
		}
	}
	m.stale = nil
	if removed {
		vfs.SyncDir(m.fs, m.dir)
	}
	return nil
}

// provablyGarbage reports whether a segment or archive file with id,
// absent from the state, is garbage beyond doubt: its id is below the
// next id the live manifest's checkpoint recorded (so it existed before
// that checkpoint, which does not list it) and no edit after the
// checkpoint names it.
func (m *Manifest) provablyGarbage(id uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return id < m.ckptNext && !m.named[id]
}

// tornTail returns the offset and reason of the torn final edit noted at
// open and not yet truncated (offset -1: none).
func (m *Manifest) tornTail() (int64, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tornAt, m.tornReason
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
	rec := wal.AppendRecord(nil, wal.TypeManifestCheckpoint, 1, encodeEdit(Edit{DurableEpoch: st.DurableEpoch, NextSegmentID: st.NextSegmentID, Add: st.Segments, Tombstones: st.Tombstones, AddArchives: st.Archives, SyncedEpoch: st.SyncedEpoch, ActiveWAL: st.ActiveWAL}))
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
