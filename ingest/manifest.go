package ingest

import (
	"io"

	"encoding/json"
	"errors"
	"fmt"
	"github.com/stratasearch/strata/vfs"
	"io/fs"
	"os"
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
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("ingest: manifest: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.Default, path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("ingest: manifest: %w", err)
	}
	return nil
}
