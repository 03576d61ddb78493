package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// The lancedb suite: Strata against LanceDB embedded (npm
// @lancedb/lancedb 0.31.0, tools/lancedb-peer, pinned by its
// package-lock.json) on the same documents with text and vectors:
//   - Vaswani (11,429 abstracts, USE-Lite 512-d vectors, 93 queries with
//     text and vectors) from ../shared/datasets;
//   - GloVe (glove-6b-100-angular from `make datasets`, unit vectors, a
//     word as each document's text): every base word (331,479; 50,000
//     evenly spaced in quick mode) and the first 1,000 held-out query
//     vectors (200 in quick mode), each with the text of its nearest base
//     word (lanceGloVe).
//
// Config.Datasets restricts the suite to vaswani-use512 and/or
// glove-6b-100-angular. Every document carries a keyword tag
// "t<i mod 10>"; the filtered queries ask for tag t3 (a tenth of the
// documents).
//
// Figures, both engines: ingest (Strata: Upsert of every document in
// batches of 1,000; LanceDB: createTable with every row), index build
// (Strata: Collection.Flush, which writes the warm segment with BM25 and
// HNSW; LanceDB: IVF_PQ on the vectors, FTS on the text, BITMAP on the
// tag), on-disk bytes after the build, and per-query p50 / p99 at k = 10
// for full-text, vector, hybrid and filtered (vector + tag) queries, one
// query at a time after a warm-up pass. Vector queries are compared at
// matched recall: LanceDB's nprobes / refine sweep point with the lowest
// p50 whose recall@10 (against exact cosine brute force) reaches
// Strata's; when no point reaches it, its highest-recall point, noted.
// Hybrid: Strata's default fusion vs LanceDB's RRF reranker (latency
// only; quality is the hybrid suite's study).
const lancedbSuiteName = "lancedb"

// LanceDBVersion is the pinned npm version (tools/lancedb-peer).
const LanceDBVersion = "0.31.0"

// lancedbSweep are the LanceDB vector sweep points (nprobes:refine).
const lancedbSweep = "4:1,8:2,16:4,32:8,64:10,107:20"

// LanceDBParams replaces the suite's data (tests).
type LanceDBParams struct {
	Docs      []string // text of each document
	DocVecs   datasets.Matrix[float32]
	Queries   []string
	QueryVecs datasets.Matrix[float32]
	Sweep     string // nprobes:refine,...; default lancedbSweep
}

// LanceDBMode is one query type's latency on both engines.
type LanceDBMode struct {
	Mode         string  `json:"mode"` // fts, vector, hybrid, filtered
	StrataP50Ms  float64 `json:"strata_p50_ms"`
	StrataP99Ms  float64 `json:"strata_p99_ms"`
	PeerP50Ms    float64 `json:"lancedb_p50_ms"`
	PeerP99Ms    float64 `json:"lancedb_p99_ms"`
	StrataRecall float64 `json:"strata_recall_at_10,omitempty"` // vector, filtered
	PeerRecall   float64 `json:"lancedb_recall_at_10,omitempty"`
	PeerPoint    string  `json:"lancedb_point,omitempty"` // nprobes/refine chosen
	Note         string  `json:"note,omitempty"`
}

// LanceDBRun is one run of the lancedb suite.
type LanceDBRun struct {
	Dataset       string  `json:"dataset"`
	N             int     `json:"n"`
	NQ            int     `json:"nq"`
	D             int     `json:"d"`
	PeerVersion   string  `json:"lancedb_version"`
	PeerIndex     string  `json:"lancedb_index"`
	StrataIngestS float64 `json:"strata_ingest_s"`
	PeerIngestS   float64 `json:"lancedb_ingest_s"`
	StrataBuildS  float64 `json:"strata_build_s"`
	PeerBuildS    float64 `json:"lancedb_build_s"`
	StrataBytes   int64   `json:"strata_bytes"` // the store directory after Flush
	// StrataWarmBytes is the warm segment bytes within StrataBytes
	// (CollectionStats.WarmBytes: doc store, BM25, HNSW, vectors).
	StrataWarmBytes int64 `json:"strata_warm_bytes"`
	// StrataByteBreakdown is StrataBytes by file (path under the store
	// directory: bytes) and, for each warm segment, by section (and its
	// HNSW section's sections), as tier.Inspect reads them.
	StrataByteBreakdown []string      `json:"strata_byte_breakdown"`
	PeerBytes           int64         `json:"lancedb_bytes"`
	Modes               []LanceDBMode `json:"modes"`
	PeerSweep           []string      `json:"lancedb_sweep"` // "nprobes/refine: recall, p50"
	Method              string        `json:"method"`
}

type lanceTimed struct {
	NProbes int       `json:"nprobes"`
	Refine  int       `json:"refine"`
	LatMs   []float64 `json:"lat_ms"`
	IDs     [][]int64 `json:"ids"`
}

type lanceReply struct {
	Engine    string             `json:"engine"`
	Version   string             `json:"version"`
	N         int                `json:"n"`
	NQ        int                `json:"nq"`
	D         int                `json:"d"`
	IngestS   float64            `json:"ingest_s"`
	IndexS    map[string]float64 `json:"index_s"`
	Bytes     int64              `json:"bytes"`
	IndexDesc string             `json:"index_desc"`
	FTS       lanceTimed         `json:"fts"`
	Vector    []lanceTimed       `json:"vector"`
	Filtered  []lanceTimed       `json:"filtered"`
	Hybrid    lanceTimed         `json:"hybrid"`
	Error     string             `json:"error"`
}

type lancedbSuite struct{}

func init() { Register(lancedbSuite{}) }

func (lancedbSuite) Name() string { return lancedbSuiteName }

const lanceFilterTag = "t3"

func lanceTag(i int) string { return "t" + strconv.Itoa(i%10) }

// lanceQuickGloVe and lanceQueriesGloVe size the GloVe set: base words
// (evenly spaced over the 331,479 in quick mode, all otherwise) and the
// first held-out query words.
const (
	lanceQuickGloVe    = 50000
	lanceQueriesGloVe  = 1000
	lanceQuickQueriesG = 200
)

func (lancedbSuite) Run(ctx context.Context, cfg Config, res *Results) error {
	if cfg.LanceDB != nil {
		p := cfg.LanceDB
		return runLanceSet(ctx, cfg, res, fmt.Sprintf("synthetic (%d × %d)", p.DocVecs.N, p.DocVecs.D), "synthetic", p)
	}
	want := func(name string) bool { return len(cfg.Datasets) == 0 || slices.Contains(cfg.Datasets, name) }
	ran := 0
	if want(DatasetVaswani) {
		dir, err := datasets.Dir()
		if err != nil {
			return fmt.Errorf("bench: lancedb: %w", err)
		}
		c, err := datasets.LoadVaswani(filepath.Join(dir, "vaswani"))
		if err != nil {
			return fmt.Errorf("bench: lancedb: %w", err)
		}
		p := &LanceDBParams{DocVecs: c.DocVecs, QueryVecs: c.QueryVecs}
		for _, d := range c.Docs {
			p.Docs = append(p.Docs, d.Text)
		}
		for _, q := range c.Queries {
			p.Queries = append(p.Queries, q.Text)
		}
		if err := runLanceSet(ctx, cfg, res, "vaswani (11,429 × 512, USE-Lite)", DatasetVaswani, p); err != nil {
			return err
		}
		ran++
	}
	if want(DatasetGloVe) {
		p, name, err := lanceGloVe(cfg.Quick)
		if err != nil {
			return err
		}
		if err := runLanceSet(ctx, cfg, res, name, DatasetGloVe, p); err != nil {
			return err
		}
		ran++
	}
	if ran == 0 {
		return fmt.Errorf("bench: lancedb: no data set among %v (it runs %s and %s)", cfg.Datasets, DatasetVaswani, DatasetGloVe)
	}
	return nil
}

// lanceGloVe loads the GloVe set prepared by `make datasets` with its words
// as the documents' text. A held-out query word is not in the base, so
// each query's text (full-text and hybrid modes) is the base word nearest
// to its vector (exact cosine), which a full-text search finds as one
// document among the base words.
func lanceGloVe(quick bool) (*LanceDBParams, string, error) {
	cache, err := datasets.CacheDir()
	if err != nil {
		return nil, "", fmt.Errorf("bench: lancedb: %w", err)
	}
	a, err := datasets.LoadANN(cache, datasets.GloVe6B100, datasets.DefaultK)
	if err != nil {
		return nil, "", fmt.Errorf("bench: lancedb: %w", err)
	}
	words, err := datasets.ReadWordList(filepath.Join(cache, datasets.GloVe6B100, "base.words.jsonl"))
	if err != nil {
		return nil, "", fmt.Errorf("bench: lancedb: %w", err)
	}
	if len(words) != a.Base.N {
		return nil, "", fmt.Errorf("bench: lancedb: %d base words for %d base vectors in %s", len(words), a.Base.N, filepath.Join(cache, datasets.GloVe6B100))
	}
	n, nq := a.Base.N, min(lanceQueriesGloVe, a.Queries.N)
	if quick {
		n, nq = min(lanceQuickGloVe, n), min(lanceQuickQueriesG, nq)
	}
	p := &LanceDBParams{DocVecs: datasets.Matrix[float32]{Data: make([]float32, n*a.Base.D), N: n, D: a.Base.D},
		QueryVecs: datasets.Matrix[float32]{Data: a.Queries.Data[:nq*a.Queries.D], N: nq, D: a.Queries.D}}
	for i := 0; i < n; i++ {
		row := int(int64(i) * int64(a.Base.N) / int64(n)) // evenly spaced, as strideSubset
		copy(p.DocVecs.Row(i), a.Base.Row(row))
		p.Docs = append(p.Docs, words[row])
	}
	p.Queries = nearestTexts(p.Docs, p.DocVecs, p.QueryVecs)
	return p, fmt.Sprintf("glove (%d × 100, words as text; %d queries)", n, nq), nil
}

// nearestTexts returns, for each query vector, the text of the document
// nearest to it by cosine (exactCosine's top 1).
func nearestTexts(docs []string, docVecs, queryVecs datasets.Matrix[float32]) []string {
	out := make([]string, 0, queryVecs.N)
	for _, nn := range exactCosine(docVecs, queryVecs, 1, nil) {
		out = append(out, docs[nn[0]])
	}
	return out
}

// runLanceSet runs both engines on one data set; key names its work
// directory.
func runLanceSet(ctx context.Context, cfg Config, res *Results, name, key string, p *LanceDBParams) error {
	if len(p.Docs) != p.DocVecs.N || len(p.Queries) != p.QueryVecs.N || p.DocVecs.D != p.QueryVecs.D {
		return fmt.Errorf("bench: lancedb: %d docs / %d vectors, %d queries / %d vectors, d %d / %d", len(p.Docs), p.DocVecs.N, len(p.Queries), p.QueryVecs.N, p.DocVecs.D, p.QueryVecs.D)
	}
	sweep := p.Sweep
	if sweep == "" {
		sweep = lancedbSweep
	}
	const k = 10
	work := filepath.Join(cfg.WorkDir, "lancedb-"+key)
	if err := os.RemoveAll(work); err != nil {
		return fmt.Errorf("bench: lancedb: %w", err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return fmt.Errorf("bench: lancedb: %w", err)
	}
	files, err := writeLanceInputs(work, p)
	if err != nil {
		return err
	}
	run := LanceDBRun{Dataset: name, N: len(p.Docs), NQ: len(p.Queries), D: p.DocVecs.D,
		Method: "one query at a time after a warm-up pass, k=10; vector modes at matched recall@10 (exact cosine brute force); tag filter t3 = 1/10 of the documents; Strata hybrid = its default fusion, LanceDB hybrid = RRF reranker"}

	// LanceDB first (its process exits before Strata runs: no overlap).
	pr, err := runLanceDB(ctx, cfg, work, files, k, sweep)
	if err != nil {
		return err
	}
	run.PeerVersion, run.PeerIndex, run.PeerIngestS, run.PeerBytes = pr.Version, pr.IndexDesc, pr.IngestS, pr.Bytes
	for _, v := range pr.IndexS {
		run.PeerBuildS += v
	}
	res.Peers = append(res.Peers, PeerInfo{Engine: "lancedb", Version: pr.Version, Driver: "node tools/lancedb-peer/driver.js (npm @lancedb/lancedb, embedded)"})

	// Strata.
	sr, err := runStrataLance(ctx, filepath.Join(work, "strata"), p, k)
	if err != nil {
		return err
	}
	run.StrataIngestS, run.StrataBuildS, run.StrataBytes, run.StrataWarmBytes = sr.ingestS, sr.buildS, sr.bytes, sr.warmBytes
	run.StrataByteBreakdown = sr.breakdown
	for _, l := range sr.breakdown {
		cfg.logf("lancedb: strata bytes %s", l)
	}

	truth := exactCosine(p.DocVecs, p.QueryVecs, k, nil)
	truthF := exactCosine(p.DocVecs, p.QueryVecs, k, func(i int) bool { return lanceTag(i) == lanceFilterTag })
	recall := func(ids [][]int64, tr [][]int64) float64 {
		var hit, tot int
		for q := range tr {
			set := map[int64]bool{}
			for _, id := range tr[q] {
				set[id] = true
			}
			tot += len(tr[q])
			if q < len(ids) {
				for _, id := range ids[q] {
					if set[id] {
						hit++
					}
				}
			}
		}
		if tot == 0 {
			return 1
		}
		return float64(hit) / float64(tot)
	}
	lat := func(xs []float64) (float64, float64) {
		return quantileF(xs, 0.5), quantileF(xs, 0.99)
	}
	mode := func(m string, s strataTimed, peer lanceTimed) LanceDBMode {
		out := LanceDBMode{Mode: m}
		out.StrataP50Ms, out.StrataP99Ms = lat(s.latMs)
		out.PeerP50Ms, out.PeerP99Ms = lat(peer.LatMs)
		return out
	}
	pick := func(m string, s strataTimed, pts []lanceTimed, tr [][]int64) LanceDBMode {
		sRec := recall(s.ids, tr)
		best, bestRec := -1, -1.0
		hiRec, hi := -1.0, 0
		for i, pt := range pts {
			r := recall(pt.IDs, tr)
			p50 := quantileF(pt.LatMs, 0.5)
			run.PeerSweep = append(run.PeerSweep, fmt.Sprintf("%s nprobes %d refine %d: recall %.3f p50 %.2f ms", m, pt.NProbes, pt.Refine, r, p50))
			if r > hiRec {
				hiRec, hi = r, i
			}
			if r >= sRec && (best < 0 || p50 < quantileF(pts[best].LatMs, 0.5)) {
				best, bestRec = i, r
			}
		}
		note := ""
		if best < 0 {
			best, bestRec = hi, hiRec
			note = fmt.Sprintf("no LanceDB point reached Strata's recall %.3f: its highest-recall point", sRec)
		}
		out := mode(m, s, pts[best])
		out.StrataRecall, out.PeerRecall = sRec, bestRec
		out.PeerPoint = fmt.Sprintf("nprobes %d refine %d", pts[best].NProbes, pts[best].Refine)
		out.Note = note
		return out
	}
	run.Modes = append(run.Modes,
		mode("fts", sr.fts, pr.FTS),
		pick("vector", sr.vector, pr.Vector, truth),
		mode("hybrid", sr.hybrid, pr.Hybrid),
		pick("filtered", sr.filtered, pr.Filtered, truthF))
	for _, m := range run.Modes {
		cfg.logf("lancedb %s: strata p50 %.2f p99 %.2f ms, lancedb p50 %.2f p99 %.2f ms (recall %.3f / %.3f %s) %s", m.Mode, m.StrataP50Ms, m.StrataP99Ms, m.PeerP50Ms, m.PeerP99Ms, m.StrataRecall, m.PeerRecall, m.PeerPoint, m.Note)
		note := m.Note
		if m.PeerPoint != "" {
			note = strings.TrimSpace(fmt.Sprintf("recall@10 strata %.3f, lancedb %.3f at %s. %s", m.StrataRecall, m.PeerRecall, m.PeerPoint, m.Note))
		}
		res.Ratios = append(res.Ratios,
			Ratio{Suite: lancedbSuiteName, Dataset: name, Figure: m.Mode + " p50 (lancedb / strata, goal ≥ 2)", Peer: "lancedb",
				Strata: m.StrataP50Ms, PeerVal: m.PeerP50Ms, Value: m.PeerP50Ms / m.StrataP50Ms, StrataRun: -1, PeerRun: -1, Note: note},
			Ratio{Suite: lancedbSuiteName, Dataset: name, Figure: m.Mode + " p99 (lancedb / strata, goal ≥ 2)", Peer: "lancedb",
				Strata: m.StrataP99Ms, PeerVal: m.PeerP99Ms, Value: m.PeerP99Ms / m.StrataP99Ms, StrataRun: -1, PeerRun: -1})
	}
	cfg.logf("lancedb: ingest strata %.2f s lancedb %.2f s; build strata %.2f s lancedb %.2f s; bytes strata %d (warm segments %d) lancedb %d",
		run.StrataIngestS, run.PeerIngestS, run.StrataBuildS, run.PeerBuildS, run.StrataBytes, run.StrataWarmBytes, run.PeerBytes)
	res.Ratios = append(res.Ratios,
		Ratio{Suite: lancedbSuiteName, Dataset: name, Figure: "ingest s (lancedb / strata, goal ≥ 2)", Peer: "lancedb",
			Strata: run.StrataIngestS, PeerVal: run.PeerIngestS, Value: run.PeerIngestS / run.StrataIngestS, StrataRun: -1, PeerRun: -1},
		Ratio{Suite: lancedbSuiteName, Dataset: name, Figure: "index build s (lancedb / strata)", Peer: "lancedb",
			Strata: run.StrataBuildS, PeerVal: run.PeerBuildS, Value: run.PeerBuildS / run.StrataBuildS, StrataRun: -1, PeerRun: -1},
		Ratio{Suite: lancedbSuiteName, Dataset: name, Figure: "on-disk bytes (lancedb / strata, goal ≥ 1)", Peer: "lancedb",
			Strata: float64(run.StrataBytes), PeerVal: float64(run.PeerBytes), Value: float64(run.PeerBytes) / float64(run.StrataBytes), StrataRun: -1, PeerRun: -1,
			Note: fmt.Sprintf("Strata: whole store directory after Flush; its warm segments alone %d bytes", run.StrataWarmBytes)})
	res.LanceDB = append(res.LanceDB, run)
	return nil
}

type lanceFiles struct{ docs, docVecs, queries, queryVecs string }

func writeLanceInputs(work string, p *LanceDBParams) (lanceFiles, error) {
	f := lanceFiles{docs: filepath.Join(work, "docs.jsonl"), docVecs: filepath.Join(work, "docs.fvecs"),
		queries: filepath.Join(work, "queries.jsonl"), queryVecs: filepath.Join(work, "queries.fvecs")}
	writeJSONL := func(path string, n int, row func(i int) any) error {
		fh, err := os.Create(path)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(fh)
		enc := json.NewEncoder(w)
		for i := 0; i < n; i++ {
			if err := enc.Encode(row(i)); err != nil {
				fh.Close()
				return err
			}
		}
		if err := w.Flush(); err != nil {
			fh.Close()
			return err
		}
		return fh.Close()
	}
	if err := writeJSONL(f.docs, len(p.Docs), func(i int) any {
		return map[string]any{"id": i, "text": p.Docs[i], "tag": lanceTag(i)}
	}); err != nil {
		return f, fmt.Errorf("bench: lancedb: %w", err)
	}
	if err := writeJSONL(f.queries, len(p.Queries), func(i int) any { return map[string]any{"text": p.Queries[i]} }); err != nil {
		return f, fmt.Errorf("bench: lancedb: %w", err)
	}
	if err := writeFvecsFile(f.docVecs, p.DocVecs); err != nil {
		return f, err
	}
	if err := writeFvecsFile(f.queryVecs, p.QueryVecs); err != nil {
		return f, err
	}
	return f, nil
}

func writeFvecsFile(path string, m datasets.Matrix[float32]) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: lancedb: %w", err)
	}
	w := bufio.NewWriter(fh)
	var b [4]byte
	put := func(u uint32) {
		b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		w.Write(b[:])
	}
	for i := 0; i < m.N; i++ {
		put(uint32(m.D))
		for _, x := range m.Row(i) {
			put(math.Float32bits(x))
		}
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return fmt.Errorf("bench: lancedb: %w", err)
	}
	return fh.Close()
}

// lancePeerDir is tools/lancedb-peer under the repo, with node_modules
// installed from its package-lock (npm ci) when missing.
func lancePeerDir(ctx context.Context, cfg Config) (string, error) {
	dir := filepath.Join(cfg.RepoRoot, "tools", "lancedb-peer")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@lancedb", "lancedb", "package.json")); err == nil {
		return dir, nil
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: lancedb: npm ci in %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return dir, nil
}

func runLanceDB(ctx context.Context, cfg Config, work string, f lanceFiles, k int, sweep string) (*lanceReply, error) {
	dir, err := lancePeerDir(ctx, cfg)
	if err != nil {
		return nil, err
	}
	argv := []string{"node", filepath.Join(dir, "driver.js"), filepath.Join(work, "lancedb-table"), f.docs, f.docVecs, f.queries, f.queryVecs, strconv.Itoa(k), sweep}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// LanceDB logs a deprecation warning per query at WARN level.
	cmd.Env = append(os.Environ(), "RUST_LOG=error")
	if os.Getenv("LANCE_CPU_THREADS") == "" && runtime.NumCPU() < 4 {
		// LanceDB 0.31.0's CPU pool at its default (one thread a core)
		// can stall for good on 2 cores while building an FTS index
		// (bench/results/notes/peers.md, full GloVe); 4 threads avoid it.
		cmd.Env = append(cmd.Env, "LANCE_CPU_THREADS=4")
	}
	errb := &syncBuffer{}
	cmd.Stderr = errb
	out, err := cmd.Output()
	var r lanceReply
	if jerr := json.Unmarshal(out, &r); jerr != nil || r.Error != "" || err != nil {
		msg := r.Error
		if msg == "" && jerr != nil {
			msg = jerr.Error()
		}
		return nil, fmt.Errorf("bench: lancedb: %s: %v %s (stderr: %.2000s)", strings.Join(argv, " "), err, msg, strings.TrimSpace(errb.String()))
	}
	if r.Engine != "lancedb" || r.Version != LanceDBVersion || len(r.Vector) == 0 || len(r.Vector) != len(r.Filtered) {
		return nil, fmt.Errorf("bench: lancedb: bad reply: engine %q version %q (want %s), %d vector / %d filtered points", r.Engine, r.Version, LanceDBVersion, len(r.Vector), len(r.Filtered))
	}
	return &r, nil
}

type strataTimed struct {
	latMs []float64
	ids   [][]int64
}

type strataLance struct {
	ingestS, buildS               float64
	bytes, warmBytes              int64
	breakdown                     []string
	fts, vector, hybrid, filtered strataTimed
}

func runStrataLance(ctx context.Context, dir string, p *LanceDBParams, k int) (*strataLance, error) {
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		return nil, fmt.Errorf("bench: lancedb: %w", err)
	}
	defer db.Close()
	col, err := db.CreateCollection("docs", engine.CollectionOptions{Dim: p.DocVecs.D, Metric: "cosine",
		IndexedFields: map[string]engine.FieldType{"tag": engine.FieldKeyword}})
	if err != nil {
		return nil, fmt.Errorf("bench: lancedb: %w", err)
	}
	out := &strataLance{}
	t0 := time.Now()
	const batch = 1000
	for s := 0; s < len(p.Docs); s += batch {
		var docs []contract.Document
		for i := s; i < min(s+batch, len(p.Docs)); i++ {
			docs = append(docs, contract.Document{ID: strconv.Itoa(i), Content: p.Docs[i], Vector: p.DocVecs.Row(i), Trust: contract.Authoritative,
				Metadata: map[string]contract.Value{"tag": contract.String(lanceTag(i))}})
		}
		if _, err := col.Upsert(ctx, docs); err != nil {
			return nil, fmt.Errorf("bench: lancedb: strata upsert: %w", err)
		}
	}
	out.ingestS = time.Since(t0).Seconds()
	t0 = time.Now()
	if err := col.Flush(ctx); err != nil {
		return nil, fmt.Errorf("bench: lancedb: %w", err)
	}
	out.buildS = time.Since(t0).Seconds()
	if out.bytes, err = dirSize(dir); err != nil {
		return nil, fmt.Errorf("bench: lancedb: %w", err)
	}
	out.warmBytes = int64(col.Stats().WarmBytes)
	if out.breakdown, err = storeBreakdown(dir); err != nil {
		return nil, fmt.Errorf("bench: lancedb: %w", err)
	}
	f := contract.Eq("tag", contract.String(lanceFilterTag))
	timed := func(q func(i int) contract.Query) (strataTimed, error) {
		var st strataTimed
		for pass := 0; pass < 2; pass++ { // warm-up, then timed
			for i := range p.Queries {
				cq := q(i)
				t := time.Now()
				r, err := col.Search(ctx, cq)
				d := time.Since(t)
				if err != nil {
					return st, fmt.Errorf("bench: lancedb: strata search %d: %w", i, err)
				}
				if pass == 0 {
					continue
				}
				st.latMs = append(st.latMs, float64(d.Nanoseconds())/1e6)
				ids := make([]int64, 0, len(r.Hits))
				for _, h := range r.Hits {
					id, err := strconv.ParseInt(h.DocID, 10, 64)
					if err != nil {
						return st, fmt.Errorf("bench: lancedb: strata hit id %q: %w", h.DocID, err)
					}
					ids = append(ids, id)
				}
				st.ids = append(st.ids, ids)
			}
		}
		return st, nil
	}
	if out.fts, err = timed(func(i int) contract.Query {
		return contract.Query{Text: p.Queries[i], Mode: contract.Lexical, TopK: k}
	}); err != nil {
		return nil, err
	}
	if out.vector, err = timed(func(i int) contract.Query {
		return contract.Query{Vector: p.QueryVecs.Row(i), Mode: contract.Dense, TopK: k}
	}); err != nil {
		return nil, err
	}
	if out.hybrid, err = timed(func(i int) contract.Query {
		return contract.Query{Text: p.Queries[i], Vector: p.QueryVecs.Row(i), Mode: contract.Hybrid, TopK: k}
	}); err != nil {
		return nil, err
	}
	if out.filtered, err = timed(func(i int) contract.Query {
		return contract.Query{Vector: p.QueryVecs.Row(i), Mode: contract.Dense, TopK: k, Filter: &f}
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// exactCosine is the brute-force top k by cosine of each query among the
// documents keep accepts (nil: all), ties by lower id.
func exactCosine(docs, qs datasets.Matrix[float32], k int, keep func(int) bool) [][]int64 {
	norm := func(v []float32) float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	dn := make([]float64, docs.N)
	for i := range dn {
		dn[i] = norm(docs.Row(i))
	}
	out := make([][]int64, qs.N)
	type sc struct {
		id int
		s  float64
	}
	for q := 0; q < qs.N; q++ {
		qv := qs.Row(q)
		qn := norm(qv)
		var all []sc
		for i := 0; i < docs.N; i++ {
			if keep != nil && !keep(i) {
				continue
			}
			var dot float64
			for j, x := range docs.Row(i) {
				dot += float64(x) * float64(qv[j])
			}
			all = append(all, sc{i, dot / (dn[i]*qn + 1e-30)})
		}
		sort.Slice(all, func(a, b int) bool {
			if all[a].s != all[b].s {
				return all[a].s > all[b].s
			}
			return all[a].id < all[b].id
		})
		for j := 0; j < min(k, len(all)); j++ {
			out[q] = append(out[q], int64(all[j].id))
		}
	}
	return out
}

func quantileF(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

// storeBreakdown lists every regular file under dir ("path: bytes",
// paths relative to dir) and, for each warm segment file (*.sst), its
// sections and its HNSW section's sections ("path section: bytes",
// "path hnsw/section: bytes") as tier.Inspect reads them.
func storeBreakdown(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s: %d", rel, info.Size()))
		if !strings.HasSuffix(p, ".sst") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		in, err := tier.Inspect(b)
		if err != nil {
			return fmt.Errorf("inspect %s: %w", rel, err)
		}
		for _, sec := range in.Sections {
			out = append(out, fmt.Sprintf("%s %s: %d", rel, sec.Name, sec.Length))
		}
		for _, ch := range in.Children {
			if ch.Format != "STRHNSW" {
				continue
			}
			for _, sec := range ch.Sections {
				out = append(out, fmt.Sprintf("%s hnsw/%s: %d", rel, sec.Name, sec.Length))
			}
		}
		return nil
	})
	return out, err
}
