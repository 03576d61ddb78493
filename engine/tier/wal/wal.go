package wal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratasearch/strata/vfs"
)

// SyncPolicy says when an appended record is acknowledged.
type SyncPolicy uint8

const (
	// SyncAlways acknowledges a record only after the fsync covering it
	// returned successfully. The default. Concurrent appenders share one
	// write + one fsync (group commit).
	SyncAlways SyncPolicy = iota
	// SyncInterval acknowledges after the write(2); a background fsync
	// runs every Options.SyncInterval. A crash can lose up to one interval
	// of acknowledged records.
	SyncInterval
	// SyncNone acknowledges after the write(2) and never fsyncs except
	// at segment rotation and Close. A crash can lose any acknowledged
	// record not yet rotated out.
	SyncNone
)

func (p SyncPolicy) String() string {
	switch p {
	case SyncAlways:
		return "always"
	case SyncInterval:
		return "interval"
	case SyncNone:
		return "none"
	}
	return fmt.Sprintf("SyncPolicy(%d)", uint8(p))
}

// ParseSyncPolicy maps "always", "interval" and "none" to a SyncPolicy.
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	switch s {
	case "always", "":
		return SyncAlways, nil
	case "interval":
		return SyncInterval, nil
	case "none":
		return SyncNone, nil
	}
	return 0, fmt.Errorf("wal: unknown sync policy %q (want always, interval or none)", s)
}

// Options configures a WAL.
type Options struct {
	// FS is the file system. Default vfs.Default.
	FS vfs.FS
	// Dir is the directory holding the segment files (wal-<first seq as
	// 16 hex digits>.log). Required. Created if missing.
	Dir string
	// Sync is the acknowledgement policy. Default SyncAlways.
	Sync SyncPolicy
	// SyncInterval is the background fsync period under SyncInterval.
	// Default 10ms. Must be > 0 when Sync is SyncInterval.
	SyncInterval time.Duration
	// SegmentSizeBytes: once the active segment holds at least this many
	// bytes, the next write goes to a new segment. Default 64 MiB.
	SegmentSizeBytes int64
	// Logger receives recovery warnings (torn tails). Default
	// slog.Default().
	Logger *slog.Logger

	// SyncedSeq is the highest sequence number the caller knows was
	// acknowledged as durable (the store's manifest records it). Open
	// refuses (ErrCorrupt) a log in which any record in (afterSeq,
	// SyncedSeq] is damaged or missing; only records after it may be
	// dropped as a torn tail. Default 0: no such knowledge.
	SyncedSeq uint64
	// AcceptLoss makes Open log, instead of refuse, records ≤ SyncedSeq
	// that are missing or damaged, and open over the loss (an operator's
	// last resort). New records still get sequence numbers > SyncedSeq.
	// Default false.
	AcceptLoss bool
	// ActiveSeq is the first sequence number of the segment the caller
	// last recorded as the active one (OnRotate, and after Open). Open
	// refuses (ErrCorrupt) a directory without that segment: the active
	// segment is never deleted, so its absence is a lost file. Default 0:
	// no such knowledge.
	ActiveSeq uint64
	// OnRotate, if set, is called at rotation once the old segment is
	// fsynced and closed and the new one, whose first record will be
	// first, exists durably (every record before first is durable),
	// before the new segment can be written or the old one deleted by
	// TruncateBefore. Default nil.
	OnRotate func(first uint64)

	// TestingSkipFsync turns every file fsync of the WAL into a no-op
	// while still acknowledging as if it had happened. It exists only so
	// tests can prove the crash test catches a missing fsync (mutation
	// check). Never set it outside tests.
	TestingSkipFsync bool
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = 10 * time.Millisecond
	}
	if o.SegmentSizeBytes == 0 {
		o.SegmentSizeBytes = 64 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports every problem with o (after EnsureDefaults).
func (o *Options) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("wal: Options.Dir is required"))
	}
	if o.Sync > SyncNone {
		errs = append(errs, fmt.Errorf("wal: unknown Options.Sync %d", o.Sync))
	}
	if o.SyncInterval < 0 {
		errs = append(errs, fmt.Errorf("wal: Options.SyncInterval %v must be > 0", o.SyncInterval))
	}
	if o.SegmentSizeBytes < HeaderSize {
		errs = append(errs, fmt.Errorf("wal: Options.SegmentSizeBytes %d must be >= %d", o.SegmentSizeBytes, HeaderSize))
	}
	return errors.Join(errs...)
}

// ErrFailed is wrapped by every error a WAL returns after a write or
// fsync failed. The WAL is then read-only for good: an fsync error means
// the kernel may have dropped dirty pages, so retrying the fsync and
// trusting its success would acknowledge lost data (PostgreSQL
// "fsyncgate", 2018). Reopen to recover from what is on disk.
var ErrFailed = errors.New("wal: failed earlier, read-only until reopened")

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("wal: closed")

type segment struct {
	firstSeq uint64
	name     string
}

// WAL is a write-ahead log of records with consecutive sequence numbers
// (LSNs), split into segment files. Safe for concurrent use.
type WAL struct {
	o Options

	mu      sync.Mutex
	work    *sync.Cond // flusher waits for pending data
	done    *sync.Cond // appenders wait for acknowledgement
	pending []byte
	spare   []byte
	// direct lists the payloads of at least directPayloadBytes that are
	// pending: their headers are in pending, and each payload is written
	// from the appender's own slice (which Append holds until written)
	// after pending[:at], instead of being copied into pending.
	direct      []directPayload
	spareDirect []directPayload
	pendFrom    uint64 // seq of the first pending record
	nextSeq     uint64
	written     uint64 // highest seq written to the file
	synced      uint64 // highest seq fsynced
	err         error  // sticky
	closed      bool
	segs        []segment // sorted by firstSeq; the last is active

	ioMu sync.Mutex // serialises writes and rotation (flusher, rotation, close)
	// rotMu guards the active file's lifetime: rotation and close replace
	// or close w.f under rotMu.Lock (and ioMu); Sync fsyncs w.f under
	// rotMu.RLock only, so an interval fsync never holds up a write(2).
	rotMu sync.RWMutex
	// syncMu serialises Sync calls.
	syncMu  sync.Mutex
	f       vfs.File
	segSize int64
	// rotateReq makes the next write start a new segment (RequestRotation).
	rotateReq atomic.Bool

	flusherDone chan struct{}
	tickerStop  chan struct{}
	tickerDone  chan struct{}
}

func segName(seq uint64) string { return fmt.Sprintf("wal-%016x.log", seq) }

func parseSegName(name string) (uint64, bool) {
	if !strings.HasPrefix(name, "wal-") || !strings.HasSuffix(name, ".log") || len(name) != 4+16+4 {
		return 0, false
	}
	v, err := strconv.ParseUint(name[4:20], 16, 64)
	return v, err == nil
}

// Open opens (or creates) the WAL in o.Dir and replays it: replay is
// called, in order, for every intact record with sequence number >
// afterSeq (records ≤ afterSeq are already durable elsewhere, e.g. in a
// flushed segment, and are skipped). A torn tail of the last segment is
// truncated with a warning on o.Logger, but only when every record it
// drops has a sequence number > o.SyncedSeq (never acknowledged as
// durable) and no sync mark vouches for it; damage before the tail, or a
// record ≤ o.SyncedSeq or vouched for by a sync mark that is damaged or
// missing (a truncated or deleted segment), returns an error
// matching ErrCorrupt with the file and offset, as does a replay error
// matching ErrCorrupt (a payload that decodes badly). New records are
// written to a fresh segment; the first gets sequence number
// max(afterSeq, o.SyncedSeq, last sync-marked, last replayed)+1, so no
// sequence number is handed out twice even when o.AcceptLoss opened over
// lost records.
//
// Open validates everything before it changes anything: an error leaves
// the directory as it was.
func Open(o Options, afterSeq uint64, replay func(seq uint64, payload []byte) error) (*WAL, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	fs := o.FS
	if err := vfs.MkdirAllDurable(fs, o.Dir); err != nil {
		return nil, fmt.Errorf("wal: mkdir %s: %w", o.Dir, err)
	}
	p, err := recoverLog(o, afterSeq, replay)
	if err != nil {
		return nil, err
	}
	if p.truncPath != "" {
		o.Logger.Warn("wal: truncating torn tail", "file", p.truncPath, "offset", p.truncAt,
			"dropped_bytes", p.truncDropped, "reason", p.truncReason, "last_seq", p.last)
		if err := truncateFile(fs, p.truncPath, p.truncAt); err != nil {
			return nil, fmt.Errorf("wal: truncate torn tail of %s: %w", p.truncPath, err)
		}
	}
	if len(p.removeEmpty) > 0 {
		// Later segments holding no record: removed, so the next segment
		// continues right after the torn one.
		for _, name := range p.removeEmpty {
			if err := fs.Remove(filepath.Join(o.Dir, name)); err != nil {
				return nil, fmt.Errorf("wal: remove empty segment %s: %w", name, err)
			}
		}
		if err := vfs.SyncDir(fs, o.Dir); err != nil {
			return nil, fmt.Errorf("wal: sync %s: %w", o.Dir, err)
		}
	}
	if p.syncPath != "" && !o.TestingSkipFsync {
		// The replayed records may sit only in the page cache (a
		// process crash): make them durable before the caller records
		// them as such.
		if err := syncFile(fs, p.syncPath); err != nil {
			return nil, fmt.Errorf("wal: sync %s: %w", p.syncPath, err)
		}
	}
	next := max(p.last, o.SyncedSeq, p.marked) + 1
	w := &WAL{o: o, segs: p.segs, nextSeq: next, written: next - 1, synced: next - 1,
		flusherDone: make(chan struct{})}
	w.work = sync.NewCond(&w.mu)
	w.done = sync.NewCond(&w.mu)
	if err := w.newSegment(next); err != nil {
		return nil, err
	}
	go w.flusher()
	if o.Sync == SyncInterval {
		w.tickerStop = make(chan struct{})
		w.tickerDone = make(chan struct{})
		go w.ticker()
	}
	return w, nil
}

// CheckResult describes what Check found.
type CheckResult struct {
	// Segments are the segment file names, oldest first.
	Segments []string
	// LastSeq is the sequence number of the last intact record (or
	// afterSeq when there is none after it).
	LastSeq uint64
	// Replayed counts the records after afterSeq passed to replay.
	Replayed int
	// TornFile, TornOffset and TornReason describe the torn tail Open
	// would truncate ("" when none).
	TornFile   string
	TornOffset int64
	TornReason string
	// Lost is the loss o.AcceptLoss let through ("" when none).
	Lost string
}

// Check runs the recovery of Open over the WAL in o.Dir without changing
// anything (no truncation, no new segment; a missing directory is an
// empty log): it returns the error Open would return, or what Open would
// recover. replay is called as by Open.
func Check(o Options, afterSeq uint64, replay func(seq uint64, payload []byte) error) (CheckResult, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return CheckResult{}, err
	}
	p, err := recoverLog(o, afterSeq, replay)
	if err != nil {
		return CheckResult{}, err
	}
	r := CheckResult{LastSeq: p.last, Replayed: p.replayed, TornFile: p.truncPath, TornOffset: p.truncAt, TornReason: p.truncReason, Lost: p.lost}
	for _, sg := range p.segs {
		r.Segments = append(r.Segments, sg.name)
	}
	return r, nil
}

// recovery is the outcome of scanning a WAL directory: what Open keeps,
// truncates and removes.
type recovery struct {
	segs     []segment
	last     uint64
	replayed int
	// truncPath is the segment whose torn tail is cut at truncAt.
	truncPath             string
	truncAt, truncDropped int64
	truncReason           string
	removeEmpty           []string
	syncPath              string // the newest segment holding records
	lost                  string // AcceptLoss: the loss let through
	marked                uint64 // highest sequence number a sync mark vouches for
}

// recoverLog scans the segments of o.Dir (reads only) and decides the
// recovery; see Open for the rules.
func recoverLog(o Options, afterSeq uint64, replay func(seq uint64, payload []byte) error) (*recovery, error) {
	fs := o.FS
	names, err := fs.List(o.Dir)
	if err != nil {
		if _, serr := fs.Stat(o.Dir); serr == nil {
			return nil, fmt.Errorf("wal: list %s: %w", o.Dir, err)
		}
		names = nil // no directory (Check): an empty log
	}
	var segs []segment
	for _, n := range names {
		if s, ok := parseSegName(n); ok {
			segs = append(segs, segment{firstSeq: s, name: n})
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].firstSeq < segs[j].firstSeq })

	p := &recovery{last: afterSeq}
	// lossf reports records ≤ SyncedSeq that are not in the log: refused,
	// unless AcceptLoss.
	lossf := func(file string, off int64, format string, args ...any) error {
		err := &CorruptError{Kind: KindRecordLog, Path: file, Offset: off, Reason: fmt.Sprintf(format, args...)}
		if o.AcceptLoss {
			o.Logger.Error("wal: opening over lost acknowledged records (AcceptLoss)", "err", err)
			p.lost = err.Error()
			return nil
		}
		return err
	}
	var prevEnd uint64 // last seq of the previous segment (0: none yet)
	for i, sg := range segs {
		path := filepath.Join(o.Dir, sg.name)
		if i > 0 && prevEnd+1 != sg.firstSeq && sg.firstSeq > afterSeq+1 {
			return nil, &CorruptError{Kind: KindRecordLog, Path: path, Offset: 0, Reason: fmt.Sprintf("segment starts at sequence %d but the previous one ended at %d", sg.firstSeq, prevEnd)}
		}
		if i == 0 && sg.firstSeq > afterSeq+1 {
			return nil, &CorruptError{Kind: KindRecordLog, Path: path, Offset: 0, Reason: fmt.Sprintf("oldest segment starts at sequence %d but records after %d are needed", sg.firstSeq, afterSeq)}
		}
		if i+1 < len(segs) && segs[i+1].firstSeq <= afterSeq+1 {
			// Entirely covered by afterSeq: skip reading it.
			prevEnd = segs[i+1].firstSeq - 1
			continue
		}
		data, err := readFile(fs, path)
		if err != nil {
			return nil, fmt.Errorf("wal: read %s: %w", path, err)
		}
		res, err := Scan(data, path, sg.firstSeq, func(r Record) error {
			if r.Type != TypeBatch {
				return &CorruptError{Kind: KindRecordLog, Path: path, Offset: r.Offset, Reason: fmt.Sprintf("unexpected record type %d", r.Type)}
			}
			if r.Seq <= afterSeq {
				return nil
			}
			if replay != nil {
				if err := replay(r.Seq, r.Payload); err != nil {
					if errors.Is(err, ErrCorrupt) {
						// The record is intact but its content is
						// not: report where it is.
						return &CorruptError{Kind: KindRecordLog, Path: path, Offset: r.Offset, Reason: fmt.Sprintf("record with sequence %d: %v", r.Seq, err)}
					}
					return fmt.Errorf("wal: replay %s seq %d: %w", path, r.Seq, err)
				}
			}
			p.replayed++
			return nil
		})
		if err != nil {
			return nil, err
		}
		lastSeg := i+1 == len(segs)
		if res.Torn && !lastSeg {
			// Damage at the end of a segment that is not the newest is a
			// torn tail only if no later segment holds a record (they
			// were created, then the process died before writing any).
			// Otherwise records after the damage exist: corruption, and
			// nothing is truncated.
			held, err := laterSegmentsHoldRecords(fs, o.Dir, segs[i+1:])
			if err != nil {
				return nil, err
			}
			if held {
				return nil, &CorruptError{Kind: KindRecordLog, Path: path, Offset: res.End,
					Reason: "damaged record in a non-final segment, with records in later segments: " + res.TornReason}
			}
		}
		if res.Torn && res.LastSeq < o.SyncedSeq && res.LastSeq >= afterSeq {
			// The record at the damage was acknowledged durable: it is
			// not a torn write.
			if err := lossf(path, res.End, "record with sequence %d is damaged (%s), but every record through %d was synced",
				res.LastSeq+1, res.TornReason, o.SyncedSeq); err != nil {
				return nil, err
			}
		} else if res.Torn && res.MarkedSeq > res.LastSeq && res.LastSeq >= afterSeq {
			// A sync mark written after the fsync that covered the
			// damaged record survived it: the record was acknowledged.
			if err := lossf(path, res.End, "record with sequence %d is damaged (%s), but the sync mark at offset %d shows every record through %d was synced",
				res.LastSeq+1, res.TornReason, res.MarkOffset, res.MarkedSeq); err != nil {
				return nil, err
			}
		}
		if res.Torn {
			p.truncPath, p.truncAt, p.truncDropped, p.truncReason = path, res.End, int64(len(data))-res.End, res.TornReason
		}
		if res.LastSeq >= sg.firstSeq {
			p.syncPath = path
		}
		prevEnd = res.LastSeq
		if res.LastSeq > p.last {
			p.last = res.LastSeq
		}
		p.marked = max(p.marked, res.MarkedSeq)
		if res.Torn && !lastSeg {
			for _, later := range segs[i+1:] {
				p.removeEmpty = append(p.removeEmpty, later.name)
			}
			segs = segs[:i+1]
			break
		}
	}
	p.segs = segs
	if o.ActiveSeq > 0 {
		found := false
		for _, sg := range segs {
			found = found || sg.firstSeq == o.ActiveSeq
		}
		for _, n := range p.removeEmpty {
			found = found || n == segName(o.ActiveSeq)
		}
		if !found {
			if err := lossf(filepath.Join(o.Dir, segName(o.ActiveSeq)), 0, "the active segment is missing (deleted?)"); err != nil {
				return nil, err
			}
		}
	}
	if p.last < o.SyncedSeq && p.lost == "" {
		// The log ends before records acknowledged as durable: a
		// truncated or deleted segment.
		file, off := o.Dir, int64(0)
		if n := len(segs); n > 0 {
			file = filepath.Join(o.Dir, segs[n-1].name)
			if st, err := fs.Stat(file); err == nil {
				off = st.Size()
			}
			if p.truncPath == file {
				off = p.truncAt
			}
		}
		if err := lossf(file, off, "log ends at sequence %d, but every record through %d was synced (missing or truncated segment)",
			p.last, o.SyncedSeq); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func syncFile(fs vfs.FS, path string) error {
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// laterSegmentsHoldRecords reports whether any of segs (read from dir)
// starts with an intact record.
func laterSegmentsHoldRecords(fs vfs.FS, dir string, segs []segment) (bool, error) {
	for _, sg := range segs {
		path := filepath.Join(dir, sg.name)
		data, err := readFile(fs, path)
		if err != nil {
			return false, fmt.Errorf("wal: read %s: %w", path, err)
		}
		if _, _, reason := parseAt(data, 0); reason == "" && len(data) > 0 {
			return true, nil
		}
	}
	return false, nil
}

func readFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, st.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(data)) {
		return nil, err
	}
	return data[:n], nil
}

func truncateFile(fs vfs.FS, path string, size int64) error {
	f, err := fs.OpenReadWrite(path)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (w *WAL) fsync(f vfs.File) error {
	if w.o.TestingSkipFsync {
		return nil
	}
	return f.Sync()
}

// newSegment closes the active segment (after an fsync) and starts a new
// one whose first record is seq; the directory is fsynced so the new file
// survives a crash. Called with ioMu held (or before the WAL is shared).
func (w *WAL) newSegment(seq uint64) error {
	rotated := w.f != nil
	if w.f != nil {
		if err := w.fsync(w.f); err != nil {
			return fmt.Errorf("wal: sync before rotation: %w", err)
		}
		w.rotMu.Lock()
		err := w.f.Close()
		w.f = nil
		w.rotMu.Unlock()
		if err != nil {
			return fmt.Errorf("wal: close segment: %w", err)
		}
	}
	name := segName(seq)
	path := filepath.Join(w.o.Dir, name)
	f, err := w.o.FS.Create(path)
	if err != nil {
		return fmt.Errorf("wal: create %s: %w", path, err)
	}
	if !w.o.TestingSkipFsync {
		if err := vfs.SyncDir(w.o.FS, w.o.Dir); err != nil {
			f.Close()
			return fmt.Errorf("wal: sync dir %s: %w", w.o.Dir, err)
		}
	}
	if rotated && w.o.OnRotate != nil {
		w.o.OnRotate(seq)
	}
	w.rotMu.Lock()
	w.f = f
	w.rotMu.Unlock()
	w.segSize = 0
	w.mu.Lock()
	// Re-creating a name (after a truncated-to-empty recovery) replaces it.
	if n := len(w.segs); n > 0 && w.segs[n-1].firstSeq == seq {
		w.segs = w.segs[:n-1]
	}
	w.segs = append(w.segs, segment{firstSeq: seq, name: name})
	w.mu.Unlock()
	return nil
}

// Append writes payload as one record and returns its sequence number once
// acknowledged under the sync policy (SyncAlways: after the covering
// fsync). Concurrent calls are batched into one write and one fsync. After
// a write or fsync failure every call returns an error wrapping ErrFailed
// and the cause. A payload of 64 KiB or more is written from payload
// itself, not copied: the caller must not modify it while Append runs.
func (w *WAL) Append(payload []byte) (uint64, error) {
	return w.AppendPieces([][]byte{payload})
}

// AppendPieces is Append of the payload that is the concatenation of
// pieces (one record, one CRC), written from the pieces themselves when
// the payload is 64 KiB or more.
func (w *WAL) AppendPieces(pieces [][]byte) (uint64, error) {
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	if size > MaxPayloadBytes {
		return 0, fmt.Errorf("wal: record of %d bytes exceeds %d", size, MaxPayloadBytes)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, ErrClosed
	}
	seq := w.nextSeq
	w.nextSeq++
	if len(w.pending) == 0 {
		w.pendFrom = seq
	}
	w.pending = appendHeaderPieces(w.pending, TypeBatch, seq, pieces, size)
	for _, p := range pieces {
		if size >= directPayloadBytes {
			w.direct = append(w.direct, directPayload{at: len(w.pending), data: p})
		} else {
			w.pending = append(w.pending, p...)
		}
	}
	w.work.Signal()
	for {
		acked := w.written
		if w.o.Sync == SyncAlways {
			acked = w.synced
		}
		if acked >= seq {
			return seq, nil
		}
		if w.err != nil {
			return 0, w.err
		}
		w.done.Wait()
	}
}

func (w *WAL) fail(err error) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: %w", ErrFailed, err)
		w.o.Logger.Error("wal: write path failed; WAL is read-only until reopened", "dir", w.o.Dir, "err", err)
	}
	w.done.Broadcast()
}

func (w *WAL) flusher() {
	defer close(w.flusherDone)
	w.mu.Lock()
	for {
		for len(w.pending) == 0 && !w.closed {
			w.work.Wait()
		}
		if len(w.pending) == 0 && w.closed {
			w.mu.Unlock()
			return
		}
		buf, direct, from, last := w.pending, w.direct, w.pendFrom, w.nextSeq-1
		w.pending, w.spare = w.spare[:0], nil
		w.direct, w.spareDirect = w.spareDirect[:0], nil
		failed := w.err != nil
		w.mu.Unlock()

		var err error
		if !failed {
			err = w.writeBatch(buf, direct, from, last)
		}

		w.mu.Lock()
		w.spare = buf[:0]
		clear(direct) // the appenders' payloads are theirs again
		w.spareDirect = direct[:0]
		if failed {
			continue // appenders already see the sticky error
		}
		if err != nil {
			w.fail(err)
			continue
		}
		w.written = last
		if w.o.Sync == SyncAlways {
			w.synced = last
		}
		w.done.Broadcast()
	}
}

// directPayloadBytes is the payload size from which Append writes a
// record's payload from the caller's slice rather than copying it into
// the pending buffer (a 64 MiB batch would otherwise be held twice).
const directPayloadBytes = 64 << 10

// directPayload is a pending payload written from its appender's slice,
// after the first at bytes of the pending buffer.
type directPayload struct {
	at   int
	data []byte
}

// writeBatch writes the framed records from..last: buf, with each direct
// payload written at its place in it (one write(2) when there is none);
// under SyncAlways it then fsyncs and writes a sync mark for last.
func (w *WAL) writeBatch(buf []byte, direct []directPayload, from, last uint64) error {
	w.ioMu.Lock()
	defer w.ioMu.Unlock()
	if w.segSize >= w.o.SegmentSizeBytes || (w.rotateReq.Load() && w.segSize > 0) {
		w.rotateReq.Store(false)
		if err := w.newSegment(from); err != nil {
			return err
		}
	}
	write := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		n, err := w.f.Write(b)
		w.segSize += int64(n)
		if err != nil {
			return fmt.Errorf("wal: write: %w", err)
		}
		return nil
	}
	at := 0
	for _, d := range direct {
		if err := write(buf[at:d.at]); err != nil {
			return err
		}
		if err := write(d.data); err != nil {
			return err
		}
		at = d.at
	}
	if err := write(buf[at:]); err != nil {
		return err
	}
	if w.o.Sync == SyncAlways {
		if err := w.fsync(w.f); err != nil {
			return fmt.Errorf("wal: fsync: %w", err)
		}
		return w.writeSyncMark(last)
	}
	return nil
}

// writeSyncMark appends a sync mark for seq to the active segment, after
// the fsync that made every record through seq durable. The mark itself
// is not fsynced: it is in the page cache before the records it vouches
// for are acknowledged, so it survives a crash of the process (kill -9),
// and recovery then knows that damage to those records is a loss, not a
// torn write. After a power failure it may be gone, and recovery falls
// back to the manifest's synced epoch. Called with ioMu held.
func (w *WAL) writeSyncMark(seq uint64) error {
	var b [HeaderSize]byte
	mark := AppendRecord(b[:0], TypeSyncMark, seq, nil)
	n, err := w.f.Write(mark)
	w.segSize += int64(n)
	if err != nil {
		return fmt.Errorf("wal: write sync mark: %w", err)
	}
	return nil
}

func (w *WAL) ticker() {
	defer close(w.tickerDone)
	t := time.NewTicker(w.o.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-w.tickerStop:
			return
		case <-t.C:
			w.Sync()
		}
	}
}

// Sync fsyncs everything written so far (useful under SyncInterval and
// SyncNone). It returns the sticky error if the WAL has failed.
//
// It does not hold up writers: only rotation waits for it. Every record
// counted in target was fully written before the fsync starts; if a
// rotation moved them to an earlier segment, that segment was fsynced
// before it was closed.
func (w *WAL) Sync() error {
	w.syncMu.Lock() // one Sync at a time (ticker, Close, callers)
	defer w.syncMu.Unlock()
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	target := w.written
	synced := w.synced
	w.mu.Unlock()
	if target <= synced {
		return nil
	}
	w.rotMu.RLock()
	if w.f == nil {
		w.rotMu.RUnlock()
		return nil
	}
	err := w.fsync(w.f)
	w.rotMu.RUnlock()
	if err != nil {
		err = fmt.Errorf("wal: fsync: %w", err)
	} else {
		// Records through target precede the mark: each was written
		// (to this segment or an earlier, fsynced one) before target was
		// read. ioMu keeps the mark out of the middle of a batch write.
		w.ioMu.Lock()
		if w.f != nil {
			err = w.writeSyncMark(target)
		}
		w.ioMu.Unlock()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.fail(err)
		return w.err
	}
	if target > w.synced {
		w.synced = target
	}
	return nil
}

// Synced returns the highest sequence number known durable.
func (w *WAL) Synced() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced
}

// LastSeq returns the highest sequence number assigned so far.
func (w *WAL) LastSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nextSeq - 1
}

// Err returns the sticky failure (wrapping ErrFailed), or nil.
func (w *WAL) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// ActiveSeq returns the first sequence number of the active segment.
func (w *WAL) ActiveSeq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.segs[len(w.segs)-1].firstSeq
}

// Segments returns the file names of the segments, oldest first.
func (w *WAL) Segments() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, len(w.segs))
	for i, s := range w.segs {
		out[i] = s.name
	}
	return out
}

// TruncateBefore deletes the segment files all of whose records have
// sequence numbers < seq, i.e. are durable elsewhere (after a flush). The
// active segment is never deleted. Removal errors are returned but do not
// fail the WAL (a leftover segment is skipped on the next Open).
func (w *WAL) TruncateBefore(seq uint64) error {
	w.mu.Lock()
	var drop []segment
	for len(w.segs) > 1 && w.segs[1].firstSeq <= seq {
		drop = append(drop, w.segs[0])
		w.segs = w.segs[1:]
	}
	w.mu.Unlock()
	var errs []error
	for _, s := range drop {
		if err := w.o.FS.Remove(filepath.Join(w.o.Dir, s.name)); err != nil {
			errs = append(errs, fmt.Errorf("wal: remove %s: %w", s.name, err))
		}
	}
	if len(drop) > 0 {
		if err := vfs.SyncDir(w.o.FS, w.o.Dir); err != nil {
			errs = append(errs, fmt.Errorf("wal: sync dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Close waits for pending appends, fsyncs (all policies), and closes the
// active segment. It returns the sticky error if the WAL failed.
func (w *WAL) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.closed = true
	w.work.Signal()
	w.mu.Unlock()
	<-w.flusherDone
	if w.tickerStop != nil {
		close(w.tickerStop)
		<-w.tickerDone
	}
	serr := w.Sync()
	w.ioMu.Lock()
	w.rotMu.Lock()
	var cerr error
	if w.f != nil {
		cerr = w.f.Close()
		w.f = nil
	}
	w.rotMu.Unlock()
	w.ioMu.Unlock()
	if serr != nil {
		return serr
	}
	if cerr != nil {
		return fmt.Errorf("wal: close: %w", cerr)
	}
	return nil
}
