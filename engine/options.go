package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/engine/tier/wal"
	"github.com/stratasearch/strata/engine/verify"
	"github.com/stratasearch/strata/internal/base"
	"github.com/stratasearch/strata/vfs"
)

// Options configures a DB (Open).
type Options struct {
	// Logger receives recovery warnings from every collection's store.
	// Default slog.Default().
	Logger *slog.Logger
	// Embedders are live embedders by model name (embed.Embedder.Model()):
	// a collection whose config records an embedding model
	// (CollectionOptions.Embedding) gets the one of that name attached when
	// it is opened or created; Collection.SetEmbedder attaches one later.
	// See embedding.go. Default none.
	Embedders map[string]embed.Embedder
	// FS is the file system every file of the DB goes through: collection
	// directories and config files, the cursor key, each collection's
	// store (tier.Options.FS), backups. Source files read by verification
	// (file:// URIs) are outside the DB and always read from the operating
	// system. Default vfs.Default.
	FS vfs.FS
	// VerifyRoots bind directories to namespace prefixes: a document of a
	// matching namespace written without VerifiableSources may have its
	// file:// source read by verification when the file, symbolic links
	// resolved, lies under the directory (package verify, "Who may have a
	// file read"). Each Dir is an absolute clean path. Default none: such
	// documents' sources are then read only under the collection's
	// SourceRoots.
	VerifyRoots []verify.Root
	// Replica opens every collection as a read-only copy's would be
	// (engine/remote's readers): no background compaction nor
	// background index builds (tier.Options.ManualIndex), so the
	// published segment set is served as it is. Writes still work on
	// the local copy; the replica's front refuses them. Default false.
	Replica bool
	// SegmentFetch, if set, is every collection's tier.Options.Fetch:
	// segment files may lack their text sections, which it makes present
	// when a query first needs a row's content (engine/remote's readers).
	SegmentFetch tier.RangeFetcher
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
}

// Validate reports every problem with o: an Embedders entry that is nil or
// whose key is not its model name, a VerifyRoots entry with an empty
// namespace prefix or a directory that is not a clean absolute path.
func (o *Options) Validate() error {
	errs := o.validateEmbedders()
	if err := verify.ValidateRoots(o.VerifyRoots); err != nil {
		errs = append(errs, fmt.Errorf("engine: option VerifyRoots: %w", err))
	}
	return errors.Join(errs...)
}

// FieldType is the type of an indexed metadata field (catalog.FieldType).
type FieldType = catalog.FieldType

// Indexed metadata field types.
const (
	// FieldKeyword is a string (or string-list) field matched by eq, in,
	// prefix and exists.
	FieldKeyword = catalog.FieldKeyword
	// FieldBool is a boolean field matched by eq, in and exists.
	FieldBool = catalog.FieldBool
	// FieldNumber is a numeric field matched by eq, in, range and exists.
	FieldNumber = catalog.FieldNumber
)

// Analyzer names the lexical analyzer (CollectionOptions.Analyzer).
type Analyzer string

// Analyzer names.
const (
	// AnalyzerCode lower-cases Unicode words and splits identifiers
	// (camelCase, snake_case, kebab-case) into parts indexed at the
	// identifier's position; no stemming, no stop-words
	// (text.CodeOptions). The default.
	AnalyzerCode Analyzer = "code"
	// AnalyzerProse tokenises Unicode words, removes English stop words and
	// stems (text.ProseOptions).
	AnalyzerProse Analyzer = "prose"
)

// Validate reports an error unless a is AnalyzerCode or AnalyzerProse.
func (a Analyzer) Validate() error { return oneOf("Analyzer", a, AnalyzerCode, AnalyzerProse) }

// StalePolicy is what verification does with a hit whose source no longer
// matches its stored version hash (CollectionOptions.OnStale).
type StalePolicy string

// Verification behaviours when a hit's source no longer matches its stored
// version hash.
const (
	// OnStaleDrop drops the hit and lists it in Result.Dropped with reason
	// "stale". The default.
	OnStaleDrop StalePolicy = "drop"
	// OnStaleReread replaces the hit's content with the live source span,
	// sets Envelope.Reread and the live version hash, and keeps the hit.
	OnStaleReread StalePolicy = "reread"
)

// Validate reports an error unless p is OnStaleDrop or OnStaleReread.
func (p StalePolicy) Validate() error { return oneOf("OnStale", p, OnStaleDrop, OnStaleReread) }

// SyncPolicy is the WAL acknowledgement policy (CollectionOptions.Sync);
// it maps onto wal.SyncPolicy.
type SyncPolicy string

// WAL acknowledgement policies.
const (
	// SyncAlways acknowledges a write after the fsync covering it. The
	// default.
	SyncAlways SyncPolicy = "always"
	// SyncInterval acknowledges after the write(2) and fsyncs every
	// CollectionOptions.SyncInterval.
	SyncInterval SyncPolicy = "interval"
	// SyncNone acknowledges after the write(2) and fsyncs only at WAL
	// segment rotation and Close.
	SyncNone SyncPolicy = "none"
)

// Validate reports an error unless p is SyncAlways, SyncInterval or
// SyncNone.
func (p SyncPolicy) Validate() error {
	return oneOf("Sync", p, SyncAlways, SyncInterval, SyncNone)
}

// wal maps p onto the WAL's policy ("" is SyncAlways, the default).
func (p SyncPolicy) wal() (wal.SyncPolicy, error) { return wal.ParseSyncPolicy(string(p)) }

// oneOf returns nil if v is one of allowed, else the error
// `engine: collection option <field> = "<v>", want a, b or c`.
func oneOf[T ~string](field string, v T, allowed ...T) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	var want strings.Builder
	for i, a := range allowed {
		switch {
		case i == 0:
		case i == len(allowed)-1:
			want.WriteString(" or ")
		default:
			want.WriteString(", ")
		}
		want.WriteString(string(a))
	}
	return fmt.Errorf("engine: collection option %s = %q, want %s", field, string(v), want.String())
}

// parseMetric parses CollectionOptions.Metric, which is spelled exactly
// "l2", "ip" or "cosine" (the string form is kept in the config file).
func parseMetric(s string) (base.Metric, error) {
	m, err := base.ParseMetric(s)
	if err != nil || m.String() != s {
		return 0, fmt.Errorf("engine: collection option Metric = %q, want l2, ip or cosine", s)
	}
	return m, nil
}

// MaxDim is the largest vector dimension a collection may have (the HNSW
// segment index's limit).
const MaxDim = 65536

// CollectionOptions configures a collection. They are recorded in the
// collection's config file when it is created and restored by Open.
type CollectionOptions struct {
	// Dim is the vector dimension d, 1..MaxDim. Required.
	Dim int `json:"dim"`
	// Metric is the vector metric: "l2", "ip" or "cosine" (base.Metric's
	// spelling; the collection parses it once). Default "cosine".
	Metric string `json:"metric"`
	// MultiTenant requires a namespace on every document and query.
	// Default false.
	MultiTenant bool `json:"multi_tenant,omitempty"`
	// IndexedFields declares the metadata schema: field name → type.
	// Documents whose value for a declared field has another type are
	// rejected. Filters may name any field; undeclared ones are evaluated
	// on the stored metadata. Default none.
	IndexedFields map[string]FieldType `json:"indexed_fields,omitempty"`
	// Analyzer is the lexical analyzer: "code" or "prose". Default "code".
	Analyzer Analyzer `json:"analyzer"`
	// Sync is the WAL acknowledgement policy: "always" (fsync before an
	// acknowledgement), "interval" or "none". Default "always".
	Sync SyncPolicy `json:"sync"`
	// SyncInterval is the fsync period under Sync "interval". Default
	// 10ms (the tier's default).
	SyncInterval time.Duration `json:"sync_interval_ns,omitempty"`
	// OnStale is what verification does with a stale hit: "drop" or
	// "reread". Default "drop". "reread" requires SourceRoots, and is
	// refused with MultiTenant: re-read content goes to whoever can write
	// a document naming a file under the roots.
	OnStale StalePolicy `json:"on_stale"`
	// SourceRoots are the directories (absolute paths) under which
	// verification may read any document's file:// source (symbolic links
	// resolved), whatever its namespace, and re-read a stale hit's live
	// source to return it as content (OnStale "reread"). A stale hit whose
	// path lies outside every root is dropped instead, so a document
	// cannot name /etc/passwd as its source and have search return that
	// file. Outside these roots only sources written with
	// VerifiableSources, or under an Options.VerifyRoots entry of the
	// document's namespace, are read at all (verify.go). Default none.
	SourceRoots []string `json:"source_roots,omitempty"`
	// HybridDefault is the hybrid strategy of a query that sets no fusion
	// parameter (contract.FusionParams all zero): "rerank-maxnorm" (the
	// default; the BM25 top RerankWindow re-ranked by a max-normalised
	// convex combination with the candidates' exact dense similarity) or
	// "rrf" (RRF k = 60 over the two full lists, the behaviour before it).
	// Source: bench/results/hybrid/report.md; see the package doc "Hybrid
	// default". A query that sets any fusion parameter is fused exactly as
	// it asks, whatever this option says.
	HybridDefault HybridStrategy `json:"hybrid_default,omitempty"`
	// HybridRerankWindow is N of the rerank-maxnorm strategy on this
	// collection: the lexical top N re-ranked, 0..contract.MaxFusionWindow.
	// Default (0) RerankWindow. A query that selects rerank-maxnorm with a
	// Fusion.Window uses its own.
	HybridRerankWindow int `json:"hybrid_rerank_window,omitempty"`
	// HybridRerankDenseWeight is α of the rerank-maxnorm strategy on this
	// collection (the lexical weight is 1 − α), in [0, 1]. Default (0)
	// RerankDenseWeight. A query that selects rerank-maxnorm with
	// Fusion.Weights uses its own.
	HybridRerankDenseWeight float64 `json:"hybrid_rerank_dense_weight,omitempty"`
	// MemTableSizeBytes: once the hot MemTable holds about this many bytes
	// (ids + contents + vectors + 64 per version), a background flush
	// turns it into a warm segment (BM25 section + doc store, and the
	// vector index, which the tier builds afterwards in the background:
	// until then the segment's vectors are scanned exactly), so
	// reopening replays only the WAL written since. Default (0)
	// DefaultMemTableSizeBytes = 32 MiB; a negative value turns automatic
	// flushing off.
	MemTableSizeBytes int64 `json:"memtable_size_bytes,omitempty"`
	// Redact is the redaction-at-ingest policy (package engine/redact): "auto"
	// (the default: documents whose Trust is external_unverified),
	// "always" or "off". Credentials and high-entropy secrets are replaced
	// by "[REDACTED:<rule-id>]" before the text reaches postings, vectors
	// or the doc store (content and string metadata values); a source URI
	// loses its userinfo password and secrets in its query string; see
	// RedactSecrets and the package doc "Redaction".
	Redact RedactPolicy `json:"redact,omitempty"`
	// Embedding records the embedding model of the collection's vectors
	// (embedding.go): its name and dimension (= Dim). With it, a live
	// embedder of that model (Options.Embedders, Collection.SetEmbedder)
	// embeds text-only queries and documents. Default nil: no model, the
	// collection takes only caller-supplied vectors.
	Embedding *EmbeddingConfig `json:"embedding,omitempty"`
	// SegmentIndex is the vector index of the collection's warm segments
	// (tier.Options.SegmentIndex): "hnsw" (the default; graph plus float32
	// vectors) or "ivfpq" (IVF-PQ codes, refined with the exact vectors;
	// about 1/10 of HNSW's index bytes per vector at d = 512, see the
	// engine/tier package doc "Warm vector index"). It applies to
	// segments flushed or compacted from then on; every segment records
	// its own kind, so existing segments stay readable either way.
	SegmentIndex tier.SegmentIndexType `json:"segment_index,omitempty"`
	// IVFPQ tunes SegmentIndex "ivfpq". nil: every default.
	IVFPQ *IVFPQOptions `json:"ivfpq,omitempty"`
}

// IVFPQOptions are the IVF-PQ parameters of warm segments
// (CollectionOptions.SegmentIndex "ivfpq"), mapped one to one onto the
// tier.Options IVF* fields, whose docs give the defaults: zero values
// take them (Jégou, Douze, Schmid, TPAMI 2011; FAISS names).
type IVFPQOptions struct {
	// Nlist is the number of coarse lists per segment, 0..65536.
	// Default (0): clamp(round(4·√n), 1, 4096) for a segment of n vectors.
	Nlist int `json:"nlist,omitempty"`
	// M is the number of PQ sub-quantizers; Dim must be divisible by it.
	// Default (0): the largest divisor of Dim ≤ Dim/8 (8-bit) or Dim/4
	// (4-bit).
	M int `json:"m,omitempty"`
	// Nbits is 8 (ADC) or 4 (fast-scan). Default 8.
	Nbits int `json:"nbits,omitempty"`
	// Nprobe is the lists probed per query. Default (0): nlist/8 (≥ 1).
	Nprobe int `json:"nprobe,omitempty"`
	// KFactor is the exact-refine factor (k·KFactor PQ candidates are
	// rescored). Default 4.
	KFactor int `json:"k_factor,omitempty"`
	// MinRows: segments with fewer vectors are scanned exactly instead
	// (no IVF-PQ index). Default 1024, at least 2^Nbits.
	MinRows int `json:"min_rows,omitempty"`
}

// TierSegmentIndex copies the warm-segment vector-index options
// (SegmentIndex, IVFPQ) onto to. The collection's store options are
// built from CollectionOptions when it opens: this is the mapping.
func (o *CollectionOptions) TierSegmentIndex(to *tier.Options) {
	to.SegmentIndex = o.SegmentIndex
	if p := o.IVFPQ; p != nil {
		to.IVFNlist, to.IVFM, to.IVFNbits = p.Nlist, p.M, p.Nbits
		to.IVFNprobe, to.IVFKFactor, to.IVFMinRows = p.Nprobe, p.KFactor, p.MinRows
	}
}

// DefaultMemTableSizeBytes is CollectionOptions.MemTableSizeBytes's
// default: 32 MiB. The live heap of a MemTable is about ten times its
// size (documents, BM25 postings with positions, field index), and its
// last flush is the serial tail of a bulk index; at 64 MiB a first index
// of GOROOT/src (84 MiB) held three quarters of the tree in one MemTable
// and took 10% longer (bench/results/notes/ingest.md).
const DefaultMemTableSizeBytes = 32 << 20

// HybridStrategy is the hybrid strategy of a query that sets no fusion
// parameter (CollectionOptions.HybridDefault).
type HybridStrategy string

// Hybrid strategies (CollectionOptions.HybridDefault).
const (
	// HybridRerankMaxNorm re-ranks the lexical top RerankWindow candidates
	// by (1−RerankDenseWeight)·s_bm25/max s_bm25 +
	// RerankDenseWeight·s_dense/max|s_dense| (fusion.MaxNorm); the rest of
	// the lexical list follows unchanged. The default.
	HybridRerankMaxNorm HybridStrategy = "rerank-maxnorm"
	// HybridRRF is RRF (k = 60, equal weights) over the full lexical and
	// dense lists.
	HybridRRF HybridStrategy = "rrf"
)

// FusionRerankMaxNorm is the contract.FusionParams.Method that selects
// the HybridRerankMaxNorm strategy for one query.
const FusionRerankMaxNorm = "rerank-maxnorm"

// Validate reports an error unless h is HybridRerankMaxNorm or HybridRRF.
func (h HybridStrategy) Validate() error {
	return oneOf("HybridDefault", h, HybridRerankMaxNorm, HybridRRF)
}

// The parameters of HybridRerankMaxNorm, chosen by the fusion study
// (bench/results/hybrid/report.md: "rerank-maxnorm α_dense=0.35 N=20",
// tuned on Cranfield, +0.0108 nDCG@10 transferred to Vaswani).
const (
	// RerankWindow is N, the number of lexical candidates re-ranked.
	RerankWindow = 20
	// RerankDenseWeight is α, the dense weight; the lexical weight is 1 − α.
	RerankDenseWeight = 0.35
)

// EnsureDefaults fills zero fields with their defaults.
func (o *CollectionOptions) EnsureDefaults() {
	if o.Metric == "" {
		o.Metric = "cosine"
	}
	if o.Analyzer == "" {
		o.Analyzer = AnalyzerCode
	}
	if o.Sync == "" {
		o.Sync = SyncAlways
	}
	if o.OnStale == "" {
		o.OnStale = OnStaleDrop
	}
	if o.HybridDefault == "" {
		o.HybridDefault = HybridRerankMaxNorm
	}
	if o.MemTableSizeBytes == 0 {
		o.MemTableSizeBytes = DefaultMemTableSizeBytes
	}
	if o.Redact == "" {
		o.Redact = RedactAuto
	}
	if o.SegmentIndex == "" {
		o.SegmentIndex = tier.SegmentIndexHNSW
	}
	if o.Embedding != nil && o.Embedding.Dim == 0 { // embedding.go
		e := *o.Embedding
		e.Dim = o.Dim
		o.Embedding = &e
	}
}

// Validate reports every problem with o (call after EnsureDefaults).
func (o *CollectionOptions) Validate() error {
	var errs []error
	if o.Dim < 1 || o.Dim > MaxDim {
		errs = append(errs, fmt.Errorf("engine: collection option Dim = %d, want 1..%d", o.Dim, MaxDim))
	}
	if _, err := parseMetric(o.Metric); err != nil {
		errs = append(errs, err)
	}
	if err := o.Analyzer.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Sync.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.SyncInterval < 0 {
		errs = append(errs, fmt.Errorf("engine: collection option SyncInterval = %v, want ≥ 0", o.SyncInterval))
	}
	if o.OnStale == OnStaleReread && o.MultiTenant {
		// A tenant could store a document naming another tenant's file
		// under a root and have verification return its live content.
		errs = append(errs, fmt.Errorf("engine: collection option OnStale = reread is not allowed with MultiTenant (any writer could name another tenant's file under SourceRoots and read it back)"))
	}
	if o.OnStale == OnStaleReread && len(o.SourceRoots) == 0 {
		errs = append(errs, fmt.Errorf("engine: collection option OnStale = reread needs SourceRoots (the directories whose files may be returned)"))
	}
	for _, r := range o.SourceRoots {
		if !filepath.IsAbs(r) {
			errs = append(errs, fmt.Errorf("engine: collection option SourceRoots entry %q is not an absolute path", r))
		}
	}
	if err := o.OnStale.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.HybridDefault.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.HybridRerankWindow < 0 || o.HybridRerankWindow > contract.MaxFusionWindow {
		errs = append(errs, fmt.Errorf("engine: collection option HybridRerankWindow = %d, want 0..%d", o.HybridRerankWindow, contract.MaxFusionWindow))
	}
	if !(o.HybridRerankDenseWeight >= 0 && o.HybridRerankDenseWeight <= 1) {
		errs = append(errs, fmt.Errorf("engine: collection option HybridRerankDenseWeight = %v, want a number in [0, 1]", o.HybridRerankDenseWeight))
	}
	if err := o.Redact.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, o.validateEmbedding()...) // embedding.go
	if o.IVFPQ != nil && o.SegmentIndex != tier.SegmentIndexIVFPQ {
		errs = append(errs, fmt.Errorf("engine: collection option IVFPQ is set but SegmentIndex = %q (want ivfpq)", o.SegmentIndex))
	}
	to := tier.Options{Dim: o.Dim}
	o.TierSegmentIndex(&to)
	to.EnsureDefaults()
	if err := to.ValidateSegmentIndex(); err != nil {
		errs = append(errs, fmt.Errorf("engine: collection options SegmentIndex / IVFPQ: %w", err))
	}
	names := make([]string, 0, len(o.IndexedFields))
	for f := range o.IndexedFields {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if f == "" {
			errs = append(errs, errors.New("engine: collection option IndexedFields has an empty field name"))
		}
		switch t := o.IndexedFields[f]; t {
		case FieldKeyword, FieldBool, FieldNumber:
		default:
			errs = append(errs, fmt.Errorf("engine: collection option IndexedFields[%q] = %q, want keyword, bool or number", f, t))
		}
	}
	return errors.Join(errs...)
}

// collectionNameRE is the accepted collection name: it becomes a directory.
var collectionNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

func validateName(name string) error {
	if !collectionNameRE.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%w: %q (want 1..128 of [A-Za-z0-9_.-], starting with a letter or digit)", ErrBadName, name)
	}
	return nil
}
