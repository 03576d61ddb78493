package engine

import (
	"context"
	"github.com/stratasearch/strata/internal/testenv"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/contract"
)

// ndcg10 is binary nDCG@10 (trec_eval's ndcg_cut_10 with gains 0/1):
// relevant = rel > 0; the ideal ranking puts every relevant doc first.
func ndcg10(ranked []string, judg map[string]int) float64 {
	dcg, idcg := 0.0, 0.0
	nrel := 0
	for _, r := range judg {
		if r > 0 {
			nrel++
		}
	}
	for i := 0; i < 10; i++ {
		if i < len(ranked) && judg[ranked[i]] > 0 {
			dcg += 1 / math.Log2(float64(i+2))
		}
		if i < nrel {
			idcg += 1 / math.Log2(float64(i+2))
		}
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// TestCranfieldQuality: the whole engine path (Upsert → Search) on
// Cranfield. Lexical nDCG@10 must reach REFERENCE.md's stemmed band
// (≥ 0.36; Xapian stemmed 0.3756); the default hybrid (rerank-maxnorm)
// must reach lexical − 0.005; dense and hybrid RRF are logged.
func TestCranfieldQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("non-short only")
	}
	testenv.SkipIfEmulated(t, "reads a real dataset")
	dir, err := datasets.Dir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	col, err := datasets.LoadCranfield(filepath.Join(dir, "cranfield"))
	if err != nil {
		t.Fatal(err)
	}
	if col.DocVecs.N != len(col.Docs) || col.QueryVecs.N != len(col.Queries) {
		t.Fatalf("vectors %d/%d for %d docs / %d queries", col.DocVecs.N, col.QueryVecs.N, len(col.Docs), len(col.Queries))
	}
	c := newColl(t, CollectionOptions{Dim: col.DocVecs.D, Metric: "cosine", Analyzer: AnalyzerProse})
	ctx := context.Background()
	var batch []contract.Document
	for i, d := range col.Docs {
		batch = append(batch, contract.Document{ID: d.ID, Content: d.Content(), Vector: col.DocVecs.Row(i), Trust: contract.Authoritative})
		if len(batch) == 200 || i == len(col.Docs)-1 {
			if _, err := c.Upsert(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	// "hybrid" is the default strategy (rerank-maxnorm); "rrf" asks for
	// RRF k=60 over both full lists explicitly.
	const rrf contract.Mode = "rrf"
	sums := map[contract.Mode]float64{}
	n := 0
	for i, q := range col.Queries {
		judg := col.Qrels.Judgments[q.ID]
		if col.Qrels.RelevantCount(q.ID) == 0 {
			continue
		}
		n++
		for _, m := range []contract.Mode{contract.Lexical, contract.Dense, contract.Hybrid, rrf} {
			cq := contract.Query{Text: q.Text, Vector: col.QueryVecs.Row(i), Mode: m, TopK: 10}
			switch m {
			case contract.Lexical:
				cq.Vector = nil
			case rrf:
				cq.Mode, cq.Fusion.Method = contract.Hybrid, "rrf"
			}
			r, err := c.Search(ctx, cq)
			if err != nil {
				t.Fatal(err)
			}
			sums[m] += ndcg10(ids(r.Hits), judg)
		}
	}
	nf := float64(n)
	lex, den, hyb, hrrf := sums[contract.Lexical]/nf, sums[contract.Dense]/nf, sums[contract.Hybrid]/nf, sums[rrf]/nf
	t.Logf("Cranfield nDCG@10 over %d queries: lexical %.4f, dense %.4f, hybrid default (rerank-maxnorm N=%d α=%.2f) %.4f (Δ %+.4f), hybrid RRF k=60 %.4f (Δ %+.4f)",
		n, lex, den, RerankWindow, RerankDenseWeight, hyb, hyb-lex, hrrf, hrrf-lex)
	// REFERENCE.md: a stemmed BM25 lands in 0.36–0.38 and a result clearly
	// below that points to a bug. The prose analyzer (Snowball English +
	// stop words) measures 0.3914 here, above Xapian's 0.3756; the upper
	// limit only catches an evaluator gone wrong.
	if lex < 0.36 || lex > 0.42 {
		t.Errorf("lexical nDCG@10 %.4f outside [0.36, 0.42] (stemmed reference band 0.36–0.38)", lex)
	}
	// The default hybrid strategy is bench/results/hybrid/report.md's
	// choice; it measured +0.0100 over lexical on Cranfield (its tuning
	// collection) and +0.0096 held-out (Vaswani-tuned parameters). It must
	// not lose to lexical by more than noise; RRF k=60 (-0.07 there) must
	// at least beat the weaker retriever.
	if hyb < lex-0.005 {
		t.Errorf("default hybrid %.4f below lexical %.4f − 0.005 (fusion study: +0.0100)", hyb, lex)
	}
	if hrrf < min(lex, den) {
		t.Errorf("hybrid RRF %.4f below both single retrievers (%.4f, %.4f)", hrrf, lex, den)
	}
}
