// Package wal is Strata's write-ahead log: records with consecutive
// sequence numbers (one record = one write batch = one epoch), CRC32C
// framed, group-committed, in rotating segment files. It also provides the
// record framing (AppendRecord, Scan) that the manifest reuses.
//
// Why a sub-package: the framing and the log are self-contained, have
// their own fuzzed decoder and benchmarks, and know nothing of documents
// or epochs; engine/tier builds on them (as pebble keeps record/ and wal/
// apart from the DB).
//
// # Record format (version 1)
//
// Every integer is little-endian.
//
//	0        4        8      9      10                 18
//	+--------+--------+------+------+------------------+=================+
//	| CRC32C | length | type | ver  | sequence number  | payload         |
//	| uint32 | uint32 | u8   | u8=1 | uint64           | length bytes    |
//	+--------+--------+------+------+------------------+=================+
//	CRC32C (Castagnoli) covers bytes [4, 18+length): header after the CRC
//	plus the payload. type 0 is invalid (so zero-filled space never
//	parses); 1 = WAL batch, 2 = sync mark, 16 = manifest checkpoint,
//	17 = manifest edit, 32 / 33 = ingest manifest journal header / edit.
//	length ≤ 64 MiB.
//
// A sync mark has an empty payload and the sequence number of an earlier
// record: it says every record up to that one was fsynced. It consumes no
// sequence number. The WAL writes one after each fsync that acknowledges
// records (each group commit under SyncAlways, each Sync otherwise),
// without fsyncing it.
//
// Records are packed back to back with no block structure: a record is
// written by one write(2) in a group-commit batch, and recovery does not
// need block alignment because the sequence numbers let it re-synchronise
// (see below). A WAL segment file is named wal-<first sequence number as
// 16 hex digits>.log and holds consecutive records.
//
// # Recovery rules
//
// Scan reads a file record by record, expecting sequence numbers
// first, first+1, ...
//
//  1. An intact record (complete, known type and version, CRC ok) with the
//     expected sequence number is accepted.
//  2. An intact record with any other sequence number is corruption.
//  3. At the first position that is not an intact record, Scan searches
//     the rest of the file for any intact record with a sequence number ≥
//     the expected one. If one exists, the damage is in the middle of the
//     log: a hard error (ErrCorrupt, *CorruptError with file and byte
//     offset); the log is never silently cut before acknowledged data.
//  4. If none exists, the rest is a torn tail (an interrupted final
//     write, or a zero-filled preallocated region): it is truncated, with
//     a warning logged through log/slog naming the file, offset, dropped
//     bytes and reason, provided every record it drops is after
//     Options.SyncedSeq.
//  5. Options.SyncedSeq is what the caller knows was acknowledged as
//     durable (the tier's manifest records it at Open, at each rotation
//     through Options.OnRotate, and at Close). A damaged or missing
//     record at or before it is not a torn write but a loss: ErrCorrupt
//     naming the file and offset, as is the absence of the segment
//     Options.ActiveSeq names (the active segment is never deleted). This
//     plays the part of pebble's WAL sync offsets, kept outside the log
//     so that truncating or deleting WAL files cannot erase it. Records
//     after the last recorded point (a crash after the newest
//     acknowledgements) keep rule 4, with one more check: a sync mark
//     after the damage that vouches for a damaged record (the only intact
//     record after it) shows the record was fsynced and acknowledged, so
//     its damage is a loss too. The mark is in the page cache before the
//     acknowledgement, so a killed process leaves it on disk; a power
//     failure may not, and then only SyncedSeq holds (damage to the last
//     acknowledged records of a crashed machine is indistinguishable from
//     a torn write). Options.AcceptLoss logs the loss and opens anyway;
//     new sequence numbers still start above SyncedSeq.
//
// Open decides everything before it changes anything (Check runs the same
// scan and changes nothing), and fsyncs the newest replayed segment, so
// what it recovered is durable before the caller records it.
//
// Across segments: the oldest needed segment must start right after the
// caller's afterSeq (records up to it are durable elsewhere), and each
// segment must start right after the previous one's last record; a gap is
// ErrCorrupt. A segment is fsynced before the next one is created and the
// directory is fsynced after creation, so only the last segment can have
// a torn tail with records missing. After recovery new records go to a
// fresh segment.
//
// Known limits of rule 3: if a disk persisted a later part of the final
// unsynced write but not an earlier part (out-of-order page writeback), an
// intact record follows the damage and Open reports corruption even though
// only unacknowledged data is affected; this errs on the loud side. If
// damage in the middle also destroyed every later record, it is
// indistinguishable from a torn tail.
//
// # Durability and failures
//
// SyncAlways (default) acknowledges after the fsync covering the record;
// concurrent Appends are batched by a flusher goroutine into one write(2)
// and one fsync (group commit). SyncInterval acknowledges after write(2)
// and fsyncs every SyncInterval; SyncNone only fsyncs at rotation and
// Close. After any write or fsync error the WAL is failed for good: every
// later Append, Sync and Close returns the error (wrapping ErrFailed). It
// never retries an fsync and assumes success: after a failed fsync Linux
// may have dropped the dirty pages and cleared the error, so a retry can
// "succeed" over lost data (the PostgreSQL fsyncgate discussion, 2018;
// Rebello et al., "Can Applications Recover from fsync Failures?", ATC
// 2020). Reopening recovers from what is actually on disk.
//
// TruncateBefore(seq) deletes whole segments whose records are all below
// seq, once a flush has made them durable elsewhere. Segments are deleted,
// not recycled (renamed and overwritten as pebble does): recycling saves
// file-system metadata work but requires each record to carry the log
// number to reject stale records from the file's previous life; deletion
// is simpler and the sequence-number check catches any leftover file.
//
// Sources: LevelDB log format (doc/log_format.md) and pebble record/ for
// CRC + length framing and torn-tail handling; pebble wal/ and
// LogWriter for group commit; PostgreSQL fsyncgate (2018) for the
// fail-stop rule.
//
// # Measured (BenchmarkAppend, 256-byte records, ext4 in a container on a
// shared 2-core Xeon; -benchtime=300ms)
//
//	policy    writers  appends/s  p50 ack  p99 ack
//	always    1          ~2 000    162 µs   4.3 ms
//	always    8          ~2 700    398 µs  35.6 ms
//	interval  1        ~326 000      1 µs    25 µs
//	interval  8        ~331 000      1 µs    78 µs
//	none      1        ~423 000      1 µs    29 µs
//	none      8        ~284 000      1 µs   179 µs
//
// fsync latency on this machine dominates SyncAlways; the figures vary a
// lot with other load on the shared host.
package wal
