// Package bm25 is Strata's lexical index: an inverted index over
// Elias-Fano doc-id postings with bit-packed term frequencies, block-max
// metadata and positions, scored with BM25 and queried with Block-Max
// MaxScore (default) or Block-Max WAND pruning, both returning exactly the
// exhaustive top-k.
//
// # Pieces
//
//   - Builder: the mutable in-memory index of a MemTable. Add(extID,
//     tokens) appends a document; WriteTo serialises an immutable segment;
//     Segment() returns an opened copy for querying.
//   - Segment: an immutable segment opened in place from a []byte (an mmap
//     or memory). Open checks magic, version, CRC32C and every structural
//     bound; Verify decodes everything. Errors satisfy
//     errors.Is(err, ErrCorrupt) and carry path and byte offset.
//   - Merge: combines segments, drops deleted documents (roaring bitmaps
//     of local ids) and renumbers the survivors densely in input order.
//   - Search: OR / AND / +required / −excluded / "phrase" / prefix* over
//     one or more segments (Views, each with an optional allow-list
//     bitmap applied inside traversal), with collection statistics summed
//     over all of them (Stats), so a document's score does not depend on
//     how the collection is split into segments.
//
// # Scoring
//
// BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25
// and Beyond", Foundations and Trends in IR 3(4), 2009, §3.4 eq. 3.15):
//
//	score(D, Q) = Σ_{t∈Q} qtf_t · IDF(t) · tf·(k1+1) / (tf + k1·(1 − b + b·|D|/avgdl))
//
// with k1 (default 1.2) and b (default 0.75) per query. IDF is
// ln((N − n + 0.5)/(n + 0.5) + 1) by default (always positive; Lucene's
// choice), or with IDF "robertson" the Robertson–Spärck Jones form
// ln((N − n + 0.5)/(n + 0.5)) (R&Z 2009 eq. 3.3), negative for n > N/2;
// a term's weight is clamped at 0 so every upper bound stays valid. N, n
// and avgdl come from Stats. |D| counts positions, i.e. original tokens:
// identifier parts share their identifier's position (engine/text) and do
// not lengthen a document. A query word repeated c times counts c times.
// Phrases are required and weigh the sum of their terms (as Xapian's
// OP_PHRASE); prefix expansions are optional terms with their own IDF.
//
// Against Xapian: Xapian 1.4's BM25Weight differs from the formula above
// in its IDF (ln(r), r = (N − n + 0.5)/(n + 0.5), replaced by ln(r/2 + 1)
// when r < 2) and in clamping |D|/avgdl from below at min_normlen = 0.5;
// its k3 never applies because every query word is its own leaf with
// wqf 1 (repeated words add up, as here). Those two deviations alone
// account for every Vaswani difference (TestXapianWeightingExplainsGap
// reproduces Xapian's nDCG@10, MAP and R@100 there to the fourth decimal
// with Strata's analyzers and a plain scorer), so the index, tokenizer and
// query construction are equivalent. The defaults stay textbook BM25: the
// issue's worked example needs no length floor, and on the test
// collections the deviations do not help consistently (min_normlen 0.5:
// +0.0075 nDCG@10 on Vaswani, −0.0052 on Cranfield, unstemmed; the full
// grid is in quality_xapian_test.go).
//
// Fields: SearchFields scores multi-field documents (one segment per
// field, e.g. symbol, doc, body, path, each analysed with its own
// analyzer) as Σ_f boost_f · BM25_f, each field with its own N, df and
// avgdl. This is the documented per-field sum, not BM25F (Robertson,
// Zaragoza & Taylor, CIKM 2004): it keeps an exact bound per (field, term)
// list, so pruning stays exact, and a boosted symbol field makes a
// definition outrank its call sites. Required terms and phrases are
// single-field (Search) only.
//
// Ties are broken by score descending, then external id ascending;
// contributions are summed in query-term order on every path, so pruned
// and exhaustive scores are bit-identical.
//
// # Query processing
//
// Disjunctive queries use Block-Max MaxScore (MaxScore: Turtle & Flood,
// "Query evaluation: strategies and optimizations", IP&M 1995; block-max
// bounds: Ding & Suel, "Faster top-k document retrieval using block-max
// indexes", SIGIR 2011; the BMM variant as evaluated by Mallia, Siedlaczek
// & Suel, "An experimental study of index compression and DAAT query
// processing methods", ECIR 2019). Terms are ordered by their upper bound;
// the prefix whose bounds sum below the current k-th score θ is
// non-essential, candidates come from the essential lists only, and a
// non-essential list is probed with NextGEQ only while the candidate's
// score plus the remaining bounds (the list's block-max bound at the
// candidate, the others' list bounds) can still reach θ.
//
// SearchParams.Algorithm = AlgBMW selects Block-Max WAND instead (Ding &
// Suel 2011, §4; bmw.go): lists sorted by current doc id; the pivot is the
// first list where the running sum of list bounds can reach θ; if the
// block-max bounds of the lists up to the pivot, at the pivot doc, cannot
// reach θ, the list with the largest bound jumps past the shortest of those
// blocks (or to the next list's doc); otherwise lagging lists are moved to
// the pivot doc and, once all are there, it is scored (stopping early
// when the partial score plus the remaining block bounds cannot reach θ).
// Same cursors, block-max metadata, θ, slack and tie rule as BMM, so both
// return identical hits (TestPruningExactSynthetic, TestPruningExactVaswani,
// TestSearchFieldsExact, TestDisjunctiveTies run both against the
// exhaustive reference) and fully score the same documents (on Vaswani's
// 93 topics at k = 10: 7,299 for both, against 872,459 exhaustive;
// TestPruningSkipsWork).
//
// BMM is the default because it measured faster on every set (BenchmarkOR;
// the table and the command are in bench/results/notes/bm25.md).
//
// BMW pays, per step, a pivot search over all lists, a block-bound sum up
// to the pivot and a re-sort, and moves one list at a time; with the long
// topics of Vaswani and Cranfield (tens of terms) that bookkeeping
// dominates, while BMM's essential/non-essential split is recomputed only
// when θ rises (as Mallia, Siedlaczek & Suel 2019 also found for longer
// queries). Two BMW variants (every list up to the pivot jumps past the
// blocks, or every lagging list aligns at once) showed no consistent gain
// (3 interleaved runs: between 0.84× and 1.1× of the standard one per set,
// never closing the gap to BMM), so the standard one-list moves stay.
//
// Block-max metadata stores, per 128 postings, the largest tf and the
// smallest |D|. BM25's tf component is increasing in tf and non-increasing
// in |D| for every k1 >= 0, b ∈ [0, 1], avgdl > 0, so that pair bounds the
// block for any query parameters and any global statistics (per-block
// precomputed scores would bake in k1, b and segment-local N and avgdl).
// Every pruning test has a relative slack of 1e-9 so float rounding never
// drops a document that ties or beats θ.
//
// Queries with required terms or phrases intersect the required lists
// (leapfrog NextGEQ from the rarest). For a document in every list, the
// cheapest test that can reject it goes first, as Xapian does: (1) the
// block-max bound of the region where every required list stays in its
// current block — when it cannot reach θ the whole region is skipped;
// (2) the allow-list and excluded terms; (3) the exact score, from tfs and
// |D| only (a phrase weighs the sum of its terms, so its score does not
// depend on positions) — a document that would not enter the top k is
// dropped here; (4) only then the phrase positions. Positions are read
// lazily: each slot's iterator starts at the document (a per-cursor
// pointer resumes within the 128-doc block, and earlier documents'
// positions are skipped by counting varint terminator bytes a word at a
// time, never decoded), the slot with the smallest tf drives, the other
// slots only seek forward, and the check stops at the first match. On the
// Go stdlib phrase batch (bench/lexical, 1,000 phrases of 2–3 tokens)
// this took phrase queries from 2.9 ms to 0.15 ms each (BenchmarkGoStdlibPhrase).
// SearchParams.Exhaustive runs the reference scorer (decode every list,
// score every candidate, phraseAt over fully decoded positions) instead.
//
// Cost: OR queries touch O(Σ df) postings in the worst case and far fewer
// in practice; NextGEQ costs O(1) amortised plus the bucket scan;
// dictionary lookup is O(|term|) expected through a hash index a segment
// builds in memory once it has served T/16 lookups (O(T) time, 16–32
// bytes per term; before that, and for dictionaries under 64 terms, a
// binary search, O(log T · |term|)); prefix expansion binary-searches the
// sorted dictionary.
//
// Many segments: a search over S segments shares across them one top-k
// heap (so each segment prunes with the best scores found so far), one
// IDF per term (computed once from Stats), and each term's place in every
// segment (dictionary index and term record) as CollectStats found it (a
// Search with those Stats looks no term up again). A TermTable, held by
// the caller for a fixed segment set (the engine keeps one per warm
// segment set, which is immutable between flushes and merges), caches
// those places per term, with the df summed over the set: a cached term
// costs one hash lookup for all S segments instead of S dictionary
// lookups and S term-record reads; it fills on demand and is bounded
// (5 MiB, then emptied). One cursor per query term, the per-segment
// search state and MaxScore's lists are reused from segment to segment
// (no allocation per segment), and a cursor starts half open: its block
// metadata serves block-max bounds at once, its doc ids are decoded only
// when the traversal first reads them, so a list MaxScore only bounds in
// a segment costs one block-metadata read there. A list in its last block
// does not end a block-max region. On 50-term OR queries over Vaswani
// (BenchmarkMultiSegmentOR), 35 segments cost 1.46× (p50) / 1.40× (p90)
// one segment in thread CPU time with the TermTable, against 1.94× /
// 1.84× with CollectStats (bench/results/notes/multisegment-or.md); what
// remains is the per-segment, per-term work the traversal cannot share
// (block metadata, opening and decoding the essential lists, about 1,100
// of the 1,750 (segment, term) pairs per query there against 32 of 50).
//
// # Cancellation
//
// SearchContext stops when its context is done. It looks at the
// context's Done channel before each view and, inside a view, once every
// 256 traversal steps (a step scores, rejects or skips past one candidate
// document: Block-Max WAND, both MaxScore loops, the conjunctive and
// phrase loop, the reference scorer). A cancelled search returns the best
// hits found so far, in the usual order, with ctx.Err(). Search is
// SearchContext with context.Background().
//
// # Postings
//
// A list's doc ids are coded in one of two ways:
//
//   - partitioned Elias-Fano (pef.go; Ottaviano & Venturini, "Partitioned
//     Elias-Fano indexes", SIGIR 2014, uniform variant): each 128-posting
//     block is coded relative to its own universe (previous block's last
//     doc + 1 .. its lastDoc) as whichever is smallest of an all-ones run
//     (0 bits), a bitmap, or Elias-Fano (Elias 1974, Fano 1971; Vigna,
//     "Quasi-succinct indices", WSDM 2013: l = ⌊log2(U/m)⌋ low bits, high
//     parts in unary). The choice follows from (m, U), so partitions carry
//     no header, tag, offset or sample: NextGEQ skips partitions through
//     the block metadata's lastDoc and jumps inside one by counting zeros
//     of its (at most 3·128) upper bits;
//   - one Elias-Fano sequence (ef.go): a 16-byte header, word-padded low
//     and high arrays and select1/select0 samples every 256 elements, the
//     blob aligned to 8 bytes.
//
// Format version 3 codes a list of at most BlockSize (128)
// postings as one partition and stores no block metadata for it (the
// term record holds its lastDoc, maxTF and minDL; its tf block follows
// the doc ids, its positions follow the tf block), and codes a longer list
// as one Elias-Fano sequence with block metadata. Its term records are
// bit-packed at the widths the segment's largest values need (about 60
// bits a term instead of 32 bytes on a 50,000-term dictionary), read in
// place by shifts. Most terms are rare, so
// the fixed cost of a sequence and of block metadata dominated the short
// lists; the long lists, where an OR query spends its time, keep the
// sequence, whose cursor is a few per cent faster than the partitioned
// one. Version 2 (Options.PartitionedEF) codes every list partitioned;
// version 1 every list as one sequence. Version 4, the default, is
// version 3 in which a list of one posting stores its positions and
// nothing else: its doc id is the record's lastDoc and its tf the
// record's maxTF (pefOne in pef.go). Most terms of a real corpus occur in
// one document (59% of the Go standard library's), and a word-vector set
// with its words as text has almost only such terms: there it saves 3 to
// 4 bytes a term (the doc id and the tf block's width byte). Version 4
// may also leave out the documents' external ids (flag bit 2,
// Options.OmitExtIDs): a caller that stores the document ids anyway, as
// the engine's warm segments do, derives them and gives them to
// OpenWith, saving 8 bytes a document. All four are read; Merge writes
// version 2 when every input is version 2, else version 4. Term
// frequencies minus one are bit-packed per 128-posting block at the
// block's maximum width. Positions are uvarint deltas per document. Sizes
// and speeds of the three versions are in bench/results/notes/bm25.md
// (BenchmarkSegmentFormat; TestReadVersion1 checks that they answer
// identically).
//
// # Segment file layout (versions 3 and 4, little-endian)
//
//	offset 0
//	+------------------------------------------------------------+
//	| header: magic "STRBM25\0" (8) | version u32 | flags u32     |  16 B
//	|         flags bit 0 = positions stored                     |
//	|         flags bit 1 = packed |D| and term offsets          |
//	|         flags bit 2 = no external ids (version 4)          |
//	+------------------------------------------------------------+
//	| docs:  |D| × numDocs: packed array (flag bit 1), else u32  |
//	|        each, pad to 8                                      |
//	|        external id u64 × numDocs (absent with flag bit 2)  |
//	+------------------------------------------------------------+
//	| dict:  term end offsets × (numTerms+1) (first is 0):       |
//	|        packed array (flag bit 1), else u32 each            |
//	|        term bytes, strictly increasing, pad to 8           |
//	+------------------------------------------------------------+
//	| terms: v3: widths u8 × 7 | 0 u8, then numTerms records   |
//	|        of Σwidths bits each, packed LSB-first, pad to 8:   |
//	|        blobOff | blobLen | df | maxTF | minDL | efLen |    |
//	|        lastDoc, each at its width (the bit length of its   |
//	|        largest value in the segment; ≤ 64 for blobOff,     |
//	|        ≤ 32 for the others)                                |
//	|        v1, v2: record × numTerms, 32 B each: blobOff u64 | |
//	|        blobLen u32 | df u32 | maxTF u32 | minDL u32 |      |
//	|        efLen u32 | numBlocks u32                           |
//	+------------------------------------------------------------+
//	| postings: one blob per term (a sequence's 8-aligned);      |
//	|   version 4, df = 1: the positions only (if flagged)      |
//	|   doc ids, efLen bytes: partitioned Elias-Fano (pef.go)    |
//	|     for df ≤ 128 (v2: every list), else one Elias-Fano     |
//	|     sequence (ef.go; v1: every list)                       |
//	|   block meta × ⌈df/128⌉, 20 B each, absent for df ≤ 128    |
//	|     in v3: lastDoc u32 | maxTF u32 | minDL u32 |           |
//	|     tfOff u32 | posOff u32 (offsets within the blob)       |
//	|   tf blocks: width u8 + (tf−1) packed LSB-first            |
//	|   positions (if flagged): per doc, tf uvarint deltas       |
//	+------------------------------------------------------------+
//	| footer (64 B): docsOff u64 | dictOff u64 | termsOff u64 |   |
//	|   postOff u64 | ΣDL u64 | numDocs u32 | numTerms u32 |      |
//	|   dictBytes u32 | version u32 | CRC32C u32 | "SBMF"          |
//	+------------------------------------------------------------+
//
// A packed array (packed.go) is a width byte and 7 zero bytes, then the
// values at that width (the bit length of the largest), LSB-first, zero
// bits up to a multiple of 8 bytes, then 8 zero bytes so that any value
// loads with one unaligned 8-byte read. The writer sets flag bit 1 on
// every version 3 and 4 file; files without it are read as before.
//
// The header and footer carry the same version (1 to 4; the layouts
// differ only in the blobs, the term records and the external ids). The
// CRC32C (Castagnoli) covers every byte before it. Readers open versions
// 1 to 4 and refuse newer ones with a clear error.
package bm25
