// Package tier is Strata's storage engine under the indexes: durability,
// visibility and the life cycle of data across the hot, warm and cold
// tiers (DESIGN.md "Data model", "Write path"). Its parts:
//
//   - Store: WAL (package wal) + epochs + the hot MemTable + the manifest +
//     immutable warm segments. Every file operation goes through
//     vfs, so the crash tests run on vfs.NewCrashableMem and the
//     fault tests on vfs/errorfs.
//
//   - Epochs: one write Batch = one WAL record = one epoch (the WAL sequence
//     number is the epoch). Batches are applied strictly in epoch order
//     after their record is acknowledged, then published; a version lives
//     in [e_birth, e_death). An upsert of an existing id sets the old
//     version's e_death to the new epoch in the same locked step that adds
//     the new version; a delete sets e_death. When the old version is a
//     warm-segment row, that step writes the row's in-memory death column
//     (a tombstone). A Snapshot pins an epoch e and sees exactly the
//     versions with e_birth ≤ e < e_death, in every tier.
//
//   - MemTable: all versions since the last flush; exact float32 vectors in
//     one row-major arena, brute-force search with asm.L2SqBatch/DotBatch in
//     blocks of 512 rows. Each row is checked for visibility at the pinned
//     epoch (and against the filter) before it may enter the top-k heap, so
//     stale versions never take a slot (E_stale = 0 by construction).
//     The lexical side is a hook: the LexicalIndexer of each MemTable
//     (Options.NewLexical; the engine plugs in an engine/bm25 builder) and
//     the BM25 section of each warm segment (LexicalSegmentBuilder).
//
//   - Flush (Store.Flush, or automatically past Options.MemTableSizeBytes,
//     whose segment defers its vector index: below):
//     under the apply lock, briefly, the MemTable is frozen at the newest
//     applied epoch F and an empty one takes its place (views hold
//     [active, frozen..., segments, archives]; readers see all of them at
//     their epoch). Writes then continue while the frozen versions live
//     at F become one warm segment file (below): temp → fsync → rename →
//     fsync dir. A write that upserts or deletes an id whose live version
//     is in a frozen MemTable ends that version (e_death), as it ends a
//     warm row. Under the apply lock again, briefly: those deaths (all
//     after F) are carried over to the new rows, ONE manifest edit {add
//     segment, tombstones of warm and cold rows that died in (old durable
//     epoch, F], durable epoch := F} commits, the view drops the frozen
//     MemTable, and WAL files holding only epochs ≤ F are deleted (the
//     active one too, after a rotation, when nothing after F was
//     written: wal.WAL.RetireThrough). A
//     crash before the edit replays the WAL after the old durable epoch;
//     after it, the WAL after F (whose records end rows of the new
//     segment by id). A failed segment write leaves the frozen MemTable
//     in the view (its writes are still in the WAL); the next flush
//     builds it together with everything frozen since. Backpressure
//     counts frozen MemTables in the MemTable bound.
//
//   - Deferred vector indexes (deferred.go): a background flush writes
//     its segment with a flat vector section (exact scan) instead of the
//     configured index, so ingest is not slowed by graph builds (as
//     Qdrant's indexing threshold and LanceDB's separate index build).
//     An index build then rewrites each such segment, one at a time, with
//     the index of Options.SegmentIndex ("ivfpq": only with IVFMinRows
//     vectors), keeping every row in its order (ids, documents, vectors,
//     e_birth; the BM25 section byte for byte) except those dead at every
//     epoch ≥ the oldest pinned one, which any merge drops (segment
//     boundaries do not change) and committing as a merge does (below):
//     new file temp → fsync → rename → fsync dir, then under the
//     maintenance lock with writes held the deaths carried over (writes
//     during the build included) and ONE manifest edit {remove the flat
//     segment, add the indexed one, its tombstones ≤ durable epoch}. A
//     crash at any point leaves complete segments listed. The background
//     index lane starts a build once no write arrived for 100 ms (or once
//     CompactFanIn segments wait), and builds with every core while none
//     arrive and with BuildThreads goroutines while they do; Store.Flush
//     builds every pending segment itself with every core (and waits for
//     those a build or merge holds), so after Flush every segment that
//     existed when it started has its configured index; Open resumes the builds for the flat segments it
//     finds. Index builds and merges reserve their inputs in one set, so
//     neither takes a segment the other holds; a merge of flat segments
//     builds the index too. Options.ManualIndex leaves the builds to
//     Flush (a read replica).
//
//   - Warm search: per segment, a roaring Allow bitmap of the rows visible
//     at the snapshot epoch that pass the caller's filter is built and
//     handed to the segment's vector index, which applies it while it
//     generates candidates: engine/hnsw during traversal (small
//     allow-lists are scored exactly), engine/ivfpq inside the list scan
//     (SearchParams.Allow), the flat scan per row. MemTable hits (exact)
//     and segment hits (HNSW, SegmentEfSearch; IVF-PQ, IVFNprobe lists,
//     refined exactly with IVFKFactor) are merged into the top k. The bitmap
//     is all rows minus the rows dead by the epoch (a per-segment dead
//     list, O(#dead)); none at all when nothing died and there is no
//     filter; a filter is called once per remaining row.
//
//   - Views and refcounts: a Snapshot holds the view (MemTables + segment
//     and archive lists) current when it was pinned; Flush, Compact,
//     Archive and Promote install new views. A segment removed by compaction is unmapped and its file
//     deleted when the last view holding it is released.
//
//   - Compaction (Store.Compact, or in the background with
//     Options.AutoCompact; compact.go) is incremental: each merge takes
//     at most CompactFanIn segments, chosen size-tiered (a tier of more
//     than CompactMaxSegments similar-sized segments, or the smallest
//     segments once the count reaches SlowdownSegments), or rewrites one
//     segment whose dead fraction ρ_dead (rows dead at every epoch ≥ the
//     oldest pinned epoch P) exceeds θ_compact (CompactDeadFraction,
//     default 0.2). Background merges run in their own goroutines beside
//     flushes, so the write stalls at StopSegments are bounded by one
//     merge of small segments, not by the collection size. A merge
//     writes one segment without the rows dead before P, with a rebuilt
//     index of the store's current
//     SegmentIndex: the HNSW graph re-linked, or the IVF-PQ quantizers
//     re-trained on the survivors and their codes re-encoded (so
//     approximate results may change; exact-refined distances of common
//     hits do not). The build runs with
//     writes and queries going on; writes then wait briefly while deaths
//     that happened meanwhile are carried over and one manifest edit
//     {remove inputs, add output, its tombstones ≤ durable epoch} swaps
//     the segment set.
//
//   - Archive compaction (Store.CompactArchives, also run by Compact):
//     a cold archive whose dead fraction (rows dead at every epoch ≥
//     min(P, durable epoch)) exceeds θ_compact is rewritten without those
//     rows under a new id, reusing its codec and 18-byte codes (no
//     retraining); deaths during the rewrite are carried over and one
//     manifest edit {remove old archive, add new one, its tombstones ≤
//     durable epoch} swaps them. An archive with no surviving row is just
//     removed. The old file is deleted when the last view holding it is
//     released, so a deleted row's content leaves the disk without a
//     promote.
//
//   - Manifest: segment set + durable epoch + persisted tombstones, an
//     append-only edit log with periodic checkpoints, CURRENT replaced
//     atomically.
//
//   - Warm vector index (Options.SegmentIndex, per store / collection):
//     "hnsw" (default) or "ivfpq" (segivf.go). An "ivfpq" build trains
//     engine/ivfpq on the segment's vectors (seeded, IVFSeed; nlist
//     clamp(4·√n, 1, 4096), M = Dim/8 for 8-bit codes, nprobe nlist/8,
//     refine ×4 by default) and stores its WriteTo bytes as the ivfpq
//     section; at open the section is used in place (ivfpq.Open over the
//     mmap) and the segment's float32 vectors, decoded from the doc
//     store into one contiguous array (the documents' Vector slices point
//     into it for L2 and IP; normalised copies for Cosine), serve
//     refinement, so hits carry exact distances comparable across tiers.
//     PQ encodes the vectors themselves for every metric (ivfpq
//     ResidualOff): L2 by residual would make engine/ivfpq build its
//     precomputed tables on the first search, 4·nlist·M·2^nbits bytes per
//     segment (≈13× the section: 40 MB for 10k fashion-mnist-784
//     vectors), which an opened index cannot bound; measured, codes of the
//     vectors search faster with equal refined recall on fashion-mnist
//     (buildIVFSection). A by-residual L2 section (written before this
//     choice) still opens and builds the tables, uncounted in
//     VectorIndexBytes, until a compaction re-encodes it. Open checks
//     that the section holds exactly the ids 0..n−1 (else ErrCorrupt).
//     Below IVFMinRows vectors (default 1024; or with non-finite
//     vectors) the segment gets a flat section instead and is scanned
//     exactly. When a filter leaves fewer allowed vectors in the probed
//     lists than k, the search re-probes every list, and a very selective
//     allow-list (under 1/8 of the vectors the probes would scan) is
//     scanned exactly, so a segment returns min(k, #allowed) hits as the
//     HNSW path does. The kind is recorded per segment (its section), so
//     reopening with another SegmentIndex reads every segment and mixed
//     stores work; IVFNprobe and IVFKFactor are search options, not
//     stored. SegmentIndex / SegmentIndexBuilder / SegmentIndexKind
//     (segment.go) remain an unused seam: both kinds are built directly.
//
//   - Metadata: for Options.IndexedMetadata keys each warm segment keeps
//     per-value roaring bitmaps (built in memory from the doc store when
//     the segment opens, not stored in the file); SearchVectorWhere
//     intersects them before the visibility check.
//
//   - Lexical hooks: Options.NewLexical gives every MemTable its own
//     LexicalIndexer (version numbers restart at 0 after a flush);
//     Options.LexicalSegments builds each warm segment's optional BM25
//     section (LexicalSegmentBuilder), preferably from the MemTable's own
//     index (LexicalFlusher, called with the flushed version numbers in
//     row order) and, at compaction, by merging the inputs' sections
//     (LexicalMerger). A flush's segment rows are the live versions in
//     version order. Snapshot.HotLexical and VisibleHot (every MemTable
//     of the view, frozen ones included; MemLexical and Visible: the
//     active one), WarmSegments and VisibleRow (ColdArchives and
//     VisibleColdRow) expose them. A lexical search across tiers is the
//     counterpart of SearchVector (lexical.go): LexicalViews turns the
//     caller's BM25 segment of each row set into a bm25.View whose Allow
//     bitmap holds the rows live at the snapshot that the caller keeps
//     (optionally bounded by a per-view bitmap, LexicalSets.Only, so the
//     caller is asked only about those rows), and SearchLexical runs one BM25 search over such views.
//     ReplayedRecords reports how much WAL Open replayed.
//
//   - Cold tier (cold.go): Store.Archive writes warm segments' live rows
//     to one Parquet archive (parquet-go, zstd; layout below) with an
//     18-byte code per vector (engine/ivfpq ColdCodec: 2-byte IVF
//     centroid + 16 8-bit PQ codes, trained per archive on its vectors,
//     zero-padded to a multiple of 16 dimensions; cosine vectors are
//     normalised and coded for inner product) and, unless
//     ArchiveOptions.OmitVectors, the exact vectors. Write: temp → fsync
//     → rename → fsync dir, then ONE manifest edit {remove the segments,
//     add the archive, tombstones ≤ durable epoch of rows that died while
//     it was built}. An archive is decoded into memory when opened (ids,
//     epochs, documents, codes, vectors): the tier saves disk, not RAM.
//     Epochs: an archive row has a death column like a warm row; an
//     upsert or delete of its id ends it in the same locked step
//     (applyLocked: warm segments first, then archives), Flush persists
//     those deaths as manifest tombstones naming the archive (archives
//     share the segment id space), and WAL replay rebuilds later ones by
//     id. Get, LiveIDs and therefore every delete path see cold rows;
//     vector search sees them only through Snapshot.SearchCold or a
//     WithCold handle (the engine asks when a query's Tiers include cold):
//     an ADC scan of every code, visibility and filter checked per code
//     before it may enter the heap, then exact rerank of the best 4·k.
//     Store.Promote rebuilds a warm segment from an archive's live rows
//     (same ids, contents, metadata, epochs, vectors) and swaps the
//     manifest {remove archive, add segment} in one edit.
//
//   - Backup (backup.go): Store.Backup hard-links (or copies) the
//     manifest's segment and archive files, copies the WAL, and writes a
//     fresh manifest into a directory while writes continue; Open on that
//     directory restores. Flush/Compact/Archive/Promote wait meanwhile.
//
//   - Storage amplification: Snapshot.StorageStats reports bytes, bytes
//     per vector and α_storage = bytes / raw text bytes per tier.
//
//   - Write backpressure (backpressure.go, Options.SlowdownSegments ...):
//     too many warm segments or too much unflushed MemTable first slow
//     every write down, then block it until flushes and compaction catch
//     up, for at most StallTimeout, after which it fails with
//     ErrWriteStall without writing anything.
//
// Document is the tier's storage form of a chunk version, simpler than
// engine/contract's Document (string metadata values); the engine converts
// at its boundary (see its comment).
//
// Dense search stops when its context is done (SearchVectorContext,
// SearchVectorWhereContext, SearchColdContext): the MemTable scans look
// at it every 512 rows, a segment's visibility and filter pass every 512
// rows, the segment's index search in its own loops (packages hnsw and
// ivfpq; the exact scan every 512 vectors), the cold scan every few
// thousand codes, and no further tier is searched. The hits found so far
// are merged and returned with ctx.Err().
//
// # Files in a store directory
//
//	LOCK                 flock(2) held while open
//	CURRENT              "MANIFEST-<n>\n", replaced by vfs.WriteFileAtomic
//	MANIFEST-<n>         record log (wal framing): checkpoint, then edits
//	wal/wal-<seq>.log    WAL segments (see package wal)
//	seg-<id>.sst         warm segments (below); for files the manifest does
//	                     not list see "Recovery rules"
//	cold-<id>.parquet    cold archives (below); same rule
//	quarantine/          unreferenced files Open could not prove garbage
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
// # Warm segment file (seg-<id>.sst, format version 1 to 5, little-endian)
//
// This build writes version 5 (earlier builds do not read it) and reads
// all five. Earlier builds wrote HNSW segments as version 1 and IVF-PQ
// and flat segments as version 2, then versions 3 and 4. A segment with
// a vector has exactly one of the sections hnsw, ivfpq, flat; versions 1
// and 4 only hnsw. Versions 3 to 5 store every row's content in the text
// section instead of the doc store (whose rows then have empty content,
// none at all in version 5), and are the only versions with the
// textIndex and text sections; text is the last section. Version 4 was
// written for HNSW segments: its doc store also stores each vector once,
// in the hnsw section, and holds a reference to it (below); version 3
// for the others. Version 5 is either, vectors by reference exactly when
// there is an hnsw section, with compact rows (below).
//
//	+---------------------------------------------------------------+
//	| "STRATSEG" (8) | format version u32 | flags u32 (0)            |  header, 16 B
//	+---------------------------------------------------------------+
//	| section data, each starting at a 64-byte-aligned offset      |
//	+---------------------------------------------------------------+
//	| section table: nsec × { kind u32 | 0 u32 | offset u64 |       |
//	|                         length u64 | crc32c u32 | 0 u32 }      |  32 B each
//	+---------------------------------------------------------------+
//	| tableOff u64 | nsec u32 | tablecrc u32 | crc32c u32 | 0 u32 |  |
//	| "STRATEND" (8)                                                |  footer, 32 B
//	+---------------------------------------------------------------+
//
// The footer CRC32C (Castagnoli) covers every byte before it; each section
// also carries its own CRC32C; tablecrc is the section table's CRC32C in
// versions 3 to 5 (0 before). Sections:
//
//	1 meta  uvarint dim | metric u8 | uvarint rows | uvarint minEpoch |
//	        uvarint maxEpoch | uvarint docStoreRawBytes
//	2 docs  zstd frame (klauspost/compress) of: uvarint rows, then per row
//	        uvarint e_birth | str id | upsert body (as in the batch payload:
//	        content, source uri, namespace, trust, acl, metadata, vector
//	        float32 × d, version hash, timestamp). Version 4: the body's
//	        vector count is 0 and the body is followed by the vector
//	        reference: uvarint n (0 = no vector, else d) | when n > 0:
//	        (cosine) norm f64 | uvarint e | e × {uvarint component |
//	        f32 bits}; the vector is rebuilt from the r-th hnsw vector u
//	        (r: its ordinal among the rows with one) as float32(u_i·norm)
//	        (cosine) or u_i, with the e listed components replaced: bit
//	        for bit the vector written (vecref.go). Version 5: per row
//	        uvarint e_birth | str id | source uri, namespace, trust, acl,
//	        metadata, vector (as in the body; count 0 with an hnsw
//	        section) | version hash code u8: 0 = the hash is BLAKE3-256
//	        of the row's content and is not stored (computed when first
//	        asked, Document.Hash; written only for contents of at most
//	        1 KiB), 1 = 32 bytes follow | varint timestamp
//	        minus the previous row's (0 before the first) | with an hnsw
//	        section, the vector reference, whose Cosine norm is a code u8
//	        (0: 1, 1: float32 bits follow, 2: float64 bits follow)
//	3 hnsw  engine/hnsw WriteTo bytes over the rows that have a vector, in
//	        row order, label = row number (absent when no row has a vector)
//	5 ivfpq (version 2) engine/ivfpq WriteTo bytes (its own header, CRC,
//	        sections; doc.go there) over the rows that have a vector, id =
//	        ordinal among them (row order); metric L2, or IP for IP and
//	        Cosine (normalised vectors); no tombstones
//	6 flat  (version 2) uvarint number of rows with a vector: no index,
//	        exact scan (an "ivfpq" segment under IVFMinRows vectors, or
//	        any segment of a background flush until its deferred index
//	        is built: then rewritten under a new id)
//	4 bm25  optional: the lexical hook's section over all rows in row order
//	        (Options.LexicalSegments; the engine writes an engine/bm25
//	        segment, local doc id = row). The tier only stores it and hands
//	        it back mapped (Snapshot.WarmSegments); the hook validates it.
//	7 textIndex (versions 3-5) u32 rows | u32 rowsPerBlock | u32 blocks, then
//	        per block u64 file offset | u32 length | u32 decoded length |
//	        u32 crc32c of the block's bytes
//	8 text  (versions 3-5) the blocks: block i is one zstd frame of rows
//	        [i·rowsPerBlock, …) (the last may hold fewer), each row's
//	        content as str; blocks aim at 16 KiB decoded (lazytext.go)
//
// Rows are immutable; e_death is not in the file (see tombstones below).
// A reader checks magic, versions, the CRCs, every section bound, counts
// against the remaining bytes, and the HNSW or IVF-PQ section (engine/hnsw's
// and engine/ivfpq's own validation, offsets translated to the file;
// the IVF-PQ index must hold exactly the segment's vectors, trained, no
// tombstones, the store's dim and metric); damage is ErrCorrupt naming
// the file and byte offset. The
// file is mmapped under vfs.Default (HNSW used in place) and read into
// memory under other file systems; the doc store is decoded into memory at
// open, and so are the text blocks of versions 3 to 5 (each checked against its
// CRC32C) unless the store has a RangeFetcher (Options.Fetch): then the
// whole-file CRC32C is not computed (tablecrc and every other section's
// CRC32C are), and a row's block is fetched, checked and decoded when
// Document.Text first asks for it. When that RangeFetcher is also a
// SpanFetcher, the BM25 section's posting blobs may be absent too
// (PostingsSection): its CRC32C is not computed, and the engine opens it
// with bm25.OpenFetch through WarmSegment.LexicalFetch, which fetches a
// query's posting lists before they are read.
//
// # Cold archive file (cold-<id>.parquet, cold format version 1)
//
// Standard Parquet (readable by any Parquet reader; DuckDB checks it in
// TestColdArchiveDuckDB), parquet-go's default row groups, every column
// zstd-compressed, rows in the archived segments' row order:
//
//	id            BYTE_ARRAY (STRING)            required
//	content       BYTE_ARRAY (STRING)            required
//	metadata      BYTE_ARRAY (JSON)              required  {"key":"value",...}, sorted keys
//	namespace     BYTE_ARRAY (STRING)            required
//	source_uri    BYTE_ARRAY (STRING)            required
//	trust         INT32 (INT(8,false))           required  tier.Trust
//	acl           LIST<BYTE_ARRAY (STRING)>      required
//	e_birth       INT64 (INT(64,false))          required
//	e_death       INT64 (INT(64,false))          required  2^64-1 = live when written
//	version_hash  FIXED_LEN_BYTE_ARRAY(32)       required  BLAKE3-256
//	committed     INT64 (TIMESTAMP(NANOS,UTC))   required
//	code          FIXED_LEN_BYTE_ARRAY(18)       optional  null = no vector
//	vector        LIST<FLOAT>                    optional  null = no vector / omitted
//
// Key-value metadata:
//
//	strata.format_version  "1" (a newer version is refused with a clear error)
//	strata.archive         JSON {dim, metric, rows, min_epoch, max_epoch,
//	                       codec_dim, vectors (bool), nlist}
//	strata.codec           base64 of the engine/ivfpq ColdCodec (an Index
//	                       file: coarse centroids + PQ codebooks), absent
//	                       when no row has a vector
//
// The reader first walks the Thrift footer and rejects any list or string
// length larger than the bytes left (parquet-go would allocate it before
// checking), then checks the schema against the one above, the key-value
// entries against the store (dim, metric), every row (non-empty id, epochs
// within [min_epoch, max_epoch], code iff vector, vector length, centroid
// id < nlist) and the row count. Damage is ErrCorrupt naming the file and
// a byte offset (the footer's for metadata problems, 0 for row problems:
// Parquet gives no per-row offsets); parquet-go panics are recovered.
//
// # Manifest records (record types 16 checkpoint, 17 edit; payload version 4)
//
//	+-----+----------------------+-----------------------+
//	| 0x02| uvarint durableEpoch | uvarint nextSegmentID |
//	+-----+----------------------+-----------------------+
//	| uvarint nadd | segment × nadd | uvarint nremove | uvarint id × nremove |
//	| uvarint ntomb | tombstone × ntomb |
//	segment   = uvarint id | str file | uvarint minEpoch | uvarint maxEpoch |
//	            uvarint rows | uvarint sizeBytes
//	tombstone = uvarint segmentID | uvarint row | uvarint e_death
//
// Version 3 appends the archive lists: uvarint nAddArchive | archive ×
// nAddArchive | uvarint nRemoveArchive | uvarint id × nRemoveArchive,
// archive = the segment fields | uvarint crc32c (of the whole file, checked
// before the file is parsed); a tombstone may name an archive. Version 4
// appends uvarint syncedEpoch | uvarint activeWAL (ManifestState), each
// applied as a maximum. Version 1 (no tombstone list), 2 and 3 payloads
// are still read (their synced epoch and active WAL are 0: unknown). Removing a
// segment drops its tombstones. Tombstones are persisted only up to the
// durable epoch: later deaths are rebuilt by WAL replay, which looks the
// id up in the segments.
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
// Open validates the manifest, the segment and archive set and the WAL
// against each other before it changes any file (recovery.go); a refusal
// leaves the directory as it was. Check runs the same validation without
// opening (searchd inspect uses it).
//
//  1. Open reads CURRENT. No CURRENT is a new store only when the
//     directory holds no store data (no segment or archive file, no WAL
//     segment with bytes, no manifest but an empty MANIFEST-000001);
//     otherwise it is ErrCorrupt naming CURRENT, as is a CURRENT whose
//     name does not parse or names a manifest that cannot be read.
//  2. The MANIFEST is scanned with the WAL's rules. Every edit is fsynced
//     before it takes effect, so only a final record cut short by the end
//     of the file (an interrupted write) counts as torn; damage before it,
//     or a whole final record that fails its checks, is ErrCorrupt naming
//     the file and byte offset. A torn edit is truncated (with a warning)
//     only after the rest validated; if anything below fails, the error
//     also names the torn edit.
//  3. The manifest's segments and archives are opened (a missing one, or
//     one whose bytes disagree with its checksums or the manifest, is
//     ErrCorrupt) and its tombstones applied.
//  4. The WAL is replayed after the durable epoch into a fresh MemTable
//     (ending warm rows of upserted/deleted ids). The manifest's synced
//     epoch (recorded at Open, at each WAL rotation and at Close) and
//     active WAL segment make a lost WAL visible: a missing active
//     segment, a log ending before the synced epoch, or a damaged record
//     at or before it is ErrCorrupt naming the file and offset; only
//     records after it may be dropped as a torn tail (package wal).
//     Options.AcceptWALLoss opens over such a loss (logged), flushes the
//     survivors, and moves the durable epoch past the lost epochs, so no
//     epoch is handed out twice. A record whose CRC is fine but whose
//     batch does not decode is ErrCorrupt (file and offset of the record).
//  5. Then segment and archive files the manifest does not list are dealt
//     with: removed when provably garbage (a .tmp file of an unfinished
//     write, or an id below the live checkpoint's next id that no later
//     edit names), otherwise moved to quarantine/ with a warning; never
//     deleted on a guess. Stale MANIFEST files (superseded by the live
//     checkpoint, or an unfinished checkpoint CURRENT never named) are
//     removed.
//  6. Any WAL or manifest write/fsync error makes the store read-only
//     (ErrReadOnly, Store.Err for /healthz) until reopened; fsyncs are
//     never retried (PostgreSQL fsyncgate, 2018).
//
// Sources: pebble (MANIFEST + CURRENT, vfs crash testing, record/),
// LevelDB log format, Tantivy's atomic write, PostgreSQL fsyncgate.
package tier
