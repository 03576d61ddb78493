package lexical

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
)

// Speed-corpus protocol (REFERENCE.md "BM25 speed"): tokens [A-Za-z0-9]+,
// lower-cased, longer than MaxTokenRunes dropped; QuerySeed and the
// bucket bounds of the query generator.
const (
	MaxTokenRunes = 64
	QuerySeed     = 42
	RareMaxDF     = 10 // rare: df <= 10; common: df > N/10; mid: the rest
	SpeedK        = 10
)

// CorpusInfo describes the speed corpus.
type CorpusInfo struct {
	Root    string `json:"root"`    // $(go env GOROOT)/src
	Files   int    `json:"files"`   // documents (one per *.go file)
	Bytes   int64  `json:"bytes"`   // source bytes
	Tokens  int64  `json:"tokens"`  // token occurrences after analysis
	Terms   int    `json:"terms"`   // distinct terms
	Queries int    `json:"queries"` // 1–3 distinct words, seed QuerySeed
	// Phrases is the number of phrase queries (GeneratePhrases).
	Phrases int    `json:"phrases"`
	Subset  string `json:"subset,omitempty"`
}

// OpResult is one engine's throughput for one operator over the query
// batch: the best (fastest) pass over all rounds, by wall time and by CPU
// time separately.
type OpResult struct {
	QPSWall float64 `json:"qps_wall"`
	QPSCPU  float64 `json:"qps_cpu"`
	Hits    int     `json:"hits"` // total hits over the batch (top-10 each)
	// PassWallS lists every timed pass's wall seconds, in run order.
	PassWallS []float64 `json:"pass_wall_s"`
	PassCPUS  []float64 `json:"pass_cpu_s"`
}

// SpeedRow is one engine on the speed corpus.
type SpeedRow struct {
	Engine     string  `json:"engine"`
	Version    string  `json:"version"`
	Config     string  `json:"config"`
	IndexWallS float64 `json:"index_wall_s"`
	IndexCPUS  float64 `json:"index_cpu_s"`
	IndexBytes int64   `json:"index_bytes"`
	// UncompactedBytes: Xapian's database before compaction (0 for the
	// others).
	UncompactedBytes int64    `json:"uncompacted_bytes,omitempty"`
	OR               OpResult `json:"or"`
	AND              OpResult `json:"and"`
	// Phrase is the throughput of the phrase queries (GeneratePhrases).
	Phrase OpResult `json:"phrase"`
	// OverlapWithStrata is the mean fraction of this engine's OR top-10
	// that Strata also returned (1 for Strata itself): a sanity check that
	// the engines answer the same queries, not an accuracy figure (the
	// BM25 variants differ in IDF and length normalisation).
	OverlapWithStrata float64 `json:"or_top10_overlap_with_strata"`
	// ORByWords splits the OR batch by query length (1, 2, 3 words): one
	// round after the main rounds, Strata and Xapian only (FTS5 is not
	// pruned, so its split says nothing new). It shows where the time goes.
	ORByWords []WordsResult `json:"or_by_words,omitempty"`
}

// WordsResult is the OR throughput over the queries of one length.
type WordsResult struct {
	Words   int     `json:"words"`
	Queries int     `json:"queries"`
	QPSWall float64 `json:"qps_wall"`
	QPSCPU  float64 `json:"qps_cpu"`
}

// goFiles returns the *.go files under root, sorted by relative path.
func goFiles(root string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lexical: walking %s: %w", root, err)
	}
	sort.Strings(paths)
	return paths, nil
}

// speedAnalyzer is the protocol analysis: [a-z0-9]+ after lower-casing,
// tokens longer than 64 runes dropped.
func speedAnalyzer() *text.Analyzer {
	return text.MustNew(text.Options{Mode: text.ModeOracle, MaxTokenRunes: MaxTokenRunes})
}

// pretokenise returns each document as its protocol tokens joined by
// single spaces: the exact text every engine indexes.
func pretokenise(docs []string) ([]string, int64) {
	a := speedAnalyzer()
	out := make([]string, len(docs))
	var n int64
	for i, d := range docs {
		terms := a.Terms(d)
		n += int64(len(terms))
		out[i] = strings.Join(terms, " ")
	}
	return out, n
}

// GenerateQueries draws n queries of 1–3 distinct words with seed
// QuerySeed from the dictionary of seg (in its sorted order): each word is
// from the rare (df <= 10), mid or common (df > N/10) bucket with equal
// probability. It is the generator of engine/bm25's BenchmarkGoStdlib.
func GenerateQueries(seg *bm25.Segment, n int) [][]string {
	var rare, mid, common []string
	for i := 0; i < seg.NumTerms(); i++ {
		t := seg.Term(i)
		switch df := seg.DocFreq(t); {
		case df <= RareMaxDF:
			rare = append(rare, t)
		case df > seg.NumDocs()/10:
			common = append(common, t)
		default:
			mid = append(mid, t)
		}
	}
	buckets := [][]string{rare, mid, common}
	for _, b := range buckets {
		if len(b) == 0 {
			// Tiny corpora: fall back to the whole vocabulary.
			var all []string
			for i := 0; i < seg.NumTerms(); i++ {
				all = append(all, seg.Term(i))
			}
			buckets = [][]string{all, all, all}
			break
		}
	}
	r := rand.New(rand.NewPCG(QuerySeed, 0))
	var qs [][]string
	for len(qs) < n {
		k := 1 + r.IntN(3)
		seen := map[string]bool{}
		var q []string
		for tries := 0; len(q) < k && tries < 100; tries++ {
			b := buckets[r.IntN(3)]
			w := b[r.IntN(len(b))]
			if !seen[w] {
				seen[w] = true
				q = append(q, w)
			}
		}
		qs = append(qs, q)
	}
	return qs
}

// PhraseSeed seeds GeneratePhrases.
const PhraseSeed = 43

// GeneratePhrases draws n phrase queries of 2–3 consecutive tokens from
// the pre-tokenised docs with seed PhraseSeed: a random document with at
// least 3 tokens, a random start position. Every phrase therefore matches
// at least one document; common phrases ("if err") and rare ones both
// occur, as in the corpus.
func GeneratePhrases(docs []string, n int) [][]string {
	r := rand.New(rand.NewPCG(PhraseSeed, 0))
	var qs [][]string
	for tries := 0; len(qs) < n && tries < 100*n+1000; tries++ {
		toks := strings.Fields(docs[r.IntN(len(docs))])
		if len(toks) < 3 {
			continue
		}
		k := 2 + r.IntN(2)
		at := r.IntN(len(toks) - k + 1)
		qs = append(qs, toks[at:at+k])
	}
	return qs
}

// phraseQuery is the Strata query for the consecutive words ws.
func phraseQuery(ws []string) bm25.Query {
	ph := make([]bm25.PhraseTerm, len(ws))
	for i, w := range ws {
		ph[i] = bm25.PhraseTerm{Term: w, Offset: i}
	}
	return bm25.Query{Phrases: [][]bm25.PhraseTerm{ph}}
}

// strataIndex builds one Strata segment over the pre-tokenised docs
// (analysis included in the time) and returns it with its serialised size.
func strataIndex(docs []string) (*bm25.Segment, int64, float64, float64, error) {
	a := speedAnalyzer()
	w0, c0 := time.Now(), processCPU()
	b := bm25.NewBuilder(bm25.Options{})
	for i, d := range docs {
		if _, err := b.Add(uint64(i), a.Analyze(d)); err != nil {
			return nil, 0, 0, 0, fmt.Errorf("lexical: %w", err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		return nil, 0, 0, 0, fmt.Errorf("lexical: %w", err)
	}
	wall, cpu := time.Since(w0).Seconds(), processCPU()-c0
	seg, err := bm25.Open(buf.Bytes(), "go-stdlib")
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("lexical: %w", err)
	}
	return seg, int64(buf.Len()), wall, cpu, nil
}

// strataPasses runs the batch once untimed and then passes timed passes.
func strataPasses(seg *bm25.Segment, qs []bm25.Query, passes int) (walls, cpus []float64, hits int, results [][]int64, err error) {
	views := []bm25.View{{Seg: seg}}
	p := bm25.DefaultSearchParams()
	p.K = SpeedK
	results = make([][]int64, len(qs))
	for pass := 0; pass <= passes; pass++ {
		w0, c0 := time.Now(), processCPU()
		for i, q := range qs {
			h, err := bm25.Search(views, q, p, nil)
			if err != nil {
				return nil, nil, 0, nil, fmt.Errorf("lexical: %w", err)
			}
			if pass == 0 {
				hits += len(h)
				for _, x := range h {
					results[i] = append(results[i], int64(x.ExtID))
				}
			}
		}
		if pass > 0 {
			walls = append(walls, time.Since(w0).Seconds())
			cpus = append(cpus, processCPU()-c0)
		}
	}
	return walls, cpus, hits, results, nil
}

func minOf(xs []float64) float64 {
	m := 0.0
	for i, x := range xs {
		if i == 0 || x < m {
			m = x
		}
	}
	return m
}

func (r *OpResult) add(walls, cpus []float64, nq int) {
	r.PassWallS = append(r.PassWallS, walls...)
	r.PassCPUS = append(r.PassCPUS, cpus...)
	if w := minOf(r.PassWallS); w > 0 {
		r.QPSWall = float64(nq) / w
	}
	if c := minOf(r.PassCPUS); c > 0 {
		r.QPSCPU = float64(nq) / c
	}
}

// overlap is the mean over queries of |a_i ∩ b_i| / |b_i| (1 when b_i is
// empty and a_i is too).
func overlap(a, b [][]int64) float64 {
	if len(a) == 0 {
		return 0
	}
	sum := 0.0
	for i := range a {
		if len(b[i]) == 0 {
			if len(a[i]) == 0 {
				sum++
			}
			continue
		}
		in := map[int64]bool{}
		for _, x := range a[i] {
			in[x] = true
		}
		n := 0
		for _, x := range b[i] {
			if in[x] {
				n++
			}
		}
		sum += float64(n) / float64(len(b[i]))
	}
	return sum / float64(len(a))
}

// runSpeed runs the speed suite over the documents docs (raw texts), with
// the peers of dr, in work.
func runSpeed(ctx context.Context, o *Options, dr *Drivers, work string, raw []string, info *CorpusInfo) ([]SpeedRow, error) {
	docs, ntok := pretokenise(raw)
	info.Tokens = ntok
	o.logf("speed: %d documents, %d tokens; indexing Strata", len(docs), ntok)
	seg, size, iw, ic, err := strataIndex(docs)
	if err != nil {
		return nil, err
	}
	info.Terms = seg.NumTerms()
	qwords := GenerateQueries(seg, o.Queries)
	info.Queries = len(qwords)
	qlines := make([]string, len(qwords))
	orQ := make([]bm25.Query, len(qwords))
	andQ := make([]bm25.Query, len(qwords))
	for i, q := range qwords {
		qlines[i] = strings.Join(q, " ")
		orQ[i] = bm25.Query{Should: q}
		andQ[i] = bm25.Query{Must: q}
	}
	pwords := GeneratePhrases(docs, o.Phrases)
	info.Phrases = len(pwords)
	plines := make([]string, len(pwords))
	phQ := make([]bm25.Query, len(pwords))
	for i, q := range pwords {
		plines[i] = strings.Join(q, " ")
		phQ[i] = phraseQuery(q)
	}
	corpus, queries := filepath.Join(work, "gostdlib.corpus"), filepath.Join(work, "gostdlib.queries")
	phrases := filepath.Join(work, "gostdlib.phrases")
	if err := writeLines(corpus, docs); err != nil {
		return nil, err
	}
	if err := writeLines(queries, qlines); err != nil {
		return nil, err
	}
	if err := writeLines(phrases, plines); err != nil {
		return nil, err
	}
	strata := SpeedRow{Engine: "strata", Version: "dev", Config: "oracle analysis, 64-rune cap, BM25 k1 1.2 b 0.75, Block-Max MaxScore",
		IndexWallS: iw, IndexCPUS: ic, IndexBytes: size, OverlapWithStrata: 1}
	xp := peerConfig{engine: PeerXapian, bin: dr.Xapian, index: filepath.Join(work, "gostdlib-xapian"), analysis: "none", pretok: true}
	fp := peerConfig{engine: PeerFTS5, bin: dr.FTS5, index: filepath.Join(work, "gostdlib-fts5.db"), analysis: "unicode61"}
	bp := peerConfig{engine: PeerBleve, bin: dr.Bleve, index: filepath.Join(work, "gostdlib-bleve"), analysis: "none", pretok: true}
	rows := []*SpeedRow{&strata}
	peers := []peerConfig{xp, fp, bp}
	for _, p := range peers {
		o.logf("speed: indexing %s", p.engine)
		r, err := p.buildIndex(ctx, corpus)
		if err != nil {
			return nil, err
		}
		if r.Docs != len(docs) {
			return nil, fmt.Errorf("lexical: %s indexed %d documents, want %d", p.engine, r.Docs, len(docs))
		}
		cfg := "no stemming, add_posting per token (positions), one transaction then Database::compact (FULL), BM25Weight(1.2, 0, 1, 0.75, 0.5), Enquire top-10"
		switch p.engine {
		case PeerFTS5:
			cfg = "contentless, tokenize=unicode61, optimize + VACUUM, ORDER BY rank LIMIT 10"
		case PeerBleve:
			cfg = "scorch, whitespace tokenizer over the pre-tokenised text, field not stored, no doc values, term vectors on, batches of 1,000, ForceMerge to one segment; BM25 scoring model (k1 1.2, b 0.75, avgdl = ceil(|V|/N) in Bleve), MatchQuery / MatchPhraseQuery top-10, GOMAXPROCS=1"
		}
		rows = append(rows, &SpeedRow{Engine: p.engine, Version: r.Version, Config: cfg,
			IndexWallS: r.IndexWallS, IndexCPUS: r.IndexCPUS, IndexBytes: r.IndexBytes, UncompactedBytes: r.UncompactedBytes})
	}
	var strataRes [][]int64
	for _, op := range []string{"or", "and", "phrase"} {
		for round := 0; round < o.Rounds; round++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			qs, qfile := orQ, queries
			res := &strata.OR
			switch op {
			case "and":
				qs, res = andQ, &strata.AND
			case "phrase":
				qs, qfile, res = phQ, phrases, &strata.Phrase
			}
			walls, cpus, hits, results, err := strataPasses(seg, qs, o.Passes)
			if err != nil {
				return nil, err
			}
			res.Hits = hits
			res.add(walls, cpus, len(qs))
			if op == "or" {
				strataRes = results
			}
			o.logf("speed %s round %d: strata %.0f QPS wall, %.0f QPS cpu", op, round, float64(len(qs))/minOf(walls), float64(len(qs))/minOf(cpus))
			for pi, p := range peers {
				r, err := p.query(ctx, qfile, op, SpeedK, o.Passes, len(qs))
				if err != nil {
					return nil, err
				}
				row := rows[pi+1]
				res := &row.OR
				switch op {
				case "and":
					res = &row.AND
				case "phrase":
					res = &row.Phrase
				default:
					row.OverlapWithStrata = overlap(strataRes, r.Results)
				}
				res.Hits = r.Hits
				res.add(r.WallSAll, r.CPUSAll, len(qs))
				o.logf("speed %s round %d: %s %.0f QPS wall, %.0f QPS cpu, %d hits", op, round, p.engine, float64(len(qs))/r.WallS, float64(len(qs))/r.CPUS, r.Hits)
			}
		}
	}
	for words := 1; words <= 3; words++ {
		var sub []bm25.Query
		var lines []string
		for i, q := range qwords {
			if len(q) == words {
				sub = append(sub, orQ[i])
				lines = append(lines, qlines[i])
			}
		}
		if len(sub) == 0 {
			continue
		}
		f := filepath.Join(work, fmt.Sprintf("gostdlib.queries.%d", words))
		if err := writeLines(f, lines); err != nil {
			return nil, err
		}
		walls, cpus, _, _, err := strataPasses(seg, sub, o.Passes)
		if err != nil {
			return nil, err
		}
		strata.ORByWords = append(strata.ORByWords, WordsResult{words, len(sub), float64(len(sub)) / minOf(walls), float64(len(sub)) / minOf(cpus)})
		r, err := xp.query(ctx, f, "or", SpeedK, o.Passes, len(sub))
		if err != nil {
			return nil, err
		}
		rows[1].ORByWords = append(rows[1].ORByWords, WordsResult{words, len(sub), float64(len(sub)) / r.WallS, float64(len(sub)) / r.CPUS})
		o.logf("speed or %d-word queries (%d): strata %.0f QPS cpu, xapian %.0f QPS cpu", words, len(sub), strata.ORByWords[len(strata.ORByWords)-1].QPSCPU, rows[1].ORByWords[len(rows[1].ORByWords)-1].QPSCPU)
	}
	os.RemoveAll(xp.index)
	os.Remove(fp.index)
	os.RemoveAll(bp.index)
	out := make([]SpeedRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out, nil
}
