package hybrid

import (
	"fmt"
	"slices"

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
}

// String is a short human label.
func (s Spec) String() string {
	switch s.Family {
	case FamLexical:
		return "lexical (BM25, stemmed)"
	case FamDense:
		return "dense (USE-512, exact IP)"
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
	}
	return s.Family
}

// run produces the ranked doc ordinals of every query of c under s.
func (c *collection) run(s Spec) ([][]int, error) {
	out := make([][]int, len(c.Queries))
	for qi := range c.Queries {
		r, err := runQuery(&c.Queries[qi], s)
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

func runQuery(q *query, s Spec) ([]int, error) {
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
	case FamRerankM, FamRerankZ, FamRerankX:
		n := min(s.Window, len(q.Lex))
		cand := q.Lex[:n]
		dense := make([]fusion.Hit[int], n)
		for i, h := range cand {
			dense[i] = fusion.Hit[int]{Key: h.Key, Score: float64(q.DenseAll[h.Key])}
		}
		slices.SortFunc(dense, byScore)
		o := fusion.Options{TopK: n, Window: n, Method: fusion.MinMax}
		switch s.Family {
		case FamRerankZ:
			o.Method = fusion.ZScore
		case FamRerankX:
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
