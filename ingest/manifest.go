package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// ManifestVersion is the format_version Save writes. Version 1 (no
// journal) is still read.
const ManifestVersion = 2

// Manifest records what an earlier run indexed, so a re-run skips
// unchanged files and deletes the chunks of changed and vanished ones.
//
// On disk it is a snapshot and a journal of the edits made since (see
// journal.go). The snapshot, at the manifest's path, is JSON
// {"format_version":2,"journal":G,"files":{ABS_PATH:{"size":…,
// "mtime_ns":…,"hash":"<BLAKE3 hex of the whole file>","chunks":["L1-L9",…],
// "chunk_sums":[…],"skip":"binary"|"generated"|absent,
// "chunker":"tree-sitter"|absent}}}, written atomically (temp file, fsync,
// rename, fsync dir). The journal, at path + ".journal", holds the
// entries set and the paths removed by each Save since that snapshot, in
// CRC32C-framed records (engine/tier/wal's framing) that apply only to
// the snapshot of generation G. A Save appends one record and fsyncs it;
// once the journal outgrows a quarter of the snapshot (at least
// 256 KiB), Save writes a new snapshot of generation G+1 instead.
type Manifest struct {
	FormatVersion int `json:"format_version"`
	// Journal is the generation of the journal whose edits apply on top
	// of this snapshot (0: none, as in version 1).
	Journal uint64                `json:"journal,omitempty"`
	Files   map[string]*FileEntry `json:"files"`
	// buf is the last snapshot's encoding, reused by the next.
	buf []byte
	// j is the journal's state on disk (journal.go).
	j journalState
}

// FileEntry is one indexed file. A chunk's document id is the path, "#"
// and its span (ChunkID).
type FileEntry struct {
	Size    int64    `json:"size"`
	MTimeNS int64    `json:"mtime_ns"`
	Hash    string   `json:"hash"`
	Chunks  []string `json:"chunks"`
	// ChunkSums[i] is chunkSum of the document written for Chunks[i]
	// (absent in manifests written before it): a re-chunked file's chunk
	// whose id and sum are unchanged is not written again.
	ChunkSums []string `json:"chunk_sums,omitempty"`
	// Skip is the content skip reason (binary, generated) of a file that
	// was read and not indexed, so an unchanged one is not read again.
	Skip string `json:"skip,omitempty"`
	// Chunker is Chunker(path) when the file was chunked: a file whose
	// chunker has changed since (a build with or without cgo, or an index
	// made before its language had a parser) is chunked again.
	Chunker string `json:"chunker,omitempty"`
}

// ChunkID is the document id of lines from..to of the file at path:
// "ABS_PATH#Lfrom-Lto" (stable across runs while the span is unchanged).
func ChunkID(path, frag string) string { return path + "#" + frag }

// LoadManifest reads a manifest: its snapshot and the journal of edits
// made since; a missing snapshot is an empty manifest. Errors: unreadable
// files, a malformed snapshot (naming the file), a newer format, or a
// journal damaged before its tail (*base.CorruptError naming the journal
// and the byte offset). A torn final journal record (a Save interrupted by
// a crash, never acknowledged) is dropped. A reader racing another
// process's Save may get the snapshot without the journal's latest
// edits (searchd mcp reads it only for its default roots).
func LoadManifest(path string) (*Manifest, error) {
	return loadManifest(vfs.Default, path)
}

func loadManifest(fsys vfs.FS, path string) (*Manifest, error) {
	m := &Manifest{FormatVersion: ManifestVersion, Files: map[string]*FileEntry{}}
	m.j.fs = fsys
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		m.j.saved = map[string]*FileEntry{}
		m.j.diskGen = leftoverGeneration(fsys, path)
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: manifest: %w", err)
	}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("ingest: manifest %s is malformed: %w", path, err)
	}
	if m.FormatVersion != 1 && m.FormatVersion != ManifestVersion {
		return nil, fmt.Errorf("ingest: manifest %s has format_version %d, want 1 or %d", path, m.FormatVersion, ManifestVersion)
	}
	m.FormatVersion = ManifestVersion
	if m.Files == nil {
		m.Files = map[string]*FileEntry{}
	}
	m.j.haveSnap, m.j.snapBytes = true, int64(len(b))
	m.j.broken = m.Journal == 0 // version 1: no journal applies to it yet
	if err := m.replayJournal(path); err != nil {
		return nil, err
	}
	for p, e := range m.Files {
		if e == nil {
			delete(m.Files, p) // "path": null: unknown, so read again
		}
	}
	m.j.saved = copyEntries(m.Files)
	return m, nil
}

// Save makes the manifest durable at path: one journal record holding the
// entries that differ from what is on disk (nothing when none do), or a
// new snapshot when there is none yet, the journal has outgrown it, or an
// earlier write failed or found a torn record. Every error that leaves
// the manifest not durable is returned (a superseded journal that cannot
// be removed is not one: its generation keeps it from applying); after
// one, the next Save writes a snapshot.
func (m *Manifest) Save(path string) error {
	if m.j.fs == nil {
		m.j.fs = vfs.Default
	}
	if !m.j.haveSnap || m.j.broken || m.j.saved == nil {
		return m.saveSnapshot(path)
	}
	rec, changed := m.appendEdit(m.j.rec[:0])
	m.j.rec = rec
	if !changed {
		return nil
	}
	if m.j.size+int64(len(rec)) > m.journalLimit() || len(rec) > wal.MaxPayloadBytes {
		return m.saveSnapshot(path)
	}
	return m.appendJournal(path, rec)
}

// saveSnapshot writes the whole manifest as a snapshot of the next
// generation and removes the journal it supersedes.
func (m *Manifest) saveSnapshot(path string) error {
	// Past every generation a journal on disk may have: a leftover one
	// must never match the new snapshot.
	m.Journal = max(m.Journal, m.j.diskGen) + 1
	m.j.diskGen = m.Journal
	m.FormatVersion = ManifestVersion
	m.j.broken = true // until the snapshot is known durable
	b := m.appendJSON(m.buf[:0])
	m.buf = b
	if err := vfs.WriteFileAtomic(m.j.fs, path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("ingest: manifest: %w", err)
	}
	// The old journal applies to an older generation: the snapshot just
	// written holds all of it. If it cannot be removed, the next append
	// truncates it.
	if err := m.j.fs.Remove(journalPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = err // appendJournal creates the journal afresh (truncating it) when m.j.size is 0
	}
	m.j.haveSnap, m.j.snapBytes, m.j.broken = true, int64(len(b)), false
	m.j.size, m.j.seq = 0, 0
	m.j.saved = copyEntries(m.Files)
	return nil
}

// appendJSON appends the manifest as encoding/json marshals it with HTML
// escaping off (paths sorted, the same field names and omissions), without
// reflection: a run saves the whole manifest after every pass, and
// GOROOT/src's is 5 MB.
func (m *Manifest) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"format_version":`...)
	dst = strconv.AppendInt(dst, int64(m.FormatVersion), 10)
	if m.Journal != 0 {
		dst = append(dst, `,"journal":`...)
		dst = strconv.AppendUint(dst, m.Journal, 10)
	}
	dst = append(dst, `,"files":`...)
	if m.Files == nil {
		dst = append(dst, "null"...)
		return append(dst, '}')
	}
	paths := make([]string, 0, len(m.Files))
	for p := range m.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	dst = appendEntryMap(dst, paths, m.Files)
	return append(dst, '}')
}

// appendEntryMap appends the JSON object {PATH: ENTRY, …} of files'
// entries at paths, in that order.
func appendEntryMap(dst []byte, paths []string, files map[string]*FileEntry) []byte {
	dst = append(dst, '{')
	for i, p := range paths {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = contract.AppendJSONString(dst, p)
		dst = append(dst, ':')
		dst = files[p].appendJSON(dst)
	}
	return append(dst, '}')
}

func (e *FileEntry) appendJSON(dst []byte) []byte {
	if e == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"size":`...)
	dst = strconv.AppendInt(dst, e.Size, 10)
	dst = append(dst, `,"mtime_ns":`...)
	dst = strconv.AppendInt(dst, e.MTimeNS, 10)
	dst = append(dst, `,"hash":`...)
	dst = contract.AppendJSONString(dst, e.Hash)
	dst = append(dst, `,"chunks":`...)
	dst = appendJSONList(dst, e.Chunks)
	if len(e.ChunkSums) > 0 {
		dst = append(dst, `,"chunk_sums":`...)
		dst = appendJSONList(dst, e.ChunkSums)
	}
	if e.Skip != "" {
		dst = append(dst, `,"skip":`...)
		dst = contract.AppendJSONString(dst, e.Skip)
	}
	if e.Chunker != "" {
		dst = append(dst, `,"chunker":`...)
		dst = contract.AppendJSONString(dst, e.Chunker)
	}
	return append(dst, '}')
}

// appendJSONList appends ss as a JSON array of strings (null when nil).
func appendJSONList(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = contract.AppendJSONString(dst, s)
	}
	return append(dst, ']')
}
