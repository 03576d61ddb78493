package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
)

// rerankCorpus writes n documents of random words from a 6-word vocabulary
// (so a two-word query matches far more than RerankWindow documents) with
// random dim-8 vectors; every 7th document (i%7 == 5) has no vector.
func rerankCorpus(t *testing.T, c *Collection, n int, seed uint64) map[string][]float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	vocab := []string{"alpha", "beta", "gamma", "delta", "omega", "sigma"}
	vecs := map[string][]float32{}
	var docs []contract.Document
	for i := 0; i < n; i++ {
		words := make([]string, 3+rng.IntN(12))
		for j := range words {
			words[j] = vocab[rng.IntN(len(vocab))]
		}
		var v []float32
		if i%7 != 5 {
			v = make([]float32, 8)
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
		}
		id := fmt.Sprintf("d%03d", i)
		vecs[id] = v
		docs = append(docs, doc(id, strings.Join(words, " "), v))
	}
	mustUpsert(t, c, docs...)
	return vecs
}

// refSimilarity is the dense fusion score in float64: cosine similarity,
// inner product, or 1/(1+d²) for l2.
func refSimilarity(metric string, q, x []float32) float64 {
	var dot, qq, xx, d2 float64
	for i := range q {
		a, b := float64(q[i]), float64(x[i])
		dot += a * b
		qq += a * a
		xx += b * b
		d2 += (a - b) * (a - b)
	}
	switch metric {
	case "cosine":
		return dot / math.Sqrt(qq*xx)
	case "l2":
		return 1 / (1 + d2)
	}
	return dot
}

// TestHybridRerankAgainstReference: the default hybrid strategy equals a
// direct float64 implementation of the study's rule — the BM25 top 20
// ordered by 0.65·s/max s + 0.35·sim/max|sim| (0 for a document without a
// vector), then the BM25 list from rank 21 unchanged — for every metric.
// Scores lie in [0,1] and never increase; Explain ranks are filled. N and
// α come from the collection's HybridRerankWindow and
// HybridRerankDenseWeight when set, and from the query when it selects
// rerank-maxnorm with its own.
func TestHybridRerankAgainstReference(t *testing.T) {
	explicit := contract.FusionParams{Method: FusionRerankMaxNorm, Window: 13, Weights: map[string]float64{"lexical": 0.2, "dense": 0.3}}
	params := []struct {
		name      string
		n         int
		alpha     float64
		fusion    contract.FusionParams
		colWindow int
		colAlpha  float64
	}{
		{"default", RerankWindow, RerankDenseWeight, contract.FusionParams{}, 0, 0},
		// Fusion.Method rerank-maxnorm with its own N and α.
		{"explicit", 13, 0.6, explicit, 0, 0},
		// The collection's N and α.
		{"collection", 13, 0.6, contract.FusionParams{}, 13, 0.6},
		// The query's own N and α over the collection's.
		{"explicit-over-collection", 13, 0.6, explicit, 30, 0.1},
	}
	for _, metric := range []string{"cosine", "ip", "l2"} {
		for _, pc := range params {
			RerankWindow, RerankDenseWeight := pc.n, pc.alpha
			t.Run(metric+"/"+pc.name, func(t *testing.T) {
				c := newColl(t, CollectionOptions{Dim: 8, Metric: metric, HybridRerankWindow: pc.colWindow, HybridRerankDenseWeight: pc.colAlpha})
				vecs := rerankCorpus(t, c, 120, 7)
				rng := rand.New(rand.NewPCG(99, 2))
				qv := make([]float32, 8)
				for j := range qv {
					qv[j] = float32(rng.NormFloat64())
				}
				const text, topK = "alpha omega", 35
				lex := mustSearch(t, c, contract.Query{Text: text, TopK: 1000})
				if len(lex.Hits) < topK+5 {
					t.Fatalf("corpus too small: %d lexical hits", len(lex.Hits))
				}
				// Reference.
				type cand struct {
					id               string
					lexRank, denRank int
					bm25, sim, fused float64
					hasVec           bool
				}
				head := make([]cand, RerankWindow)
				maxS, maxSim := 0.0, 0.0
				for i := range head {
					h := lex.Hits[i]
					head[i] = cand{id: h.DocID, lexRank: i + 1, bm25: h.Explain.LexicalScore}
					maxS = max(maxS, h.Explain.LexicalScore)
					if v := vecs[h.DocID]; v != nil {
						head[i].hasVec, head[i].sim = true, refSimilarity(metric, qv, v)
						maxSim = max(maxSim, math.Abs(head[i].sim))
					}
				}
				byDense := slices.Clone(head)
				slices.SortStableFunc(byDense, func(a, b cand) int {
					switch {
					case a.hasVec != b.hasVec:
						if a.hasVec {
							return -1
						}
						return 1
					case a.sim > b.sim:
						return -1
					case a.sim < b.sim:
						return 1
					}
					return 0
				})
				denRank := map[string]int{}
				for i, d := range byDense {
					if d.hasVec {
						denRank[d.id] = i + 1
					}
				}
				for i := range head {
					head[i].denRank = denRank[head[i].id]
					head[i].fused = (1-RerankDenseWeight)*head[i].bm25/maxS + RerankDenseWeight*head[i].sim/maxSim
				}
				slices.SortStableFunc(head, func(a, b cand) int {
					switch {
					case a.fused > b.fused:
						return -1
					case a.fused < b.fused:
						return 1
					}
					return 0
				})

				// The fixture exercises both paths: the last candidate has a
				// vector, and some candidate has none.
				nv := 0
				for _, h := range lex.Hits[:RerankWindow] {
					if vecs[h.DocID] == nil {
						nv++
					}
				}
				if (pc.name == "default" && vecs[lex.Hits[RerankWindow-1].DocID] == nil) || nv == 0 {
					t.Fatalf("fixture: candidate %d has no vector, or all %d candidates have one (%d without)", RerankWindow, RerankWindow, nv)
				}
				moved := false
				for i := range head {
					moved = moved || head[i].lexRank != i+1
				}
				if !moved {
					t.Fatal("fixture: the dense scores do not change the lexical order")
				}
				got := mustSearch(t, c, contract.Query{Text: text, Vector: qv, TopK: topK, Fusion: pc.fusion})
				if len(got.Hits) != topK || got.Partial {
					t.Fatalf("%d hits (partial %v), want %d", len(got.Hits), got.Partial, topK)
				}
				prev, refPrev := 1.0, 1.0
				for i, h := range got.Hits {
					if h.Score < 0 || h.Score > prev+1e-12 {
						t.Fatalf("hit %d score %v after %v: want non-increasing in [0,1]", i, h.Score, prev)
					}
					prev = h.Score
					if i < RerankWindow {
						w := head[i]
						if h.DocID != w.id || h.Explain.LexicalRank != w.lexRank || h.Explain.DenseRank != w.denRank {
							t.Fatalf("head %d: got %s (lex %d, dense %d), want %s (lex %d, dense %d)", i, h.DocID,
								h.Explain.LexicalRank, h.Explain.DenseRank, w.id, w.lexRank, w.denRank)
						}
						// Score is the fused score clamped to [0, previous score].
						refScore := min(max(w.fused, 0), refPrev)
						refPrev = refScore
						if math.Abs(h.Score-refScore) > 1e-5 || math.Abs(h.Explain.FusedScore-w.fused) > 1e-5 {
							t.Fatalf("head %d (%s): score %v fused %v, want %v (fused %v)", i, h.DocID, h.Score, h.Explain.FusedScore, refScore, w.fused)
						}
						continue
					}
					l := lex.Hits[i]
					if h.DocID != l.DocID || h.Explain.LexicalRank != i+1 || h.Explain.DenseRank != 0 {
						t.Fatalf("tail %d: got %s (lex %d, dense %d), want %s at lexical rank %d", i, h.DocID,
							h.Explain.LexicalRank, h.Explain.DenseRank, l.DocID, i+1)
					}
				}
			})
		}
	}
}

// TestHybridRerankBackfill: text matching fewer than TopK documents is
// followed by the dense retriever's other hits in dense order; text matching
// nothing gives the dense ranking.
func TestHybridRerankBackfill(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c,
		doc("a", "needle", []float32{0, 1}), doc("b", "needle hay", []float32{1, 1}),
		doc("c", "hay", []float32{1, 0}), doc("d", "hay", []float32{1, 0.5}), doc("e", "hay", []float32{-1, 0}))
	r := mustSearch(t, c, contract.Query{Text: "needle", Vector: []float32{1, 0}, TopK: 4})
	if got := fmt.Sprint(ids(r.Hits)); got != "[a b c d]" && got != "[b a c d]" {
		t.Fatalf("backfill order %s, want the two lexical hits then c, d", got)
	}
	for i, h := range r.Hits {
		if i > 0 && h.Score > r.Hits[i-1].Score {
			t.Fatalf("scores increase: %+v", r.Hits)
		}
		if i >= 2 && (h.Explain.LexicalRank != 0 || h.Explain.DenseRank == 0) {
			t.Fatalf("backfilled hit %s explain %+v", h.DocID, h.Explain)
		}
	}
	r = mustSearch(t, c, contract.Query{Text: "zebra", Vector: []float32{1, 0}, TopK: 3})
	if fmt.Sprint(ids(r.Hits)) != "[c d b]" {
		t.Fatalf("no lexical match: %v, want the dense order [c d b]", ids(r.Hits))
	}
}

// TestHybridDefaultOption: HybridDefault "rrf" restores RRF over the full
// lists; any explicit fusion parameter is honoured whatever the default;
// the option is validated and survives a reopen.
func TestHybridDefaultOption(t *testing.T) {
	bad := CollectionOptions{Dim: 2, HybridDefault: "borda"}
	bad.EnsureDefaults()
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "HybridDefault") {
		t.Fatalf("bad HybridDefault: %v", err)
	}
	bad = CollectionOptions{Dim: 2, HybridRerankWindow: -1, HybridRerankDenseWeight: math.NaN()}
	bad.EnsureDefaults()
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "HybridRerankWindow") || !strings.Contains(err.Error(), "HybridRerankDenseWeight") {
		t.Fatalf("bad rerank window and weight: %v", err)
	}
	var def CollectionOptions
	def.EnsureDefaults()
	if def.HybridDefault != HybridRerankMaxNorm {
		t.Fatalf("default %q", def.HybridDefault)
	}

	docs := []contract.Document{doc("a", "apple", []float32{0, 1}), doc("b", "apple pie", []float32{1, 0}),
		doc("c", "pie", []float32{1, 0.1})}
	q := contract.Query{Text: "apple pie", Vector: []float32{1, 0}, TopK: 3}
	rrfQ := q
	rrfQ.Fusion.Method = "rrf"
	wQ := q
	wQ.Fusion.Weights = map[string]float64{"lexical": 1, "dense": 0.5}

	cr := newColl(t, CollectionOptions{Dim: 2, HybridDefault: HybridRRF})
	mustUpsert(t, cr, docs...)
	cm := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, cm, docs...)
	same := func(a, b contract.Result) bool {
		if len(a.Hits) != len(b.Hits) {
			return false
		}
		for i := range a.Hits {
			if a.Hits[i].DocID != b.Hits[i].DocID || a.Hits[i].Score != b.Hits[i].Score || a.Hits[i].Explain != b.Hits[i].Explain {
				return false
			}
		}
		return true
	}
	explicit := mustSearch(t, cr, rrfQ)
	if r := mustSearch(t, cr, q); !same(r, explicit) {
		t.Fatalf("HybridDefault rrf: %+v, want explicit rrf %+v", r.Hits, explicit.Hits)
	}
	for _, h := range explicit.Hits {
		want := contract.HybridScore(h.Explain.FusedScore, contract.DefaultRRFK, 1, 1)
		if math.Abs(h.Score-want) > 1e-12 {
			t.Fatalf("rrf score %v, want %v", h.Score, want)
		}
	}
	if r := mustSearch(t, cm, rrfQ); !same(r, explicit) {
		t.Fatal("explicit rrf on a rerank-maxnorm collection is not RRF")
	}
	if a, b := mustSearch(t, cm, wQ), mustSearch(t, cr, wQ); !same(a, b) {
		t.Fatalf("explicit weights differ by collection default: %+v vs %+v", a.Hits, b.Hits)
	}
	if r := mustSearch(t, cm, q); same(r, explicit) || r.Hits[0].DocID != "b" {
		t.Fatalf("default rerank-maxnorm: %+v", r.Hits)
	}
	// Fusion.Method "rerank-maxnorm" selects the strategy per query, on
	// either collection default.
	rmQ := q
	rmQ.Fusion.Method = FusionRerankMaxNorm
	if a, b := mustSearch(t, cr, rmQ), mustSearch(t, cm, q); !same(a, b) {
		t.Fatalf("explicit rerank-maxnorm on an rrf collection: %+v, want %+v", a.Hits, b.Hits)
	}
	// Every contract fusion method is accepted.
	for _, m := range contract.FusionMethods {
		mq := q
		mq.Fusion.Method = m
		if r := mustSearch(t, cr, mq); len(r.Hits) != 3 {
			t.Fatalf("fusion %s: %+v", m, r.Hits)
		}
	}

	// Persisted in collection.json.
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateCollection("x", CollectionOptions{Dim: 2, Sync: "none", HybridDefault: HybridRRF, HybridRerankWindow: 70, HybridRerankDenseWeight: 0.45}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err := db.Collection("x")
	if err != nil || x.Options().HybridDefault != HybridRRF || x.Options().HybridRerankWindow != 70 || x.Options().HybridRerankDenseWeight != 0.45 {
		t.Fatalf("reopened: %v %+v", err, x)
	}
}

// TestHybridRerankLexicalLate: under the default strategy the dense step
// scores the lexical candidates, so a lexical retriever that misses the
// budget leaves both retrievers missing (documented).
func TestHybridRerankLexicalLate(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	mustUpsert(t, c, doc("a", "alpha", []float32{1, 0}))
	release := make(chan struct{})
	c.testHookRetriever = func(name string) {
		if name == retrieverLexical {
			<-release
		}
	}
	r, err := c.Search(context.Background(), contract.Query{Text: "alpha", Vector: []float32{1, 0}, Budget: 30 * time.Millisecond})
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || !strings.Contains(r.Reason, "lexical") || !strings.Contains(r.Reason, "dense") || len(r.Hits) != 0 {
		t.Fatalf("want partial with both missing: %+v", r)
	}
}
