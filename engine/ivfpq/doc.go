// Package ivfpq is Strata's compressed vector index: an inverted file (IVF)
// over a coarse k-means quantizer, with product-quantized (PQ) codes in the
// lists, scanned by 8-bit ADC or 4-bit fast-scan kernels, optionally
// refined with exact vectors. It also provides the 18-byte cold-tier codec.
//
// # Algorithm
//
// Training (Index.Train):
//   - Coarse quantizer: Lloyd k-means (KMeans) with Nlist centroids and
//     CoarseKMeansIters (10, as FAISS's IVF) iterations on at
//     most 256·Nlist points (FAISS's subsampling), random or k-means++
//     (Arthur & Vassilvitskii 2007) initialisation, empty clusters repaired
//     by splitting the largest, deterministic for a seed. Assignment is a
//     blocked many-to-many kernel (assignNearest): for d ≤ 32 (PQ
//     sub-spaces) asm.NearestL2T scans the transposed centroids, 16
//     centroids per FMA with the argmin of ‖c‖² − 2⟨x,c⟩ fused; for larger
//     d asm.DotMany computes ⟨x,c⟩ for blocks of 64 points × up to 1024
//     centroids (4×4 register-blocked on AVX-512) and asm.ArgminAffine
//     takes the argmin of ‖c‖² − 2⟨x,c⟩ (IP: of −2⟨x,c⟩); blocks are split
//     across goroutines.
//   - Product quantizer (Jégou, Douze, Schmid, "Product quantization for
//     nearest neighbor search", TPAMI 2011): the d dimensions are cut into
//     M sub-spaces of d/M; each gets its own k-means codebook of 2^Nbits
//     centroids, trained on the residuals x − c(x) to the coarse centroid
//     ("IVFADC" of the paper, §IV; the default for L2) or on x itself (the
//     default for IP, measured better on USE-512 embeddings).
//   - Optional OPQ rotation (Options.OPQ; Ge, He, Ke, Sun, "Optimized
//     Product Quantization", CVPR 2013, the non-parametric alternating
//     method, see opq.go): an orthogonal d×d R learned on the PQ's
//     training input (residuals or vectors) by OPQIters rounds of "train
//     the codebooks on R·x, then solve the orthogonal Procrustes problem
//     R = V·Uᵀ from the SVD XᵀŶ = U·S·Vᵀ" (gonum LAPACK). The coarse
//     centroids and every added vector and query are then rotated
//     (FAISS "OPQ{M},IVF{nlist},PQ{M}"); as R is orthogonal, L2 and inner
//     products, hence coarse assignment, probing, the IP centroid term
//     and the precomputed L2 tables, are those of the unrotated space, and
//     refinement uses the unrotated query and vectors. On Vaswani USE-512
//     (IP, nlist 64, nprobe 16, 8-bit M = 64, refine ×4) it raises
//     recall@10 from 0.948–0.958 to 0.967–0.982 over five seeds; on
//     fashion-mnist-784 (4-bit) from 0.967 to 0.992; on glove-100 it
//     changes nothing (0.958 vs 0.958), hence off by default. Costs (one
//     thread, Vaswani Train + Add): 2.1 s → 7.6 s (8-bit), 0.28 s → 6.4 s
//     (4-bit, mostly the ten 512×512 SVDs), and d² multiply-adds per
//     query (Vaswani 4-bit search +30–50 µs at ~110 µs).
//
// Search (Index.Search), for a query q:
//  1. The Nprobe coarse centroids nearest to q are chosen (L2: smallest
//     ‖q−c‖²; IP: largest ⟨q,c⟩).
//  2. Per probed list, a lookup table (LUT) of M×2^Nbits partial distances
//     is built. L2 by residual uses precomputed tables (Jégou et al. 2011,
//     §IV-B; FAISS use_precomputed_table): for the reconstruction
//     y_l + r of a code in list l,
//     ‖q − y_l − r‖² = ‖q − y_l‖² + Σ_j (‖r_j‖² + 2⟨y_l,j, r_j⟩) − 2⟨q, r⟩.
//     The middle term is query-independent and stored per list
//     (Nlist·M·2^Nbits float32, built on the first search, bounded by
//     Options.MaxPrecomputedTableBytes, default 2 GiB), the last is one
//     M×2^Nbits table per query (asm.DotT), so a list's LUT is one
//     asm.AddF32 of two tables and ‖q − y_l‖² comes from step 1; above the
//     bound the LUT of q − y_l is computed per list. IP by residual:
//     −⟨q_j, C_j[i]⟩, one LUT shared by all lists, plus the list's
//     centroid term −⟨q,c⟩ (⟨q, c + r⟩ = ⟨q,c⟩ + ⟨q,r⟩); without residuals
//     one shared LUT.
//  3. The list's codes are scanned: Nbits = 8 with asm.ADCScan8 (M float
//     lookups per vector, the paper's ADC); Nbits = 4 with asm.FastScan4
//     (André, Kermarrec, Le Scouarnec, "Cache locality is not enough",
//     VLDB 2015, and "Quicker ADC", TPAMI 2019; FAISS's
//     IndexIVFPQFastScan layout: blocks of 32 vectors, two 4-bit codes per
//     byte, LUTs quantised to uint8 and summed in uint16 by in-register
//     shuffles). Tombstoned ids and ids missing from the allow-list are
//     skipped inside the scan, and the best kk candidates kept (kk =
//     k·KFactor with refine, else k): for 8 bits in a bounded max-heap;
//     for 4 bits in a reservoir of 4·kk entries (FAISS's ReservoirTopN)
//     that, when full, keeps its kk smallest and lowers its threshold to
//     the largest of them. Without residuals every list maps a uint16 sum
//     to its distance alike, so the reservoir holds sums and finds the
//     kk-th by two 256-bin histograms; with residuals it holds distances
//     and uses quickselect. Only the sums under the threshold are offered
//     (asm.IndexBelowU16).
//  4. Refine (FAISS IndexRefineFlat): with exact vectors set and KFactor
//     ≥ 1, the best k·KFactor candidates are rescored exactly (one
//     asm.L2SqGather / asm.DotGather call) and the best k returned.
//
// For IP the coarse k-means assigns by largest inner product (FAISS's
// IndexFlatIP quantizer), and so do Add and probing; for L2 by nearest
// centroid.
//
// # Coarse clustering
//
// Options.SphericalCoarse makes the coarse k-means spherical, as FAISS's
// IndexIVF does for inner product: each centroid is rescaled to unit norm
// after every update. With plain means (the default), a tight region's
// centroid is long (the mean of nearly parallel unit vectors) and wins the
// largest inner product for points far around it, so lists grow unequal
// and each probe scans more codes. That raises recall at a fixed nprobe
// but costs more than it gains. Measured with one thread, refine ×4
// (8-bit) / ×10 (4-bit), residual-free codes, seed 42, QPS at about equal
// recall@10:
//
//	data set (queries)             code     plain means             spherical
//	glove-6b-100 IVF1024 (2,000)   PQ50     0.924 @ 2,753 (np 16)   0.929 @ 5,884 (np 32)
//	                                        0.961 @ 1,733 (np 32)   0.970 @ 3,175 (np 64)
//	glove-6b-100 IVF1024           PQ50x4   0.896 @ 7,906 (np 32)   0.907 @ 10,533 (np 64)
//	Vaswani IVF64 (93)             PQ64     0.941 @ 13,021 (np 8)   0.948 @ 19,448 (np 16)
//	Vaswani IVF64                  PQ128x4  0.968 @ 23,845 (np 8)   0.972 @ 27,174 (np 16)
//
// It stays off by default because it lowers recall at a given nprobe
// (Vaswani 8-bit at nprobe 16, 5 seeds: 0.939 vs 0.952 mean), and the
// nprobe defaults and acceptance tests of this package and of the warm
// tier were set for plain means; turning it on means retuning nprobe.
// In the warm tier it did not pay: with the tier's small lists (nlist
// 4·√n, about 27 vectors per list on Vaswani) and refine ×4, spherical
// centroids at the nprobe that kept recall (nlist/5 instead of nlist/8)
// scanned 3–16% fewer codes but searched no faster (one segment 75 vs
// 76 µs per query, two segments 99 vs 94 µs), so the tier keeps plain
// means.
// The benchmark harness turns it on for inner-product data, to match the
// FAISS peer (IndexIVF sets spherical clustering for METRIC_INNER_PRODUCT).
//
// Removal marks ids in a tombstone bitmap, checked during the scan, so a
// removed id is hidden from the next search; Compact rewrites the lists
// without them (FAISS has no remove_ids for fast-scan indexes).
//
// # Accuracy of the 4-bit path
//
// The float LUT is quantised to uint8 (quantizeLUT4, asm.QuantizeLUT4's
// contract): each sub-table is shifted by its minimum (bias = Σ minima)
// and all are scaled by one factor a = min(255 / max span,
// (65535 − M) / Σ spans), so no sum of M entries can wrap uint16. Each
// entry is off by ≤ 0.5/a, so a fast-scan distance is within M·0.5/a of
// the float ADC distance (plus float32 rounding); the integer sums
// themselves are exact (TestFastScan4ExactAndBound). Refinement removes
// the quantisation error from the final ranking.
//
// # Complexity
//
//   - Train: O(CoarseKMeansIters·n_c·Nlist·d + KMeansIters·n_p·2^Nbits·d)
//     with n_c ≤ 256·Nlist and n_p ≤ 256·2^Nbits training points; OPQ
//     adds OPQIters·O(n_p·d² + 4·n_p·2^Nbits·d + d³).
//   - Add: O(n·(Nlist·d + 2^Nbits·d)) (assignment and encoding), + O(n·d²)
//     with OPQ.
//   - Search: O(Nlist·d) coarse + O(M·2^Nbits·d/M) query LUT +
//     O(Nprobe·M·2^Nbits) per-list table additions (L2 by residual; without
//     the precomputed tables O(Nprobe·2^Nbits·d)) + O(Σ probed list
//     lengths·M) scan + O(k·KFactor·d) refine, + O(d²) with OPQ.
//   - Memory per vector: M·Nbits/8 bytes of code + 4 bytes of id (4-bit
//     lists are padded to 32-vector blocks), plus Nlist·d + 2^Nbits·d
//     floats of centroids per index; refine vectors (4·d bytes) live
//     outside, e.g. mmap'd. Example, d = 512, M = 64, Nbits = 8: 68 bytes
//     per vector against 2048 for float32 — 30×. L2 by residual adds the
//     precomputed tables, 4·Nlist·M·2^Nbits bytes per index (Nlist = 256,
//     M = 56, 8-bit: 14.7 MB), not stored in the file.
//
// # Cancellation
//
// SearchContext and ColdCodec.ScanContext stop when their context is
// done: the list scan looks at the context's Done channel before every
// chunk of 256 codes, in the 8-bit ADC and 4-bit fast-scan loops alike
// (the cold scan also every 4096 rows of its counting sort). A cancelled
// search refines what it had (when refinement is on) and returns the best
// k of the codes scanned so far with ctx.Err(). Search and Scan are the
// same calls with context.Background().
//
// # File format (versions 1 and 2)
//
// All integers little-endian; sections start 8-byte aligned (zero
// padding), so an mmap'd file gives aligned ids and codes. Version 2 adds
// the OPQ rotation: header flag bit 1 and a seventh section. An index
// without OPQ is still written as version 1 (so its bytes, and cold-tier
// codec files, are unchanged and older readers read it); Open reads both.
//
//	offset 0  +--------------------------------------------------+
//	          | magic "STRAIVPQ"                         8 bytes |
//	          | version u32 (1 or 2) | flags u32 (bit 0:         |
//	          |   residual; bit 1, version 2 only: OPQ)          |
//	          | dim u32 | metric u32 (1 l2, 2 ip) | nlist u32    |
//	          | M u32 | nbits u32 | reserved u32                 |
//	          | ntotal u64 (stored vectors, incl. tombstoned)    |
//	          | nextID u64 (1 + largest id ever added, ≤ 2^32)   |
//	          | zero padding to 64                               |
//	offset 64 +--------------------------------------------------+
//	          | coarse centroids: nlist×dim f32                  |
//	          | PQ codebooks: M×2^nbits×(dim/M) f32              |
//	          | list directory: nlist × {count u64, bytes u64}   |
//	          | ids: ntotal u32, list after list                 |
//	          | codes: list after list; 8-bit: count×M bytes;    |
//	          |   4-bit: ceil(count/32) blocks of asm.PackCodes4 |
//	          | tombstones: roaring bitmap, portable format      |
//	          | version 2: OPQ rotation R, dim×dim f32 row-major |
//	          |   (y = R·x; empty when flag bit 1 is clear)      |
//	footer    +--------------------------------------------------+
//	          | 6 (v1) or 7 (v2) × {offset u64, length u64}:     |
//	          |   the sections above                             |
//	          | CRC32C (Castagnoli) u32 of bytes [0, here)       |
//	          | version u32 | magic "STRAIVPE"                   |
//	          +--------------------------------------------------+
//
// Open verifies magic, version (newer → ErrVersion), CRC, every section
// bound and length against the header (the rotation: dim² floats, finite,
// max |R·Rᵀ − I| ≤ 1e-3), per-list code sizes, unique ids and the
// tombstone set; any failure is a *CorruptError with the byte
// offset. Codes and (when aligned) ids alias the opened bytes.
//
// # Cold-tier codec
//
// ColdCodec encodes a vector in ColdCodeSize = 18 bytes: the uint16 id of
// its IVF centroid (Nlist ≤ 65536) then M = 16 8-bit PQ codes of its
// residual. Scan visits the codes grouped by centroid (one LUT per probed
// centroid) and reranks with exact vectors when given.
package ivfpq
