package ingest

import (
	"errors"
	"fmt"

	"github.com/stratasearch/strata/engine/embed"
)

// Options configures walking and chunking. The zero value means the
// defaults documented per field (EnsureDefaults fills them).
type Options struct {
	// MaxFileBytes skips files larger than this many bytes (reason
	// "oversized"). Default 1 MiB (1 << 20).
	MaxFileBytes int64
	// ChunkBytes is the size cap of a text chunk in bytes (≈ 4 bytes per
	// token, so the default 2048 ≈ 512 tokens). A Go declaration is kept
	// whole up to MaxDeclBytes. Default 2048.
	ChunkBytes int
	// MaxDeclBytes is the largest Go declaration kept as one chunk; a
	// longer one is split by the text chunker into ChunkBytes pieces that
	// all carry its symbol. Default 16384.
	MaxDeclBytes int
	// OverlapLines is the number of lines a text chunk repeats from the end
	// of the previous one (0 = none). Default 0.
	OverlapLines int
	// SkipDirs are directory base names never entered (vendored code).
	// Default vendor, node_modules, third_party (and .git, always).
	SkipDirs []string
	// ExcludePaths are directories (absolute, or relative to the working
	// directory) never entered, e.g. the store's own data directory when it
	// lies inside the indexed tree (skip reason "excluded"). Default none.
	ExcludePaths []string
	// BatchDocs is the number of chunks written per engine Upsert (one WAL
	// record, one epoch). Default 4096.
	BatchDocs int
	// Embedder, when set, embeds every chunk written (its EmbedText, not
	// its raw content) before the Upsert, EmbedBatch chunks per Embed
	// call, on a writer goroutine that overlaps reading and chunking; an
	// Upsert then carries at most 4·EmbedBatch chunks. The collection's
	// Dim must be the embedder's. Default nil: lexical-only, no vectors.
	Embedder embed.Embedder
	// EmbedBatch is the number of chunks per Embed call. Default 64.
	EmbedBatch int
	// EmbedTextBytes caps each chunk's embedding text (EmbedText).
	// Default 256 (about 60 tokens: the names, the doc comment's first
	// sentences and the signature; longer texts cost the bundled embedder
	// quadratically more).
	EmbedTextBytes int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = 1 << 20
	}
	if o.ChunkBytes == 0 {
		o.ChunkBytes = 2048
	}
	if o.MaxDeclBytes == 0 {
		o.MaxDeclBytes = 16384
	}
	if o.SkipDirs == nil {
		o.SkipDirs = []string{"vendor", "node_modules", "third_party"}
	}
	if o.BatchDocs == 0 {
		o.BatchDocs = 4096
	}
	if o.EmbedBatch == 0 {
		o.EmbedBatch = 64
	}
	if o.EmbedTextBytes == 0 {
		o.EmbedTextBytes = 256
	}
}

// Validate reports every problem with o (call after EnsureDefaults).
func (o *Options) Validate() error {
	var errs []error
	if o.MaxFileBytes < 1 {
		errs = append(errs, fmt.Errorf("ingest: MaxFileBytes = %d, want ≥ 1", o.MaxFileBytes))
	}
	if o.ChunkBytes < 64 {
		errs = append(errs, fmt.Errorf("ingest: ChunkBytes = %d, want ≥ 64", o.ChunkBytes))
	}
	if o.MaxDeclBytes < o.ChunkBytes {
		errs = append(errs, fmt.Errorf("ingest: MaxDeclBytes = %d, want ≥ ChunkBytes (%d)", o.MaxDeclBytes, o.ChunkBytes))
	}
	if o.OverlapLines < 0 {
		errs = append(errs, fmt.Errorf("ingest: OverlapLines = %d, want ≥ 0", o.OverlapLines))
	}
	if o.BatchDocs < 1 || o.BatchDocs > 100000 {
		errs = append(errs, fmt.Errorf("ingest: BatchDocs = %d, want 1..100000", o.BatchDocs))
	}
	if o.EmbedBatch < 1 || o.EmbedBatch > 4096 {
		errs = append(errs, fmt.Errorf("ingest: EmbedBatch = %d, want 1..4096", o.EmbedBatch))
	}
	if o.EmbedTextBytes < 16 {
		errs = append(errs, fmt.Errorf("ingest: EmbedTextBytes = %d, want ≥ 16", o.EmbedTextBytes))
	}
	for _, d := range o.SkipDirs {
		if d == "" {
			errs = append(errs, errors.New("ingest: SkipDirs holds an empty name"))
		}
	}
	return errors.Join(errs...)
}
