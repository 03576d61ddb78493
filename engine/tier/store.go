package tier

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/internal/vfs"
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
	// Logger receives recovery warnings. Default slog.Default().
	Logger *slog.Logger

	// TestingSkipFsync makes the WAL skip every fsync while still
	// acknowledging (mutation check: the crash test must fail). Tests only.
	TestingSkipFsync bool
	// TestingSkipTombstone makes an upsert or delete leave the old version
	// live (mutation check: the staleness test must fail). Tests only.
	TestingSkipTombstone bool
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
	return errors.Join(errs...)
}

// Store is the durable core of a collection: WAL + epochs + hot MemTable +
// manifest. (Warm segments, flush, compaction and the cold tier come in a
// later landing; see SegmentIndex.) Safe for concurrent use.
type Store struct {
	o        Options
	lock     io.Closer
	wal      *wal.WAL
	manifest *Manifest
	mem      *memTable

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
// gives the durable epoch and segment set, then the WAL is replayed after
// that epoch into a fresh MemTable. A torn WAL or manifest tail is
// truncated with a warning; corruption before it fails with ErrCorrupt.
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
	s.manifest, err = OpenManifest(o.FS, o.Dir, ManifestOptions{CheckpointEdits: o.ManifestCheckpointEdits, Logger: o.Logger})
	if err != nil {
		return fail(err)
	}
	s.mem = newMemTable(o.Dim, o.Metric, o.Lexical)
	s.mem.skipTombstone = o.TestingSkipTombstone
	after := s.manifest.State().DurableEpoch
	walDir := filepath.Join(o.Dir, "wal")
	s.wal, err = wal.Open(wal.Options{FS: o.FS, Dir: walDir, Sync: o.Sync, SyncInterval: o.SyncInterval,
		SegmentSizeBytes: o.WALSegmentSizeBytes, Logger: o.Logger, TestingSkipFsync: o.TestingSkipFsync},
		after, func(seq uint64, payload []byte) error {
			b, err := decodeBatch(payload)
			if err == nil {
				err = s.validateBatch(b)
			}
			if err != nil {
				return fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			s.mem.apply(b, seq)
			return nil
		})
	if err != nil {
		return fail(err)
	}
	last := s.wal.LastSeq()
	s.applied = last
	s.visible.Store(last)
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
		if op.Kind == OpUpsert && op.Doc.Vector != nil && len(op.Doc.Vector) != s.o.Dim {
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
	payload := encodeBatch(b, nowNano())
	seq, err := s.wal.Append(payload)
	if err != nil {
		if errors.Is(err, wal.ErrFailed) {
			return 0, fmt.Errorf("%w: %w", ErrReadOnly, err)
		}
		return 0, err
	}
	// Apply in epoch order. The decoded copy carries the stamped
	// timestamps exactly as replay will see them.
	db, err := decodeBatch(payload)
	if err != nil {
		return 0, fmt.Errorf("tier: internal: re-decode batch: %w", err)
	}
	s.applyMu.Lock()
	for s.applied != seq-1 {
		s.applyCond.Wait()
	}
	s.mem.apply(db, seq)
	s.applied = seq
	s.visible.Store(seq)
	s.applyCond.Broadcast()
	s.applyMu.Unlock()
	return seq, nil
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
// Close it when done (pins will hold back garbage collection of dead
// versions once segments exist).
func (s *Store) Snapshot() *Snapshot {
	s.pinMu.Lock()
	e := s.visible.Load()
	s.pins[e]++
	s.pinMu.Unlock()
	return &Snapshot{s: s, epoch: e}
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

// Close syncs and closes the WAL and manifest and releases the lock.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}
	werr := s.wal.Close()
	merr := s.manifest.Close()
	s.lock.Close()
	return errors.Join(werr, merr)
}

// Snapshot is a read view pinned at one epoch. Safe for concurrent use.
type Snapshot struct {
	s      *Store
	epoch  uint64
	closed atomic.Bool
}

// Epoch returns the pinned epoch.
func (sn *Snapshot) Epoch() uint64 { return sn.epoch }

// Get returns the version of id visible at the snapshot. The Document is
// shared: do not modify it.
func (sn *Snapshot) Get(id string) (*Document, uint64, bool) {
	v, ok := sn.s.mem.get(id, sn.epoch)
	if !ok {
		return nil, 0, false
	}
	return v.doc, v.birth, true
}

// SearchVector returns up to k nearest documents visible at the snapshot
// that pass filter (nil: all), nearest first, by brute force over the
// MemTable. q: Dim float32s. Stale versions and filtered documents are
// skipped while candidates are generated, so the result holds min(k,
// #matching live documents with vectors) hits.
func (sn *Snapshot) SearchVector(q []float32, k int, filter func(*Document) bool) ([]Hit, error) {
	if len(q) != sn.s.o.Dim {
		return nil, fmt.Errorf("tier: query vector has %d dimensions, want %d", len(q), sn.s.o.Dim)
	}
	return sn.s.mem.search(q, k, sn.epoch, filter), nil
}

// Visible reports whether MemTable version number v (as passed to
// LexicalIndexer.Add) is live at the snapshot.
func (sn *Snapshot) Visible(v uint32) bool { return sn.s.mem.visible(v, sn.epoch) }

// LiveIDs returns the ids with a version visible at the snapshot
// (unordered).
func (sn *Snapshot) LiveIDs() []string { return sn.s.mem.liveIDs(sn.epoch) }

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
}
