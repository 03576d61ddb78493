package lexical

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/eval"
)

// QualityDepth is the ranking depth of the quality runs (MAP over the top
// 1,000, as trec_eval).
const QualityDepth = 1000

// QualityRow is one engine configuration on one collection.
type QualityRow struct {
	Collection string  `json:"collection"`
	Engine     string  `json:"engine"` // "strata", PeerXapian, PeerFTS5 or PeerBleve
	Config     string  `json:"config"` // e.g. "oracle", "stemmed", "porter unicode61"
	Stemmed    bool    `json:"stemmed"`
	K1         float64 `json:"k1"`
	B          float64 `json:"b"`
	NDCG10     float64 `json:"ndcg10"` // binary gain
	MAP        float64 `json:"map"`    // over the top QualityDepth
	R100       float64 `json:"r100"`
	Queries    int     `json:"queries"` // judged queries averaged over
	// Reference is REFERENCE.md's nDCG@10 for this row, 0 if none.
	Reference float64 `json:"reference_ndcg10,omitempty"`
	Seconds   float64 `json:"seconds"` // wall time of index + queries
}

// referenceNDCG is REFERENCE.md's "BM25 quality" table (nDCG@10).
var referenceNDCG = map[string]float64{
	"cranfield/xapian/english":        0.3756,
	"cranfield/xapian/none":           0.3492,
	"cranfield/fts5/porter unicode61": 0.3789,
	"cranfield/fts5/unicode61":        0.3611,
	"cranfield/strata/oracle":         0.3596,
	"vaswani/xapian/english":          0.4398,
	"vaswani/xapian/none":             0.3659,
	"vaswani/fts5/porter unicode61":   0.4306,
	"vaswani/fts5/unicode61":          0.3583,
	"vaswani/strata/oracle":           0.3563,
}

// docText is the REFERENCE.md protocol text: Cranfield .T + " " + .W,
// Vaswani the body.
func docText(d datasets.Document) string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + " " + d.Text
}

func loadCollection(dir, name string) (*datasets.Collection, error) {
	switch name {
	case "cranfield":
		return datasets.LoadCranfield(filepath.Join(dir, "cranfield"))
	case "vaswani":
		return datasets.LoadVaswani(filepath.Join(dir, "vaswani"))
	}
	return nil, fmt.Errorf("lexical: unknown collection %q", name)
}

func evaluate(c *datasets.Collection, run map[string][]string) (ndcg, mapv, r100 float64, n int, err error) {
	s, err := eval.Evaluate(run, c.Qrels.Judgments, eval.Options{Cutoffs: []int{10, 100}})
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("lexical: evaluating %s: %w", c.Name, err)
	}
	a10, _ := s.Cut(10)
	a100, _ := s.Cut(100)
	return a10.NDCGBinary, s.AP, a100.R, s.Queries, nil
}

// strataQuality indexes c with analyzer options o (external id = ordinal)
// and ranks every query, OR, top QualityDepth, k1 1.2, b 0.75, default IDF.
func strataQuality(c *datasets.Collection, o text.Options) (map[string][]string, error) {
	a, err := text.New(o)
	if err != nil {
		return nil, fmt.Errorf("lexical: %w", err)
	}
	b := bm25.NewBuilder(bm25.Options{})
	for i, d := range c.Docs {
		if _, err := b.Add(uint64(i), a.Analyze(docText(d))); err != nil {
			return nil, fmt.Errorf("lexical: %w", err)
		}
	}
	seg, err := b.Segment()
	if err != nil {
		return nil, fmt.Errorf("lexical: %w", err)
	}
	views := []bm25.View{{Seg: seg}}
	p := bm25.DefaultSearchParams()
	p.K = QualityDepth
	run := map[string][]string{}
	for _, q := range c.Queries {
		hits, err := bm25.Search(views, bm25.Query{Should: a.Terms(q.Text)}, p, nil)
		if err != nil {
			return nil, fmt.Errorf("lexical: %w", err)
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = c.Docs[h.ExtID].ID
		}
		run[q.ID] = ids
	}
	return run, nil
}

// peerQuality runs one peer configuration over c: the lower-cased raw
// document and query texts, the peer's own tokenizer.
func peerQuality(ctx context.Context, c *datasets.Collection, p peerConfig, corpus, queries string) (map[string][]string, error) {
	if _, err := p.buildIndex(ctx, corpus); err != nil {
		return nil, err
	}
	r, err := p.query(ctx, queries, "or", QualityDepth, 1, len(c.Queries))
	if err != nil {
		return nil, err
	}
	run := map[string][]string{}
	for qi, q := range c.Queries {
		ids := make([]string, 0, len(r.Results[qi]))
		for _, o := range r.Results[qi] {
			if o < 0 || int(o) >= len(c.Docs) {
				return nil, fmt.Errorf("lexical: %s returned ordinal %d of %d documents", p.engine, o, len(c.Docs))
			}
			ids = append(ids, c.Docs[o].ID)
		}
		run[q.ID] = ids
	}
	return run, nil
}

// runQuality evaluates every engine configuration on Cranfield and
// Vaswani.
func runQuality(ctx context.Context, o *Options, dr *Drivers, work string) ([]QualityRow, error) {
	dir := o.DatasetsDir
	var rows []QualityRow
	for _, name := range []string{"cranfield", "vaswani"} {
		c, err := loadCollection(dir, name)
		if err != nil {
			return nil, err
		}
		docs := make([]string, len(c.Docs))
		for i, d := range c.Docs {
			docs[i] = strings.ToLower(docText(d))
		}
		qs := make([]string, len(c.Queries))
		for i, q := range c.Queries {
			qs[i] = strings.ToLower(q.Text)
		}
		corpus := filepath.Join(work, name+".corpus")
		queries := filepath.Join(work, name+".queries")
		if err := writeLines(corpus, docs); err != nil {
			return nil, err
		}
		if err := writeLines(queries, qs); err != nil {
			return nil, err
		}
		type cfg struct {
			engine, config string
			stemmed        bool
			strata         *text.Options
			peer           peerConfig
		}
		oracle, prose := text.OracleOptions(), text.ProseOptions()
		stemOnly := text.Options{Mode: text.ModeUnicode, Stemmer: "english", MaxTokenRunes: 64}
		cfgs := []cfg{
			{engine: "strata", config: "oracle", strata: &oracle},
			{engine: "strata", config: "stemmed (prose)", stemmed: true, strata: &prose},
			{engine: "strata", config: "stemmed (no stop-words)", stemmed: true, strata: &stemOnly},
			{engine: PeerXapian, config: "none", peer: peerConfig{engine: PeerXapian, bin: dr.Xapian, index: filepath.Join(work, name+"-xapian-none"), analysis: "none"}},
			{engine: PeerXapian, config: "english", stemmed: true, peer: peerConfig{engine: PeerXapian, bin: dr.Xapian, index: filepath.Join(work, name+"-xapian-english"), analysis: "english"}},
			{engine: PeerFTS5, config: "unicode61", peer: peerConfig{engine: PeerFTS5, bin: dr.FTS5, index: filepath.Join(work, name+"-fts5-u.db"), analysis: "unicode61"}},
			{engine: PeerFTS5, config: "porter unicode61", stemmed: true, peer: peerConfig{engine: PeerFTS5, bin: dr.FTS5, index: filepath.Join(work, name+"-fts5-p.db"), analysis: "porter unicode61"}},
			{engine: PeerBleve, config: "none", peer: peerConfig{engine: PeerBleve, bin: dr.Bleve, index: filepath.Join(work, name+"-bleve-none"), analysis: "none"}},
			{engine: PeerBleve, config: "english", stemmed: true, peer: peerConfig{engine: PeerBleve, bin: dr.Bleve, index: filepath.Join(work, name+"-bleve-english"), analysis: "english"}},
		}
		for _, cf := range cfgs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			t0 := time.Now()
			var run map[string][]string
			if cf.strata != nil {
				run, err = strataQuality(c, *cf.strata)
			} else {
				run, err = peerQuality(ctx, c, cf.peer, corpus, queries)
			}
			if err != nil {
				return nil, err
			}
			nd, mp, r100, n, err := evaluate(c, run)
			if err != nil {
				return nil, err
			}
			row := QualityRow{Collection: name, Engine: cf.engine, Config: cf.config, Stemmed: cf.stemmed,
				K1: 1.2, B: 0.75, NDCG10: nd, MAP: mp, R100: r100, Queries: n,
				Reference: referenceNDCG[name+"/"+cf.engine+"/"+cf.config], Seconds: time.Since(t0).Seconds()}
			o.logf("quality %s %s %s: nDCG@10 %.4f MAP %.4f R@100 %.4f (reference %.4f)", name, cf.engine, cf.config, nd, mp, r100, row.Reference)
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// ordinalIDs formats ordinals as strings (for tests and overlap checks).
func ordinalIDs(xs []int64) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.FormatInt(x, 10)
	}
	return out
}
