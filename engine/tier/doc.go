// Package tier is Strata's storage engine under the indexes: durability,
// visibility and (in later landings) the life cycle of data across the
// hot, warm and cold tiers (DESIGN.md "Data model", "Write path").
//
// This first landing is the durable core:
//
//   - Store: WAL (package wal) + epochs + the hot MemTable + the manifest.
//     Every file operation goes through internal/vfs, so the crash tests run
//     on vfs.NewCrashableMem and the fault tests on internal/vfs/errorfs.
//   - Epochs: one write Batch = one WAL record = one epoch (the WAL sequence
//     number is the epoch). Batches are applied to the MemTable strictly in
//     epoch order after their record is acknowledged, then published; a
//     version lives in [e_birth, e_death). An upsert of an existing id sets
//     the old version's e_death to the new epoch in the same locked step that
//     adds the new version; a delete sets e_death. A Snapshot pins an epoch e
//     and sees exactly the versions with e_birth ≤ e < e_death.
//   - MemTable: all versions since the last flush; exact float32 vectors in
//     one row-major arena, brute-force search with asm.L2SqBatch/DotBatch in
//     blocks of 512 rows. Each row is checked for visibility at the pinned
//     epoch (and against the filter) before it may enter the top-k heap, so
//     stale versions never take a slot (E_stale = 0 by construction). Cost
//     per query: O(rows·d) including dead rows, which a flush removes. The
//     lexical side waits for engine/bm25: LexicalIndexer is the hook.
//   - Manifest: segment set + durable epoch, an append-only edit log with
//     periodic checkpoints, CURRENT replaced atomically.
//   - SegmentIndex / SegmentIndexBuilder / SegmentIndexKind: the seam the
//     next landing (flush, compaction, cold tier) builds segment indexes
//     through; not implemented yet.
//
// Document is a local, simplified type until engine/contract exists (see
// its comment).
//
// # Files in a store directory
//
//	LOCK                 flock(2) held while open
//	CURRENT              "MANIFEST-<n>\n", replaced by vfs.WriteFileAtomic
//	MANIFEST-<n>         record log (wal framing): checkpoint, then edits
//	wal/wal-<seq>.log    WAL segments (see package wal)
//
// # Batch payload (WAL record type 1, version byte 1)
//
//	+-----+---------------+----------------------------------------------+
//	| 0x01| uvarint nops  | op × nops                                    |
//	+-----+---------------+----------------------------------------------+
//	op     = kind u8 (1 upsert, 2 delete) | str id | [upsert body]
//	upsert = str content | str source_uri | str namespace | trust u8 |
//	         uvarint nacl, str × nacl | uvarint nmeta, (str key, str value) × nmeta
//	         (keys sorted) | uvarint dim, float32 LE × dim |
//	         version_hash [32]byte | varint updated_unix_nano
//	str    = uvarint length | bytes
//
// # Manifest records (record types 16 checkpoint, 17 edit; payload version 1)
//
//	+-----+----------------------+-----------------------+
//	| 0x01| uvarint durableEpoch | uvarint nextSegmentID |
//	+-----+----------------------+-----------------------+
//	| uvarint nadd | segment × nadd | uvarint nremove | uvarint id × nremove |
//	segment = uvarint id | str file | uvarint minEpoch | uvarint maxEpoch |
//	          uvarint rows | uvarint sizeBytes
//
// The first record of a MANIFEST file (sequence number 1) is a checkpoint:
// an edit that builds the whole state from empty. Each later record is an
// edit, fsynced before Apply returns. After CheckpointEdits edits a new
// MANIFEST-<n+1> is written with a checkpoint, fsynced, the directory
// fsynced, CURRENT atomically replaced (temp → fsync → rename → fsync dir),
// and the old file removed.
//
// # Recovery rules
//
//  1. Open reads CURRENT; no CURRENT means a new store.
//  2. The MANIFEST is scanned with the WAL's rules: a torn final edit (never
//     acknowledged) is truncated with a warning; damage before it is
//     ErrCorrupt naming the file and byte offset.
//  3. The WAL is replayed after the manifest's durable epoch into a fresh
//     MemTable, with the WAL's torn-tail/corruption rules. A record whose
//     CRC is fine but whose batch does not decode is ErrCorrupt (file and
//     offset of the record).
//  4. Any WAL or manifest write/fsync error makes the store read-only
//     (ErrReadOnly, Store.Err for /healthz) until reopened; fsyncs are
//     never retried (PostgreSQL fsyncgate, 2018).
//
// Sources: pebble (MANIFEST + CURRENT, vfs crash testing, record/),
// LevelDB log format, Tantivy's atomic write, PostgreSQL fsyncgate.
package tier
