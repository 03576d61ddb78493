package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/fusion"
	"github.com/stratasearch/strata/engine/tier"
	"github.com/stratasearch/strata/internal/base"
)

// denseScorer computes the exact dense similarity of one stored vector to
// the query, the same quantity the MemTable's brute-force scan ranks by
// (package tier: cosine on normalised vectors, inner product, squared L2).
type denseScorer struct {
	metric tier.Metric
	q      []float32 // normalised for cosine
}

func newDenseScorer(metric tier.Metric, q []float32) denseScorer {
	if metric == tier.Cosine {
		q = base.UnitVector(nil, q)
	}
	return denseScorer{metric: metric, q: q}
}

// score returns the raw value reported in Explain.DenseScore (cosine
// similarity, inner product, or d² for l2) and the fusion score, higher
// is better (the similarity; 1/(1+d²) for l2, so max-normalisation maps the
// nearest candidate to 1). ok is false when x has the wrong length (no
// vector).
func (s denseScorer) score(x []float32) (raw, fscore float64, ok bool) {
	if len(x) != len(s.q) || len(x) == 0 {
		return 0, 0, false
	}
	switch s.metric {
	case tier.L2:
		d2 := float64(asm.L2Sq(s.q, x))
		return d2, 1 / (1 + d2), true
	case tier.Cosine:
		sim := float64(asm.Dot(s.q, base.UnitVector(nil, x)))
		return sim, sim, true
	default:
		sim := float64(asm.Dot(s.q, x))
		return sim, sim, true
	}
}

// denseRerank is the dense retriever of the HybridRerankMaxNorm strategy.
// It waits for the lexical list lr, scores its top RerankWindow candidates
// exactly against vec (restricted dense scoring: each candidate's stored
// vector, the *tier.Document the tier handed to the lexical index; no
// index, no full scan), and, only when the lexical list holds fewer than
// topK hits, runs the full brute-force dense search (depth topK) to
// back-fill the result.
func (c *Collection) denseRerank(ctx context.Context, sn *tier.Snapshot, keyOf func(*tier.Document) (uint32, bool), lr retrieved, infos []verInfo, vec []float32, topK, window int, allow denseAllow) retrieved {
	r := retrieved{name: retrieverDense}
	if lr.err != nil {
		if cancelled(lr.err) {
			r.err = lr.err // cut short too: no candidates to score
		}
		return r // otherwise reported by the lexical retriever
	}
	n := min(window, len(lr.hits))
	ds := newDenseScorer(c.metric, vec)
	r.candRaw = make(map[uint32]float64, n)
	for _, h := range lr.hits[:n] {
		if int(h.Key) >= len(infos) {
			r.err = fmt.Errorf("engine: hit version %d beyond the index (%d)", h.Key, len(infos))
			return r
		}
		raw, fs, ok := ds.score(infos[h.Key].Doc.Vector)
		if !ok {
			continue // no vector: absent from the dense list (MaxNorm gives 0)
		}
		r.cand = append(r.cand, fusion.Hit[uint32]{Key: h.Key, Score: fs})
		r.candRaw[h.Key] = raw
	}
	slices.SortStableFunc(r.cand, func(a, b fusion.Hit[uint32]) int {
		if a.Score != b.Score {
			return -cmp.Compare(a.Score, b.Score)
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if len(lr.hits) < topK {
		full := c.dense(ctx, sn, keyOf, vec, topK, allow)
		if full.err != nil {
			r.err = full.err
			return r
		}
		r.hits, r.raw = full.hits, full.raw
	}
	return r
}

// rerankEnvelopes builds the envelopes of the HybridRerankMaxNorm strategy
// (package doc "Hybrid default"); α = RerankDenseWeight, Σw = 1:
//
//  1. head: the lexical top N = min(RerankWindow, len) fused with their
//     exact dense scores (denseRerank) by fusion.MaxNorm, Window N,
//     weights lexical 1−α and dense α. Explain: the lexical rank in the
//     BM25 list, the dense rank among the N candidates (0 for a candidate
//     without a vector, or when the dense retriever missed the budget),
//     their raw scores and the fused score; Score = fused score / Σw of
//     both retrievers ∈ [0, 1] (so a partial result keeps its scale).
//  2. tail: the lexical list after rank N, in BM25 order. Explain keeps the
//     lexical rank and score (dense rank 0: not scored); FusedScore is what
//     MaxNorm gives a document with no dense evidence, (1−α)·s/max s over
//     the head, and Score is that capped by the previous hit's Score, so
//     scores never increase down the list.
//  3. back-fill: while fewer than TopK hits, the dense retriever's full-scan
//     hits not yet listed, in dense order, FusedScore = α·contract.DenseScore,
//     Score capped the same way (Explain: dense rank and score). It covers
//     text with no (or few) matching terms.
func (c *Collection) rerankEnvelopes(q *contract.Query, infos []verInfo, got map[string]retrieved) ([]contract.Envelope, error) {
	window, alpha := c.rerankParams(q.Fusion)
	wLex, wDen := 1-alpha, alpha
	wsum := wLex + wDen
	var out []contract.Envelope
	seen := map[uint32]bool{}
	prev := 1.0
	capped := func(s float64) float64 {
		s = min(max(s, 0), prev)
		prev = s
		return s
	}
	den, denOK := got[retrieverDense]

	if lex, ok := got[retrieverLexical]; ok && len(lex.hits) > 0 {
		n := min(window, len(lex.hits))
		head := lex.hits[:n]
		lists := []fusion.List[uint32]{{Name: retrieverLexical, Weight: wLex, Hits: head}}
		if denOK {
			lists = append(lists, fusion.List[uint32]{Name: retrieverDense, Weight: wDen, Hits: den.cand})
		}
		fused, err := fusion.Fuse(lists, fusion.Options{Method: fusion.MaxNorm, Window: n})
		if err != nil {
			return nil, fmt.Errorf("engine: fuse: %w", err)
		}
		lexRaw := make(map[uint32]float64, n)
		lexMax := 0.0
		for i, h := range head {
			lexRaw[h.Key] = lex.raw[i]
			lexMax = max(lexMax, math.Abs(h.Score))
		}
		for _, f := range fused {
			if len(out) == q.TopK {
				break
			}
			e, err := envelopeOf(infos, f.Key)
			if err != nil {
				return nil, err
			}
			e.Score = capped(f.Score / wsum)
			e.Explain.FusedScore = f.Score
			for _, ct := range f.Explain {
				switch {
				case ct.Rank == 0:
				case ct.List == retrieverLexical:
					e.Explain.LexicalRank = ct.Rank
					e.Explain.LexicalScore = lexRaw[f.Key]
				case ct.List == retrieverDense:
					e.Explain.DenseRank = ct.Rank
					e.Explain.DenseScore = den.candRaw[f.Key]
				}
			}
			seen[f.Key] = true
			out = append(out, e)
		}
		for i := n; i < len(lex.hits) && len(out) < q.TopK; i++ {
			h := lex.hits[i]
			e, err := envelopeOf(infos, h.Key)
			if err != nil {
				return nil, err
			}
			fs := 0.0
			if lexMax > 0 {
				fs = wLex * h.Score / lexMax
			}
			e.Score = capped(fs / wsum)
			e.Explain = contract.Explain{LexicalRank: i + 1, LexicalScore: lex.raw[i], FusedScore: fs}
			seen[h.Key] = true
			out = append(out, e)
		}
	}
	for i, h := range den.hits {
		if len(out) >= q.TopK {
			break
		}
		if seen[h.Key] {
			continue
		}
		e, err := envelopeOf(infos, h.Key)
		if err != nil {
			return nil, err
		}
		fs := wDen * contract.DenseScore(c.o.Metric, float32(den.raw[i]))
		e.Score = capped(fs / wsum)
		e.Explain = contract.Explain{DenseRank: i + 1, DenseScore: den.raw[i], FusedScore: fs}
		seen[h.Key] = true
		out = append(out, e)
	}
	return out, nil
}

// rerankParams returns N and α of the rerank strategy for f: the
// collection's HybridRerankWindow and HybridRerankDenseWeight (RerankWindow
// and RerankDenseWeight when unset), unless f selects rerank-maxnorm
// explicitly with a Window (N = Window) or Weights (α = w_dense /
// (w_lexical + w_dense), a missing weight counting 1, as everywhere in
// FusionParams).
func (c *Collection) rerankParams(f contract.FusionParams) (window int, alpha float64) {
	window, alpha = RerankWindow, RerankDenseWeight
	if c.o.HybridRerankWindow > 0 {
		window = c.o.HybridRerankWindow
	}
	if c.o.HybridRerankDenseWeight > 0 {
		alpha = c.o.HybridRerankDenseWeight
	}
	if f.Method != FusionRerankMaxNorm {
		return
	}
	if f.Window > 0 {
		window = f.Window
	}
	if len(f.Weights) > 0 {
		if wl, wd := f.Weight(retrieverLexical), f.Weight(retrieverDense); wl+wd > 0 {
			alpha = wd / (wl + wd)
		}
	}
	return
}

// RerankParams returns the window N and dense weight α the rerank-maxnorm
// hybrid of c uses for f: the collection's HybridRerankWindow and
// HybridRerankDenseWeight (or the engine defaults), unless f selects
// rerank-maxnorm with a Window or Weights. A sharded router reproducing the
// strategy over merged lists reads them here.
func (c *Collection) RerankParams(f contract.FusionParams) (window int, alpha float64) {
	return c.rerankParams(f)
}
