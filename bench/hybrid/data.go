package hybrid

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/fusion"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/eval"
)

// Depth is how many hits each single retriever returns per query (MAP is
// computed over the whole returned list, trec_eval's default depth).
const Depth = 1000

// query is one judged query with both retrievers' rankings.
type query struct {
	ID     string
	Judged map[string]int
	Lex    []fusion.Hit[int] // BM25 top Depth, best first; key = doc ordinal
	Dense  []fusion.Hit[int] // exact inner product top Depth, best first
	// DenseAll is the inner product of the query with every document
	// (index = doc ordinal), for re-ranking lexical candidates.
	DenseAll []float32
	// Vec is the query vector (D float32).
	Vec []float32
}

// collection is a prepared test collection: judged queries only.
type collection struct {
	Name    string
	DocIDs  []string
	Queries []query
	// DocVecs holds the document vectors, n×D float32 row-major (the
	// vector pseudo-relevance-feedback family reads them).
	DocVecs []float32
	D       int
}

// loadCollection reads name ("cranfield" or "vaswani") from dir and runs
// both single retrievers; with emb, the dense vectors are emb's
// embeddings of the document texts and query texts.
func loadCollection(ctx context.Context, dir, name string, emb embed.Embedder) (*collection, error) {
	var c *datasets.Collection
	var err error
	switch name {
	case "cranfield":
		c, err = datasets.LoadCranfield(filepath.Join(dir, "cranfield"))
	case "vaswani":
		c, err = datasets.LoadVaswani(filepath.Join(dir, "vaswani"))
	default:
		return nil, fmt.Errorf("hybrid: unknown collection %q (want cranfield or vaswani)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	docs := make([]string, len(c.Docs))
	texts := make([]string, len(c.Docs))
	for i, d := range c.Docs {
		docs[i], texts[i] = d.ID, d.Content()
	}
	qs := make([]string, len(c.Queries))
	qids := make([]string, len(c.Queries))
	for i, q := range c.Queries {
		qs[i], qids[i] = q.Text, q.ID
	}
	if c.DocVecs.N != len(c.Docs) || c.QueryVecs.N != len(c.Queries) || c.DocVecs.D != c.QueryVecs.D {
		return nil, fmt.Errorf("hybrid: %s: vectors (%d×%d docs, %d×%d queries) do not match %d docs, %d queries",
			name, c.DocVecs.N, c.DocVecs.D, c.QueryVecs.N, c.QueryVecs.D, len(c.Docs), len(c.Queries))
	}
	if emb != nil {
		dv, err := embedFlat(ctx, emb, texts)
		if err != nil {
			return nil, err
		}
		qv, err := embedFlat(ctx, emb, qs)
		if err != nil {
			return nil, err
		}
		return prepare(name, docs, texts, qids, qs, dv, qv, emb.Dim(), c.Qrels.Judgments)
	}
	return prepare(name, docs, texts, qids, qs, c.DocVecs.Data, c.QueryVecs.Data, c.DocVecs.D, c.Qrels.Judgments)
}

// embedFlat embeds texts with emb into one row-major n×Dim slice.
func embedFlat(ctx context.Context, emb embed.Embedder, texts []string) ([]float32, error) {
	vs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("hybrid: embed: %w", err)
	}
	if err := embed.CheckVectors(vs, len(texts), emb.Dim()); err != nil {
		return nil, fmt.Errorf("hybrid: embed: %w", err)
	}
	out := make([]float32, 0, len(texts)*emb.Dim())
	for _, v := range vs {
		out = append(out, v...)
	}
	return out, nil
}

// prepare builds the BM25 index (text.ProseOptions: English stemming and
// stop-words, k1 1.2, b 0.75) and the exact dense ranking, and keeps the
// queries with at least one relevant judged document. docVecs: n×d
// row-major; qVecs: len(qs)×d.
func prepare(name string, docIDs, texts, qids, qs []string, docVecs, qVecs []float32, d int, qrels map[string]map[string]int) (*collection, error) {
	an, err := text.New(text.ProseOptions())
	if err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	b := bm25.NewBuilder(bm25.Options{})
	for i, t := range texts {
		if _, err := b.Add(uint64(i), an.Analyze(t)); err != nil {
			return nil, fmt.Errorf("hybrid: %w", err)
		}
	}
	seg, err := b.Segment()
	if err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	segs := []*bm25.Segment{seg}
	col := &collection{Name: name, DocIDs: docIDs, DocVecs: docVecs[:len(docIDs)*d], D: d}
	n := len(docIDs)
	for qi, qt := range qs {
		j := qrels[qids[qi]]
		if !hasRelevant(j) {
			continue
		}
		pq := bm25.ParseQuery(qt, an, false)
		p := bm25.DefaultSearchParams()
		p.K = Depth
		lh, err := bm25.Search([]bm25.View{{Seg: seg}}, pq, p, bm25.CollectStats(segs, pq.Terms()))
		if err != nil {
			return nil, fmt.Errorf("hybrid: %s query %s: %w", name, qids[qi], err)
		}
		q := query{ID: qids[qi], Judged: j, DenseAll: make([]float32, n), Vec: qVecs[qi*d : (qi+1)*d]}
		for _, h := range lh {
			q.Lex = append(q.Lex, fusion.Hit[int]{Key: int(h.ExtID), Score: h.Score})
		}
		asm.DotBatch(qVecs[qi*d:(qi+1)*d], docVecs[:n*d], q.DenseAll)
		all := make([]fusion.Hit[int], n)
		for i, s := range q.DenseAll {
			all[i] = fusion.Hit[int]{Key: i, Score: float64(s)}
		}
		slices.SortFunc(all, byScore)
		q.Dense = all[:min(Depth, n)]
		col.Queries = append(col.Queries, q)
	}
	if len(col.Queries) == 0 {
		return nil, fmt.Errorf("hybrid: %s has no judged query", name)
	}
	return col, nil
}

func hasRelevant(j map[string]int) bool {
	for _, g := range j {
		if g >= 1 {
			return true
		}
	}
	return false
}

// byScore orders hits by score descending, then key ascending.
func byScore(a, b fusion.Hit[int]) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.Key, b.Key)
}

// perQuery holds one method's per-query metrics, in collection query order.
type perQuery struct {
	NDCG10 []float64
	AP     []float64
	R100   []float64
}

func (p perQuery) means() (nd, ap, r float64) {
	return mean(p.NDCG10), mean(p.AP), mean(p.R100)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

var evalOpts = eval.Options{Cutoffs: []int{10, 100}}

// evaluate scores a run (doc ordinals per query, collection order).
func (c *collection) evaluate(run [][]int) (perQuery, error) {
	var p perQuery
	ids := make([]string, 0, Depth)
	for qi, q := range c.Queries {
		ids = ids[:0]
		for _, o := range run[qi] {
			ids = append(ids, c.DocIDs[o])
		}
		m, err := eval.EvaluateQuery(ids, q.Judged, evalOpts)
		if err != nil {
			return p, fmt.Errorf("hybrid: %s query %s: %w", c.Name, q.ID, err)
		}
		a10, _ := m.Cut(10)
		a100, _ := m.Cut(100)
		p.NDCG10 = append(p.NDCG10, a10.NDCGBinary)
		p.AP = append(p.AP, m.AP)
		p.R100 = append(p.R100, a100.R)
	}
	return p, nil
}
