package contract

import "math"

// clamp01 maps x into [0,1]; NaN becomes 0.
func clamp01(x float64) float64 {
	switch {
	case !(x > 0): // also NaN
		return 0
	case x > 1:
		return 1
	}
	return x
}

// DenseScore maps a dense retriever's raw value into [0,1]:
//   - metric "cosine" or "ip" (inner product of unit vectors): raw is the
//     similarity in [-1,1]; score = (1 + raw) / 2;
//   - metric "l2": raw is the squared Euclidean distance d² ≥ 0;
//     score = 1 / (1 + d²).
//
// The result is clamped to [0,1] (an "ip" on unnormalised vectors can exceed
// 1). An unknown metric or a NaN raw value gives 0.
func DenseScore(metric string, raw float32) float64 {
	r := float64(raw)
	switch metric {
	case "cosine", "ip":
		return clamp01((1 + r) / 2)
	case "l2":
		if math.IsNaN(r) {
			return 0
		}
		if r < 0 {
			r = 0
		}
		return clamp01(1 / (1 + r))
	}
	return 0
}

// LexicalScore maps a BM25 score into [0,1] as score / upperBound, where
// upperBound is the query's maximum achievable score: the sum over query
// terms of each term's maximum contribution (its IDF times the saturation
// limit (k1 + 1), or the tighter per-term max-score the index stores). The
// result is clamped to [0,1]; a non-positive or NaN upper bound gives 0.
func LexicalScore(score, upperBound float64) float64 {
	if !(upperBound > 0) || math.IsInf(upperBound, 0) {
		return 0
	}
	return clamp01(score / upperBound)
}

// RRFMax is the largest weighted-RRF score a document can get: Σ_m w_m/(k+1),
// reached by ranking first in every list.
func RRFMax(k float64, weights ...float64) float64 {
	s := 0.0
	for _, w := range weights {
		s += w / (k + 1)
	}
	return s
}

// HybridScore maps a (weighted) RRF score into [0,1] as rrf / RRFMax(k,
// weights...), clamped. Package fusion's Fused.Normalized computes the same
// value; this helper is for callers that hold only the raw score.
func HybridScore(rrf, k float64, weights ...float64) float64 {
	m := RRFMax(k, weights...)
	if !(m > 0) {
		return 0
	}
	return clamp01(rrf / m)
}
