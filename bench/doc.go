// Package bench is Strata's benchmark harness: it runs
// benchmark suites against peer engines on the same data and writes
//
//	results.json   the schema below (Results), SchemaVersion "strata-bench/v1"
//	report.md      machine header, ratio tables Strata/peer (the headline),
//	               absolute figures labelled machine-specific
//	*.png          recall@10 vs QPS per data set (gonum/plot, ann-benchmarks
//	               style: recall on x, QPS on a log y axis, one line per engine)
//
// Command: go run ./bench/cmd/strata-bench SUITE... [--quick] [--threads N]
// [--out DIR] [--datasets a,b] [--ann-parts hnsw,ivf,flat] [--synthetic N,NQ,D] [--emulated --no-peers].
// `make bench-quick` runs every suite (kernels ann lexical hybrid ingest
// staleness server ripgrep lancedb) in quick mode, `make bench` in full
// mode.
//
// # Suites
//
// Suites register themselves (Register) from their own files; the harness
// runs them in the order given. Landed:
//
//   - kernels: every asm kernel at every dispatch level the CPU supports,
//     as a speed-up over the pure-Go generic level, with GFLOP/s or codes/s
//     and the input GB/s as a fraction of asm.Bandwidth (single-thread
//     read bandwidth). Streaming kernels read 128 MiB (quick: 64 MiB).
//     Each level's output must match the generic level's (floats within
//     a relative 10⁻³, integer kernels exactly), so an emulated run is a
//     correctness check of the asm on that architecture.
//
//   - ann: engine/hnsw against hnswlib 0.6.2 (our C++ driver, g++ -O3
//     -march=native against Debian's libhnswlib-dev, and Debian's
//     python3-hnswlib for reference), USearch (npm usearch@2.26.2, Node)
//     and FAISS IndexHNSWFlat (Debian python3-faiss), on Vaswani USE-512
//     (inner product), fashion-mnist-784 (L2) and glove-6b-100-angular
//     (inner product on unit vectors); M/efConstruction 16/200 (32/200 for
//     GloVe), k = 10, one thread, an efSearch sweep. Recall@10 is computed
//     here for every engine from the ids it returned, against one exact
//     ground truth, with eval's tie rule; QPS is interpolated at recall
//     0.90/0.95/0.99.
//     IVF-PQ (ann_ivf.go), per data set: engine/ivfpq's 8-bit ADC path
//     (strata-ivfpq8) and 4-bit fast-scan path (strata-ivfpq4fs), both
//     refined with exact vectors, against FAISS IndexRefineFlat over
//     IVF{nlist},PQ{M} (faiss-ivfpq8) and IVF{nlist},PQ{M}x4fs
//     (faiss-ivfpq4fs), Debian python3-faiss with one OpenMP and one
//     OpenBLAS thread (the BLAS mapped into the peer is recorded in its
//     version). Same nlist, M, nbits, refine k_factor (8-bit 4, 4-bit 10),
//     residual encoding (on for L2, off for IP) and nprobe sweep
//     (1..64, plus 128 and 256 when nlist ≥ 512); parameters from
//     REFERENCE.md (fashion IVF256,PQ56; GloVe IVF1024,PQ50; Vaswani nlist
//     64, M 64 / 128). Training and add time are reported separately, and
//     bytes per vector count the list entry (code + id) on both sides.
//     Ratios pair each FAISS peer with its Strata engine
//     (Ratio.StrataEngine).
//     Strong FAISS peers (ann_strong.go, optional): when
//     scripts/peers-strong.sh (make peers-strong) has built FAISS 1.7.3
//     from Debian's source with FAISS_OPT_LEVEL=avx2 and OpenBLAS, the
//     C++ driver bench/peers/ann/faiss_server.cc adds the rows
//     faiss-avx2-hnswflat, faiss-avx2-ivfpq8, faiss-avx2-ivfpq4fs and
//     faiss-avx2-flat beside the Debian ones, with the same index specs
//     and parameters; without the build the run says so in its notes.
//
//   - lexical (bench/lexical, adapter in suites_ext.go): Strata BM25
//     against Xapian, SQLite FTS5 and Bleve v2 (bench/peers/bleve, its own
//     Go module built by the harness with `go build`, so the main go.mod
//     does not depend on Bleve): quality on Cranfield and Vaswani (nDCG@10,
//     MAP, R@100) and speed on the Go source tree (OR, AND and phrase QPS,
//     index time and bytes). Its ratios are copied into Results.Ratios
//     (suite "lexical"); the full report is OUT/lexical/report.md.
//
//   - hybrid (bench/hybrid): the fusion quality study, OUT/hybrid.
//
//   - ingest (ingest.go): end-to-end `searchd index` throughput through
//     ingest (files/s, MB/s, chunks/s, with the collection options
//     searchd creates) on $(go env GOROOT)/src (quick: its net, go,
//     runtime and crypto subtrees), and α_storage = tier bytes / raw bytes for the hot tier (collection
//     directory before any flush), the warm tier (segment bytes after
//     Flush) and the cold tier (archive bytes after Collection.Archive).
//
//   - staleness (staleness.go): E_stale under concurrent edits, through
//     the engine API (writers Upsert while readers Search; a hit older than
//     the newest version acknowledged before the query began is stale;
//     overlapping reads counted) and through ingest.Watch
//     (`searchd index --watch`: edit a file, search its replaced text at
//     once with Query.Verify; the unverified count and the freshness lag
//     are reported too). E_stale > 0 fails the suite.
//
//   - server (server.go): `searchd loadtest` (quick 5 s, full 30 s, 8
//     clients; in-process server on loopback): p50 / p99 / max latency,
//     throughput and errors per operation. The command fails on errors or
//     on goroutines / heap not returning to baseline, and so does the suite.
//
//   - ripgrep (ripgrep.go): the no-index baseline. rg 13 (Debian
//     ripgrep) over $(go env GOROOT)/src per query against Strata on a
//     store of that tree (`searchd index`'s collection, flushed), with
//     Query.Verify: identifier queries (pkg.Type.Method; rg -F -w -t go
//     NAME) and phrase queries (the first 4 words of each doc-sentence;
//     rg -F -i) from bench/code/docsentence (200 declarations, quick
//     50). Latency p50 / mean per query, success@5 (rg: its first 5
//     matching lines in path order), E_stale of both (a non-zero count
//     fails the suite).
//
//   - lancedb (lancedb.go): LanceDB embedded (npm @lancedb/lancedb
//     0.31.0, tools/lancedb-peer/driver.js, pinned by its package-lock
//     and installed with npm ci when missing) against Strata on Vaswani
//     (text + USE-Lite 512-d vectors + a keyword tag): ingest, index
//     build, on-disk bytes, and p50 / p99 at k = 10 for full-text,
//     vector (at matched recall@10 over an nprobes / refine sweep),
//     hybrid and filtered queries.
//
// A suite that fails stops the run; what was measured is still written,
// with the error in Results.Errors and a FAILED line in report.md, and the
// command exits non-zero.
//
// New suites add a file with a Suite and an init() that calls Register,
// append their runs to a new Results field and their ratios to
// Results.Ratios.
//
// # Fairness
//
// Peers are long-lived child processes speaking a line protocol (peer.go):
// they read the same fvecs files the harness wrote, build once, and answer
// "search EF S" with the ids of one pass over the whole query set in one
// batch call (repeated for S seconds to time it). Keeping them alive lets
// the harness alternate engines: builds in a rotated order, then each
// efSearch point on every engine before the next point, so load from other
// processes on a shared machine falls on all engines alike. The sweep is
// repeated (3 rounds, quick 2, the engine order rotated each round) and
// each point keeps its best throughput. Every engine
// reports wall time and its process CPU time (getrusage RUSAGE_SELF), and
// ratios are given for both. A missing peer is an error, never a skip.
//
// # Quick mode
//
// --quick keeps the first QuickBase (10,000) base vectors and the first
// QuickQueries (500) queries of each data set, recomputes the exact ground
// truth on that subset by brute force, scales the IVF nlist down to
// min(nlist, round(4·√n)) (GloVe: 400), sweeps fewer efSearch values and
// times each point for 0.1 s in 2 rounds (full: 0.2 s, 3 rounds); the
// lexical suite runs 1 round of 1 pass with 200 phrase queries (Bleve
// answers phrases at a few dozen per second: 1,000 of them took over a
// minute); ingest indexes four subtrees of $(go env GOROOT)/src (net, go,
// runtime, crypto: about 29 MB read); staleness runs 2 s and 15 edits;
// server loads for 5 s. The report header states all of it.
//
// Where the quick time goes (measured runs, dated):
// bench/results/notes/bench.md.
//
// # Emulated runs (ARM under qemu)
//
// The harness builds for arm64 (GOARCH=arm64 go build ./bench/...). Under
// qemu-user it detects the emulation (DetectEmulation: /proc/cpuinfo
// describes another architecture than GOARCH; STRATA_BENCH_EMULATED=1
// forces it, --emulated too) and labels every timing "emulated, not a
// performance figure" (report banner, plot titles, results.json
// "emulated"). `make bench-arm64-smoke` runs the kernels suite (4 MiB
// inputs, 10 ms per point when emulated) and the ann suite on a tiny
// synthetic set (--synthetic 2000,50,24) with --no-peers: the peers
// (g++ -march=native, Debian python, Node) are not available emulated.
// --no-peers is refused unless the run is emulated. On a real arm64 host
// nothing is emulated and every suite runs with its peers.
package bench
