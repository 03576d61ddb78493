package hybrid

import (
	"fmt"
	"math"
	"slices"

	"github.com/stratasearch/strata/asm"
	"github.com/stratasearch/strata/engine/fusion"
)

// Family names of the compared methods.
const (
	FamLexical = "lexical"        // BM25 alone
	FamDense   = "dense"          // exact inner product alone
	FamRRF     = "rrf"            // (weighted) RRF, Cormack et al. 2009
	FamMinMax  = "minmax"         // convex combination of min-max scores (Fox & Shaw 1994; Lee 1997)
	FamZScore  = "zscore"         // convex combination of z-scores
	FamRerankM = "rerank-minmax"  // dense re-ranks lexical top-N by min-max interpolation
	FamRerankZ = "rerank-zscore"  // dense re-ranks lexical top-N by z-score interpolation
	FamMaxNorm = "maxnorm"        // convex combination of s / max|s| (fusion.MaxNorm)
	FamRerankX = "rerank-maxnorm" // dense re-ranks lexical top-N by max-norm interpolation
	// FamRerankPRF re-ranks the lexical top N with a dense query expanded by
	// vector pseudo-relevance feedback (Rocchio 1971 in embedding space, as
	// in Li et al. 2021 "Pseudo relevance feedback with deep language
	// models and dense retrievers"): q' = (1−β)·q/‖q‖ + β·mean of the
	// unit vectors of the lexical top Feedback documents; then max-norm
	// interpolation as FamRerankX.
	FamRerankPRF = "rerank-prf-maxnorm"
)

// Spec is one fusion configuration.
type Spec struct {
	Family string `json:"family"`
	// K is the RRF constant (FamRRF).
	K float64 `json:"k,omitempty"`
	// DenseWeight is w_dense in weighted RRF (lexical weight 1) (FamRRF).
	DenseWeight float64 `json:"dense_weight,omitempty"`
	// Alpha is the dense weight of a convex combination, lexical 1 − Alpha
	// (FamMinMax, FamZScore, FamMaxNorm, FamRerank*).
	Alpha float64 `json:"alpha,omitempty"`
	// Window is the rank window of each list (fusion.Options.Window), or
	// the lexical candidate count N for FamRerank*.
	Window int `json:"window,omitempty"`
	// DenseTop, when > 0, fuses only the dense top DenseTop (≤ Window).
	DenseTop int `json:"dense_top,omitempty"`
	// Feedback is the number of lexical top documents whose vectors expand
	// the dense query, and Beta their weight (FamRerankPRF).
	Feedback int     `json:"feedback,omitempty"`
	Beta     float64 `json:"beta,omitempty"`
}

// String is a short human label.
func (s Spec) String() string {
	switch s.Family {
	case FamLexical:
		return "lexical (BM25, stemmed)"
	case FamDense:
		return "dense (exact IP)"
	case FamRRF:
		l := fmt.Sprintf("RRF k=%g", s.K)
		if s.DenseWeight != 1 {
			l = fmt.Sprintf("weighted RRF k=%g w_dense=%g", s.K, s.DenseWeight)
		}
		l += fmt.Sprintf(" window=%d", s.Window)
		if s.DenseTop > 0 {
			l += fmt.Sprintf(" dense_top=%d", s.DenseTop)
		}
		return l
	case FamMinMax, FamZScore, FamMaxNorm:
		return fmt.Sprintf("%s convex α_dense=%g window=%d", s.Family, s.Alpha, s.Window)
	case FamRerankM, FamRerankZ, FamRerankX:
		return fmt.Sprintf("%s α_dense=%g N=%d", s.Family, s.Alpha, s.Window)
	case FamRerankPRF:
		return fmt.Sprintf("%s α_dense=%g N=%d feedback=%d β=%g", s.Family, s.Alpha, s.Window, s.Feedback, s.Beta)
	}
	return s.Family
}

// run produces the ranked doc ordinals of every query of c under s.
func (c *collection) run(s Spec) ([][]int, error) {
	out := make([][]int, len(c.Queries))
	for qi := range c.Queries {
		r, err := c.runQuery(&c.Queries[qi], s)
		if err != nil {
			return nil, fmt.Errorf("hybrid: %s %s: %w", c.Name, s, err)
		}
		out[qi] = r
	}
	return out, nil
}

func keys(hs []fusion.Hit[int]) []int {
	r := make([]int, len(hs))
	for i, h := range hs {
		r[i] = h.Key
	}
	return r
}

func fusedKeys(fs []fusion.Fused[int]) []int {
	r := make([]int, len(fs))
	for i, f := range fs {
		r[i] = f.Key
	}
	return r
}

func (c *collection) runQuery(q *query, s Spec) ([]int, error) {
	switch s.Family {
	case FamLexical:
		return keys(q.Lex), nil
	case FamDense:
		return keys(q.Dense), nil
	case FamRRF, FamMinMax, FamZScore, FamMaxNorm:
		dense := q.Dense
		if s.DenseTop > 0 {
			dense = dense[:min(len(dense), s.DenseTop)]
		}
		o := fusion.Options{TopK: Depth, Window: s.Window, K: s.K}
		lw, dw := 1.0, s.DenseWeight
		switch s.Family {
		case FamMinMax:
			o.Method, lw, dw = fusion.MinMax, 1-s.Alpha, s.Alpha
		case FamZScore:
			o.Method, lw, dw = fusion.ZScore, 1-s.Alpha, s.Alpha
		case FamMaxNorm:
			o.Method, lw, dw = fusion.MaxNorm, 1-s.Alpha, s.Alpha
		}
		f, err := fusion.Fuse([]fusion.List[int]{
			{Name: "bm25", Weight: lw, Hits: q.Lex},
			{Name: "dense", Weight: dw, Hits: dense},
		}, o)
		if err != nil {
			return nil, err
		}
		return fusedKeys(f), nil
	case FamRerankM, FamRerankZ, FamRerankX, FamRerankPRF:
		n := min(s.Window, len(q.Lex))
		cand := q.Lex[:n]
		dense := make([]fusion.Hit[int], n)
		if s.Family == FamRerankPRF {
			qv := c.prfVector(q, s.Feedback, s.Beta)
			one := make([]float32, 1)
			for i, h := range cand {
				asm.DotBatch(qv, c.DocVecs[h.Key*c.D:(h.Key+1)*c.D], one)
				dense[i] = fusion.Hit[int]{Key: h.Key, Score: float64(one[0])}
			}
		} else {
			for i, h := range cand {
				dense[i] = fusion.Hit[int]{Key: h.Key, Score: float64(q.DenseAll[h.Key])}
			}
		}
		slices.SortFunc(dense, byScore)
		o := fusion.Options{TopK: n, Window: n, Method: fusion.MinMax}
		switch s.Family {
		case FamRerankZ:
			o.Method = fusion.ZScore
		case FamRerankX, FamRerankPRF:
			o.Method = fusion.MaxNorm
		}
		f, err := fusion.Fuse([]fusion.List[int]{
			{Name: "bm25", Weight: 1 - s.Alpha, Hits: cand},
			{Name: "dense", Weight: s.Alpha, Hits: dense},
		}, o)
		if err != nil {
			return nil, err
		}
		return append(fusedKeys(f), keys(q.Lex[n:])...), nil
	}
	return nil, fmt.Errorf("unknown family %q", s.Family)
}

// prfVector is the expanded dense query of FamRerankPRF: (1−β)·q/‖q‖ + β·
// mean over the lexical top fb documents of d/‖d‖ (D float32). Zero
// vectors contribute nothing.
func (c *collection) prfVector(q *query, fb int, beta float64) []float32 {
	d := c.D
	acc := make([]float64, d)
	addUnit := func(v []float32, w float64) {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		if s == 0 {
			return
		}
		w /= math.Sqrt(s)
		for i, x := range v {
			acc[i] += w * float64(x)
		}
	}
	addUnit(q.Vec, 1-beta)
	m := min(fb, len(q.Lex))
	for _, h := range q.Lex[:m] {
		addUnit(c.DocVecs[h.Key*d:(h.Key+1)*d], beta/float64(m))
	}
	out := make([]float32, d)
	for i, x := range acc {
		out[i] = float32(x)
	}
	return out
}
