package engine

// The cold tier, snapshots and backups of a collection (issue #7 "Cold
// tier", "Snapshots", "Backup and restore"; issue #8 Archive / Promote /
// Snapshot). The storage side is engine/tier (cold.go, backup.go).

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
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/highlight"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/vfs"
)

// ArchiveOptions selects what Collection.Archive moves to the cold tier.
type ArchiveOptions struct {
	// Segments lists warm segment ids (CollectionStats / tier manifest) to
	// archive together. Empty: the Oldest oldest warm segments.
	Segments []uint64
	// Oldest is the number of oldest warm segments archived when Segments
	// is empty: those whose oldest row is oldest (tier.ArchiveOptions).
	// Default 1.
	Oldest int
	// OmitVectors keeps only the 18-byte codes, not the exact vectors:
	// about 4·Dim bytes less per vector, but cold dense search ranks by
	// the codes' reconstructions and Promote (and Get) return those
	// reconstructions instead of the original vectors. Default false.
	OmitVectors bool
	// Nlist is the cold codec's coarse quantizer size (≤ 65536). Default
	// clamp(√n, 1, 1024) for n vectors.
	Nlist int
}

// Archive moves warm segments to one cold Parquet archive (tier.Store.
// Archive: zstd Parquet with an 18-byte IVF-PQ code per vector and, by
// default, the exact vectors; temp file → fsync → rename → fsync dir →
// one manifest edit). Archived documents stay visible to Get, deletes,
// upserts and DeleteByNamespace / DeleteBySource, but searches only see
// them when contract.Query.Tiers includes contract.Cold. Queries and
// writes continue meanwhile. It returns the archive id. Errors:
// ErrNotFound (no such warm segment, or none to archive), ErrClosed, the
// context's error, I/O errors.
func (c *Collection) Archive(ctx context.Context, o ArchiveOptions) (uint64, error) {
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	id, err := c.store.Archive(ctx, tier.ArchiveOptions{Segments: o.Segments, Oldest: o.Oldest,
		OmitVectors: o.OmitVectors, Nlist: o.Nlist})
	if errors.Is(err, tier.ErrNoSuchArchive) {
		err = fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return 0, fmt.Errorf("engine: collection %q: archive: %w", c.name, err)
	}
	return id, nil
}

// Promote turns cold archive id back into a warm segment with the same
// ids, contents, metadata, versions and (unless the archive omitted them)
// vectors; deletes and upserts made while it runs are carried over.
// progress, if non-nil, is called with (done, total) steps as it goes, so
// a server job can report it. It returns the new warm segment's id.
// Errors: ErrNotFound (no such archive), ErrClosed, the context's error,
// I/O errors.
func (c *Collection) Promote(ctx context.Context, archiveID uint64, progress func(done, total int)) (uint64, error) {
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	id, err := c.store.Promote(ctx, archiveID, progress)
	if errors.Is(err, tier.ErrNoSuchArchive) {
		err = fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	if err != nil {
		return 0, fmt.Errorf("engine: collection %q: promote: %w", c.name, err)
	}
	return id, nil
}

// Archives lists the collection's cold archives (id, file, rows, bytes).
func (c *Collection) Archives() []tier.ArchiveMeta { return c.store.Archives() }

// LoadTexts loads the content of every row of the collection's warm
// segments whose text is stored lazily (Options.SegmentFetch), so later
// queries neither fetch nor decode text blocks. Errors: the first
// block's that fails to load.
func (c *Collection) LoadTexts() error {
	sn := c.store.Snapshot()
	defer sn.Close()
	for _, w := range sn.WarmSegments() {
		if err := tier.LoadTexts(w.Docs); err != nil {
			return fmt.Errorf("engine: collection %q: %w", c.name, err)
		}
	}
	return nil
}

// WarmSegments lists the collection's warm segments (id, file, rows,
// bytes), the candidates for Archive.
func (c *Collection) WarmSegments() []tier.SegmentMeta { return c.store.WarmSegments() }

// StorageStats reports, per tier (hot, warm, cold), rows, vectors, bytes,
// bytes per vector and α_storage = bytes / raw text bytes.
func (c *Collection) StorageStats() []tier.TierStats {
	sn := c.store.Snapshot()
	defer sn.Close()
	return sn.StorageStats()
}

// --- Cold search (the hook in search.go) ---

// coldQuery is the part of one search's state the cold hook extends.
type coldQuery struct {
	sn       *tier.Snapshot
	infos    []verInfo
	views    []bm25.View
	bases    []uint32
	keyOf    func(*tier.Document) (uint32, bool)
	allowDoc map[*tier.Document]struct{}
	// statsAllow (tenant-scoped queries only) gets one tenancy bitmap per archive:
	// the rows the BM25 statistics count (compileTenancy).
	statsAllow []*roaring.Bitmap
}

// addCold extends a search with the snapshot's cold archives (called by
// Search only when q.Tiers includes cold). Their rows get keys after
// every hot and warm key; each archive becomes one more BM25 view (global
// statistics then span the cold rows too), restricted during traversal to
// the rows live at the snapshot epoch that pass scope, ACL and filter
// (evaluated per row with Filter.Match); the dense retriever's snapshot
// becomes sn.WithCold(), whose SearchVector adds the cold ADC scan with
// exact rerank under the same visibility and filter check. Cold hits get
// the same envelopes as any other.
func (c *Collection) addCold(q *contract.Query, cq *coldQuery) error {
	arch := cq.sn.ColdArchives()
	if len(arch) == 0 {
		return nil
	}
	cats, err := c.cold.Get(arch)
	if err != nil {
		return err
	}
	pred := compilePredicate(q, true)
	tenancy := compileTenancy(q)
	infos := make([]verInfo, len(cq.infos), len(cq.infos)+sumRows(cats))
	copy(infos, cq.infos)
	coldBase := make([]uint32, len(cats))
	byDoc := map[*tier.Document]uint32{}
	segs := make([]*bm25.Segment, len(cats))
	for i, cat := range cats {
		coldBase[i] = uint32(len(infos))
		segs[i] = cat.Seg
		for r := range cat.Rows {
			byDoc[cat.Rows[r].Doc] = uint32(len(infos))
			infos = append(infos, cat.Rows[r])
		}
	}
	var stats []*roaring.Bitmap
	if cq.statsAllow != nil {
		stats = make([]*roaring.Bitmap, len(cats))
		for i := range stats {
			stats[i] = roaring.New()
		}
	}
	// The tier knows which cold rows are live at the epoch.
	views, err := cq.sn.LexicalViews(tier.LexicalSets{Cold: segs}, func(i int, r uint32) bool {
		row := &cats[i].Rows[r]
		if stats != nil && (tenancy == nil || tenancy(row)) {
			stats[i].Add(r)
		}
		if pred != nil && !pred(row, coldBase[i]+r) {
			return false
		}
		if cq.allowDoc != nil {
			cq.allowDoc[row.Doc] = struct{}{}
		}
		return true
	})
	if err != nil {
		return err
	}
	cq.views = append(cq.views, views...)
	cq.bases = append(cq.bases, coldBase...)
	if stats != nil {
		cq.statsAllow = append(cq.statsAllow, stats...)
	}
	inner := cq.keyOf
	cq.keyOf = func(d *tier.Document) (uint32, bool) {
		if k, ok := byDoc[d]; ok {
			return k, true
		}
		return inner(d)
	}
	cq.infos = infos
	cq.sn = cq.sn.WithCold()
	return nil
}

func sumRows(cats []*catalog.Cold) int {
	n := 0
	for _, c := range cats {
		n += len(c.Rows)
	}
	return n
}

// --- Snapshots ---

// Snapshot is a point-in-time, read-only view of a collection: every
// Search and Get on it sees exactly the versions live at its Epoch,
// whatever is written, flushed, compacted, archived or promoted
// meanwhile (the tier pins the epoch and the segment set). Long benchmark
// runs use one to get repeatable results. Known limitation: BM25
// statistics (N, df, average length) are collected over whole segments,
// so hot-tier versions written after the snapshot can shift lexical and
// hybrid scores (never the set of visible versions; dense scores are
// exact). Close it: an open Snapshot
// holds back compaction of the versions it sees and the deletion of
// files it uses. Safe for concurrent use.
type Snapshot struct {
	c      *Collection
	sn     *tier.Snapshot
	closed atomic.Bool
}

// Snapshot pins the collection's newest visible epoch. Errors: ErrClosed.
func (c *Collection) Snapshot() (*Snapshot, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	return &Snapshot{c: c, sn: c.store.Snapshot()}, nil
}

// Epoch returns the pinned epoch.
func (s *Snapshot) Epoch() uint64 { return s.sn.Epoch() }

// Search answers q at the snapshot's epoch, as Collection.Search does
// (validation, tiers, fusion, verification, staging, collapse and
// highlights) except that a Query.Cursor is rejected: page a Snapshot by
// raising TopK instead (its results never move). Errors: as
// Collection.Search, ErrClosed after Close.
func (s *Snapshot) Search(ctx context.Context, q contract.Query) (contract.Result, error) {
	if s.closed.Load() {
		return contract.Result{}, ErrClosed
	}
	if q.Cursor != "" {
		return contract.Result{}, &contract.ValidationError{Errors: []contract.FieldError{{
			Loc: []any{"query", "cursor"}, InputValue: q.Cursor, ErrorType: contract.ErrTypeInvalidFormat,
			Message: "a Snapshot search takes no cursor (its results are fixed: raise top_k instead)", ExpectedDomain: "empty"}}}
	}
	dq := q
	dq.EnsureDefaults()
	// The plan (plan.go) reads a clone of this snapshot: same epoch, same
	// view; one retrieval, shaped (shape.go) for collapse.
	if err := s.c.check(ctx); err != nil {
		return contract.Result{}, err
	}
	sh := &shaper{pin: newPinned(s.sn.Clone()), topK: dq.TopK, collapse: dq.Collapse, seen: map[uint64]bool{}}
	defer sh.pin.release()
	iq := q
	iq.Collapse, iq.Highlight = 0, false
	if sh.collapse > 0 {
		iq.TopK = min(contract.MaxTopK, 4*dq.TopK)
	}
	pl, err := s.c.newPlan(ctx, iq, sh.pin, false, false)
	if err != nil {
		return contract.Result{}, err
	}
	r, err := pl.retrieve(ctx, pl.q.TopK, pl.q.Budget)
	if err != nil {
		return contract.Result{}, err
	}
	res, _, err := pl.finish(r, sh.page(r.hits))
	if err != nil {
		return res, err
	}
	if dq.Highlight {
		hl := highlight.NewSyntax(s.c.an, dq.Text, dq.Syntax == contract.SyntaxOperators)
		for i := range res.Hits {
			res.Hits[i].Highlights = hl.Spans(res.Hits[i].Content)
		}
	}
	return res, nil
}

// Get returns id's version at the snapshot's epoch, or ErrNotFound.
func (s *Snapshot) Get(ctx context.Context, id string) (contract.Document, error) {
	if s.closed.Load() {
		return contract.Document{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return contract.Document{}, err
	}
	d, _, ok := s.sn.Get(id)
	if !ok {
		return contract.Document{}, fmt.Errorf("%w: document %q", ErrNotFound, id)
	}
	meta, err := catalog.DecodeMeta(d.Metadata)
	if err != nil {
		return contract.Document{}, fmt.Errorf("engine: document %q: %w", id, err)
	}
	return fromTier(d, meta)
}

// GetVerifiable is Get, also reporting whether the version was written
// with VerifiableSources (by ingestion, or an embedded program vouching
// for its sources); false for a version written without it (an API
// caller's, whatever source_uri it names). The files ingestion indexed
// are the file:// sources of such versions. Errors: as Get.
func (s *Snapshot) GetVerifiable(ctx context.Context, id string) (contract.Document, bool, error) {
	if s.closed.Load() {
		return contract.Document{}, false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return contract.Document{}, false, err
	}
	d, _, ok := s.sn.Get(id)
	if !ok {
		return contract.Document{}, false, fmt.Errorf("%w: document %q", ErrNotFound, id)
	}
	meta, err := catalog.DecodeMeta(d.Metadata)
	if err != nil {
		return contract.Document{}, false, fmt.Errorf("engine: document %q: %w", id, err)
	}
	doc, err := fromTier(d, meta)
	return doc, d.Metadata[metaVerifiable] != "", err
}

// IDs returns the ids live at the snapshot's epoch (unordered).
func (s *Snapshot) IDs() []string { return s.sn.LiveIDs() }

// DocMeta is one document version as Snapshot.ScanMeta reports it:
// everything a listing of the collection needs, without the content or
// the vector. Its metadata values are decoded on demand (Value). Valid
// only during the callback that received it.
type DocMeta struct {
	ID        string
	SourceURI string
	Namespace string
	Trust     contract.Trust
	// ACL is shared with the stored version: do not modify it.
	ACL []string
	// Verifiable: the version was written with VerifiableSources (as
	// GetVerifiable reports).
	Verifiable bool

	meta map[string]string // the stored (encoded) metadata, shared
}

// Value decodes the metadata value of key, as Get would report it: ok is
// false when the version has no such key (reserved keys are never
// reported). Errors: a stored value that does not decode.
func (m *DocMeta) Value(key string) (v contract.Value, ok bool, err error) {
	raw, ok := m.meta[key]
	if !ok || strings.HasPrefix(key, reservedMetaPrefix) {
		return contract.Value{}, false, nil
	}
	v, err = catalog.DecodeValue(raw)
	if err != nil {
		return contract.Value{}, false, fmt.Errorf("engine: document %q: metadata %q: %w", m.ID, key, err)
	}
	return v, true, nil
}

// ScanMeta calls f with the metadata of every version live at the
// snapshot (the set IDs names, unordered) until f returns false. It reads
// the stored versions in place, with no lookup by id, no copy of the
// content and no decoding of metadata f does not ask for (DocMeta.Value):
// O(live versions) and one allocation-free step per version, where a
// GetVerifiable per id costs a lookup, a metadata decode and a copy each.
// The *DocMeta is reused between calls. Errors: ErrClosed; ctx's error
// (checked every 256 versions), after which f is not called again.
func (s *Snapshot) ScanMeta(ctx context.Context, f func(*DocMeta) bool) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	n := 0
	var m DocMeta
	s.sn.ScanLive(func(d *tier.Document) bool {
		if n++; n%256 == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		m = DocMeta{ID: d.ID, SourceURI: d.SourceURI, Namespace: d.Namespace, Trust: trustFromTier(d.Trust), ACL: d.ACL,
			Verifiable: d.Metadata[metaVerifiable] != "", meta: d.Metadata}
		return f(&m)
	})
	return err
}

// Close releases the snapshot. Idempotent.
func (s *Snapshot) Close() error {
	if !s.closed.Swap(true) {
		s.sn.Close()
	}
	return nil
}

// --- Backup and restore ---

// BackupStats reports what a backup wrote (per collection).
type BackupStats = tier.BackupStats

// Backup writes a consistent copy of the collection into dir (empty or
// absent), laid out as a database holding only this collection, while
// reads and writes continue: restoring is engine.Open(dir). Every write
// acknowledged before Backup was called is in the copy; later ones may
// be, always as a prefix of the epoch order. Segment and archive files
// are hard-linked where possible (they are immutable), the WAL is copied,
// and a fresh manifest is written (tier.Store.Backup). Errors: ErrClosed,
// a non-empty dir, the context's error, I/O errors (delete a partial dir).
func (c *Collection) Backup(ctx context.Context, dir string) (BackupStats, error) {
	if err := c.check(ctx); err != nil {
		return BackupStats{}, err
	}
	if err := c.db.checkBackupDir(dir); err != nil {
		return BackupStats{}, err
	}
	return c.backupInto(ctx, dir)
}

// backupInto writes the collection's config and store under
// dir/collections/<name>/.
func (c *Collection) backupInto(ctx context.Context, dir string) (BackupStats, error) {
	cdir := filepath.Join(dir, collectionsDir, c.name)
	fs := c.db.o.FS
	if err := vfs.MkdirAllDurable(fs, cdir); err != nil {
		return BackupStats{}, fmt.Errorf("engine: backup %q: %w", c.name, err)
	}
	cfg, err := vfs.ReadFile(fs, filepath.Join(c.dir, configFile))
	if err != nil {
		return BackupStats{}, fmt.Errorf("engine: backup %q: %w", c.name, err)
	}
	if err := vfs.WriteFileAtomic(fs, filepath.Join(cdir, configFile), func(w io.Writer) error {
		_, err := w.Write(cfg)
		return err
	}); err != nil {
		return BackupStats{}, fmt.Errorf("engine: backup %q: %w", c.name, err)
	}
	bs, err := c.store.Backup(ctx, filepath.Join(cdir, storeDir))
	if err != nil {
		return bs, fmt.Errorf("engine: backup %q: %w", c.name, err)
	}
	return bs, nil
}

// checkBackupDir refuses a backup directory that exists and has entries.
func (db *DB) checkBackupDir(dir string) error {
	if names, err := db.o.FS.List(dir); err == nil && len(names) > 0 {
		return fmt.Errorf("engine: backup directory %s is not empty", dir)
	}
	return nil
}

// Backup writes a copy of every collection into dir (empty or absent);
// each collection is consistent on its own (its own epoch, see
// Collection.Backup). Restoring is engine.Open(dir). It returns the stats
// per collection name. With a collection unavailable (Unavailable) it
// refuses (ErrUnavailable) rather than write a backup that silently lacks
// it.
func (db *DB) Backup(ctx context.Context, dir string) (map[string]BackupStats, error) {
	if bad := db.Unavailable(); len(bad) > 0 {
		var names []string
		for n := range bad {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%w: %s could not be opened; a backup would lack it", ErrUnavailable, strings.Join(names, ", "))
	}
	if err := db.checkBackupDir(dir); err != nil {
		return nil, err
	}
	out := map[string]BackupStats{}
	for _, name := range db.Collections() {
		c, err := db.Collection(name)
		if err != nil {
			return out, err
		}
		if err := c.check(ctx); err != nil {
			return out, err
		}
		bs, err := c.backupInto(ctx, dir)
		if err != nil {
			return out, err
		}
		out[name] = bs
	}
	return out, nil
}
