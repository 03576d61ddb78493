package hnsw

import (
	"errors"
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/internal/base"
)

// Metric names the distance an index ranks by (base.Metric, shared by
// every package; its numeric value is the one written into the file
// header). Every metric is reported as a distance: smaller is closer.
type Metric = base.Metric

const (
	// L2 ranks by squared Euclidean distance Σ (a[i]-b[i])².
	L2 = base.L2
	// IP ranks by inner product; the reported distance is 1 - a·b
	// (as hnswlib's InnerProductSpace does).
	IP = base.IP
	// Cosine normalises every inserted and query vector to unit length
	// and ranks by 1 - a·b, i.e. 1 - cos(a, b).
	Cosine = base.Cosine
)

// ParseMetric maps "l2", "ip" and "cosine" (any case) to their Metric.
func ParseMetric(s string) (Metric, error) {
	m, err := base.ParseMetric(s)
	if err != nil {
		return 0, fmt.Errorf("hnsw: %w", err)
	}
	return m, nil
}

// Storage selects how vectors are held for graph traversal.
type Storage uint32

const (
	// Float32 keeps the exact vectors only (4·d bytes per vector) and
	// traverses on them.
	Float32 Storage = iota + 1
	// SQ8 also keeps one byte per dimension (per-dimension min/max scalar
	// quantisation, trained by TrainSQ8 or on the first AddBatch): graph
	// traversal scores codes with asm.SQ8L2Sq / asm.SQ8Dot, and the ef
	// candidates of layer 0 are reranked on the exact float32 vectors
	// (d bytes more per vector). Inserts link on exact distances.
	SQ8
)

// String returns "float32" or "sq8".
func (s Storage) String() string {
	switch s {
	case Float32:
		return "float32"
	case SQ8:
		return "sq8"
	}
	return fmt.Sprintf("Storage(%d)", uint32(s))
}

// Options are the build parameters of an Index (Malkov & Yashunin 2018, §4).
// Search-time parameters live in SearchParams.
type Options struct {
	// Dim is the vector dimension d. Required (> 0).
	Dim int
	// Metric is L2, IP or Cosine. Default L2.
	Metric Metric
	// M is the number of neighbours a node gets on insertion at every
	// layer; upper layers keep at most Mmax = M links, layer 0 at most
	// Mmax0 = 2·M (paper §4.1, "Mmax0 = 2·M"). Default 16. Range [2, 256].
	M int
	// EfConstruction is the candidate-list size used while inserting
	// (paper Alg. 1). Default 200. Must be ≥ 1.
	EfConstruction int
	// Seed seeds the level generator: level = ⌊-ln(U)·mL⌋ with
	// mL = 1/ln(M). Default 0 (a fixed seed, so builds are reproducible
	// when inserts are sequential).
	Seed uint64
	// ExtendCandidates enables the extendCandidates branch of the
	// neighbour-selection heuristic (paper Alg. 4): the candidates'
	// neighbours are added to the candidate set. Default false.
	ExtendCandidates bool
	// KeepPrunedConnections enables keepPrunedConnections of Alg. 4:
	// discarded candidates fill the list up to M. Default false.
	KeepPrunedConnections bool
	// Storage is Float32 (default) or SQ8.
	Storage Storage
	// InitialCapacity preallocates room for this many vectors. Default 1024.
	InitialCapacity int
}

// EnsureDefaults fills every zero field with its documented default and
// returns the result.
func (o Options) EnsureDefaults() Options {
	if o.Metric == 0 {
		o.Metric = L2
	}
	if o.M == 0 {
		o.M = 16
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = 200
	}
	if o.InitialCapacity == 0 {
		o.InitialCapacity = 1024
	}
	if o.Storage == 0 {
		o.Storage = Float32
	}
	return o
}

// Validate reports every problem with o (after defaults), joined.
func (o Options) Validate() error {
	var errs []error
	if o.Dim <= 0 || o.Dim > 1<<16 {
		errs = append(errs, fmt.Errorf("hnsw: Dim %d out of range [1, 65536]", o.Dim))
	}
	if o.Metric != L2 && o.Metric != IP && o.Metric != Cosine {
		errs = append(errs, fmt.Errorf("hnsw: unknown Metric %d", uint32(o.Metric)))
	}
	if o.M < 2 || o.M > 256 {
		errs = append(errs, fmt.Errorf("hnsw: M %d out of range [2, 256]", o.M))
	}
	if o.EfConstruction < 1 {
		errs = append(errs, fmt.Errorf("hnsw: EfConstruction %d must be ≥ 1", o.EfConstruction))
	}
	if o.Storage != Float32 && o.Storage != SQ8 {
		errs = append(errs, fmt.Errorf("hnsw: unknown Storage %d", uint32(o.Storage)))
	}
	if o.InitialCapacity < 0 {
		errs = append(errs, fmt.Errorf("hnsw: InitialCapacity %d must be ≥ 0", o.InitialCapacity))
	}
	return errors.Join(errs...)
}

// SearchParams are per-call search parameters.
type SearchParams struct {
	// EfSearch is the size of the dynamic candidate list at layer 0
	// (paper Alg. 5, "ef"). Values below k are raised to k. Default 64.
	EfSearch int
	// Allow, when non-nil, restricts results to these internal ids.
	// Disallowed nodes are still walked through. When the allowed set is
	// small (|allowed| ≤ 256 or |allowed|² ≤ ef·2M·n, doc.go "Filtered search")
	// the allowed ids are scored exactly.
	Allow *roaring.Bitmap

	// forceGraph is a test hook: always walk the graph, never take the
	// exact-scoring path for small allow-lists (except the documented
	// fewer-than-k fallback).
	forceGraph bool
	// noFallback (test hook) disables even that fallback.
	noFallback bool
	// forceHeap (test hook) searches layer 0 with the two-heap
	// searchLayer even where the linear pool applies.
	forceHeap bool
}

// Result is one search hit.
type Result struct {
	// ID is the internal id (insertion order, 0-based) returned by Add.
	ID uint32
	// Label is the caller's label given to Add.
	Label uint64
	// Distance is the metric's distance (smaller is closer).
	Distance float32
}

// Sentinel errors.
var (
	// ErrCorrupt is matched (errors.Is) by every error about a malformed
	// or truncated index file; such errors are *CorruptError of Kind
	// "hnsw index". It is base.ErrCorrupt, shared by every format.
	ErrCorrupt = base.ErrCorrupt
	// ErrDimension reports a vector of the wrong length.
	ErrDimension = errors.New("hnsw: dimension mismatch")
	// ErrInvalidVector reports a NaN or infinite component.
	ErrInvalidVector = errors.New("hnsw: invalid vector")
	// ErrInvalidK is returned by Search for a negative k.
	ErrInvalidK = errors.New("hnsw: k must be >= 0")
	// ErrReadOnly is returned by mutations of an index opened from bytes.
	ErrReadOnly = errors.New("hnsw: index is read-only (opened from a file)")
	// ErrNotFound reports an id that is not in the index.
	ErrNotFound = errors.New("hnsw: no such id")
	// ErrUntrained is returned by Add on an SQ8 index before TrainSQ8 or a
	// first AddBatch fixed the quantiser.
	ErrUntrained = errors.New("hnsw: SQ8 quantiser not trained (call TrainSQ8 or AddBatch first)")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("hnsw: index closed")
)

// CorruptError describes malformed input at a byte offset of a file
// (Kind "hnsw index"; Path is "" for an in-memory buffer). It is the
// type every format shares.
type CorruptError = base.CorruptError

// corruptKind is the Kind of this package's *CorruptError.
const corruptKind = "hnsw index"
