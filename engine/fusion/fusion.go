package fusion

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Method selects the fusion rule.
type Method int

const (
	// RRF is (weighted) Reciprocal Rank Fusion. The default.
	RRF Method = iota
	// MinMax is a convex combination of min-max normalised scores.
	MinMax
	// ZScore is a convex combination of z-score normalised scores.
	ZScore
	// MaxNorm is a convex combination of scores divided by the list's
	// largest absolute score in the window (s / max|s|, so the best hit of a
	// positive-scored list maps to 1); absent documents get 0.
	MaxNorm
)

func (m Method) String() string {
	switch m {
	case RRF:
		return "rrf"
	case MinMax:
		return "minmax"
	case ZScore:
		return "zscore"
	case MaxNorm:
		return "maxnorm"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod maps "rrf" (or ""), "minmax", "zscore" and "maxnorm" to a
// Method.
func ParseMethod(s string) (Method, error) {
	switch s {
	case "rrf", "":
		return RRF, nil
	case "minmax":
		return MinMax, nil
	case "zscore":
		return ZScore, nil
	case "maxnorm":
		return MaxNorm, nil
	}
	return 0, fmt.Errorf("fusion: unknown method %q (want rrf, minmax, zscore or maxnorm)", s)
}

// DefaultK is the RRF constant k of Cormack et al. (2009).
const DefaultK = 60

// Options configures Fuse. The zero value means plain RRF with k = 60.
type Options struct {
	// Method is the fusion rule. Default RRF.
	Method Method
	// K is the RRF constant k (> 0). Default 60. Ignored by MinMax, ZScore
	// and MaxNorm.
	K float64
	// TopK is the number of fused hits returned (≥ 0; 0 means all).
	TopK int
	// Window is how many hits of each input list take part (the rank window).
	// Default max(100, TopK).
	Window int
}

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.Window == 0 {
		o.Window = max(100, o.TopK)
	}
}

// ErrInvalid is matched by every validation error of this package.
var ErrInvalid = errors.New("fusion: invalid argument")

// Validate reports every problem with o at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Method < RRF || o.Method > MaxNorm {
		errs = append(errs, fmt.Errorf("%w: unknown method %d", ErrInvalid, int(o.Method)))
	}
	if !(o.K > 0) || math.IsInf(o.K, 0) {
		errs = append(errs, fmt.Errorf("%w: K must be a finite number > 0, got %v", ErrInvalid, o.K))
	}
	if o.TopK < 0 {
		errs = append(errs, fmt.Errorf("%w: TopK must be ≥ 0, got %d", ErrInvalid, o.TopK))
	}
	if o.Window < 0 {
		errs = append(errs, fmt.Errorf("%w: Window must be ≥ 0, got %d", ErrInvalid, o.Window))
	}
	return errors.Join(errs...)
}

// Hit is one entry of an input list: a key and the retriever's raw score
// (higher is better; only MinMax, ZScore and MaxNorm read it).
type Hit[K cmp.Ordered] struct {
	Key   K
	Score float64
}

// List is one retriever's ranking, best first. Weight is w_m (default 1 when
// 0; must be ≥ 0 and finite). A key repeated within a list keeps only its
// best (first) rank.
type List[K cmp.Ordered] struct {
	Name   string
	Weight float64
	Hits   []Hit[K]
}

// Contribution explains one input list's part in a fused score.
type Contribution struct {
	List         string  // the list's Name
	Rank         int     // 1-based rank in the list; 0 if absent from its window
	Score        float64 // the raw score in the list (0 if absent)
	Contribution float64 // what the list added to the fused score
}

// Fused is one output hit.
type Fused[K cmp.Ordered] struct {
	Key K
	// Score is the fused score (higher is better).
	Score float64
	// Normalized is Score mapped into [0, 1]: for RRF, Score divided by the
	// best achievable score Σ w_m/(k+1); for MinMax, Score / Σ w_m; for
	// ZScore, a logistic map of Score / Σ w_m; for MaxNorm, Score / Σ w_m
	// clamped to [0, 1]. Non-decreasing in Score.
	Normalized float64
	// Explain has one entry per input list, in input order.
	Explain []Contribution
}

// Fuse merges lists into one ranking of at most opt.TopK hits (all when
// TopK is 0), sorted by fused score descending, then key ascending.
// It returns an error wrapping ErrInvalid for bad options, weights or
// non-finite scores (MinMax, ZScore and MaxNorm only).
func Fuse[K cmp.Ordered](lists []List[K], opt Options) ([]Fused[K], error) {
	opt.EnsureDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	weights := make([]float64, len(lists))
	var wsum float64
	for m, l := range lists {
		w := l.Weight
		if w == 0 {
			w = 1
		}
		if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("%w: list %d (%q) weight must be finite and ≥ 0, got %v", ErrInvalid, m, l.Name, l.Weight)
		}
		weights[m] = w
		wsum += w
		if opt.Method != RRF {
			for i, h := range l.Hits[:min(len(l.Hits), opt.Window)] {
				if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
					return nil, fmt.Errorf("%w: list %d (%q) hit %d has non-finite score %v", ErrInvalid, m, l.Name, i, h.Score)
				}
			}
		}
	}

	index := make(map[K]int)
	var out []Fused[K]
	floors := make([]float64, len(lists))
	for m, l := range lists {
		hits := l.Hits[:min(len(l.Hits), opt.Window)]
		norm, floor := normaliser(opt.Method, hits)
		floors[m] = floor
		for i, h := range hits {
			j, ok := index[h.Key]
			if !ok {
				j = len(out)
				index[h.Key] = j
				out = append(out, Fused[K]{Key: h.Key, Explain: make([]Contribution, len(lists))})
			}
			c := &out[j].Explain[m]
			if c.Rank != 0 {
				continue // repeated key: the first (best) rank counts
			}
			c.Rank = i + 1
			c.Score = h.Score
			if opt.Method == RRF {
				c.Contribution = weights[m] / (opt.K + float64(i+1))
			} else {
				c.Contribution = weights[m] * norm(h.Score)
			}
		}
	}
	for j := range out {
		out[j].Explain = fillNames(out[j].Explain, lists)
		var s float64
		for m, c := range out[j].Explain {
			if c.Rank == 0 {
				// Absent from list m: its floor (0 for RRF and MinMax).
				c.Contribution = weights[m] * floors[m]
				out[j].Explain[m].Contribution = c.Contribution
			}
			s += c.Contribution
		}
		out[j].Score = s
		out[j].Normalized = normalize(opt, s, wsum)
	}
	slices.SortFunc(out, func(a, b Fused[K]) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if opt.TopK > 0 && len(out) > opt.TopK {
		out = out[:opt.TopK]
	}
	return out, nil
}

func fillNames[K cmp.Ordered](cs []Contribution, lists []List[K]) []Contribution {
	for m := range cs {
		cs[m].List = lists[m].Name
	}
	return cs
}

// normaliser returns the per-list score normalisation and the value given to
// documents absent from the list.
func normaliser[K cmp.Ordered](m Method, hits []Hit[K]) (func(float64) float64, float64) {
	if len(hits) == 0 {
		return func(float64) float64 { return 0 }, 0
	}
	switch m {
	case MinMax:
		lo, hi := hits[0].Score, hits[0].Score
		for _, h := range hits {
			lo, hi = min(lo, h.Score), max(hi, h.Score)
		}
		if hi == lo {
			return func(float64) float64 { return 1 }, 0
		}
		return func(s float64) float64 { return (s - lo) / (hi - lo) }, 0
	case ZScore:
		var mean, m2 float64
		lo := hits[0].Score
		for i, h := range hits { // Welford
			d := h.Score - mean
			mean += d / float64(i+1)
			m2 += d * (h.Score - mean)
			lo = min(lo, h.Score)
		}
		sd := math.Sqrt(m2 / float64(len(hits)))
		if sd == 0 {
			return func(float64) float64 { return 0 }, 0
		}
		f := func(s float64) float64 { return (s - mean) / sd }
		return f, f(lo)
	case MaxNorm:
		var m float64
		for _, h := range hits {
			m = max(m, math.Abs(h.Score))
		}
		if m == 0 {
			return func(float64) float64 { return 0 }, 0
		}
		return func(s float64) float64 { return s / m }, 0
	}
	return nil, 0
}

func normalize(opt Options, s, wsum float64) float64 {
	if wsum == 0 {
		return 0
	}
	var v float64
	switch opt.Method {
	case RRF:
		v = s / (wsum / (opt.K + 1))
	case MinMax, MaxNorm:
		v = s / wsum
	case ZScore:
		v = 1 / (1 + math.Exp(-s/wsum))
	}
	return min(1, max(0, v))
}
