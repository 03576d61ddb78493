// Package asm holds Strata's SIMD inner loops and their pure-Go twins.
//
// Every dense search spends its time in a handful of kernels:
//
//	L2Sq, Dot                 one pair of float32 vectors, any d
//	L2SqBatch, DotBatch       one query against n rows of an n×d row-major matrix
//	L2SqGather, DotGather     one query against the rows of x named by an id list (HNSW
//	                          neighbours; AVX-512 prefetches row i+1 while scoring row i)
//	PrefetchRowsU32           cache hint for the rows of a uint32 matrix (HNSW adjacency lists)
//	L2SqMany, DotMany         n×d points against m×d centroids → n×m (k-means assignment)
//	SQ8L2Sq, SQ8Dot           float32 query against 8-bit scalar-quantised codes
//	L2SqU8, DotU8             pre-quantised uint8 query against uint8 codes (exact integers;
//	                          AVX-512 VNNI VPDPBUSD, NEON UDOT where present)
//	ADCScan8                  8-bit PQ asymmetric distance: Σ_j LUT[j][code[i][j]]
//	FastScan4                 4-bit PQ fast-scan in FAISS's pq4 layout (PackCodes4,
//	                          QuantizeLUT4): VPSHUFB / VTBL lookups, uint16 accumulation,
//	                          1–4 queries per call; on AVX-512 CPUs with VBMI and VNNI
//	                          a VPERMB transpose + lookup and VPDPBUSD accumulation
//	SumFloat32, Bandwidth     a streaming read, used as the memory-bandwidth probe that
//	                          benchmarks report kernel throughput against
//
// Each kernel exists as
//
//	x_generic.go        pure Go, used when asm is unavailable (build tag noasm or purego,
//	                    or an architecture other than amd64 / arm64)
//	x_amd64.go + .s     AVX2 (+FMA) and AVX-512 (F, BW, DQ, VL) variants
//	x_arm64.go + .s     NEON variant (instructions the Go assembler lacks are WORD
//	                    encodings with the mnemonic in a comment)
//
// The reference implementations (ref.go and the *Ref functions beside each
// kernel) are compiled on every build; the Generic level uses them, and tests
// compare every other level against them: floats within
// (n+2)·6e-8·Σ|aᵢbᵢ| of a float64 reference, integers exactly.
//
// The dispatch level is chosen once at init from github.com/klauspost/cpuid/v2
// and can be forced by tests and benchmarks with SetLevel, so every level the
// CPU supports runs in one test process. The environment variable
// STRATA_ASM_MAX_LEVEL (generic, avx2, avx512 or neon) caps the detected
// levels for the whole process, so an AVX-512 host dispatches exactly as an
// AVX2-only host does. The build constraint for assembly is
// (amd64 || arm64) && gc && !noasm && !purego; the generic files carry exactly
// its negation. CI also runs this package under qemu-x86_64 -cpu max (AVX2
// without AVX-512; on AVX-512 hosts only) and qemu-aarch64 (NEON).
//
// Shape errors (a slice shorter than its stated shape) are programming errors
// and panic like an out-of-range slice index; callers that take shapes from
// untrusted input must validate them first.
package asm
