package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/vfs"
)

// ManifestVersion is the manifest's format_version.
const ManifestVersion = 1

// Manifest records what an earlier run indexed, so a re-run skips
// unchanged files and deletes the chunks of changed and vanished ones.
// On disk: JSON {"format_version":1,"files":{ABS_PATH:{"size":…,
// "mtime_ns":…,"hash":"<BLAKE3 hex of the whole file>","chunks":["L1-L9",…],
// "skip":"binary"|"generated"|absent,"chunker":"tree-sitter"|absent}}},
// written atomically (temp file, fsync, rename, fsync dir).
type Manifest struct {
	FormatVersion int                   `json:"format_version"`
	Files         map[string]*FileEntry `json:"files"`
	// buf is the last Save's encoding, reused by the next (a run saves
	// after every pass, and GOROOT/src's manifest is 5 MB).
	buf []byte
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

// LoadManifest reads a manifest; a missing file is an empty manifest.
// Errors: unreadable, malformed (naming the file) or a newer format.
func LoadManifest(path string) (*Manifest, error) {
	m := &Manifest{FormatVersion: ManifestVersion, Files: map[string]*FileEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: manifest: %w", err)
	}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("ingest: manifest %s is malformed: %w", path, err)
	}
	if m.FormatVersion != ManifestVersion {
		return nil, fmt.Errorf("ingest: manifest %s has format_version %d, want %d", path, m.FormatVersion, ManifestVersion)
	}
	if m.Files == nil {
		m.Files = map[string]*FileEntry{}
	}
	return m, nil
}

// Save writes the manifest atomically to path (temp file, fsync, rename,
// directory fsync: vfs.WriteFileAtomic); every step's error is returned.
func (m *Manifest) Save(path string) error {
	b := m.appendJSON(m.buf[:0])
	m.buf = b
	if err := vfs.WriteFileAtomic(vfs.Default, path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("ingest: manifest: %w", err)
	}
	return nil
}

// appendJSON appends the manifest as encoding/json marshals it with HTML
// escaping off (paths sorted, the same field names and omissions), without
// reflection: a run saves the whole manifest after every pass, and
// GOROOT/src's is 5 MB.
func (m *Manifest) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"format_version":`...)
	dst = strconv.AppendInt(dst, int64(m.FormatVersion), 10)
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
	dst = append(dst, '{')
	for i, p := range paths {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = contract.AppendJSONString(dst, p)
		dst = append(dst, ':')
		dst = m.Files[p].appendJSON(dst)
	}
	return append(dst, "}}"...)
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
