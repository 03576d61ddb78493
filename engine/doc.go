// Package engine is Strata's embedded library API: a DB of named
// collections, each a tier store (WAL + epochs + hot MemTable + warm
// segments) with BM25 and dense search across both tiers, answering typed
// retrieval queries (package contract) with verified, budgeted envelopes.
// The server (cmd/searchd) is a thin layer over it (DESIGN.md "Embedded
// library"): the tenancy rules on writes are the engine's (As).
//
// The root is the facade; standalone subsystems have their packages:
// engine/catalog (the lexical catalog: rows, metadata codec, filter
// bitmaps, warm and cold BM25 views), engine/cursor (signed search cursors
// and the DB's cursor key), engine/highlight (query-term spans),
// engine/redact (secret redaction at ingest). Every file of a DB goes
// through Options.FS (package vfs).
//
// # Tour
//
//	db, err := engine.Open(dir, engine.Options{})
//	col, err := db.CreateCollection("code", engine.CollectionOptions{
//		Dim: 512, Metric: "cosine", Analyzer: "code",
//		IndexedFields: map[string]engine.FieldType{"lang": engine.FieldKeyword}})
//	epoch, err := col.Upsert(ctx, []contract.Document{{ID: "a.go#1", Content: "...",
//		Vector: v, SourceURI: "file:///repo/a.go#L10-L42", Trust: contract.Authoritative}})
//	res, err := col.Search(ctx, contract.Query{Text: "open file", Vector: qv,
//		Scope: contract.Scope{Namespace: "tenant-a/"}, TopK: 5, Budget: 25 * time.Millisecond})
//	doc, err := col.Get(ctx, "a.go#1")
//	epoch, err = col.Delete(ctx, []string{"a.go#1"})
//	epoch, n, err := col.DeleteByNamespace(ctx, "tenant-a/")   // every doc under the prefix
//	epoch, n, err = col.DeleteBySource(ctx, "file:///repo/a.go") // every chunk of the file
//	err = db.DropCollection("code")
//	err = db.Close()
//
// Every method takes a context and is safe for concurrent use.
//
// # On disk
//
//	dir/collections/<name>/collection.json   {"format_version":1,"name":…,"options":{…}}
//	                                          written atomically (temp, fsync, rename, fsync dir)
//	dir/collections/<name>/store/             package tier: LOCK, CURRENT, MANIFEST-*, wal/
//
// Open reopens every collection and replays its WAL; the lexical index and
// the metadata field index are rebuilt from the replayed versions.
// DropCollection renames the directory away (atomic) before deleting it;
// Open finishes an interrupted drop.
//
// # Writes
//
// Upsert, Delete, DeleteByNamespace and DeleteBySource each apply one
// atomic batch = one WAL record = one epoch (uint64, returned), acknowledged
// under the collection's Sync policy ("always" fsyncs first). After the call
// returns every search sees the batch (read-your-writes) and never a version
// it replaced: a query pins an epoch e and sees exactly the versions with
// e_birth ≤ e < e_death, so E_stale = 0 by construction.
//
// Documents are validated with contract.ValidateDocuments plus the
// collection's IndexedFields schema (keyword: string or string list; bool;
// number); all problems come back in one *contract.ValidationError
// (errors.Is(err, contract.ErrInvalid); its JSON is the server's error
// shape). A document without a VersionHash gets BLAKE3-256 of its Content
// (VersionHash); ingesters of file spans should hash the source span bytes
// (ReadSpan) themselves when Content differs from them (e.g. redaction).
// Upsert with IfMatch(map[id]hash) is optimistic concurrency: if a stored
// version's hash differs (or an id expected absent with "" exists), the
// whole batch fails with a *ConflictError (errors.Is(err, ErrConflict))
// and nothing is written; Delete takes IfMatch too. A write As(principal)
// follows the tenancy rules (tenancy.go): a namespace the principal may not
// name is a *NamespaceError, an id held by a document it cannot read is a
// *IDUnavailableError on Upsert and skipped by Delete, and preconditions
// compare against what it can see; the checks and the write are one atomic
// step under the collection's write lock. Metadata values
// are stored as their JSON form inside the tier's string map, so every type
// (string, number, bool, string list) round-trips exactly; numbers in their
// shortest form (contract.AppendNumber: 1e20, not 21 digits) and strings
// without HTML escaping, so no stored value is longer than its JSON. A
// batch's WAL record is bounded before any embedding or write
// (limits.go): one that could exceed MaxBatchBytes (64 MiB, the record
// limit) fails whole with ErrBatchTooLarge; split it into several Upserts.
//
// # Search
//
// Collection.Search(ctx, contract.Query) (contract.Result, error):
//
//  1. defaults and validation (dimension, multi-tenancy, principal);
//     a dense or hybrid query with Text and no Vector is embedded by the
//     collection's live embedder (see "Embedding"), and without one fails
//     with ErrNoEmbedder — never silently lexical;
//  2. scope (namespace prefix, URI prefix) + principal ACL (an empty
//     document ACL means readable by every principal allowed its
//     namespace) + metadata filter (contract.Filter.Match semantics) are
//     evaluated over the versions visible at the pinned epoch into one
//     roaring bitmap of allowed versions, O(versions) per query. A filter
//     whose every leaf names an IndexedFields field is compiled to bitmap
//     operations first (keyword and bool: one bitmap per value; number: a
//     (version, value) column scanned for eq and range); any other filter
//     is evaluated with Filter.Match per version. A compiled filter also
//     bounds the pass (tier.LexicalSets.Only): unless BM25 statistics
//     are collected over what the caller may read (MultiTenant, or a
//     principal), only the live versions in the filter's bitmap are
//     visited, O(|live ∩ filter|) plus a container-wise AND;
//  3. lexical and dense retrieval run in parallel under the deadline
//     Query.Budget, each restricted to that bitmap while it generates
//     candidates (BM25 via bm25.View.Allow inside traversal; the MemTable
//     scan via its per-row filter before the top-k heap), so a query gets
//     min(k, #allowed matches) hits, never a post-filtered shortfall;
//  4. hybrid mode: a query that sets no fusion parameter uses the
//     collection's HybridDefault, by default "rerank-maxnorm" (below,
//     "Hybrid default"); otherwise the two lists are fused with package
//     fusion as Query.Fusion asks (rrf | minmax | zscore, k, weights,
//     window = max(100, TopK) by default);
//  5. envelopes: content, source URI, version hash (64 hex), commit
//     timestamp, trust, namespace, metadata, Score ∈ [0,1] and Explain
//     (lexical and dense rank and raw score, fused raw score);
//  6. verification (below), MinScore (dropped hits listed in
//     Result.Dropped with reason below_min_score) and, when TokenBudget or
//     MaxTokensPerHit is set, staging (contract.Stage): Hits then hold the
//     sanitised, possibly truncated envelopes; SearchStaged also returns the
//     framed text.
//
// If the budget expires before every retriever finished, the result holds
// what completed with Partial = true and a Reason naming the missing
// retrievers. The retrievers search under the same deadline and stop with
// it (bm25.SearchContext, tier.Snapshot.SearchVectorContext), as does
// the bitmap pass of step 2, so an expired budget sheds the query's CPU
// work, not only its latency; every retriever is also cancelled when
// Search returns. A cancelled caller context is returned as an error.
// Result.Epoch is the epoch the query read at.
//
// Scores (package contract): lexical = BM25 / the query's upper bound
// Σ_t qtf·IDF(t)·(k1+1); dense = (1+cos)/2 for cosine and ip, 1/(1+d²) for
// l2; hybrid RRF = Σ_m w_m/(k+r_m) divided by Σ_m w_m/(k+1) over the
// requested retrievers (so a partial hybrid result keeps its scale);
// hybrid rerank-maxnorm = the MaxNorm fused score (its weights sum to 1),
// capped so that scores never increase down the list (see below).
// BM25 statistics (N, df, avgdl) are collected over every tier's BM25
// segment together (bm25.CollectStats over the warm segments' sections and
// the MemTable's builder), so a score does not depend on how rows are split
// between tiers and segments. They count every version still stored,
// including replaced and deleted ones in the MemTable and dead warm rows,
// until a flush (MemTable) or compaction (warm) removes them (as Lucene
// counts deleted documents until a merge). In a MultiTenant collection,
// and for every query that carries a Principal in any collection, they
// are instead collected per query over the live rows of the query's
// namespace that its principal may read, in every tier, so a tenant's
// scores never depend on — and cannot reveal — another tenant's
// documents; the URI prefix and metadata filter narrow the results, not
// the statistics. A prefix (parseHTTP*) expands only to terms of the
// tenant's own rows. The cost per query is O(tenant rows) plus, per query
// term, O(min(df, tenant rows · log df)) doc-id decoding
// (bm25.Segment.CountIn: a small tenant walks its rows with NextGEQ, a
// large one the postings list; no frequencies or positions are decoded),
// plus, for a prefix, the dictionary terms of other tenants that sort
// before the tenant's expansions. Prefix expansions are scored with their own df and
// count in the score's upper bound in every collection. BM25 score ties are broken by a
// 64-bit FNV-1a hash of the document id (the bm25 external id) and dense
// ties by id, so the order of tied hits does not depend on the tier either.
//
// # Tiers
//
// The hot MemTable flushes into an immutable warm segment (package tier)
// once it holds about CollectionOptions.MemTableSizeBytes (default 32 MiB;
// negative: never automatically). A warm segment carries the zstd doc
// store, a vector index (HNSW, or IVF-PQ with CollectionOptions.SegmentIndex
// "ivfpq"; an automatic flush's segment gets it afterwards, built in the
// background or by Collection.Flush, and is scanned exactly until then),
// and a BM25 section: at flush, the MemTable's own
// bm25 builder segment minus the versions not flushed (bm25.Merge, no
// re-analysis: hotIndex.FlushLexical); at compaction, bm25.Merge of the
// inputs' sections minus the dropped rows (catalog.Segments.MergeLexical).
// Reopening maps the segments and replays only the WAL written after the
// last flush (tier.Store.ReplayedRecords). Each MemTable gets its own
// lexical index (tier.Options.NewLexical), so version numbers restarting
// after a flush are harmless.
//
// A query numbers the rows it may return as keys: the warm segments' rows
// in segment order (a cached per-segment-set catalog, package
// engine/catalog: opened BM25 sections, decoded metadata, metadata bitmaps,
// built on the first query after the segment set changes), then the
// versions of each MemTable of the snapshot (tier.Snapshot.HotLexical:
// while a flush builds its segment, the frozen MemTable it is flushing and
// the active one; writes continue meanwhile). A search is a plan
// (plan.go), built once: the query validated and embedded, the snapshot
// pinned, and scope, ACL and filter resolved into one Allow bitmap per
// row set of the rows live at the epoch that pass them
// (tier.Snapshot.LexicalViews). Retrieval runs from the plan at a depth,
// and the shaping loop (Result shaping) retrieves again from the same
// plan when it needs a deeper list. Lexical search is one BM25 search
// over all tiers' segments (tier.Snapshot.SearchLexical) restricted to
// those bitmaps. Dense
// search is the tier's (MemTable brute force + each warm segment's vector
// index, HNSW or IVF-PQ, with the same visibility and filter applied while
// it generates candidates); its raw values are
// then recomputed exactly from the stored vectors, so a dense score does
// not depend on the tier (HNSW and the MemTable kernel can differ in the
// last float32 bit).
//
// # Hybrid default
//
// CollectionOptions.HybridDefault (recorded in collection.json) decides a
// hybrid query whose contract.FusionParams are all zero (no method, k,
// weights or window; contract.FusionParams cannot name a new method, so
// the choice lives in the collection). Any explicit fusion parameter is
// honoured as asked, so Fusion{Method: "rrf"} is RRF on every collection.
// Callers that pre-fill defaults (contract.Query.EnsureDefaults sets
// Method "rrf") therefore get RRF: pass the query to Search unfilled.
//
// "rerank-maxnorm", the default, is the choice of the fusion study
// bench/results/hybrid/report.md ("rerank-maxnorm α_dense=0.35 N=20";
// every number there computed with engine/fusion.Fuse): take the BM25 top
// N = RerankWindow = 20, compute the EXACT dense similarity of those
// candidates only (restricted dense scoring), and fuse with
// fusion.Options{Method: fusion.MaxNorm, Window: N}, weights lexical 0.65
// and dense α = RerankDenseWeight = 0.35 (norm(s) = s / max|s| over the N;
// a candidate without a vector gets dense 0); the BM25 list after rank N
// follows unchanged. A collection can set its own N and α
// (CollectionOptions.HybridRerankWindow, HybridRerankDenseWeight; code
// collections `searchd index` creates with the built-in embedder re-rank
// the top 100, bench/results/notes/embedder.md). Measured nDCG@10 (binary
// gain; 95% paired bootstrap CIs), lexical = stemmed BM25:
//
//	collection  lexical  rerank-maxnorm          Δ [95% CI]                  RRF k=60 (Δ)
//	cranfield   0.3914   0.4014 (in-sample)      +0.0100 [+0.0022, +0.0180]  0.3185 (−0.0729)
//	vaswani     0.4392   0.4499 (held-out)       +0.0108 [−0.0016, +0.0233]  0.3482 (−0.0910)
//	cranfield   0.3914   0.4011 (held-out: N=100, tuned on vaswani)  +0.0096 [+0.0017, +0.0178]
//
// The family's worst-direction held-out gain is +0.0096; the study's goal of
// +0.01 on both collections held-out was not met, and the maxnorm families
// were added after a first look at the test queries (its "Process
// disclosure"). Plain RRF k=60 loses 0.07–0.09 because USE-512 dense
// retrieval alone (0.2021 / 0.1757) is far weaker than BM25.
// TestCranfieldQuality runs the same path through Upsert → Search and
// asserts hybrid ≥ lexical − 0.005 (it measures 0.4014 vs 0.3914, and RRF
// 0.3185, matching the study).
//
// Restricted scoring reads each candidate's stored vector from the
// *tier.Document of the row (MemTable versions and warm rows alike: the
// warm doc store keeps every row's vector). Cosine is computed on unit vectors as the
// MemTable scan does; ip is the inner product; l2 fuses 1/(1+d²) (so the
// nearest candidate normalises to 1; the study measured cosine only).
// In the pipeline the dense retriever waits for the lexical list and scores
// its N candidates (20 distance evaluations instead of a full scan); it runs
// the full brute-force scan (depth TopK) only when the lexical list holds
// fewer than TopK hits, to back-fill. Result order and Explain:
//
//   - head (the N candidates, fused order): LexicalRank = rank in the BM25
//     list, DenseRank = rank of its exact similarity among the N candidates
//     (0 without a vector), raw scores in LexicalScore / DenseScore,
//     FusedScore = the MaxNorm score;
//   - tail (BM25 ranks N+1…): LexicalRank and LexicalScore, DenseRank 0
//     (not scored), FusedScore = 0.65·s/max s (MaxNorm with no dense
//     evidence);
//   - back-fill (dense-only hits when BM25 returned fewer than TopK, e.g.
//     text with no matching term): DenseRank (in the full dense list) and
//     DenseScore, FusedScore = 0.35·contract.DenseScore.
//
// Score is FusedScore clamped to [0, 1] and capped by the previous hit's
// Score, so it never increases down the list (staging sorts by score).
// If the dense step misses the budget, the head keeps the BM25 order with
// the lexical contribution only (Partial, reason "dense"); since the dense
// step needs the lexical list, a lexical retriever that misses the budget
// leaves both missing and no hits.
//
// # Source verification
//
// With Query.Verify, or for hits whose version is older than
// Query.Freshness, a file:// source is re-read and its span hashed with
// BLAKE3-256 and compared with the stored version hash. A URI names a whole
// file, or lines x..y with #Lx-Ly (or #Lx): 1-based, inclusive, from the
// start of line x through the end of line y including its newline. Hashes
// are cached per file and invalidated when its size or modification time
// changes (a rewrite that keeps both, within the file system's timestamp
// granularity, is not noticed). On mismatch, or when the span is gone, the
// hit is dropped and listed with reason "stale" (CollectionOptions.OnStale
// "drop", the default) or re-read from the file, flagged Reread and given
// the live hash ("reread"). Other URI schemes cannot be checked and are
// kept as they are.
//
// A file is read only for a document whose source the collection is
// entitled to read (package engine/verify, "Who may have a file read"):
// written with VerifiableSources (ingestion), or, symbolic links resolved,
// under an Options.VerifyRoots directory bound to the document's namespace
// or under CollectionOptions.SourceRoots. Any other file:// source is kept
// unverified without being touched, so a search's outcome never depends
// on a file its caller could not read. The mark VerifiableSources sets is
// kept under a reserved metadata key that writes cannot name and reads
// never return. Parsing, bounded reads, the hash cache and confinement
// live in engine/verify.
//
// # Redaction
//
// CollectionOptions.Redact ("auto", the default: external_unverified
// documents only; "always"; "off") removes credentials and high-entropy
// secrets in Upsert, after validation and before anything derives from the
// text (embedding, postings, vectors, the WAL and the doc store): once a
// secret is in an index it cannot be taken back without a rebuild.
// RedactSecrets replaces each one in Content and in string (and
// string-list) metadata values with "[REDACTED:<rule-id>]". The rules are a
// curated subset of gitleaks v8.30.1's default rules, embedded as data with
// their keyword pre-filters and entropy thresholds (MIT licence; cloud
// keys: AWS AKIA/ASIA…, GCP API keys, Azure AD client secrets; PEM private
// keys, also inside a GCP service-account JSON; GitHub, GitLab, Slack,
// Stripe, npm, PyPI, OpenAI, Anthropic … tokens; JWTs; gitleaks'
// generic-api-key: a high-entropy value assigned to a secret-ish name),
// plus "bearer-token" and "password-assignment" (password= / secret: /
// api_key= with a literal value). Why not import gitleaks itself, with
// measurements: package engine/redact. A redacted document gets metadata
// MetaRedactions ("redactions", the count) and MetaRedactionRules
// ("redaction_rules", sorted rule ids); its VersionHash, when not given, is
// BLAKE3-256 of the Content before redaction (the source bytes). A
// document without a secret is stored byte-identical, without those keys.
// The caller's documents are never modified. Vectors supplied by the
// caller are stored as given (embed redacted text to keep secrets out of
// them). A SourceURI is redacted in place, every other byte kept as given
// (redact.URI): the password of its userinfo is dropped (user:pw@host →
// user@host, rule RuleURIPassword; RFC 3986 §3.2.1), also when url.Parse
// rejects the URI, under nested schemes (jdbc:postgresql://) and in
// scheme-relative //user:pw@host; a user name that is itself a token is
// replaced; each query and fragment parameter goes through RedactSecrets
// on its own (?api_key=…&page=3 keeps &page=3; #access_token=…); host and
// path go through the shape rules (not the assignment rules), e.g. a Slack
// webhook URL. Each removal counts in MetaRedactions. DeleteBySource and
// Scope.URIPrefix match both the URI given and its redacted form; a file:// source
// whose path was redacted no longer names its file, so verification finds
// it missing. ID, namespace and metadata keys are not redacted.
// Cost (BenchmarkRedactSecrets on the shared 2-core dev machine, under
// load, so noisy): 13–37 MB/s on Go source (net/http/transport.go);
// 2–7 MB/s on text where nearly every line holds password, token or key.
// On 1.5 MB of Go standard-library source (net/http, strings,
// encoding/json, os) no rule fired.
//
// # Result shaping
//
// Search pages, collapses and highlights (shape.go) around the pipeline
// above; the shaping sits between fusion and verification:
//
//   - Pagination: a full page (TopK hits) whose MaxTopK window is not
//     exhausted carries Result.NextCursor; pass it as Query.Cursor with
//     the same query (only TopK — the page size —, Budget and Cursor may
//     change; anything else, including the principal or the collection, is
//     a *contract.ValidationError at query.cursor, as is a forged or
//     corrupted cursor). The cursor (package engine/cursor) is base64url
//     of (format version, epoch, a 16-byte query fingerprint, FNV-1a-64
//     hashes of the doc ids already returned, ≤ 1000 × 8 bytes), signed
//     with HMAC-SHA256 (16 bytes) under the DB's 32-byte key in
//     <db dir>/cursor.key (CursorKeyFile, DB.CursorKey: created atomically
//     through Options.FS by the first search that issues a cursor;
//     reopening keeps it; the server signs its listing cursors with the
//     same key). Page p is computed at depth = hits returned so far + TopK ≤
//     MaxTopK (so a client can page through at most the top 1000) and is
//     the next TopK hits of that list not returned before; dropped hits
//     (stale, below min_score) count as returned. Pages are read at the
//     epoch of page 1: the snapshot is retained for CursorRetention (60 s)
//     after each page, at most 32 per collection (a retained snapshot holds
//     back compaction of what it sees). When it is gone (expired, evicted,
//     reopened), the page is computed at the newest epoch (Result.Epoch
//     says which): a hit already returned is never repeated, but documents
//     written, changed or deleted since may appear, move past the page
//     boundary unseen, or vanish. At one epoch the pages concatenate to
//     the single top-(p·TopK) result wherever retrieval is exact (BM25,
//     the MemTable scan, and warm HNSW while the depth stays ≤ its
//     efSearch, 64); deeper HNSW pages can differ from one big query as
//     any two efSearch values do, still without duplicates. A seen-id hash
//     collision (probability ≈ returned/2⁶⁴ per candidate) would skip a hit.
//   - Collapse: Query.Collapse = n keeps at most n hits per source file
//     (SourceURI without its #fragment; hits without a SourceURI are never
//     collapsed) in rank order; hits of earlier pages count towards their
//     file's quota. Retrieval starts 4× deeper and is repeated 4× deeper
//     (up to MaxTopK; from the same plan, nothing re-resolved) while the
//     page is short and the list was full, so a
//     collapsed query returns TopK hits whenever that many remain within
//     the top 1000. Collapsed hits are not listed in Result.Dropped.
//   - Highlighting: Query.Highlight sets Envelope.Highlights, the byte
//     spans [start, end) in the final (verified, staged) Content of every
//     token the collection's analyzer turns into a query term: the query's
//     should, must and phrase terms and identifier parts (so userName
//     marks user_name's "user" and "name" and getUserName's "UserName"),
//     stemmed forms under the prose analyzer, prefix* expansions; not
//     -excluded terms. Phrases mark their terms wherever they occur.
//     Spans are sorted, overlapping or touching ones merged, and start and
//     end on rune boundaries.
//
// # Embedding
//
// A collection records its embedding model in its config
// (CollectionOptions.Embedding: model name and dimension = Dim). The live
// embedder (an embed.Embedder, e.g. embed.Client for an OpenAI-compatible
// server) is attached by model name at open or create time
// (Options.Embedders) or later (Collection.SetEmbedder); a model name or
// dimension that differs is ErrEmbedderMismatch, and so is attaching one
// to a collection that records no model. With it attached, a dense or
// hybrid query with text and no vector is embedded (one Embed call,
// before the Budget deadline starts), and Upsert embeds, in one Embed
// call, the (redacted) Content of every document with content and no
// vector before the WAL append; the output is checked (count, dimension,
// finite, non-zero in a cosine collection) and a failure writes nothing.
// Without one, such queries fail with ErrNoEmbedder (a validation error),
// and so do such writes in a collection that records a model; a
// collection without a model stores them without vectors (lexical only).
// Code: embedding.go.
//
// # Errors
//
// ErrClosed, ErrNotFound, ErrExists, ErrBadName, ErrConflict,
// ErrNoEmbedder, ErrEmbedderMismatch, ErrCorrupt (a malformed collection
// config or cursor key: a *CorruptError naming the file and byte
// offset); *contract.ValidationError for invalid input; tier errors
// (tier.ErrReadOnly after a WAL I/O failure, corruption with file and
// offset) wrapped with the collection name. ErrCorrupt is the one
// corruption sentinel of every format (tier.ErrCorrupt, hnsw.ErrCorrupt,
// bm25.ErrCorrupt ... are the same value), so errors.Is(err, ErrCorrupt)
// matches damage anywhere below the engine.
//
// # Limits
//
// Opening a warm segment decodes its whole doc store into memory
// (documents are not read lazily from the mapping), and the first query
// after the segment set changes builds the catalog (metadata decoded per
// row). A numeric field's column is kept in version order, not sorted by
// value, so a range or numeric eq filter scans it. The hot MemTable is
// always scanned exactly, whatever the filter's selectivity; only the warm
// HNSW index switches to exact scoring for small allow-lists.
package engine
