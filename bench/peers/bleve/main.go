// Command bleve_driver is the Bleve v2 peer driver of Strata's lexical
// benchmark (issue 10, bench/lexical). It lives in its own Go module so
// that the main go.mod does not depend on Bleve; the harness builds it
// with `go build` in this directory. It speaks the protocol of the Xapian
// driver (bench/peers/xapian/driver.cc): two commands, each printing one
// JSON object on stdout.
//
//	bleve_driver index DIR CORPUS ANALYSIS MODE
//	    Builds a new scorch index in DIR from CORPUS (one document per
//	    line; line i, 0-based, is the document with id "i"), in batches of
//	    BatchSize documents, then force-merges it into one segment
//	    (scorch ForceMerge, SingleSegmentMergePlanOptions) and closes it;
//	    the index time includes the merge and the close.
//	    -> {"engine","version","docs","index_wall_s","index_cpu_s","index_bytes"}
//	bleve_driver query DIR QUERIES ANALYSIS MODE OP K PASSES
//	    Runs every query of QUERIES (one per line) top-K, one untimed
//	    warm-up pass then PASSES timed passes over the batch.
//	    -> {"engine","version","op","k","passes","wall_s","cpu_s",
//	        "wall_s_all":[..],"cpu_s_all":[..],"hits","results":[[ordinal,..],..]}
//
// ANALYSIS is "none" (unicode word segmentation, lower-casing) or
// "english" (the same plus Bleve's Snowball English stemmer; no stop-word
// filter, as the Xapian english configuration). MODE "pretok" means the
// text is already tokens separated by single spaces (whitespace tokenizer,
// nothing else). OP is "or", "and" (a MatchQuery with that operator over
// the analysed query) or "phrase" (MatchPhraseQuery). Scoring: Bleve's
// BM25 (IndexMapping.ScoringModel "bm25", k1 1.2, b 0.75, Lucene IDF
// log(1 + (N - df + 0.5)/(df + 0.5))). One field "body": indexed, not
// stored, no doc values, not in _all, with term vectors (positions, needed
// by phrase queries; Xapian keeps positions too).
//
// The driver runs with GOMAXPROCS 1 (set by the harness in the
// environment; single thread, as the other peers), so Bleve's background
// persister and merger share the one core with the indexing loop.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// BatchSize is the number of documents per index batch.
const BatchSize = 1000

const field = "body"

type indexReport struct {
	Engine     string  `json:"engine"`
	Version    string  `json:"version"`
	Docs       int     `json:"docs"`
	IndexWallS float64 `json:"index_wall_s"`
	IndexCPUS  float64 `json:"index_cpu_s"`
	IndexBytes int64   `json:"index_bytes"`
}

type queryReport struct {
	Engine   string    `json:"engine"`
	Version  string    `json:"version"`
	Op       string    `json:"op"`
	K        int       `json:"k"`
	Passes   int       `json:"passes"`
	WallS    float64   `json:"wall_s"`
	CPUS     float64   `json:"cpu_s"`
	WallSAll []float64 `json:"wall_s_all"`
	CPUSAll  []float64 `json:"cpu_s_all"`
	Hits     int       `json:"hits"`
	Results  [][]int64 `json:"results"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		b, _ := json.Marshal(map[string]string{"error": "bleve driver: " + err.Error()})
		fmt.Println(string(b))
		os.Exit(1)
	}
}

func run(args []string) error {
	switch {
	case len(args) == 5 && args[0] == "index":
		return cmdIndex(args[1], args[2], args[3], args[4])
	case len(args) == 8 && args[0] == "query":
		k, err1 := strconv.Atoi(args[6])
		passes, err2 := strconv.Atoi(args[7])
		if err1 != nil || err2 != nil || k < 1 || passes < 1 {
			return fmt.Errorf("bad K %q or PASSES %q", args[6], args[7])
		}
		return cmdQuery(args[1], args[2], args[3], args[4], args[5], k, passes)
	}
	return fmt.Errorf("usage: bleve_driver index DIR CORPUS ANALYSIS MODE | query DIR QUERIES ANALYSIS MODE OP K PASSES")
}

// version is the Bleve module version linked in.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/blevesearch/bleve/v2" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)*1e-6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

// newMapping is the index mapping for ANALYSIS and MODE.
func newMapping(analysis, mode string) (*mapping.IndexMappingImpl, error) {
	an := map[string]any{"type": custom.Name}
	switch {
	case mode == "pretok" && analysis == "none":
		an["tokenizer"] = whitespace.Name
		an["token_filters"] = []any{}
	case mode == "raw" && analysis == "none":
		an["tokenizer"] = unicode.Name
		an["token_filters"] = []any{lowercase.Name}
	case mode == "raw" && analysis == "english":
		an["tokenizer"] = unicode.Name
		an["token_filters"] = []any{lowercase.Name, en.SnowballStemmerName}
	default:
		return nil, fmt.Errorf("unsupported ANALYSIS %q with MODE %q (want none/raw, english/raw or none/pretok)", analysis, mode)
	}
	im := mapping.NewIndexMapping()
	if err := im.AddCustomAnalyzer("strata", an); err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = "strata"
	im.ScoringModel = index.BM25Scoring
	im.StoreDynamic, im.IndexDynamic, im.DocValuesDynamic = false, false, false
	fm := mapping.NewTextFieldMapping()
	fm.Analyzer = "strata"
	fm.Store = false
	fm.IncludeInAll = false
	fm.IncludeTermVectors = true
	fm.DocValues = false
	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(field, fm)
	im.DefaultMapping = dm
	return im, nil
}

func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
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

func cmdIndex(dir, corpus, analysis, mode string) error {
	docs, err := readLines(corpus)
	if err != nil {
		return err
	}
	im, err := newMapping(analysis, mode)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	w0, c0 := time.Now(), cpuSeconds()
	idx, err := bleve.New(dir, im)
	if err != nil {
		return err
	}
	b := idx.NewBatch()
	for i, d := range docs {
		if err := b.Index(strconv.Itoa(i), map[string]any{field: d}); err != nil {
			return err
		}
		if b.Size() >= BatchSize {
			if err := idx.Batch(b); err != nil {
				return err
			}
			b.Reset()
		}
	}
	if b.Size() > 0 {
		if err := idx.Batch(b); err != nil {
			return err
		}
	}
	adv, err := idx.Advanced()
	if err != nil {
		return err
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return fmt.Errorf("index is %T, want *scorch.Scorch", adv)
	}
	if err := sc.ForceMerge(context.Background(), &mergeplan.SingleSegmentMergePlanOptions); err != nil {
		return fmt.Errorf("force merge: %w", err)
	}
	if err := idx.Close(); err != nil {
		return err
	}
	wall, cpu := time.Since(w0).Seconds(), cpuSeconds()-c0
	n, err := dirBytes(dir)
	if err != nil {
		return err
	}
	return emit(indexReport{Engine: "bleve", Version: version(), Docs: len(docs), IndexWallS: wall, IndexCPUS: cpu, IndexBytes: n})
}

func emit(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}

func cmdQuery(dir, qpath, analysis, mode, op string, k, passes int) error {
	lines, err := readLines(qpath)
	if err != nil {
		return err
	}
	if _, err := newMapping(analysis, mode); err != nil {
		return err
	}
	qs := make([]query.Query, len(lines))
	for i, l := range lines {
		switch op {
		case "or", "and":
			q := query.NewMatchQuery(l)
			q.SetField(field)
			q.Analyzer = "strata"
			if op == "and" {
				q.SetOperator(query.MatchQueryOperatorAnd)
			}
			qs[i] = q
		case "phrase":
			q := query.NewMatchPhraseQuery(l)
			q.SetField(field)
			q.Analyzer = "strata"
			qs[i] = q
		default:
			return fmt.Errorf("OP %q: want or, and or phrase", op)
		}
	}
	idx, err := bleve.OpenUsing(dir, map[string]any{"read_only": true})
	if err != nil {
		return err
	}
	defer idx.Close()
	rep := queryReport{Engine: "bleve", Version: version(), Op: op, K: k, Passes: passes, Results: make([][]int64, len(qs))}
	for pass := 0; pass <= passes; pass++ {
		w0, c0 := time.Now(), cpuSeconds()
		for i, q := range qs {
			req := bleve.NewSearchRequestOptions(q, k, 0, false)
			res, err := idx.Search(req)
			if err != nil {
				return fmt.Errorf("query %d %q: %w", i, lines[i], err)
			}
			if pass == 0 {
				ids := make([]int64, 0, len(res.Hits))
				for _, h := range res.Hits {
					o, err := strconv.ParseInt(h.ID, 10, 64)
					if err != nil {
						return fmt.Errorf("hit id %q: %w", h.ID, err)
					}
					ids = append(ids, o)
				}
				rep.Results[i] = ids
				rep.Hits += len(ids)
			}
		}
		if pass > 0 {
			w, c := time.Since(w0).Seconds(), cpuSeconds()-c0
			rep.WallSAll = append(rep.WallSAll, w)
			rep.CPUSAll = append(rep.CPUSAll, c)
			if pass == 1 || w < rep.WallS {
				rep.WallS = w
			}
			if pass == 1 || c < rep.CPUS {
				rep.CPUS = c
			}
		}
	}
	return emit(rep)
}
