package eval

import (
	"fmt"
	"math"
)

// ID is the set of integer types accepted as vector ids. Ids are compared
// after conversion to int64; a negative id is padding ("no result", the
// FAISS convention of label -1) and never counts as a hit.
type ID interface {
	~int | ~int32 | ~int64 | ~uint32 | ~uint64
}

// Order says which way a score is better.
type Order uint8

const (
	// SmallerIsBetter: distances (L2, L2², cosine distance 1 − cos, or the
	// negated inner product −⟨q,x⟩). The tie bound is d_k + TieTolerance·|d_k|,
	// which is d_k·(1 + 1e-6) for d_k >= 0.
	SmallerIsBetter Order = iota
	// LargerIsBetter: similarities (inner product, cosine similarity). The
	// tie bound is s_k − TieTolerance·|s_k|; a hit needs s >= that bound.
	LargerIsBetter
)

// TieTolerance is the relative slack of the ANN tie rule: a returned item
// whose true distance is within TieTolerance·|d_k| of the k-th true
// distance d_k counts as a hit.
const TieTolerance = 1e-6

// String returns "smaller-is-better" or "larger-is-better".
func (o Order) String() string {
	switch o {
	case SmallerIsBetter:
		return "smaller-is-better"
	case LargerIsBetter:
		return "larger-is-better"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// TieBound returns the score a returned item must reach to count as a hit
// when the k-th true score is dk: dk + TieTolerance·|dk| for
// SmallerIsBetter (hit if score <= bound), dk − TieTolerance·|dk| for
// LargerIsBetter (hit if score >= bound). Using |dk| keeps the rule right
// for negative scores (e.g. −ip distances), where dk·(1+1e-6) would
// tighten instead of loosen the bound. Computed in float64.
func TieBound(dk float32, order Order) float64 {
	d := float64(dk)
	if order == LargerIsBetter {
		return d - TieTolerance*math.Abs(d)
	}
	return d + TieTolerance*math.Abs(d)
}

// Recall returns recall@k of one ANN query:
//
//	recall@k = |{distinct returned items among the first k that are hits}| / k
//
// where a returned item is a hit when its id is in the true top k
// (gtIDs[:k]) or, with distances given, when its true score reaches
// TieBound(gtDists[k-1], order). The score rule credits items tied with the
// k-th neighbour that the ground truth happened to list in another order;
// the id rule keeps the result robust to last-bit differences between the
// caller's and the ground truth's distance computations.
//
// Arguments:
//   - returned: ids the index returned for the query, best first, any
//     length; only the first k are considered. A repeated id counts once
//     (its later copies waste their slot); negative ids are padding.
//   - returnedDists: the TRUE (exactly recomputed, not approximate, e.g. not
//     PQ) score of each returned id to the query, len(returned); or nil
//     for a pure id intersection without tie credit.
//   - gtIDs, gtDists: exact ground truth, best first, len >= k. gtDists
//     must be nil exactly when returnedDists is nil; otherwise
//     len(gtDists) >= k, gtDists[:k] finite and sorted best first
//     (ascending for SmallerIsBetter, descending for LargerIsBetter).
//   - k >= 1.
//   - order: how to compare scores; pass distances with SmallerIsBetter
//     or similarities (inner product) with LargerIsBetter. Equivalently
//     pass −ip with SmallerIsBetter: both give the same hits.
//
// The result is in [0, 1]. Errors match ErrInvalidInput. The cost is
// O(k) time with two small hash sets.
func Recall[R, G ID](returned []R, returnedDists []float32, gtIDs []G, gtDists []float32, k int, order Order) (float64, error) {
	var s recallScratch
	return recallWith(&s, returned, returnedDists, gtIDs, gtDists, k, order)
}

// MeanRecall returns the mean of Recall over queries i = 0..n−1, with
// returned[i], returnedDists[i], gtIDs[i], gtDists[i] as in Recall.
// returnedDists and gtDists may each be nil as a whole (no tie credit for
// any query); otherwise all four slices have length n. Flat n×K ground
// truth (an ivecs file) can be passed as sub-slices gt[i*K:(i+1)*K]
// without copying. n = 0 gives an error: a mean over no queries is
// undefined. Errors name the query index and match ErrInvalidInput.
func MeanRecall[R, G ID](returned [][]R, returnedDists [][]float32, gtIDs [][]G, gtDists [][]float32, k int, order Order) (float64, error) {
	n := len(returned)
	if n == 0 {
		return 0, fmt.Errorf("%w: MeanRecall over 0 queries", ErrInvalidInput)
	}
	if len(gtIDs) != n {
		return 0, fmt.Errorf("%w: %d returned lists but %d ground-truth lists", ErrInvalidInput, n, len(gtIDs))
	}
	if (returnedDists == nil) != (gtDists == nil) {
		return 0, fmt.Errorf("%w: returnedDists and gtDists must both be nil or both be given", ErrInvalidInput)
	}
	if returnedDists != nil && (len(returnedDists) != n || len(gtDists) != n) {
		return 0, fmt.Errorf("%w: %d queries but %d returnedDists and %d gtDists lists", ErrInvalidInput, n, len(returnedDists), len(gtDists))
	}
	var s recallScratch
	sum := 0.0
	for i := range n {
		var rd, gd []float32
		if returnedDists != nil {
			rd, gd = returnedDists[i], gtDists[i]
			// A nil per-query entry would silently switch that query to
			// the id rule; insist on non-nil when distances are in use.
			if rd == nil {
				rd = []float32{}
			}
			if gd == nil {
				gd = []float32{}
			}
		}
		r, err := recallWith(&s, returned[i], rd, gtIDs[i], gd, k, order)
		if err != nil {
			return 0, fmt.Errorf("query %d: %w", i, err)
		}
		sum += r
	}
	return sum / float64(n), nil
}

// recallScratch holds sets reused across queries by MeanRecall.
type recallScratch struct {
	truth map[int64]struct{}
	seen  map[int64]struct{}
}

// recallWith is Recall using the sets in s (cleared first).
func recallWith[R, G ID](s *recallScratch, returned []R, returnedDists []float32, gtIDs []G, gtDists []float32, k int, order Order) (float64, error) {
	if k < 1 {
		return 0, fmt.Errorf("%w: k = %d, want >= 1", ErrInvalidInput, k)
	}
	if order != SmallerIsBetter && order != LargerIsBetter {
		return 0, fmt.Errorf("%w: unknown %v", ErrInvalidInput, order)
	}
	if len(gtIDs) < k {
		return 0, fmt.Errorf("%w: %d ground-truth ids, need k = %d", ErrInvalidInput, len(gtIDs), k)
	}
	useDists := returnedDists != nil
	if useDists != (gtDists != nil) {
		return 0, fmt.Errorf("%w: returnedDists and gtDists must both be nil or both be given", ErrInvalidInput)
	}
	bound := 0.0
	if useDists {
		if len(returnedDists) != len(returned) {
			return 0, fmt.Errorf("%w: %d returned ids but %d returned distances", ErrInvalidInput, len(returned), len(returnedDists))
		}
		if len(gtDists) < k {
			return 0, fmt.Errorf("%w: %d ground-truth distances, need k = %d", ErrInvalidInput, len(gtDists), k)
		}
		for i, d := range gtDists[:k] {
			if math.IsNaN(float64(d)) || math.IsInf(float64(d), 0) {
				return 0, fmt.Errorf("%w: ground-truth distance %d is %v", ErrInvalidInput, i, d)
			}
			if i > 0 && outOfOrder(gtDists[i-1], d, order) {
				return 0, fmt.Errorf("%w: ground-truth distances not sorted %v at %d: %v then %v", ErrInvalidInput, order, i, gtDists[i-1], d)
			}
		}
		bound = TieBound(gtDists[k-1], order)
	}

	if s.truth == nil {
		s.truth = make(map[int64]struct{}, k)
		s.seen = make(map[int64]struct{}, k)
	} else {
		clear(s.truth)
		clear(s.seen)
	}
	for _, id := range gtIDs[:k] {
		s.truth[int64(id)] = struct{}{}
	}
	n := min(k, len(returned))
	hits := 0
	for i, rid := range returned[:n] {
		id := int64(rid)
		if id < 0 {
			continue // padding
		}
		if _, dup := s.seen[id]; dup {
			continue
		}
		s.seen[id] = struct{}{}
		if _, ok := s.truth[id]; ok {
			hits++
			continue
		}
		if useDists && within(returnedDists[i], bound, order) {
			hits++
		}
	}
	return float64(hits) / float64(k), nil
}

// outOfOrder reports whether cur ranks strictly before prev, i.e. the pair
// (prev, cur) violates best-first order.
func outOfOrder(prev, cur float32, order Order) bool {
	if order == LargerIsBetter {
		return cur > prev
	}
	return cur < prev
}

// within reports whether score d reaches the tie bound. NaN never does.
func within(d float32, bound float64, order Order) bool {
	if order == LargerIsBetter {
		return float64(d) >= bound
	}
	return float64(d) <= bound
}
