package tier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/vfs"
)

// ErrCorrupt is wal.ErrCorrupt: every corruption error of the tier (WAL,
// manifest, batch payloads) matches errors.Is(err, ErrCorrupt) and names
// the file and byte offset.
var ErrCorrupt = wal.ErrCorrupt

// ErrReadOnly is wrapped by every write error after a WAL or manifest
// write/fsync failed: the store refuses writes until reopened (and
// recovered from the WAL), never retrying an fsync and assuming success.
var ErrReadOnly = errors.New("tier: store is read-only after an I/O failure")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("tier: store closed")

// Options configures a Store.
type Options struct {
	// FS is the file system. Default vfs.Default.
	FS vfs.FS
	// Dir is the store directory (holds LOCK, CURRENT, MANIFEST-*, wal/).
	// Required.
	Dir string
	// Dim is the vector dimension d. Required, ≥ 1. Documents carry either
	// no vector or exactly d float32s.
	Dim int
	// Metric ranks vector search. Default L2.
	Metric Metric
	// Sync is the WAL acknowledgement policy. Default wal.SyncAlways.
	Sync wal.SyncPolicy
	// SyncInterval is the fsync period under wal.SyncInterval. Default
	// 10ms.
	SyncInterval time.Duration
	// WALSegmentSizeBytes is the WAL segment rotation size. Default 64 MiB.
	WALSegmentSizeBytes int64
	// ManifestCheckpointEdits: see ManifestOptions. Default 128.
	ManifestCheckpointEdits int
	// Lexical, if set, receives every new MemTable version (the hook for
	// the in-memory BM25 side; see LexicalIndexer).
	Lexical LexicalIndexer
	// NewLexical, if set, makes one LexicalIndexer per MemTable (replacing
	// Lexical): a flush starts a new MemTable whose version numbers restart
	// at 0, so it gets a fresh indexer; Snapshot.MemLexical returns the one
	// of the snapshot's MemTable.
	NewLexical func() LexicalIndexer
	// LexicalSegments, if set, builds the BM25 section of every new warm
	// segment (see LexicalSegmentBuilder).
	LexicalSegments LexicalSegmentBuilder
	// Logger receives recovery warnings. Default slog.Default().
	Logger *slog.Logger

	// MemTableSizeBytes: once the MemTable holds about this many bytes
	// (ids + contents + vectors + 64 per version), a background flush
	// turns it into a warm segment. Default 0: no automatic flush (only
	// Store.Flush). A lexical hook that must survive flushes uses
	// NewLexical and LexicalSegments. A background flush defers the
	// segment's vector index: it writes a flat section (searched
	// exactly), and the index is built afterwards, in the background or
	// by the next Flush (deferred.go; BuildThreads).
	MemTableSizeBytes int64
	// SegmentIndex is the vector index Flush and Compact build for new
	// warm segments: "hnsw" (graph over the rows' vectors; SegmentM,
	// SegmentEfConstruction, SegmentEfSearch) or "ivfpq" (engine/ivfpq:
	// IVF over k-means lists with PQ codes, refined with the segment's
	// exact vectors; the IVF* options). Default "hnsw". Each segment
	// records its own index kind in its file (doc.go "Warm segment
	// file"), so a store opened with another SegmentIndex still reads
	// every existing segment, and stores mixing kinds work; the option
	// only selects what new segments get. A segment a background flush
	// wrote without its index (flat, MemTableSizeBytes) gets the index
	// this option names when the deferred build runs; for "ivfpq" only
	// if it has IVFMinRows vectors.
	SegmentIndex SegmentIndexType
	// IVF-PQ parameters of warm segments (SegmentIndex "ivfpq"; Jégou,
	// Douze, Schmid, "Product quantization for nearest neighbor search",
	// TPAMI 2011, with FAISS IndexRefineFlat refinement):
	//
	//   - IVFNlist is nlist, the number of coarse lists. Default (0):
	//     chosen per segment at build, clamp(round(4·√n), 1, 4096) for n
	//     vectors (the low end of FAISS's 4·√n … 16·√n guideline, so
	//     segments of a few thousand vectors keep ≥ 8 vectors per list).
	//     At most 65536; clamped to n.
	//   - IVFM is M, the number of PQ sub-quantizers; Dim must be
	//     divisible by it. Default (0): the largest divisor of Dim that is
	//     ≤ max(1, Dim/8) for 8-bit codes, ≤ max(1, Dim/4) for 4-bit ones
	//     (both Dim/8 bytes of code per vector: 64 for d = 512).
	//   - IVFNbits is bits per sub-quantizer code: 8 (ADC scan) or 4
	//     (fast-scan). Default 8.
	//   - IVFNprobe is the lists probed per query. Default (0): per
	//     segment max(1, nlist/8).
	//   - IVFKFactor is the refine factor: the best k·IVFKFactor PQ
	//     candidates are rescored with the exact float32 vectors. Default
	//     4. Hits therefore carry exact distances, comparable with the
	//     MemTable's and HNSW segments'.
	//   - IVFMinRows: a segment with fewer vectors gets no IVF-PQ index
	//     but an exact brute-force scan ("flat" section): PQ codebooks
	//     need 2^IVFNbits centroids each and k-means wants tens of points
	//     per centroid, so tiny segments would get poor codes, and an
	//     exact scan of < 1024 vectors costs no more than an IVF probe
	//     plus refine. Default 1024; at least 2^IVFNbits.
	//   - IVFSeed seeds training (k-means subsampling and
	//     initialisation), so a build is deterministic. Default 0.
	IVFNlist   int
	IVFM       int
	IVFNbits   int
	IVFNprobe  int
	IVFKFactor int
	IVFMinRows int
	IVFSeed    uint64
	// SegmentM, SegmentEfConstruction, SegmentEfSearch are the HNSW
	// parameters of warm segments (Malkov & Yashunin 2018). Defaults 16,
	// 100, 64.
	SegmentM              int
	SegmentEfConstruction int
	SegmentEfSearch       int
	// BuildThreads is the number of goroutines that build a segment's
	// vector index in the background: a compaction's, and a deferred
	// index build's while writes are arriving. Default 1. A background
	// flush builds no index (MemTableSizeBytes): the deferred build
	// (deferred.go) starts once writes pause for 100 ms (or once
	// CompactFanIn segments wait for theirs) and runs in steps of 8,192
	// HNSW vectors, each of which uses BuildThreads goroutines if a write
	// arrived in the last 100 ms, else max(BuildThreads, GOMAXPROCS).
	// An explicit Flush uses
	// max(BuildThreads, GOMAXPROCS) throughout, for its own segment and
	// for the deferred builds it waits for (so do merges it waits for).
	// Such graphs depend on scheduling; a graph built by one goroutine
	// throughout is reproducible.
	BuildThreads int
	// CompactDeadFraction is θ_compact: a segment whose dead-row fraction
	// ρ_dead exceeds it is rewritten by compaction. Default 0.2.
	CompactDeadFraction float64
	// CompactMaxSegments is the number of similar-sized warm segments (a
	// size tier, compact.go) background compaction lets accumulate: a
	// tier with more is merged, CompactFanIn segments at a time. An
	// explicit Store.Compact merges while more than CompactMaxSegments
	// segments exist in all. Default 8.
	CompactMaxSegments int
	// CompactFanIn is the most segments one merge takes, which bounds
	// each compaction's work (compact.go). Default 8; at least 2.
	CompactFanIn int
	// IndexedMetadata lists the metadata keys for which each warm segment
	// keeps per-value roaring bitmaps (built in memory when the segment
	// is opened), used by Snapshot.SearchVectorWhere. Default none.
	IndexedMetadata []string
	// Fetch, if set, makes format version 3 and 4 segments open without their
	// text section present: each row's content is fetched through it and
	// decoded when Document.Text first asks (RangeFetcher). For readers
	// whose segment files are partial copies of remote objects.
	Fetch RangeFetcher
	// AutoCompact runs compaction in the background (compact.go: size
	// tiers, dead fractions, and the segment count at SlowdownSegments),
	// in goroutines beside the flushes. Default false (call
	// Store.Compact).
	AutoCompact bool

	// Write backpressure (backpressure.go). Past SlowdownSegments warm
	// segments, or MemTables (the active one plus any frozen by a running
	// or failed flush) over 2·MemTableSizeBytes (flushes not keeping up,
	// or failing), every Apply first sleeps SlowdownDelay; past
	// StopSegments, or MemTables over 4·MemTableSizeBytes, Apply
	// blocks (after kicking a background flush and the merges) until the
	// pressure falls below the stop bound, for at most StallTimeout,
	// then fails with ErrWriteStall without writing anything. Defaults
	// (RocksDB's level-0 slowdown / stop triggers): SlowdownSegments
	// max(20, 2·CompactMaxSegments), StopSegments max(36,
	// 4·CompactMaxSegments), SlowdownDelay 1ms, StallTimeout 60s. A
	// negative StopSegments turns backpressure off. Without AutoCompact
	// only an explicit Compact lowers the segment count.
	SlowdownSegments int
	StopSegments     int
	SlowdownDelay    time.Duration
	StallTimeout     time.Duration

	// AcceptWALLoss opens a store whose WAL lacks records the manifest
	// knows were acknowledged (a truncated or deleted WAL segment, or a
	// damaged synced record), instead of refusing with ErrCorrupt: the
	// loss is logged as an error, the surviving records are flushed, and
	// new writes get epochs above every epoch acknowledged before, so none
	// is handed out twice. An operator's last resort; default false.
	AcceptWALLoss bool

	// ManualIndex: the vector indexes that background flushes defer
	// (deferred.go) are built only by an explicit Flush, never in the
	// background, so the segment set changes only when asked (a read
	// replica serving a published segment set as it is, with AutoCompact
	// off). Default false.
	ManualIndex bool

	// TestingSkipFsync makes the WAL skip every fsync while still
	// acknowledging (mutation check: the crash test must fail). Tests only.
	TestingSkipFsync bool
	// TestingSkipTombstone makes an upsert or delete leave the old version
	// live (mutation check: the staleness test must fail). Tests only.
	TestingSkipTombstone bool
	// TestingFlushHook, if set, runs inside every Flush after the
	// MemTable is frozen and before the segment is built, with no lock
	// held (tests hold a flush there while writes and reads go on).
	// Tests only.
	TestingFlushHook func()
	// TestingIndexHook, if set, runs inside every deferred index build
	// (deferred.go) with no lock held: with "build" once the segment is
	// reserved and before its index is built, with "commit" once the new
	// file is written and before the manifest edit. Tests only.
	TestingIndexHook func(phase string)
	// testingIndexQuiet, if > 0, replaces indexQuiet (deferred.go).
	testingIndexQuiet time.Duration
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Metric == 0 {
		o.Metric = L2
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = 10 * time.Millisecond
	}
	if o.WALSegmentSizeBytes == 0 {
		o.WALSegmentSizeBytes = 64 << 20
	}
	if o.ManifestCheckpointEdits == 0 {
		o.ManifestCheckpointEdits = 128
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SegmentIndex == "" {
		o.SegmentIndex = SegmentIndexHNSW
	}
	if o.SegmentM == 0 {
		o.SegmentM = 16
	}
	if o.IVFNbits == 0 {
		o.IVFNbits = 8
	}
	if o.IVFKFactor == 0 {
		o.IVFKFactor = 4
	}
	if o.IVFMinRows == 0 {
		o.IVFMinRows = 1024
	}
	if o.SegmentEfConstruction == 0 {
		o.SegmentEfConstruction = 100
	}
	if o.SegmentEfSearch == 0 {
		o.SegmentEfSearch = 64
	}
	if o.BuildThreads == 0 {
		o.BuildThreads = 1
	}
	if o.CompactDeadFraction == 0 {
		o.CompactDeadFraction = 0.2
	}
	if o.CompactMaxSegments == 0 {
		o.CompactMaxSegments = 8
	}
	if o.CompactFanIn == 0 {
		o.CompactFanIn = 8
	}
	if o.SlowdownSegments == 0 {
		o.SlowdownSegments = max(20, 2*o.CompactMaxSegments)
	}
	if o.StopSegments == 0 {
		o.StopSegments = max(36, 4*o.CompactMaxSegments)
	}
	if o.SlowdownDelay == 0 {
		o.SlowdownDelay = time.Millisecond
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = time.Minute
	}
}

// Validate reports every problem with o (call after EnsureDefaults).
func (o *Options) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("tier: Options.Dir is required"))
	}
	if o.Dim < 1 {
		errs = append(errs, fmt.Errorf("tier: Options.Dim %d must be >= 1", o.Dim))
	}
	if o.Metric < L2 || o.Metric > Cosine {
		errs = append(errs, fmt.Errorf("tier: unknown Options.Metric %d", o.Metric))
	}
	if o.Sync > wal.SyncNone {
		errs = append(errs, fmt.Errorf("tier: unknown Options.Sync %d", o.Sync))
	}
	if o.SyncInterval < 0 {
		errs = append(errs, fmt.Errorf("tier: Options.SyncInterval %v must be > 0", o.SyncInterval))
	}
	if o.WALSegmentSizeBytes < wal.HeaderSize {
		errs = append(errs, fmt.Errorf("tier: Options.WALSegmentSizeBytes %d too small", o.WALSegmentSizeBytes))
	}
	if o.ManifestCheckpointEdits < 0 {
		errs = append(errs, fmt.Errorf("tier: Options.ManifestCheckpointEdits %d must be >= 0", o.ManifestCheckpointEdits))
	}
	if o.MemTableSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("tier: Options.MemTableSizeBytes %d must be >= 0", o.MemTableSizeBytes))
	}
	if err := o.ValidateSegmentIndex(); err != nil { // segivf.go
		errs = append(errs, err)
	}
	if o.SegmentM < 2 || o.SegmentM > 256 {
		errs = append(errs, fmt.Errorf("tier: Options.SegmentM %d outside [2,256]", o.SegmentM))
	}
	if o.SegmentEfConstruction < 1 || o.SegmentEfSearch < 1 || o.BuildThreads < 1 {
		errs = append(errs, fmt.Errorf("tier: Options.SegmentEfConstruction %d, SegmentEfSearch %d, BuildThreads %d must be >= 1",
			o.SegmentEfConstruction, o.SegmentEfSearch, o.BuildThreads))
	}
	if !(o.CompactDeadFraction > 0 && o.CompactDeadFraction < 1) {
		errs = append(errs, fmt.Errorf("tier: Options.CompactDeadFraction %v outside (0,1)", o.CompactDeadFraction))
	}
	if o.CompactMaxSegments < 1 {
		errs = append(errs, fmt.Errorf("tier: Options.CompactMaxSegments %d must be >= 1", o.CompactMaxSegments))
	}
	if o.CompactFanIn < 2 {
		errs = append(errs, fmt.Errorf("tier: Options.CompactFanIn %d must be >= 2", o.CompactFanIn))
	}
	if o.StopSegments >= 0 && (o.SlowdownSegments < 1 || o.StopSegments < o.SlowdownSegments) {
		errs = append(errs, fmt.Errorf("tier: Options.SlowdownSegments %d, StopSegments %d: want 1 <= slowdown <= stop (or stop < 0: off)",
			o.SlowdownSegments, o.StopSegments))
	}
	if o.SlowdownDelay < 0 || o.StallTimeout < 0 {
		errs = append(errs, fmt.Errorf("tier: Options.SlowdownDelay %v, StallTimeout %v must be >= 0", o.SlowdownDelay, o.StallTimeout))
	}
	return errors.Join(errs...)
}

// Store is the storage engine of a collection: WAL + epochs + hot
// MemTable + manifest + warm segments (Flush, Compact) + cold Parquet
// archives (Archive, Promote; cold.go) + Backup (backup.go). Safe for
// concurrent use.
//
// Background flushes (Options.MemTableSizeBytes) write their segments
// without a vector index (a flat section, searched exactly), so that
// writes are not slowed by graph builds; the store then rewrites those
// segments with their index in the background once writes pause (or
// CompactFanIn segments wait), on every core while none arrive and on
// BuildThreads goroutines while they do (deferred.go). Flush builds whatever is still pending before it
// returns. A flat segment is a complete, durable segment: Close loses
// nothing, and Open resumes the pending builds.
type Store struct {
	o        Options
	lock     io.Closer
	wal      *wal.WAL
	manifest *Manifest

	// The current view (MemTables + warm segments + archives); replaced
	// under applyMu and viewMu by Flush, Compact, Archive and Promote.
	viewMu sync.Mutex
	cur    *view
	// maintMu serialises Flush, Archive, Promote, Backup, archive
	// compaction and the commit step of each merge (compact.go).
	maintMu sync.Mutex
	bgKick  chan struct{}
	bgStop  chan struct{}
	bgDone  chan struct{}
	// Merges (compact.go): the running ones, the lanes' kick, and the
	// context Close cancels.
	compactor     compactor
	compactKick   chan struct{}
	compactCtx    context.Context
	compactCancel context.CancelFunc
	// Deferred index builds (deferred.go): the background lane's kick,
	// the number of Flushes waiting for pending indexes (their builds,
	// and running merges, then use every core), the time of the newest
	// write (monoNano), and the builds committed since Open.
	indexKick   chan struct{}
	indexUrgent atomic.Int32
	lastWrite   atomic.Int64
	indexBuilds atomic.Int64
	// idMu guards idNext, the next segment/archive id not yet reserved
	// (allocSegmentID).
	idMu   sync.Mutex
	idNext uint64
	// flushes and compactions count successful runs (tests, stats).
	flushes, compactions atomic.Int64
	// mergedRows counts rows written by merges, maxMergeInputs the most
	// inputs one merge took (compact.go; tests).
	mergedRows, maxMergeInputs atomic.Int64
	archiveCompactions         atomic.Int64 // cold_compact.go
	// bp counts backpressure events (backpressure.go).
	bp backpressure
	// replayed counts the WAL records applied by Open's recovery.
	replayed int64

	// Epoch publication: batches are applied to the MemTable strictly in
	// epoch order after their WAL record is acknowledged; visible is the
	// highest epoch readers may pin.
	applyMu   sync.Mutex
	applyCond *sync.Cond
	applied   uint64
	visible   atomic.Uint64

	pinMu sync.Mutex
	pins  map[uint64]int

	closed atomic.Bool
}

// Open opens or creates the store in o.Dir and recovers it: the manifest
// gives the durable epoch, the synced epoch and the segment set, then the
// WAL is replayed after the durable epoch into a fresh MemTable. Nothing
// is changed before the manifest, every listed segment and archive, and
// the WAL have been validated against each other (recovery.go): damage
// fails with an error matching ErrCorrupt that names the file and byte
// offset (a missing CURRENT beside store files, a CURRENT naming a
// missing manifest, a damaged edit, a missing or damaged segment, a WAL
// lacking a record ≤ the synced epoch), and the directory is left as it
// was. Only then is a torn manifest or WAL tail beyond what was synced
// truncated with a warning, and segment or archive files the manifest
// does not list removed when provably garbage, else moved to quarantine/.
func Open(o Options) (*Store, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := vfs.MkdirAllDurable(o.FS, o.Dir); err != nil {
		return nil, fmt.Errorf("tier: create %s: %w", o.Dir, err)
	}
	lk, err := o.FS.Lock(filepath.Join(o.Dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("tier: lock %s: %w", o.Dir, err)
	}
	s := &Store{o: o, lock: lk, pins: map[uint64]int{}}
	s.applyCond = sync.NewCond(&s.applyMu)
	fail := func(err error) (*Store, error) {
		if s.manifest != nil {
			s.manifest.Close()
		}
		lk.Close()
		return nil, err
	}
	s.manifest, err = openManifest(o.FS, o.Dir, ManifestOptions{CheckpointEdits: o.ManifestCheckpointEdits, Logger: o.Logger}, false)
	if err != nil {
		return fail(err)
	}
	st := s.manifest.State()
	segs, err := s.openSegments(st)
	if err != nil {
		return fail(explainTorn(s.manifest, err))
	}
	cold, err := s.openArchives(st)
	if err != nil {
		for _, sg := range segs {
			sg.free()
		}
		return fail(explainTorn(s.manifest, err))
	}
	s.cur = newView(s.newMem(), segs, cold)
	after := st.DurableEpoch
	walDir := filepath.Join(o.Dir, "wal")
	s.wal, err = wal.Open(wal.Options{FS: o.FS, Dir: walDir, Sync: o.Sync, SyncInterval: o.SyncInterval,
		SegmentSizeBytes: o.WALSegmentSizeBytes, Logger: o.Logger, TestingSkipFsync: o.TestingSkipFsync,
		SyncedSeq: st.SyncedEpoch, ActiveSeq: st.ActiveWAL, AcceptLoss: o.AcceptWALLoss, OnRotate: s.walRotated},
		after, func(seq uint64, payload []byte) error {
			b, err := decodeBatch(payload)
			if err == nil {
				err = s.validateBatch(b)
			}
			if err != nil {
				return fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			s.applyLocked(s.cur, b, seq)
			s.replayed++
			return nil
		})
	if err != nil {
		for _, sg := range segs {
			sg.free()
		}
		return fail(explainTorn(s.manifest, err))
	}
	// Validated: act on what recovery found.
	closeAll := func(err error) (*Store, error) {
		s.wal.Close()
		for _, sg := range segs {
			sg.free()
		}
		return fail(err)
	}
	if err := s.manifest.commitOpen(); err != nil {
		return closeAll(err)
	}
	if err := s.sweepUnreferenced(st); err != nil {
		return closeAll(err)
	}
	last := s.wal.LastSeq() // ≥ every epoch acknowledged before
	// The replayed records are durable (wal.Open synced them), and the
	// new active segment exists.
	if err := s.manifest.Apply(Edit{SyncedEpoch: last, ActiveWAL: s.wal.ActiveSeq()}); err != nil {
		return closeAll(err)
	}
	s.applied = last
	s.visible.Store(last)
	if o.AcceptWALLoss && last > st.DurableEpoch {
		// Make the accepted loss final: the survivors go to a segment
		// and the durable epoch moves past the lost epochs, so the next
		// Open finds a consistent WAL.
		// The survivors' segment gets its index now; indexes older
		// segments still wait for (deferred.go) are left to the
		// background, as after any Open.
		if err := s.flush(context.Background(), max(o.BuildThreads, runtime.GOMAXPROCS(0)), false); err != nil {
			return closeAll(err)
		}
	}
	s.bgKick = make(chan struct{}, 1)
	s.bgStop = make(chan struct{})
	s.bgDone = make(chan struct{})
	s.compactKick = make(chan struct{}, 1)
	s.indexKick = make(chan struct{}, 1)
	s.compactCtx, s.compactCancel = context.WithCancel(context.Background())
	go s.background()
	s.kickIndex() // segments whose index was deferred before a Close or crash
	return s, nil
}

func (s *Store) validateBatch(b *Batch) error {
	var errs []error
	for i := range b.Ops {
		op := &b.Ops[i]
		if op.Doc.ID == "" {
			errs = append(errs, fmt.Errorf("tier: op %d: empty id", i))
		}
		if op.Kind != OpUpsert && op.Kind != OpDelete {
			errs = append(errs, fmt.Errorf("tier: op %d: unknown kind %d", i, op.Kind))
		}
		if op.Kind == OpUpsert && op.Doc.Vector != nil && len(op.Doc.Vector) != s.o.Dim && s.o.Dim > 0 {
			errs = append(errs, fmt.Errorf("tier: op %d (id %q): vector has %d dimensions, want %d", i, op.Doc.ID, len(op.Doc.Vector), s.o.Dim))
		}
	}
	return errors.Join(errs...)
}

// Apply durably applies b as one epoch and returns that epoch. It returns
// once the WAL acknowledged the batch under the sync policy and the batch
// is visible to new snapshots (read-your-writes). Either every op of b
// becomes visible at that epoch, or none does. An empty batch is rejected.
// After a WAL failure the error wraps ErrReadOnly and the cause.
func (s *Store) Apply(b *Batch) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if b == nil || len(b.Ops) == 0 {
		return 0, errors.New("tier: empty batch")
	}
	if err := s.validateBatch(b); err != nil {
		return 0, err
	}
	if err := s.manifest.Err(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	if err := s.throttle(); err != nil {
		return 0, err
	}
	payload := encodeBatch(b, nowNano())
	// The decoded copy is what the MemTable applies: it carries the
	// stamped timestamps exactly as replay will see them. It is made
	// before the write, so that a payload replay could not decode (a
	// malformed Document.EncodedMetadata) never reaches the WAL.
	nv := 0
	for i := range b.Ops {
		nv += len(b.Ops[i].Doc.Vector)
	}
	// payload is never written again: its strings are shared when that is
	// worth it (sharePayload).
	db, err := decodeBatchAlias(payload, nv, sharePayload(len(payload), cap(payload), nv))
	if err != nil {
		return 0, fmt.Errorf("tier: batch does not decode: %w", err)
	}
	return s.applyDecoded([][]byte{payload}, db)
}

// applyDecoded writes the payload (pieces, concatenated) as one WAL record
// and applies db, its decoded form, as the record's epoch.
func (s *Store) applyDecoded(pieces [][]byte, db *Batch) (uint64, error) {
	seq, err := s.wal.AppendPieces(pieces)
	if err != nil {
		if errors.Is(err, wal.ErrFailed) {
			return 0, fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return 0, err
	}
	// Apply in epoch order.
	s.applyMu.Lock()
	for s.applied != seq-1 {
		s.applyCond.Wait()
	}
	v := s.currentView()
	s.applyLocked(v, db, seq)
	s.applied = seq
	s.visible.Store(seq)
	s.applyCond.Broadcast()
	s.applyMu.Unlock()
	s.lastWrite.Store(monoNano()) // deferred index builds wait for a pause (deferred.go)
	if s.o.MemTableSizeBytes > 0 && v.mem.size() >= s.o.MemTableSizeBytes {
		s.kick()
	}
	v.unref()
	return seq, nil
}

// walRotated records in the manifest that the WAL is durable before
// first and that the active segment starts there (wal.Options.OnRotate).
func (s *Store) walRotated(first uint64) {
	if err := s.manifest.Apply(Edit{SyncedEpoch: first - 1, ActiveWAL: first}); err != nil {
		s.o.Logger.Warn("tier: recording the synced epoch after WAL rotation failed", "err", err)
	}
}

// Err returns the sticky I/O failure that made the store read-only
// (for /healthz), or nil.
func (s *Store) Err() error {
	if err := s.wal.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	if err := s.manifest.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	return nil
}

// Epoch returns the newest visible epoch.
func (s *Store) Epoch() uint64 { return s.visible.Load() }

// Manifest returns the store's manifest (segment set, durable epoch).
func (s *Store) Manifest() *Manifest { return s.manifest }

// Snapshot pins the newest visible epoch. The snapshot sees exactly the
// versions with e_birth ≤ epoch < e_death, however many writes follow.
// Close it when done: a pin holds back compaction of versions dead after
// its epoch, and the deletion of segment files its view uses.
func (s *Store) Snapshot() *Snapshot {
	// viewMu orders this against a view swap: the pinned epoch is always
	// served by the captured view (a swap happens under applyMu, so the
	// visible epoch cannot move past the new view's flush epoch meanwhile).
	s.viewMu.Lock()
	s.pinMu.Lock()
	e := s.visible.Load()
	s.pins[e]++
	s.pinMu.Unlock()
	v := s.cur
	v.refs.Add(1)
	s.viewMu.Unlock()
	return &Snapshot{s: s, epoch: e, v: v}
}

// OldestPinnedEpoch returns the smallest pinned epoch, or the visible
// epoch if nothing is pinned.
func (s *Store) OldestPinnedEpoch() uint64 {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	min := s.visible.Load()
	for e := range s.pins {
		if e < min {
			min = e
		}
	}
	return min
}

// Close syncs and closes the WAL and manifest and releases the lock. A
// deferred index build that is running stops at its next HNSW step (an
// IVF-PQ build, which has one step, runs to its end first), leaving its
// flat segment as it is (the next Open builds it again).
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}
	s.compactCancel()
	close(s.bgStop)
	<-s.bgDone
	s.waitMerges()
	s.maintMu.Lock() // wait for a running Flush, Archive, ...
	defer s.maintMu.Unlock()
	werr := s.wal.Close()
	if werr == nil && s.manifest.Err() == nil {
		// Everything appended is synced: the manifest now knows, so a
		// later loss of these records is detected (Open refuses).
		if last := s.wal.LastSeq(); last > s.manifest.State().SyncedEpoch {
			werr = s.manifest.Apply(Edit{SyncedEpoch: last})
		}
	}
	merr := s.manifest.Close()
	// Unmap the segments once the last open Snapshot using them closes.
	s.viewMu.Lock()
	for _, sg := range s.cur.segs {
		sg.retired.Store(true)
	}
	for _, a := range s.cur.cold {
		a.retired.Store(true)
	}
	s.cur.unref()
	s.viewMu.Unlock()
	s.lock.Close()
	return errors.Join(werr, merr)
}

// Snapshot is a read view pinned at one epoch. Safe for concurrent use.
type Snapshot struct {
	s      *Store
	epoch  uint64
	v      *view
	closed atomic.Bool
	// withCold: SearchVector also scans the cold archives (WithCold).
	withCold bool
}

// Epoch returns the pinned epoch.
func (sn *Snapshot) Epoch() uint64 { return sn.epoch }

// Get returns the version of id visible at the snapshot. The Document is
// shared: do not modify it.
func (sn *Snapshot) Get(id string) (*Document, uint64, bool) {
	if v, ok := sn.v.hotGet(id, sn.epoch); ok {
		return v.doc, v.birth, true
	}
	for i := len(sn.v.segs) - 1; i >= 0; i-- {
		sg := sn.v.segs[i]
		if r, ok := sg.get(id, sn.epoch); ok {
			return sg.docs[r], sg.birth[r], true
		}
	}
	return sn.v.coldGet(id, sn.epoch)
}

// SearchVector returns up to k nearest documents visible at the snapshot
// that pass filter (nil: all), nearest first: brute force over the
// MemTable plus each warm segment's vector index (HNSW with
// SegmentEfSearch; IVF-PQ with IVFNprobe and exact refinement ×IVFKFactor;
// flat: exact), merged. q: Dim float32s. Stale versions and filtered
// documents are skipped while candidates are generated (in a segment,
// through the index's Allow bitmap of rows with e_birth ≤ epoch < e_death
// that pass filter), so the result holds min(k, #matching live documents
// with vectors) hits; which segment hits are found is approximate (HNSW
// or IVF-PQ recall), but every distance is exact (MemTable, HNSW and
// refined IVF-PQ alike), so hits from all tiers compare.
func (sn *Snapshot) SearchVector(q []float32, k int, filter func(*Document) bool) ([]Hit, error) {
	return sn.searchVector(context.Background(), q, k, nil, filter)
}

// SearchVectorContext is SearchVector that stops early when ctx is done:
// the MemTable scans look at ctx every 512 rows, each segment's index
// search (HNSW walk, IVF-PQ list scan, exact scan) and Allow-bitmap pass
// in its own loops, the cold scan every few thousand codes, and no tier
// is started after ctx is done. A search cut short returns the hits found
// so far, merged (a partial, possibly empty list, nearest first), with
// ctx.Err(); a search that completes returns exactly what SearchVector
// returns.
func (sn *Snapshot) SearchVectorContext(ctx context.Context, q []float32, k int, filter func(*Document) bool) ([]Hit, error) {
	return sn.searchVector(ctx, q, k, nil, filter)
}

// SearchVectorWhere is SearchVector restricted to documents whose
// Metadata[key] == value for every entry of where (and that pass filter,
// if non-nil). In warm segments, conditions on Options.IndexedMetadata
// keys are answered by intersecting per-value roaring bitmaps before the
// visibility check; other conditions are checked per document.
func (sn *Snapshot) SearchVectorWhere(q []float32, k int, where map[string]string, filter func(*Document) bool) ([]Hit, error) {
	return sn.searchVector(context.Background(), q, k, where, filter)
}

// SearchVectorWhereContext is SearchVectorWhere that stops early when
// ctx is done, as SearchVectorContext does.
func (sn *Snapshot) SearchVectorWhereContext(ctx context.Context, q []float32, k int, where map[string]string, filter func(*Document) bool) ([]Hit, error) {
	return sn.searchVector(ctx, q, k, where, filter)
}

// SearchVectorRowsContext is SearchVectorContext with the caller's row
// sets for the warm segments: rows[i], when non-nil, holds the rows of
// WarmSegments()[i] to search (local row numbers; rows not live at the
// snapshot, or past the segment's end, are ignored), and filter is not
// called for that segment's documents. A segment with no entry (i ≥
// len(rows), or nil) is searched with filter as SearchVectorContext does;
// so are the MemTables and, with WithCold, the cold archives. It is for
// callers that have resolved their filter into per-segment row bitmaps
// already (an indexed-field filter): the segment search then costs one
// bitmap AND instead of a filter call per live row. Errors: more row sets
// than warm segments, and SearchVectorContext's.
func (sn *Snapshot) SearchVectorRowsContext(ctx context.Context, q []float32, k int, rows []*roaring.Bitmap, filter func(*Document) bool) ([]Hit, error) {
	if len(rows) > len(sn.v.segs) {
		return nil, fmt.Errorf("tier: %d warm row sets, snapshot has %d warm segments", len(rows), len(sn.v.segs))
	}
	return sn.searchVectorRows(ctx, q, k, nil, rows, filter)
}

// searchVector is SearchVectorWhereContext (where nil or empty:
// SearchVectorContext).
func (sn *Snapshot) searchVector(ctx context.Context, q []float32, k int, where map[string]string, filter func(*Document) bool) ([]Hit, error) {
	return sn.searchVectorRows(ctx, q, k, where, nil, filter)
}

// searchVectorRows is searchVector with SearchVectorRowsContext's warm
// row sets (rows nil: none; where applies to the other segments only).
func (sn *Snapshot) searchVectorRows(ctx context.Context, q []float32, k int, where map[string]string, rows []*roaring.Bitmap, filter func(*Document) bool) ([]Hit, error) {
	if len(q) != sn.s.o.Dim {
		return nil, fmt.Errorf("tier: query vector has %d dimensions, want %d", len(q), sn.s.o.Dim)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	match := func(cond map[string]string) func(*Document) bool {
		if len(cond) == 0 {
			return filter
		}
		return func(d *Document) bool {
			for key, val := range cond {
				if v, ok := d.Metadata[key]; !ok || v != val {
					return false
				}
			}
			return filter == nil || filter(d)
		}
	}
	var hits []Hit
	var cerr error // ctx.Err() once a tier was cut short
	// add merges one tier's hits; it reports false when the search must
	// stop (ctx done, or an error).
	add := func(h []Hit, err error) (bool, error) {
		hits = append(hits, h...)
		if ctxErr(ctx, err) {
			cerr = err
			return false, nil
		}
		return err == nil, err
	}
	more := true
	for i := -1; i < len(sn.v.frozen); i++ { // the active MemTable, then the frozen ones
		m := sn.v.mem
		if i >= 0 {
			m = sn.v.frozen[i]
		}
		h, err := m.search(ctx, q, k, sn.epoch, match(where))
		if more, err = add(h, err); !more {
			if err != nil {
				return nil, err
			}
			break
		}
	}
	for i := 0; more && i < len(sn.v.segs); i++ {
		sg := sn.v.segs[i]
		var h []Hit
		var err error
		if i < len(rows) && rows[i] != nil {
			h, err = sg.searchRows(ctx, q, k, sn.s.o.SegmentEfSearch, sn.epoch, rows[i])
		} else {
			pre, rest := sg.wherePre(where)
			h, err = sg.searchPre(ctx, q, k, sn.s.o.SegmentEfSearch, sn.epoch, pre, match(rest))
		}
		if more, err = add(h, err); err != nil {
			return nil, err
		}
	}
	if more && sn.withCold { // cold.go
		h, err := sn.SearchColdContext(ctx, q, k, 0, match(where))
		if _, err = add(h, err); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Distance < hits[j].Distance })
	if len(hits) > k {
		hits = hits[:max(k, 0)]
	}
	return hits, cerr
}

// ReplayedRecords returns the number of WAL records (write batches) Open
// replayed into the MemTable: the records after the manifest's durable
// epoch, i.e. those not yet flushed into a warm segment.
func (s *Store) ReplayedRecords() int64 { return s.replayed }

// Flushes returns the number of successful flushes since Open.
func (s *Store) Flushes() int64 { return s.flushes.Load() }

// Compactions returns the number of successful compactions since Open.
func (s *Store) Compactions() int64 { return s.compactions.Load() }

// MemLexical returns the LexicalIndexer of the snapshot's active MemTable
// (the one Options.NewLexical made for it, or Options.Lexical). While a
// Flush runs, the view also holds frozen MemTables: a lexical search
// across tiers uses HotLexical and VisibleHot, which cover them all.
func (sn *Snapshot) MemLexical() LexicalIndexer { return sn.v.mem.lexical }

// HotLexical returns the LexicalIndexers of the snapshot's MemTables: the
// frozen ones a running (or failed) Flush is turning into a segment,
// oldest first, then the active one (MemLexical), which is always last.
// Each MemTable numbers its versions from 0 (see Options.NewLexical);
// VisibleHot(i, v) checks version v of the i-th.
func (sn *Snapshot) HotLexical() []LexicalIndexer {
	out := make([]LexicalIndexer, 0, len(sn.v.frozen)+1)
	for _, m := range sn.v.frozen {
		out = append(out, m.lexical)
	}
	return append(out, sn.v.mem.lexical)
}

// VisibleHot reports whether version number v (as passed to
// LexicalIndexer.Add) of the i-th MemTable of HotLexical is live at the
// snapshot. i out of range: false.
func (sn *Snapshot) VisibleHot(i int, v uint32) bool {
	switch {
	case i >= 0 && i < len(sn.v.frozen):
		return sn.v.frozen[i].visible(v, sn.epoch)
	case i == len(sn.v.frozen):
		return sn.v.mem.visible(v, sn.epoch)
	}
	return false
}

// WarmSegment is a read-only handle on one warm segment of a Snapshot's
// view, valid until the Snapshot is closed (its byte slices may be an
// mmap that is unmapped afterwards).
type WarmSegment struct {
	// ID is the segment's manifest id (never reused within a store).
	ID uint64
	// Path is the segment file.
	Path string
	// Docs are the rows' documents, row order (shared, read-only; the
	// same pointers SearchVector hits carry).
	Docs []*Document
	// Lexical is the BM25 section (LexicalSegmentBuilder output over
	// Docs), or nil when the segment has none.
	Lexical []byte
	// LexicalOffset is the section's byte offset in the file.
	LexicalOffset int64
	// LexicalFetch, when not nil, makes ranges of Lexical present (offsets
	// within Lexical): the section's posting blobs may be absent until
	// fetched (bm25.OpenFetch). Set for segments of a Store whose
	// RangeFetcher is also a SpanFetcher.
	LexicalFetch bm25.Fetcher
}

// WarmSegments returns the snapshot's warm segments, ascending ID.
func (sn *Snapshot) WarmSegments() []WarmSegment {
	out := make([]WarmSegment, len(sn.v.segs))
	for i, sg := range sn.v.segs {
		out[i] = WarmSegment{ID: sg.meta.ID, Path: sg.path, Docs: sg.docs, Lexical: sg.lex, LexicalOffset: sg.lexOff}
		if sg.lexSpan != nil {
			out[i].LexicalFetch = lexFetcher{sg.lexSpan, sg.path, sg.lexOff}
		}
	}
	return out
}

// VisibleRow reports whether row of the i-th segment of WarmSegments is
// live at the snapshot.
func (sn *Snapshot) VisibleRow(i int, row uint32) bool { return sn.v.segs[i].visible(row, sn.epoch) }

// Visible reports whether version number v (as passed to
// LexicalIndexer.Add) of the active MemTable is live at the snapshot.
func (sn *Snapshot) Visible(v uint32) bool { return sn.v.mem.visible(v, sn.epoch) }

// LiveIDs returns the ids with a version visible at the snapshot
// (unordered).
func (sn *Snapshot) LiveIDs() []string {
	ids := sn.v.mem.liveIDs(sn.epoch)
	for _, m := range sn.v.frozen {
		ids = append(ids, m.liveIDs(sn.epoch)...)
	}
	for _, sg := range sn.v.segs {
		for r := range sg.docs {
			if sg.visible(uint32(r), sn.epoch) {
				ids = append(ids, sg.docs[r].ID)
			}
		}
	}
	for _, a := range sn.v.cold {
		for r := range a.docs {
			if a.visible(uint32(r), sn.epoch) {
				ids = append(ids, a.docs[r].ID)
			}
		}
	}
	return ids
}

// ScanLive calls f with every document version live at the snapshot
// (unordered: the MemTables, then the warm segments, then the cold
// archives), the same set LiveIDs names, until f returns false. It reads
// the versions in place: no lookup by id, no copy. The Documents are
// shared: do not modify them. f runs without any lock held.
func (sn *Snapshot) ScanLive(f func(d *Document) bool) {
	hot := sn.v.mem.liveDocs(sn.epoch)
	for _, m := range sn.v.frozen {
		hot = append(hot, m.liveDocs(sn.epoch)...)
	}
	for _, d := range hot {
		if !f(d) {
			return
		}
	}
	for _, sg := range sn.v.segs {
		for r, d := range sg.docs {
			if sg.visible(uint32(r), sn.epoch) && !f(d) {
				return
			}
		}
	}
	for _, a := range sn.v.cold {
		for r, d := range a.docs {
			if a.visible(uint32(r), sn.epoch) && !f(d) {
				return
			}
		}
	}
}

// Close unpins the epoch. Idempotent.
func (sn *Snapshot) Close() {
	if sn.closed.Swap(true) {
		return
	}
	sn.s.pinMu.Lock()
	if sn.s.pins[sn.epoch]--; sn.s.pins[sn.epoch] <= 0 {
		delete(sn.s.pins, sn.epoch)
	}
	sn.s.pinMu.Unlock()
	sn.v.unref()
}
