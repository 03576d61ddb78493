// Package hnsw is Strata's graph index: Hierarchical Navigable Small World
// graphs after Yu. A. Malkov and D. A. Yashunin, "Efficient and robust
// approximate nearest neighbor search using Hierarchical Navigable Small
// World graphs", IEEE TPAMI 42(4), 2018 (arXiv:1603.09320).
//
// # Algorithm
//
// Every vector is a node with a random top level ℓ = ⌊-ln(U)·mL⌋,
// mL = 1/ln(M), drawn from a seeded PCG generator (paper §4.1, Alg. 1
// line 4). Layer l holds the nodes of level ≥ l; each layer is a proximity
// graph. A node keeps at most Mmax = M links on layers ≥ 1 and
// Mmax0 = 2·M on layer 0.
//
//   - Insert (Alg. 1, Index.Add / AddBatch): greedy descent (ef = 1) from
//     the entry point down to layer ℓ+1, then on every layer min(ℓ, L)…0
//     SEARCH-LAYER with ef = efConstruction (Alg. 2), choose M neighbours
//     with the heuristic (Alg. 4), link both ways, and shrink any
//     neighbour list that overflows Mmax with the same heuristic. The W
//     of one layer seeds the next, as in the paper.
//   - Heuristic (Alg. 4): take candidates nearest first, keep one only if
//     it is closer to the base than to every neighbour kept so far.
//     Options.ExtendCandidates adds the candidates' own neighbours first;
//     Options.KeepPrunedConnections refills the list from the discarded
//     candidates up to M. (Shrinking an overflowing list never extends.)
//   - Search (Alg. 5, Index.Search): greedy descent to layer 1, then
//     SEARCH-LAYER on layer 0 with ef = max(SearchParams.EfSearch, k).
//     efSearch is per call; build parameters are fixed in Options.
//     Without an allow-list, SQ8 or tombstones, layer 0 runs on a
//     linear pool instead of the paper's two heaps (see "Search on a
//     linear pool" below); the results are the same.
//   - Metrics: L2 (squared Euclidean), IP (distance 1 - a·b) and Cosine
//     (vectors normalised on insert and queries per call, then 1 - a·b).
//     Distances use asm.L2Sq / asm.Dot, which dispatch to AVX-512, AVX2,
//     NEON or pure Go (-tags noasm).
//
// Complexity: insertion and search take O(log n) expected hops (paper
// §4.2), i.e. about ef·Mmax0 distance computations of d flops at layer 0
// plus O(M·log n) above. Building n vectors costs
// O(n·log n·efConstruction·M·d).
//
// # Memory per vector
//
// Arrays are flat: vectors n×d float32, layer-0 adjacency n×(1+2M) uint32
// ([count, ids…], fixed stride), and upper layers in a pool of (1+M)-word
// slots addressed by a per-node offset. Per vector, in bytes:
//
//	4d            vector
//	4(1+2M)       layer-0 list
//	1 + 4         level, upper-slot offset
//	8             caller's label (the id map)
//	1/4           live and tombstone bits
//	4(1+M)/(M-1)  expected upper-layer lists (Σ_{l≥1} M^-l = 1/(M-1))
//
// For d = 512, M = 16: 2048 + 132 + 5 + 8 + 0.25 + 4.53 ≈ 2198 bytes;
// TestMemoryPerVector measured 2197.8 bytes/vector on Vaswani (11,429
// vectors), 4.59 B of it upper layers. Not counted: 4096 lock stripes
// (32 KiB per index) and 1 byte per node of visited-list per concurrent
// search (pooled).
//
// # Concurrency
//
// All methods may be called concurrently. Adjacency entries are read with
// atomic loads and written with atomic stores under a per-node striped
// mutex (hnswlib keeps a mutex per node; a goroutine never holds two
// stripes, so stripes cannot deadlock). A vector is written before any
// link to its node is published, so a reader that finds an id through an
// atomic load sees the finished vector. One mutex guards the entry point
// and top level; an insert whose level exceeds the top holds it for the
// whole insert, as hnswlib does. A reader/writer lock guards array
// growth only: every operation holds it shared; growing (doubling) takes
// it exclusively. AddBatch inserts with several goroutines; ids and levels
// are assigned in order first, so a 1-thread batch is reproducible.
// Searches allocate nothing in steady state: scratch (visited list with
// 8-bit generation counters, heaps, the layer-0 pool) is pooled.
//
// # Deletes
//
// Delete sets a tombstone bit: the node disappears from results at once
// and still routes searches. A deleted entry point is replaced by a live
// node of the highest level that has one (scanning the short per-level
// lists of upper nodes). RepairDeleted(maxNodes) advances an incremental
// sweep by at most maxNodes nodes per call: (1) every live node whose list
// holds deleted ids is re-linked as in a re-insertion at that layer —
// SEARCH-LAYER(efConstruction) seeded from its live neighbours and the
// live nodes two hops away through deleted ones, heuristic selection over
// those plus the surviving links, reverse links; (2) a walk from the entry
// point over all layers; (3) live nodes the walk missed get an in-link
// from their nearest live node with room. When a sweep ends, the nodes
// deleted before it started lose their own links. Memory is reclaimed only
// by rewriting the index (compaction, engine/tier). On Vaswani, deleting
// 30% and repairing gives recall@10 0.9935 vs 0.9925 for a fresh build of
// the remaining 70% (TestDeleteRepairUSE).
//
// # Filtered search
//
// SearchParams.Allow (a roaring bitmap of internal ids) restricts results.
// The planner scores the allowed ids exactly when |allowed| ≤ 256 or
// |allowed|² ≤ ef·Mmax0·n (exactCostRatio, measured by
// BenchmarkFilteredPlanner); otherwise SEARCH-LAYER walks through
// disallowed nodes but keeps only allowed ones in W, and stops only when
// W holds ef allowed nodes and the nearest candidate is further than all
// of them. If a walk ends with fewer than k results while more allowed
// live ids exist, the allowed ids are scored exactly, so a top-k is never
// cut short.
//
// # Cancellation
//
// SearchContext and SearchIntoContext stop when their context is done.
// The graph walk (linear pool or two heaps, filtered or not) and exact
// scoring count the candidates they score and look at the context's Done
// channel once per 256 of them (one non-blocking receive; none for
// context.Background, whose channel is nil), so a cancelled search stops
// after a few microseconds of further work. It then returns the k nearest
// of the nodes scored so far (tombstones dropped, SQ8 candidates
// reranked) with ctx.Err(): a partial list, never passed off as complete.
// Search and SearchInto are the same calls with context.Background().
//
// # Storage
//
// Options.Storage = SQ8 adds a byte per dimension (per-dimension min/max
// quantiser, trained by TrainSQ8 or on the first AddBatch). Searches then
// traverse on the codes (asm.SQ8Dot / asm.SQ8L2Sq) and rerank the ef
// layer-0 candidates on the exact vectors; inserts link on exact
// distances.
//
// # Performance
//
// Layer-0 scoring gathers a node's unvisited neighbours and scores them in
// one asm.DotGather / asm.L2SqGather call (upper-layer greedy steps and
// the shrink in addLink too); on AVX-512 and AVX2 the kernel scores four rows at
// a time and prefetches the next four. After an expansion only the
// nearest unexpanded candidate's adjacency list is prefetched
// (asm.PrefetchRowsU32), as hnswlib does with _mm_prefetch: prefetching
// the lists of every new candidate competed with the vector loads.
// Copying the neighbours' vectors into a contiguous block for one
// asm.DotBatch call was slower: the copy streams the same bytes the dot
// products read.
//
// Measurements (against hnswlib with TestPeerHnswlib, and of the choices
// above): bench/results/notes/hnsw.md.
//
// # Search on a linear pool
//
// An unfiltered search of an index without tombstones runs layer 0 on a
// linearPool (pool.go): the ef best nodes found so far in one array
// sorted by distance, each flagged expanded or not, as in NSG's
// candidate pool (Fu et al., VLDB 2019, Alg. 1). It expands the nearest
// unexpanded entry until none is left. This is SEARCH-LAYER (Alg. 2)
// without its candidate heap C: a node that leaves W keeps a distance
// above W's furthest, so Alg. 2 never expands it either; the walk visits
// the same nodes and returns the same W (TestPoolMatchesHeap checks ids
// and distances against the heap walk, forced by a test hook, for both
// storages and all metrics). An insertion is an insertion-sort step from
// the end (a binary search and one copy above 160 entries) instead of a
// push on each of two heaps, and W needs no final drain. The adjacency
// list of the nearest unexpanded node is prefetched before the new
// neighbours are scored, not after: it is the next node expanded unless
// one of them beats it, and its list then arrives during the scoring
// (the heap walk, still used with an allow-list or tombstones, does the
// same). CPU profile of BenchmarkSearchGloVe (20k, ef=32) before: 36% in
// asm.DotGather, 25% in heap operations, 5% waiting for adjacency lists;
// after: 45% in asm.DotGather, 10% in pool insertions, 3% lists.
// Alternating batches of the 500 GloVe queries on one index (20k, M=32,
// median of 30 rounds of CPU time each), the heap walk (with the early
// prefetch too) took 1.14×, 1.15×, 1.24×, 1.20×, 1.21×, 1.17× and 1.16×
// the pool's time at ef = 10, 16, 32, 64, 128, 256 and 512.
//
// bench/cmd/strata-bench ann --quick (10k base vectors, 500 queries, one
// thread, CPU-time QPS, hnswlib-native built -O3 -march=native with its
// level seed 42, ours 42 too), runs of the tree before and after
// alternated (three each unless noted), on a machine loaded by other jobs
// (load average 7–10 on 2 cores), mean QPS ratio Strata/hnswlib-native
// at recall@10:
//
//	                          0.90   0.95   0.99
//	glove-100-angular before  0.93×  0.88×  0.93×   (M=32, efC=200; 4 runs)
//	glove-100-angular after   1.21×  1.16×  1.22×
//	fashion-mnist     before  1.34×  1.34×  1.45×   (M=16, efC=200)
//	fashion-mnist     after   1.53×  1.53×  1.60×   (2 runs; in a 3rd the peer died)
//	vaswani-use512    before  1.52×  1.53×  1.38×   (M=16, efC=200; 2 runs)
//	vaswani-use512    after   1.85×  1.69×  1.60×
//
// Per efSearch the GloVe speed-up is larger (1.1–1.4× hnswlib at the same
// ef, against 0.86–1.04× before); the ratio at equal recall is lower
// because at seed 42 this index's recall@10 at ef=16 is 0.9394 against
// hnswlib's 0.9482 (see above: a seed effect, not a search cost). With
// the level seed varied for both (seeds 1, 2, 3 and 42 given to each
// engine's own RNG; hnswlib driver patched to read the seed, same GloVe
// 10k subset, 500 queries, efSearch 10–128, each engine's thread CPU
// time, ours and the peer alternated per seed), the QPS ratio at recall
// 0.90/0.95/0.99 was 1.31/1.33/1.35, 1.32/1.31/1.33, 1.33/1.30/1.27 and
// 1.12/1.12/1.24: a mean of 1.27×/1.26×/1.30×. With SQ8 storage the pool
// walk is 1.11–1.14× faster than the heap walk (Vaswani, ef 16–128,
// alternating batches).
//
// Remaining GloVe search time: half in the distance kernel, then the
// visited test, pool insertions and the prefetch call. Not tried: rows of
// d=100 floats start at 16-byte offsets, so in three rows of four every
// 16-float load spans two cache lines; padding rows to 112 floats
// (+12% memory, a file-format change) would align them.
//
// # File format
//
// See persist.go for the layout diagram: a 64-byte header (magic
// "STRHNSW\x00", version), ten 64-byte-aligned sections (vectors,
// layer-0 lists, levels, upper offsets, upper lists, labels, live bits,
// tombstones, SQ8 codes and parameters), a section table and a trailer
// with the table offset and a CRC32C of everything before it. Version 2
// packs the link lists (sorted ids, bit-packed gaps: pack.go) and the
// labels (varint deltas); on a 11,429 × 512 graph at M = 16 the layer-0
// lists take 0.26 MB instead of 1.51 MB. Open uses the vectors, levels,
// bitsets and codes of a []byte in place (an mmap from OpenFile: they are
// never copied into the heap) and decodes the links and labels into heap
// arrays of 4·(2M+1) + 8 bytes a node, after validating the CRC, every
// section bound and every link, so that corrupt input yields a
// *CorruptError with the byte offset (errors.Is(err, ErrCorrupt)) and
// never a panic. Version 1 files (fixed-width link rows, used in place)
// are still read. Opened indexes are read-only.
package hnsw
