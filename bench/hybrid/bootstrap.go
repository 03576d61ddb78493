package hybrid

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// CI is the result of a paired bootstrap: the observed mean per-query
// difference b − a and its percentile confidence interval.
type CI struct {
	MeanDiff  float64 `json:"mean_diff"` // observed mean of b[i] − a[i]
	Lo        float64 `json:"lo"`        // lower percentile bound
	Hi        float64 `json:"hi"`        // upper percentile bound
	Level     float64 `json:"level"`     // e.g. 0.95
	Resamples int     `json:"resamples"`
	Seed      uint64  `json:"seed"`
	Queries   int     `json:"queries"`
}

// ExcludesZero reports whether the interval lies strictly on one side of 0.
func (c CI) ExcludesZero() bool { return c.Lo > 0 || c.Hi < 0 }

// PairedBootstrap computes the paired bootstrap percentile interval
// (Efron & Tibshirani 1993, ch. 13; Sakai, SIGIR 2006, for IR evaluation)
// of the mean per-query difference b[i] − a[i]: it draws resamples
// multisets of len(a) query indices with replacement (PCG seeded with seed),
// takes the mean difference of each, and returns the (1−level)/2 and
// (1+level)/2 empirical quantiles (type-7 linear interpolation, as R's
// default). a and b: per-query scores of two systems, same query order,
// same length ≥ 1. level in (0, 1); resamples ≥ 1.
// Cost: O(resamples · n) time, O(resamples) memory.
func PairedBootstrap(a, b []float64, resamples int, level float64, seed uint64) (CI, error) {
	var errs []error
	if len(a) != len(b) {
		errs = append(errs, fmt.Errorf("hybrid: bootstrap inputs differ in length: %d vs %d", len(a), len(b)))
	}
	if len(a) == 0 {
		errs = append(errs, errors.New("hybrid: bootstrap needs at least one query"))
	}
	if resamples < 1 {
		errs = append(errs, fmt.Errorf("hybrid: bootstrap resamples = %d, want ≥ 1", resamples))
	}
	if !(level > 0 && level < 1) {
		errs = append(errs, fmt.Errorf("hybrid: bootstrap level = %v, want in (0, 1)", level))
	}
	if len(errs) > 0 {
		return CI{}, errors.Join(errs...)
	}
	n := len(a)
	d := make([]float64, n)
	var sum float64
	for i := range d {
		d[i] = b[i] - a[i]
		sum += d[i]
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	means := make([]float64, resamples)
	for r := range means {
		var s float64
		for range n {
			s += d[rng.IntN(n)]
		}
		means[r] = s / float64(n)
	}
	slices.Sort(means)
	return CI{
		MeanDiff: sum / float64(n), Lo: quantile(means, (1-level)/2), Hi: quantile(means, (1+level)/2),
		Level: level, Resamples: resamples, Seed: seed, Queries: n,
	}, nil
}

// quantile is the type-7 sample quantile of sorted xs at p ∈ [0, 1].
func quantile(xs []float64, p float64) float64 {
	h := p * float64(len(xs)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-lo)*(xs[i+1]-xs[i])
}
