package ivfpq

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/stratasearch/strata/internal/base"
)

// Metric names the distance an index ranks by (base.Metric, shared by
// every package; its numeric value is the one written into the file
// header). ivfpq supports L2 and IP. Every metric is reported as a
// distance: smaller is closer.
type Metric = base.Metric

const (
	// L2 ranks by squared Euclidean distance Σ (q[i]-x[i])².
	L2 = base.L2
	// IP ranks by inner product; the reported distance is −⟨q,x⟩
	// (FAISS METRIC_INNER_PRODUCT with the sign flipped so smaller is
	// closer). Normalise vectors beforehand for cosine similarity.
	IP = base.IP
)

// Residual says whether PQ encodes x − c (the residual to the vector's
// coarse centroid c) or x itself.
type Residual uint32

const (
	// ResidualDefault encodes by residual for L2 (FAISS IndexIVFPQ
	// by_residual) and directly for IP: on Vaswani USE-512 (IP, nlist 64,
	// nprobe 16) residual-free codes gave recall@10 0.951 vs 0.937 with
	// residuals (8-bit, M = 64, refine ×4) and 0.982 vs 0.970 (4-bit,
	// M = 128, refine ×10).
	ResidualDefault Residual = iota
	// ResidualOn encodes x − c (for IP the list's ⟨q,c⟩ is added exactly).
	ResidualOn
	// ResidualOff encodes x; one LUT per query is shared by all lists.
	ResidualOff
)

// KMeansInit selects the k-means initialisation.
type KMeansInit uint32

const (
	// InitDefault is InitRandom (FAISS's choice).
	InitDefault KMeansInit = iota
	// InitRandom picks k distinct training points uniformly at random.
	InitRandom
	// InitPlusPlus is k-means++ (Arthur & Vassilvitskii, SODA 2007):
	// each next centroid is a point drawn with probability ∝ D(x)².
	InitPlusPlus
)

// Options are the build parameters of an Index. Zero fields take the
// documented defaults (EnsureDefaults); Validate reports every problem.
type Options struct {
	// Dim is the vector dimension d. Required (> 0); must be divisible by M.
	Dim int
	// Metric is L2 or IP. Default L2.
	Metric Metric
	// Nlist is the number of coarse centroids / inverted lists. Default 256.
	// At most 1<<24.
	Nlist int
	// M is the number of PQ sub-quantizers. Default: Dim/4 when 4 divides
	// Dim, else Dim. Dim must be divisible by M.
	M int
	// Nbits is the bits per sub-quantizer code: 8 (256 centroids, ADC scan)
	// or 4 (16 centroids, fast-scan in 32-vector blocks). Default 8.
	Nbits int
	// Residual selects encoding by residual. Default ResidualDefault: on
	// for L2, off for IP.
	Residual Residual
	// KMeansIters is the number of Lloyd iterations of each PQ
	// sub-quantizer. Default 25 (FAISS ClusteringParameters.niter).
	KMeansIters int
	// CoarseKMeansIters is the number of Lloyd iterations of the coarse
	// quantizer. Default 10, FAISS's Level1Quantizer setting; on Vaswani
	// USE-512 (nlist 64, nprobe 16, 5 seeds) refined recall@10 was 0.953
	// with 10 and 0.952 with 25 (8-bit, M = 64), 0.984 both (4-bit).
	CoarseKMeansIters int
	// KMeansInit is the initialisation. Default InitRandom.
	KMeansInit KMeansInit
	// MaxPointsPerCentroid bounds the k-means training set to
	// MaxPointsPerCentroid·k points, subsampled with Seed. Default 256 (FAISS).
	MaxPointsPerCentroid int
	// Seed seeds every random choice (subsampling, initialisation). The
	// zero value is a valid seed.
	Seed uint64
	// Threads is the number of goroutines used by training and Add.
	// Default runtime.GOMAXPROCS(0).
	Threads int
	// MaxPrecomputedTableBytes bounds the precomputed L2 residual tables
	// (FAISS IndexIVFPQ use_precomputed_table; see Index.Search): for L2
	// with residual encoding, Nlist·M·2^Nbits float32 (4 bytes each) of
	// query-independent terms, built on the first search. Larger tables
	// are not built and search falls back to one full LUT per probed
	// list. Default (0) 2 GiB, FAISS's precomputed_table_max_bytes;
	// negative disables the tables. Not stored in the index file: an
	// opened index uses the default.
	MaxPrecomputedTableBytes int64
	// OPQ learns an orthogonal d×d rotation R (Ge, He, Ke, Sun, "Optimized
	// Product Quantization", CVPR 2013, non-parametric method; see opq.go)
	// and applies it to every vector and query before coarse assignment
	// and PQ, as FAISS's "OPQ{M},IVF{nlist},PQ{M}" (IndexPreTransform).
	// Unlike FAISS, R is learned on the PQ's own training input: the
	// residuals to the coarse centroids when encoding by residual, the
	// vectors otherwise; the coarse centroids are trained on the
	// unrotated vectors and rotated afterwards (an orthogonal R preserves
	// L2 and inner products, so assignment and probing are unchanged up to
	// float rounding). Learning R on the residuals measured better than on
	// the vectors (fashion-mnist-784, 4-bit: recall@10 before refine
	// 0.632 vs 0.610; see opqLearnOnVectors). Refinement rescores with the
	// unrotated exact vectors. Costs d² multiply-adds per query and per
	// added vector, and OPQIters rounds of training. Default false: it
	// helps on Vaswani and fashion-mnist but not on glove-100 (see
	// doc.go), for several times the training time. Not allowed for the
	// cold-tier codec.
	OPQ bool
	// OPQIters is the number of alternating OPQ rounds (FAISS OPQMatrix
	// niter, default 50 there). Default 10; used only with OPQ. On Vaswani
	// USE-512 (8-bit, M = 64, nprobe 16, refine ×4, seeds 1–5) mean
	// refined recall@10 was 0.965 with 3 rounds, 0.967 with 5, 0.974 with
	// 10 (0.953 without OPQ); each round costs about one PQ training of 4
	// k-means iterations, an encode, two n×d×d products and one d×d SVD.
	OPQIters int
	// SphericalCoarse makes the coarse k-means spherical: every centroid
	// is rescaled to unit norm after each Lloyd update (FAISS
	// ClusteringParameters.spherical, which FAISS's IndexIVF turns on for
	// inner product). Plain means under inner-product assignment let the
	// centroids of tight regions grow long and attract large lists, so each
	// probe scans more codes. At equal refined recall@10, spherical coarse
	// centroids made search 1.5–2.3× faster on glove-6b-100 (IP, IVF1024,
	// PQ50, 2,000 queries) and about 1.5× faster on Vaswani USE-512 at
	// recall 0.94–0.95 (IVF64, PQ64); see doc.go "Coarse clustering". The
	// price is recall at a fixed nprobe (glove 8-bit at nprobe 16: 0.862
	// vs 0.924), so a caller who turns it on should retune nprobe. Default
	// false, which keeps the recall that existing nprobe settings were
	// chosen for. Training only: it is not stored in the index file.
	SphericalCoarse bool
}

// defaultOPQIters is OPQIters' default.
const defaultOPQIters = 10

// defaultMaxPrecomputedTableBytes is MaxPrecomputedTableBytes' default.
const defaultMaxPrecomputedTableBytes = 2 << 30

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	if o.Metric == 0 {
		o.Metric = L2
	}
	if o.Nlist == 0 {
		o.Nlist = 256
	}
	if o.M == 0 && o.Dim > 0 {
		if o.Dim%4 == 0 {
			o.M = o.Dim / 4
		} else {
			o.M = o.Dim
		}
	}
	if o.Nbits == 0 {
		o.Nbits = 8
	}
	if o.KMeansIters == 0 {
		o.KMeansIters = 25
	}
	if o.CoarseKMeansIters == 0 {
		o.CoarseKMeansIters = 10
	}
	if o.KMeansInit == InitDefault {
		o.KMeansInit = InitRandom
	}
	if o.MaxPointsPerCentroid == 0 {
		o.MaxPointsPerCentroid = 256
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.OPQ && o.OPQIters == 0 {
		o.OPQIters = defaultOPQIters
	}
	if o.MaxPrecomputedTableBytes == 0 {
		o.MaxPrecomputedTableBytes = defaultMaxPrecomputedTableBytes
	}
	return o
}

// byResidual reports whether codes are residuals.
func (o Options) byResidual() bool {
	return o.Residual == ResidualOn || (o.Residual == ResidualDefault && o.Metric != IP)
}

// Validate reports every problem of o (after EnsureDefaults), joined in one
// error wrapping ErrInvalidOptions.
func (o Options) Validate() error {
	var p []string
	if o.Dim <= 0 {
		p = append(p, fmt.Sprintf("Dim = %d, want > 0", o.Dim))
	}
	if o.Metric != L2 && o.Metric != IP {
		p = append(p, fmt.Sprintf("Metric = %v, want L2 or IP", o.Metric))
	}
	if o.Nlist <= 0 || o.Nlist > 1<<24 {
		p = append(p, fmt.Sprintf("Nlist = %d, want 1..%d", o.Nlist, 1<<24))
	}
	if o.M <= 0 {
		p = append(p, fmt.Sprintf("M = %d, want > 0", o.M))
	} else if o.Dim > 0 && o.Dim%o.M != 0 {
		p = append(p, fmt.Sprintf("Dim = %d is not divisible by M = %d", o.Dim, o.M))
	}
	if o.Nbits != 4 && o.Nbits != 8 {
		p = append(p, fmt.Sprintf("Nbits = %d, want 4 or 8", o.Nbits))
	}
	if o.Residual > ResidualOff {
		p = append(p, fmt.Sprintf("Residual = %d, want ResidualDefault, ResidualOn or ResidualOff", o.Residual))
	}
	if o.KMeansIters < 0 {
		p = append(p, fmt.Sprintf("KMeansIters = %d, want ≥ 0", o.KMeansIters))
	}
	if o.CoarseKMeansIters < 0 {
		p = append(p, fmt.Sprintf("CoarseKMeansIters = %d, want ≥ 0", o.CoarseKMeansIters))
	}
	if o.KMeansInit > InitPlusPlus {
		p = append(p, fmt.Sprintf("KMeansInit = %d, want InitRandom or InitPlusPlus", o.KMeansInit))
	}
	if o.MaxPointsPerCentroid < 1 {
		p = append(p, fmt.Sprintf("MaxPointsPerCentroid = %d, want ≥ 1", o.MaxPointsPerCentroid))
	}
	if o.OPQIters < 0 {
		p = append(p, fmt.Sprintf("OPQIters = %d, want ≥ 0", o.OPQIters))
	}
	if o.Threads < 1 {
		p = append(p, fmt.Sprintf("Threads = %d, want ≥ 1", o.Threads))
	}
	if len(p) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidOptions, strings.Join(p, "; "))
	}
	return nil
}

// SearchParams are per-call search parameters.
type SearchParams struct {
	// Nprobe is the number of inverted lists visited, 1..Nlist (clamped to
	// Nlist). Default (0) 1, as FAISS.
	Nprobe int
	// KFactor enables refinement (FAISS IndexRefineFlat k_factor): the top
	// k·KFactor PQ candidates are rescored with the exact vectors given to
	// SetRefineVectors and the best k returned. 0 or 1 with no refine
	// vectors: no refinement. KFactor ≥ 1 with refine vectors: refine.
	KFactor int
	// Allow, when non-nil, restricts results to the ids it holds. It is
	// applied inside the list scan, so k results are returned whenever k
	// allowed live vectors lie in the probed lists.
	Allow *roaring.Bitmap
	// AllowFunc, when non-nil, is called inside the scan for each candidate
	// that would enter the top list (after Allow and tombstones); false
	// skips it. It is the engine/tier seam (a per-row liveness-at-epoch and
	// filter check). It must be safe for concurrent calls if searches run
	// concurrently.
	AllowFunc func(id uint32) bool
}

// Result is one search hit: the vector id and its distance (L2: squared L2;
// IP: −⟨q,x⟩). Refined results carry exact distances, others PQ estimates.
type Result struct {
	ID       uint32
	Distance float32
}

// Errors. Every error of this package is prefixed "ivfpq: ".
var (
	// ErrInvalidOptions: Options.Validate failed.
	ErrInvalidOptions = errors.New("ivfpq: invalid options")
	// ErrNotTrained: Add or Search before Train.
	ErrNotTrained = errors.New("ivfpq: index is not trained")
	// ErrDimension: a vector or matrix length does not match Dim.
	ErrDimension = errors.New("ivfpq: dimension mismatch")
	// ErrInvalidArgument: a bad argument (k < 1, too few training points,
	// duplicate id, ...).
	ErrInvalidArgument = errors.New("ivfpq: invalid argument")
	// ErrCorrupt: a malformed, truncated or checksum-failing index file.
	// Such errors are *CorruptError of Kind "ivfpq index". It is
	// base.ErrCorrupt, shared by every format.
	ErrCorrupt = base.ErrCorrupt
	// ErrVersion: the file has a newer format version than this reader.
	ErrVersion = errors.New("ivfpq: unsupported format version")
)

// CorruptError describes malformed input at a byte offset of a file
// (Kind "ivfpq index"; Path is "<bytes>" when opened from memory). It is
// the type every format shares.
type CorruptError = base.CorruptError

// corruptKind is the Kind of this package's *CorruptError.
const corruptKind = "ivfpq index"
