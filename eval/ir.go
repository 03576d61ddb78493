package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// AtK holds the metrics of one query (or their means) at one cutoff k.
// Every value is in [0, 1].
type AtK struct {
	// K is the cutoff rank.
	K int
	// P is precision@k: relevant documents in the top k, divided by k
	// (a list shorter than k is padded with non-relevant documents, as
	// trec_eval's P).
	P float64
	// R is recall@k: relevant documents in the top k, divided by the
	// number of relevant judged documents of the query.
	R float64
	// Success is success@k (hit rate): 1 if the top k hold a relevant
	// document, else 0.
	Success float64
	// MRR is the reciprocal rank cut at k: 1/rank of the first relevant
	// document if that rank is <= k, else 0. Averaged, it is MRR@k.
	MRR float64
	// NDCGBinary is nDCG@k with binary gain: every relevant document has
	// gain 1, every other document gain 0.
	NDCGBinary float64
	// NDCGGraded is nDCG@k with linear graded gain: a relevant document
	// has gain g = Options.GradedGain(grade) (trec_eval's ndcg_cut when
	// GradedGain is the default LinearGain).
	NDCGGraded float64
	// NDCGExp is nDCG@k with exponential gain 2^g − 1 over the same g
	// (Burges et al. 2005).
	NDCGExp float64
}

// Metrics holds the metrics of one query, or their means over queries
// in a Summary.
type Metrics struct {
	// At holds the @k metrics, one entry per Options.Cutoffs, same order.
	At []AtK
	// AP is average precision over the whole ranked list: the sum of
	// precision@rank at the rank of each relevant retrieved document,
	// divided by the number of relevant judged documents (trec_eval's
	// map). Averaged over queries it is MAP.
	AP float64
	// RR is the reciprocal rank of the first relevant document anywhere
	// in the list, 0 if none (trec_eval's recip_rank, uncut).
	RR float64
	// Duplicates counts repeated document ids in the ranking. A repeat
	// keeps its rank but scores as non-relevant (trec_eval rejects such
	// runs). In a Summary it is the total over all queries.
	Duplicates int
}

// Cut returns the AtK entry for cutoff k and whether k is one of the
// cutoffs.
func (m Metrics) Cut(k int) (AtK, bool) {
	for _, a := range m.At {
		if a.K == k {
			return a, true
		}
	}
	return AtK{}, false
}

// Summary is the evaluation of a whole run: the arithmetic mean of every
// metric over the judged queries, plus counts.
type Summary struct {
	// Metrics holds the means over the Queries judged queries (AP's mean
	// is MAP, At[i].MRR is MRR@k), and the total Duplicates.
	Metrics
	// Queries is the number of judged queries averaged over: queries of
	// the qrels with at least one relevant document.
	Queries int
	// Missing counts the judged queries absent from the run; each scores
	// 0 on every metric (trec_eval -c).
	Missing int
	// Ignored counts run queries that are not judged (absent from the
	// qrels, or with no relevant document); they are left out.
	Ignored int
}

// EvaluateQuery returns the metrics of one query.
//
//   - ranked: the retrieved document ids, best first (rank 1 first).
//   - judged: the query's judgments, doc id → grade. A document is
//     relevant when its grade is >= opts.RelevanceThreshold; unjudged
//     documents are non-relevant.
//
// Errors: ErrInvalidInput for bad options, ErrNoRelevant if judged has no
// relevant document (recall, AP and nDCG are then undefined), ErrBadGain
// if opts.GradedGain returns a negative or non-finite gain for a relevant
// grade (or 2^g − 1 overflows).
func EvaluateQuery[D comparable](ranked []D, judged map[D]int, opts Options) (Metrics, error) {
	if err := opts.Validate(); err != nil {
		return Metrics{}, err
	}
	opts = opts.EnsureDefaults()
	ideal, err := idealGains(judged, opts)
	if err != nil {
		return Metrics{}, err
	}
	return evalQuery(ranked, judged, ideal, opts)
}

// PerQuery returns the metrics of every judged query: each query of qrels
// with at least one relevant document. A judged query absent from run
// gets zero metrics (trec_eval -c). Run queries that are not judged are
// skipped. run maps a query id to its ranked doc ids, best first; qrels
// maps a query id to doc id → grade. Errors as EvaluateQuery, naming the
// query.
func PerQuery[Q, D comparable](run map[Q][]D, qrels map[Q]map[D]int, opts Options) (map[Q]Metrics, error) {
	out, _, err := perQuery(run, qrels, opts)
	return out, err
}

// Evaluate returns the mean of every metric over the judged queries of
// qrels (queries with at least one relevant document); a judged query
// absent from run scores 0 (trec_eval -c). See PerQuery for the inputs.
// Means are summed in sorted order, so the result does not depend on map
// iteration order. Errors: those of EvaluateQuery, and ErrNoJudgedQueries
// if qrels has no judged query.
func Evaluate[Q, D comparable](run map[Q][]D, qrels map[Q]map[D]int, opts Options) (Summary, error) {
	per, ignored, err := perQuery(run, qrels, opts)
	if err != nil {
		return Summary{}, err
	}
	if len(per) == 0 {
		return Summary{}, ErrNoJudgedQueries
	}
	opts = opts.EnsureDefaults()
	s := Summary{Queries: len(per), Ignored: ignored}
	for q := range per {
		if _, ok := run[q]; !ok {
			s.Missing++
		}
	}
	all := make([]Metrics, 0, len(per))
	for _, m := range per {
		all = append(all, m)
		s.Duplicates += m.Duplicates
	}
	vals := make([]float64, len(all))
	mean := func(get func(Metrics) float64) float64 {
		for i, m := range all {
			vals[i] = get(m)
		}
		slices.Sort(vals)
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		return sum / float64(len(vals))
	}
	s.AP = mean(func(m Metrics) float64 { return m.AP })
	s.RR = mean(func(m Metrics) float64 { return m.RR })
	s.At = make([]AtK, len(opts.Cutoffs))
	for i, k := range opts.Cutoffs {
		s.At[i] = AtK{
			K:          k,
			P:          mean(func(m Metrics) float64 { return m.At[i].P }),
			R:          mean(func(m Metrics) float64 { return m.At[i].R }),
			Success:    mean(func(m Metrics) float64 { return m.At[i].Success }),
			MRR:        mean(func(m Metrics) float64 { return m.At[i].MRR }),
			NDCGBinary: mean(func(m Metrics) float64 { return m.At[i].NDCGBinary }),
			NDCGGraded: mean(func(m Metrics) float64 { return m.At[i].NDCGGraded }),
			NDCGExp:    mean(func(m Metrics) float64 { return m.At[i].NDCGExp }),
		}
	}
	return s, nil
}

// perQuery evaluates every judged query and counts the ignored run
// queries.
func perQuery[Q, D comparable](run map[Q][]D, qrels map[Q]map[D]int, opts Options) (map[Q]Metrics, int, error) {
	if err := opts.Validate(); err != nil {
		return nil, 0, err
	}
	opts = opts.EnsureDefaults()
	out := make(map[Q]Metrics, len(qrels))
	for q, judged := range qrels {
		ideal, err := idealGains(judged, opts)
		if errors.Is(err, ErrNoRelevant) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("query %v: %w", q, err)
		}
		m, err := evalQuery(run[q], judged, ideal, opts)
		if err != nil {
			return nil, 0, fmt.Errorf("query %v: %w", q, err)
		}
		out[q] = m
	}
	ignored := 0
	for q := range run {
		if _, ok := out[q]; !ok {
			ignored++
		}
	}
	return out, ignored, nil
}

// ideal holds a query's relevant-document gains, each sorted descending:
// the ideal ranking for each gain mode. The exponential gains are stored
// (and must be used) scaled by 2^−expShift, see expScale.
type ideal struct {
	numRel        int
	graded, expon []float64
	expShift      int
}

// expScale returns the shift s >= 0 such that exponential gains scaled by
// 2^−s cannot overflow when summed into a DCG: 2^g − 1 is finite up to
// g < 1024, but a sum of a few such gains is not (Inf/Inf = NaN). The
// scaling is exact (a power of two) and cancels in DCG/IDCG; it is 0, so
// nothing changes, unless the largest graded gain gmax exceeds 960.
func expScale(gmax float64) int {
	return max(0, int(math.Ceil(gmax))-960)
}

// idealGains collects and checks the gains of all relevant judged
// documents of one query, retrieved or not.
func idealGains[D comparable](judged map[D]int, opts Options) (ideal, error) {
	var id ideal
	for _, grade := range judged {
		if grade < opts.RelevanceThreshold {
			continue
		}
		g, e, err := gains(grade, opts)
		if err != nil {
			return ideal{}, err
		}
		id.numRel++
		id.graded = append(id.graded, g)
		id.expon = append(id.expon, e)
	}
	if id.numRel == 0 {
		return ideal{}, ErrNoRelevant
	}
	// Sort descending by gain, not by grade: for Cranfield a smaller
	// grade means a larger gain.
	sort.Sort(sort.Reverse(sort.Float64Slice(id.graded)))
	sort.Sort(sort.Reverse(sort.Float64Slice(id.expon)))
	id.expShift = expScale(id.graded[0])
	for i, e := range id.expon {
		id.expon[i] = math.Ldexp(e, -id.expShift)
	}
	return id, nil
}

// gains returns the graded gain g and the exponential gain 2^g − 1 of a
// relevant grade.
func gains(grade int, opts Options) (g, e float64, err error) {
	g = opts.GradedGain(grade)
	e = math.Exp2(g) - 1
	if math.IsNaN(g) || math.IsInf(g, 0) || g < 0 || math.IsInf(e, 0) {
		return 0, 0, fmt.Errorf("%w: grade %d has gain %v", ErrBadGain, grade, g)
	}
	return g, e, nil
}

// discount is the nDCG position discount 1/log2(rank+1), rank from 1.
func discount(rank int) float64 { return 1 / math.Log2(float64(rank+1)) }

// evalQuery computes one query's metrics. ideal must come from
// idealGains(judged, opts) and opts must have its defaults.
func evalQuery[D comparable](ranked []D, judged map[D]int, id ideal, opts Options) (Metrics, error) {
	maxK := slices.Max(opts.Cutoffs)
	// Cumulative values over ranks 1..n, n = min(len, maxK):
	// cum*[r] is the value over the top r.
	n := min(len(ranked), maxK)
	cumHits := make([]int, n+1)
	cumBin := make([]float64, n+1)
	cumGr := make([]float64, n+1)
	cumExp := make([]float64, n+1)

	var m Metrics
	seen := make(map[D]struct{}, len(ranked))
	hits, firstRel := 0, 0
	apSum := 0.0
	for i, d := range ranked {
		rank := i + 1
		rel := false
		var g, e float64
		if _, dup := seen[d]; dup {
			m.Duplicates++
		} else {
			seen[d] = struct{}{}
			if grade, ok := judged[d]; ok && grade >= opts.RelevanceThreshold {
				rel = true
				var err error
				if g, e, err = gains(grade, opts); err != nil {
					return Metrics{}, err
				}
				e = math.Ldexp(e, -id.expShift)
			}
		}
		if rel {
			hits++
			apSum += float64(hits) / float64(rank)
			if firstRel == 0 {
				firstRel = rank
			}
		}
		if rank <= n {
			dc := discount(rank)
			cumHits[rank] = hits
			cumBin[rank] = cumBin[rank-1]
			cumGr[rank] = cumGr[rank-1]
			cumExp[rank] = cumExp[rank-1]
			if rel {
				cumBin[rank] += dc
				cumGr[rank] += g * dc
				cumExp[rank] += e * dc
			}
		}
	}
	numRel := float64(id.numRel)
	m.AP = apSum / numRel
	if firstRel > 0 {
		m.RR = 1 / float64(firstRel)
	}

	m.At = make([]AtK, len(opts.Cutoffs))
	for i, k := range opts.Cutoffs {
		top := min(k, n)
		h := cumHits[top]
		a := AtK{K: k, P: float64(h) / float64(k), R: float64(h) / numRel}
		if h > 0 {
			a.Success = 1
		}
		if firstRel > 0 && firstRel <= k {
			a.MRR = 1 / float64(firstRel)
		}
		var iBin, iGr, iExp float64
		for r := 1; r <= min(k, id.numRel); r++ {
			dc := discount(r)
			iBin += dc
			iGr += id.graded[r-1] * dc
			iExp += id.expon[r-1] * dc
		}
		a.NDCGBinary = ratio(cumBin[top], iBin)
		a.NDCGGraded = ratio(cumGr[top], iGr)
		a.NDCGExp = ratio(cumExp[top], iExp)
		m.At[i] = a
	}
	return m, nil
}

// ratio returns dcg/idcg, 0 when idcg is 0 (every relevant document has
// gain 0), as trec_eval does.
func ratio(dcg, idcg float64) float64 {
	if idcg <= 0 {
		return 0
	}
	return dcg / idcg
}
