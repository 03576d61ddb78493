package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/internal/inspect"
	"github.com/stratasearch/strata/vfs"
)

// The manifest journal, path + ".journal": wal-framed records (CRC32C,
// consecutive sequence numbers from 1; engine/tier/wal's Scan rules
// decide torn tail versus corruption).
//
//   - seq 1, type TypeIngestJournalHeader: JSON {"journal":G}, the
//     snapshot generation the edits apply to. A journal whose G is not the
//     snapshot's is superseded (a crash between writing a new snapshot and
//     removing the old journal) and ignored.
//   - seq 2…, type TypeIngestJournalEdit: JSON {"set":{PATH:ENTRY,…},
//     "del":[PATH,…]}, applied in order: set replaces the entry, del
//     removes the path.
//
// Save appends one edit and fsyncs the journal before returning; the
// header goes out in the same write as the first edit, and the new
// journal's directory entry is fsynced with it.

// journalKind is the base.CorruptError Kind of a damaged journal.
const journalKind = "ingest manifest journal"

// journalMinLimit is the least size a journal may reach before Save
// writes a snapshot instead (a quarter of the snapshot when larger).
var journalMinLimit int64 = 256 << 10

// journalState is what a Manifest knows of its files on disk.
type journalState struct {
	fs vfs.FS
	// saved is what the snapshot and journal on disk hold: copies of the
	// entries as of the last successful Save (or load).
	saved map[string]*FileEntry
	// haveSnap: a snapshot exists (a first Save writes one).
	haveSnap  bool
	snapBytes int64
	// size is the length of the journal's intact records (0: none, so the
	// next append creates it); seq is its last sequence number.
	size int64
	seq  uint64
	// diskGen is the highest generation a snapshot or journal header on
	// disk may have (read at load, raised by each snapshot).
	diskGen uint64
	// broken: the next Save writes a snapshot (a write failed, or the
	// journal ended in a torn record that must not be appended after).
	broken bool
	// rec, set and del are the last appendEdit's record, entries set and
	// paths removed.
	rec      []byte
	set, del []string
}

func journalPath(path string) string { return path + ".journal" }

func (m *Manifest) journalLimit() int64 { return max(journalMinLimit, m.j.snapBytes/4) }

type journalHeader struct {
	Journal uint64 `json:"journal"`
}

type journalEdit struct {
	Set map[string]*FileEntry `json:"set"`
	Del []string              `json:"del"`
}

// replayJournal applies the journal of m's generation at journalPath(path)
// to m.Files.
func (m *Manifest) replayJournal(path string) error {
	m.j.diskGen = m.Journal
	jp := journalPath(path)
	data, err := vfs.ReadFile(m.j.fs, jp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ingest: manifest journal: %w", err)
	}
	m.j.diskGen = max(m.j.diskGen, headerGeneration(data))
	if m.Journal == 0 {
		return nil
	}
	errStale := errors.New("stale journal")
	corrupt := func(off int64, format string, a ...any) error {
		return &base.CorruptError{Kind: journalKind, Path: jp, Offset: off, Reason: fmt.Sprintf(format, a...)}
	}
	res, err := wal.Scan(data, jp, 1, func(r wal.Record) error {
		if r.Seq == 1 {
			var h journalHeader
			if r.Type != wal.TypeIngestJournalHeader {
				return corrupt(r.Offset, "first record has type %s, want %s", wal.TypeName(r.Type), wal.TypeName(wal.TypeIngestJournalHeader))
			}
			if err := json.Unmarshal(r.Payload, &h); err != nil {
				return corrupt(r.Offset, "malformed header: %v", err)
			}
			if h.Journal != m.Journal {
				return errStale
			}
			return nil
		}
		if r.Type != wal.TypeIngestJournalEdit {
			return corrupt(r.Offset, "record %d has type %s, want %s", r.Seq, wal.TypeName(r.Type), wal.TypeName(wal.TypeIngestJournalEdit))
		}
		var e journalEdit
		if err := json.Unmarshal(r.Payload, &e); err != nil {
			return corrupt(r.Offset, "malformed edit: %v", err)
		}
		for p, fe := range e.Set {
			m.Files[p] = fe
		}
		for _, p := range e.Del {
			delete(m.Files, p)
		}
		return nil
	})
	if errors.Is(err, errStale) {
		return nil // superseded by the snapshot; the next append replaces it
	}
	if err != nil {
		var ce *base.CorruptError
		if errors.As(err, &ce) {
			if ce.Kind == wal.KindRecordLog {
				ce.Kind = journalKind
			}
			return err
		}
		return fmt.Errorf("ingest: manifest journal: %w", err)
	}
	m.j.size, m.j.seq = res.End, res.LastSeq
	if res.Torn {
		m.j.broken = true
	}
	return nil
}

// headerGeneration is the generation in a journal's header record (0 when
// it has none intact).
func headerGeneration(data []byte) uint64 {
	var gen uint64
	wal.Scan(data, "", 1, func(r wal.Record) error {
		var h journalHeader
		if r.Type == wal.TypeIngestJournalHeader && json.Unmarshal(r.Payload, &h) == nil {
			gen = h.Journal
		}
		return errStop
	})
	return gen
}

var errStop = errors.New("stop")

// leftoverGeneration is headerGeneration of the journal beside a missing
// snapshot (0 when there is none or it cannot be read).
func leftoverGeneration(fsys vfs.FS, path string) uint64 {
	data, err := vfs.ReadFile(fsys, journalPath(path))
	if err != nil {
		return 0
	}
	return headerGeneration(data)
}

// appendEdit appends to dst the journal record of what differs between
// m.Files and m.j.saved; changed is false when nothing does.
func (m *Manifest) appendEdit(dst []byte) (rec []byte, changed bool) {
	set, del := m.j.set[:0], m.j.del[:0]
	defer func() { m.j.set, m.j.del = set, del }()
	for p, e := range m.Files {
		if s, ok := m.j.saved[p]; !ok || !sameEntry(s, e) {
			set = append(set, p)
		}
	}
	for p := range m.j.saved {
		if _, ok := m.Files[p]; !ok {
			del = append(del, p)
		}
	}
	if len(set) == 0 && len(del) == 0 {
		return dst, false
	}
	slices.Sort(set)
	slices.Sort(del)
	var payload []byte
	if m.j.size == 0 {
		payload = fmt.Appendf(nil, `{"journal":%d}`, m.Journal)
		dst = wal.AppendRecord(dst, wal.TypeIngestJournalHeader, 1, payload)
	}
	payload = append(payload[:0], `{"set":`...)
	payload = appendEntryMap(payload, set, m.Files)
	payload = append(payload, `,"del":`...)
	payload = appendJSONList(payload, del)
	payload = append(payload, '}')
	seq := m.j.seq + 1
	if m.j.size == 0 {
		seq = 2
	}
	return wal.AppendRecord(dst, wal.TypeIngestJournalEdit, seq, payload), true
}

// appendJournal writes rec (appendEdit's record, with the header when the
// journal is new) to the journal and fsyncs it.
func (m *Manifest) appendJournal(path string, rec []byte) (err error) {
	jp := journalPath(path)
	fresh := m.j.size == 0
	defer func() {
		if err != nil {
			m.j.broken = true
			err = fmt.Errorf("ingest: manifest journal: %w", err)
		}
	}()
	var f vfs.File
	if fresh {
		// Create truncates a superseded journal in place: the snapshot
		// that supersedes it must be durable first (its rename may not be,
		// after a failed directory sync and a reload).
		if err = vfs.SyncDir(m.j.fs, filepath.Dir(jp)); err != nil {
			return err
		}
		f, err = m.j.fs.Create(jp)
	} else {
		f, err = m.j.fs.OpenReadWrite(jp)
	}
	if err != nil {
		return err
	}
	if _, err = f.Write(rec); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if fresh {
		if err = vfs.SyncDir(m.j.fs, filepath.Dir(jp)); err != nil {
			return err
		}
	}
	m.j.size += int64(len(rec))
	if fresh {
		m.j.seq = 2
	} else {
		m.j.seq++
	}
	for _, p := range m.j.set {
		m.j.saved[p] = copyEntry(m.Files[p])
	}
	for _, p := range m.j.del {
		delete(m.j.saved, p)
	}
	return nil
}

func sameEntry(a, b *FileEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Size == b.Size && a.MTimeNS == b.MTimeNS && a.Hash == b.Hash && a.Skip == b.Skip && a.Chunker == b.Chunker &&
		(a.Chunks == nil) == (b.Chunks == nil) && slices.Equal(a.Chunks, b.Chunks) &&
		(a.ChunkSums == nil) == (b.ChunkSums == nil) && slices.Equal(a.ChunkSums, b.ChunkSums)
}

// copyEntry copies e's fields; the slices are shared (the indexer
// replaces an entry's slices, it never writes into them).
func copyEntry(e *FileEntry) *FileEntry {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

func copyEntries(files map[string]*FileEntry) map[string]*FileEntry {
	out := make(map[string]*FileEntry, len(files))
	for p, e := range files {
		out[p] = copyEntry(e)
	}
	return out
}

// InspectJournal describes a manifest journal held in b: its generation
// (field "journal"), and per record its type and a summary (entries set,
// paths removed). Damage is reported as engine/tier/wal's InspectLog
// does (a torn tail as a warning, damage before intact records as a
// problem at its offset); a record of the wrong type or undecodable JSON
// is a problem at its record's offset. It never fails.
func InspectJournal(b []byte) *inspect.Info {
	in := wal.InspectLog(b, 1, func(in *inspect.Info, r wal.Record) {
		rec := inspect.Record{Offset: r.Offset, Length: int64(wal.HeaderSize + len(r.Payload)), Seq: r.Seq, Type: wal.TypeName(r.Type)}
		want := wal.TypeIngestJournalEdit
		if r.Seq == 1 {
			want = wal.TypeIngestJournalHeader
		}
		if r.Type != want {
			in.Problemf(r.Offset, "record type %s, want %s", wal.TypeName(r.Type), wal.TypeName(want))
		}
		if r.Type == wal.TypeIngestJournalHeader {
			var h journalHeader
			if err := json.Unmarshal(r.Payload, &h); err != nil {
				in.Problemf(r.Offset, "malformed header: %v", err)
				rec.Summary = "undecodable: " + err.Error()
			} else {
				in.Add("journal", h.Journal, r.Offset)
				rec.Summary = fmt.Sprintf("generation %d", h.Journal)
			}
		} else {
			var e journalEdit
			if err := json.Unmarshal(r.Payload, &e); err != nil {
				in.Problemf(r.Offset, "malformed edit: %v", err)
				rec.Summary = "undecodable: " + err.Error()
			} else {
				rec.Summary = fmt.Sprintf("%d set, %d removed", len(e.Set), len(e.Del))
			}
		}
		in.Records = append(in.Records, rec)
	})
	in.Format = "ingest-manifest-journal"
	return in
}
