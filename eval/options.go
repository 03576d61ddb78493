package eval

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Each is wrapped with detail; test with
// errors.Is.
var (
	// ErrInvalidInput reports malformed arguments: a non-positive k, slices
	// of mismatched length, too short or unsorted ground truth, bad
	// options.
	ErrInvalidInput = errors.New("eval: invalid input")

	// ErrNoRelevant reports a query whose judgments hold no relevant
	// document, so recall, AP and nDCG are undefined for it.
	ErrNoRelevant = errors.New("eval: query has no relevant judged document")

	// ErrNoJudgedQueries reports qrels with no judged query (no query with
	// at least one relevant document), so there is nothing to average.
	ErrNoJudgedQueries = errors.New("eval: no judged queries")

	// ErrBadGain reports a gain function that returned a negative, NaN or
	// infinite gain for a relevant grade.
	ErrBadGain = errors.New("eval: gain must be finite and >= 0")
)

// DefaultCutoffs are the ranks k at which the @k metrics are reported when
// Options.Cutoffs is empty.
var DefaultCutoffs = []int{1, 5, 10, 20, 100, 1000}

// Options configures the IR metrics (Evaluate, PerQuery, EvaluateQuery).
// The zero value is usable: EnsureDefaults fills every unset field.
type Options struct {
	// RelevanceThreshold is the smallest qrels grade counted as relevant
	// (trec_eval's -l). Judged documents with a lower grade (0, or
	// Cranfield's -1) are non-relevant, as are unjudged documents.
	// Default (0 means default): 1. Must be >= 1 after defaults.
	RelevanceThreshold int

	// Cutoffs are the ranks k at which P, R, success, MRR and nDCG are
	// reported, in this order. Each must be >= 1, without duplicates.
	// Default (nil or empty): DefaultCutoffs = 1, 5, 10, 20, 100, 1000.
	Cutoffs []int

	// GradedGain maps the grade of a relevant document to its gain g for
	// the graded (linear gain g) and exponential (gain 2^g − 1) nDCG. It
	// is called only for grades >= RelevanceThreshold and must return a
	// finite value >= 0. Default (nil): LinearGain, gain = grade, which is
	// trec_eval's ndcg_cut. For Cranfield use CranfieldGain.
	GradedGain func(grade int) float64
}

// EnsureDefaults returns a copy of o with every unset field set to its
// documented default. The Cutoffs slice is copied, never aliased.
func (o Options) EnsureDefaults() Options {
	if o.RelevanceThreshold == 0 {
		o.RelevanceThreshold = 1
	}
	if len(o.Cutoffs) == 0 {
		o.Cutoffs = DefaultCutoffs
	}
	o.Cutoffs = append([]int(nil), o.Cutoffs...)
	if o.GradedGain == nil {
		o.GradedGain = LinearGain
	}
	return o
}

// Validate reports every problem in o (after EnsureDefaults semantics:
// zero fields are treated as their defaults), joined into one error that
// matches errors.Is(err, ErrInvalidInput). It returns nil for valid
// options.
func (o Options) Validate() error {
	o = o.EnsureDefaults()
	var errs []error
	if o.RelevanceThreshold < 1 {
		errs = append(errs, fmt.Errorf("%w: RelevanceThreshold = %d, want >= 1", ErrInvalidInput, o.RelevanceThreshold))
	}
	seen := make(map[int]bool, len(o.Cutoffs))
	for i, k := range o.Cutoffs {
		if k < 1 {
			errs = append(errs, fmt.Errorf("%w: Cutoffs[%d] = %d, want >= 1", ErrInvalidInput, i, k))
		}
		if seen[k] {
			errs = append(errs, fmt.Errorf("%w: Cutoffs[%d] = %d is a duplicate", ErrInvalidInput, i, k))
		}
		seen[k] = true
	}
	return errors.Join(errs...)
}

// LinearGain is the default graded gain: g = grade (trec_eval's ndcg and
// ndcg_cut use the qrels grade itself as the gain).
func LinearGain(grade int) float64 { return float64(grade) }

// CranfieldGain is the graded gain for the Cranfield collection, whose
// cranqrel grades run the "wrong" way: 1 = complete answer, 2 = high
// relevance, 3 = useful, 4 = minimum interest (and -1 = no relevance).
// It returns g = 5 − rel for rel in 1..4 (so 4, 3, 2, 1) and 0 for any
// other grade. Use it as Options.GradedGain; the exponential nDCG then
// uses 2^g − 1 = 15, 7, 3, 1.
func CranfieldGain(rel int) float64 {
	if rel < 1 || rel > 4 {
		return 0
	}
	return float64(5 - rel)
}
