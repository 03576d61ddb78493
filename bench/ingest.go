package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/ingest"
)

// The ingest suite: end-to-end `searchd index` throughput on the Go
// source tree, in process through ingest (the code path of
// cmd/searchd's index subcommand, with the collection options it creates),
// and the storage amplification α_storage = index bytes / raw text bytes
// per tier.

const ingestSuiteName = "ingest"

// IngestQuickRoots are the $(go env GOROOT)/src subtrees of quick mode
// (about 29 MB read: Go, assembly, test data and text); the full mode
// indexes all of src.
var IngestQuickRoots = []string{"net", "go", "runtime", "crypto"}

// IngestRun is one ingest measurement.
type IngestRun struct {
	// Roots are the indexed directories (absolute); Subset says how they
	// were chosen.
	Roots  []string `json:"roots"`
	Subset string   `json:"subset"`
	// Files written (chunked), files seen by the walk, chunks, raw bytes
	// read (the text the index is built from).
	Files     int   `json:"files"`
	Candidate int   `json:"candidate_files"`
	Chunks    int   `json:"chunks"`
	RawBytes  int64 `json:"raw_bytes"`
	Skipped   int   `json:"skipped_files"`
	// WallS / CPUS: the whole Index pass (walk, read, chunk, analyse,
	// WAL append with fsync per batch: searchd's default sync "always").
	WallS   float64 `json:"wall_s"`
	CPUS    float64 `json:"cpu_s"`
	FilesS  float64 `json:"files_per_s"`
	MBs     float64 `json:"mb_per_s"` // 10⁶ raw bytes per wall second
	ChunksS float64 `json:"chunks_per_s"`
	WriteS  float64 `json:"write_s"` // inside engine Upsert/Delete
	// FlushS is the wall time of the one Collection.Flush that turns the
	// hot tier into a warm segment (automatic flushing is off during the
	// run; see RunIngest).
	FlushS   float64 `json:"flush_s"`
	Batches  int     `json:"batches"`
	GOMAXPRO int     `json:"gomaxprocs"`
	// Tiers: bytes on disk and α_storage per tier.
	Tiers []TierSize `json:"tiers"`
}

// TierSize is the on-disk size of one tier after the run.
type TierSize struct {
	Tier   string  `json:"tier"` // hot, warm, cold
	Bytes  int64   `json:"bytes"`
	Alpha  float64 `json:"alpha_storage"` // Bytes / RawBytes
	Method string  `json:"method"`
	// Skipped explains a tier that could not be measured (Bytes 0).
	Skipped string `json:"skipped,omitempty"`
}

type ingestSuite struct{}

func init() { Register(ingestSuite{}) }

func (ingestSuite) Name() string { return ingestSuiteName }

func (ingestSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	src := cfg.IngestRoot
	var roots []string
	subset := "all of " + src
	if src == "" {
		src = filepath.Join(runtime.GOROOT(), "src")
		subset = "all of $(go env GOROOT)/src"
	}
	if cfg.Quick && cfg.IngestRoot == "" {
		for _, r := range IngestQuickRoots {
			roots = append(roots, filepath.Join(src, r))
		}
		subset = fmt.Sprintf("quick: $(go env GOROOT)/src/{%s}", joinComma(IngestQuickRoots))
	} else {
		roots = []string{src}
	}
	work := filepath.Join(cfg.WorkDir, "ingest")
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("bench: ingest: %w", err)
	}
	run, err := RunIngest(ctx, work, roots)
	if err != nil {
		return err
	}
	run.Subset = subset
	cfg.logf("ingest: %d files, %d chunks, %.1f MB in %.2f s: %.0f files/s, %.2f MB/s", run.Files, run.Chunks, float64(run.RawBytes)/1e6, run.WallS, run.FilesS, run.MBs)
	for _, t := range run.Tiers {
		cfg.logf("ingest: %s tier %d bytes, α_storage %.3f %s", t.Tier, t.Bytes, t.Alpha, t.Skipped)
	}
	res.Ingest = append(res.Ingest, *run)
	return nil
}

func joinComma(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

// newCodeCollection creates the collection `searchd index` creates
// (cmd/searchd openCollectionSync): code analyzer, lexical-only, the
// ingest keyword fields, WAL sync "always". memTable is
// CollectionOptions.MemTableSizeBytes (0: the engine default, as searchd).
func newCodeCollection(dir string, memTable int64) (*engine.DB, *engine.Collection, error) {
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	col, err := db.CreateCollection("code", engine.CollectionOptions{
		Dim: 512, Metric: "cosine", Analyzer: engine.AnalyzerCode, Sync: "always", MemTableSizeBytes: memTable,
		IndexedFields: map[string]engine.FieldType{
			ingest.MetaLang: engine.FieldKeyword, ingest.MetaKind: engine.FieldKeyword,
			ingest.MetaSymbol: engine.FieldKeyword, ingest.MetaPath: engine.FieldKeyword,
			ingest.MetaNames: engine.FieldKeyword,
		},
	})
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	return db, col, nil
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// RunIngest indexes roots (in order, one manifest) into a new store under
// work and measures throughput and tier sizes: hot = the collection's
// store directory after indexing (WAL: every chunk's version, metadata and
// text, before any flush; the MemTable itself is in memory), warm = the
// warm segment bytes after Collection.Flush (CollectionStats.WarmBytes:
// zstd doc store + BM25 section + HNSW, here without vectors), cold = the
// archive file after Collection.Archive of those warm segments (zstd
// Parquet; a failure is recorded in the run, not returned).
func RunIngest(ctx context.Context, work string, roots []string) (*IngestRun, error) {
	data := filepath.Join(work, "data")
	// No automatic flush during the run (searchd's default flushes every
	// 32 MiB of MemTable): the whole tree is in the hot tier at the end, so
	// the tiers can be measured one after the other; the flush is timed
	// on its own (FlushS).
	db, col, err := newCodeCollection(data, -1)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	mf := filepath.Join(work, "code.manifest.json")
	run := &IngestRun{Roots: roots, GOMAXPRO: runtime.GOMAXPROCS(0)}
	w0, c0 := time.Now(), processCPU()
	for _, r := range roots {
		st, err := ingest.Index(ctx, col, mf, r, ingest.Options{ExcludePaths: []string{work}}, ingest.Progress{})
		if err != nil {
			return nil, fmt.Errorf("bench: ingest %s: %w", r, err)
		}
		run.Files += st.Indexed
		run.Candidate += st.Files
		run.Chunks += st.Chunks
		run.RawBytes += st.Bytes
		run.Batches += st.Batches
		run.WriteS += st.WriteTime.Seconds()
		for _, n := range st.Skips {
			run.Skipped += n
		}
	}
	run.WallS, run.CPUS = time.Since(w0).Seconds(), processCPU()-c0
	if run.WallS > 0 {
		run.FilesS = float64(run.Files) / run.WallS
		run.MBs = float64(run.RawBytes) / 1e6 / run.WallS
		run.ChunksS = float64(run.Chunks) / run.WallS
	}
	if run.Files == 0 || run.RawBytes == 0 {
		return nil, fmt.Errorf("bench: ingest: nothing indexed under %v", roots)
	}
	storeDir := filepath.Join(data, "collections", "code")
	hot, err := dirSize(storeDir)
	if err != nil {
		return nil, fmt.Errorf("bench: ingest: %w", err)
	}
	alpha := func(b int64) float64 { return float64(b) / float64(run.RawBytes) }
	run.Tiers = append(run.Tiers, TierSize{Tier: "hot", Bytes: hot, Alpha: alpha(hot),
		Method: "collection directory after indexing, before any flush (WAL + manifest; the MemTable is in memory)"})
	f0 := time.Now()
	if err := col.Flush(ctx); err != nil {
		return nil, fmt.Errorf("bench: ingest: %w", err)
	}
	run.FlushS = time.Since(f0).Seconds()
	st := col.Stats()
	if st.WarmSegments == 0 || st.WarmBytes == 0 {
		return nil, fmt.Errorf("bench: ingest: flush produced no warm segment (%+v)", st)
	}
	warm := int64(st.WarmBytes)
	run.Tiers = append(run.Tiers, TierSize{Tier: "warm", Bytes: warm, Alpha: alpha(warm),
		Method: fmt.Sprintf("warm segment file bytes after Collection.Flush (%d segment(s), %d rows)", st.WarmSegments, st.WarmRows)})
	// Cold: archive every warm segment (the engine's cold tier: zstd
	// Parquet, IVF-PQ codes; this collection has no vectors) and take the
	// archive file bytes. A failure is recorded, not fatal: the cold tier
	// is newer than this suite.
	cold := TierSize{Tier: "cold"}
	ids := make([]uint64, 0, st.WarmSegments)
	for _, sg := range col.WarmSegments() {
		ids = append(ids, sg.ID)
	}
	a0 := time.Now()
	id, err := col.Archive(ctx, engine.ArchiveOptions{Segments: ids})
	if err != nil {
		cold.Skipped = "not measured: Collection.Archive failed: " + err.Error()
	} else {
		for _, a := range col.Archives() {
			if a.ID == id {
				cold.Bytes = int64(a.SizeBytes)
				cold.Alpha = alpha(cold.Bytes)
				cold.Method = fmt.Sprintf("cold archive file bytes after Collection.Archive of the warm segment(s) (%d rows, %.2f s; zstd Parquet of the documents, no on-disk BM25 index: the engine builds one in memory on the first cold query)", a.Rows, time.Since(a0).Seconds())
			}
		}
		if cold.Bytes == 0 {
			cold.Skipped = fmt.Sprintf("not measured: archive %d not listed by Collection.Archives", id)
		}
	}
	run.Tiers = append(run.Tiers, cold)
	return run, nil
}
