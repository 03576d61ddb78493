package eval

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

func mustQuery(t *testing.T, ranked []string, judged map[string]int, opts Options) Metrics {
	t.Helper()
	m, err := EvaluateQuery(ranked, judged, opts)
	if err != nil {
		t.Fatalf("EvaluateQuery: %v", err)
	}
	return m
}

func mustCut(t *testing.T, m Metrics, k int) AtK {
	t.Helper()
	a, ok := m.Cut(k)
	if !ok {
		t.Fatalf("no cutoff %d in %+v", k, m.At)
	}
	return a
}

func check(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.12f, want %.12f", name, got, want)
	}
}

// nonrel returns n distinct unjudged doc ids.
func nonrel(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", i)
	}
	return out
}

func TestMRR(t *testing.T) {
	judged := map[string]int{"r": 1}
	opts := Options{Cutoffs: []int{1, 10}}

	// First (only) relevant at rank 1: RR = 1/1 = 1.
	m := mustQuery(t, []string{"r", "x"}, judged, opts)
	check(t, "MRR@10 rank 1", mustCut(t, m, 10).MRR, 1)
	check(t, "MRR@1 rank 1", mustCut(t, m, 1).MRR, 1)
	check(t, "RR rank 1", m.RR, 1)

	// Relevant at rank 10 (9 non-relevant before it): RR = 1/10 = 0.1; not within k = 1.
	m = mustQuery(t, append(nonrel(9), "r"), judged, opts)
	check(t, "MRR@10 rank 10", mustCut(t, m, 10).MRR, 0.1)
	check(t, "MRR@1 rank 10", mustCut(t, m, 1).MRR, 0)
	check(t, "success@10 rank 10", mustCut(t, m, 10).Success, 1)
	check(t, "success@1 rank 10", mustCut(t, m, 1).Success, 0)

	// Relevant at rank 11, beyond k = 10: MRR@10 = 0, uncut RR = 1/11 = 0.0909090909.
	m = mustQuery(t, append(nonrel(10), "r"), judged, opts)
	check(t, "MRR@10 rank 11", mustCut(t, m, 10).MRR, 0)
	check(t, "RR rank 11", m.RR, 0.090909090909)
	check(t, "success@10 rank 11", mustCut(t, m, 10).Success, 0)

	// Only the FIRST relevant counts: relevant at ranks 2 and 4, so RR = 1/2.
	m = mustQuery(t, []string{"x", "r", "y", "s"}, map[string]int{"r": 1, "s": 1}, opts)
	check(t, "MRR@10 first at 2", mustCut(t, m, 10).MRR, 0.5)
}

func TestPrecisionRecallAP(t *testing.T) {
	// Ranked a b c d e; relevant: a (1), c (2), e (1) retrieved and x (1) not
	// retrieved; b judged non-relevant (0), d judged -1 (Cranfield style), so R = 4.
	judged := map[string]int{"a": 1, "b": 0, "c": 2, "d": -1, "e": 1, "x": 1}
	ranked := []string{"a", "b", "c", "d", "e"}
	m := mustQuery(t, ranked, judged, Options{Cutoffs: []int{1, 2, 3, 5, 10}})

	// P@1 = 1/1, P@2 = 1/2, P@3 = 2/3, P@5 = 3/5, P@10 = 3/10 (short list padded).
	check(t, "P@1", mustCut(t, m, 1).P, 1)
	check(t, "P@2", mustCut(t, m, 2).P, 0.5)
	check(t, "P@3", mustCut(t, m, 3).P, 0.666666666667)
	check(t, "P@5", mustCut(t, m, 5).P, 0.6)
	check(t, "P@10", mustCut(t, m, 10).P, 0.3)
	// R@1 = 1/4, R@3 = 2/4, R@5 = 3/4, R@10 = 3/4 (x never retrieved).
	check(t, "R@1", mustCut(t, m, 1).R, 0.25)
	check(t, "R@3", mustCut(t, m, 3).R, 0.5)
	check(t, "R@5", mustCut(t, m, 5).R, 0.75)
	check(t, "R@10", mustCut(t, m, 10).R, 0.75)
	// AP = (1/1 + 2/3 + 3/5) / 4 = (1 + 0.666667 + 0.6)/4 = 2.266667/4 = 0.566667.
	check(t, "AP", m.AP, 0.566666666667)
	check(t, "success@1", mustCut(t, m, 1).Success, 1)

	// A relevant threshold of 2 leaves only c relevant (R = 1), at rank 3:
	// P@5 = 1/5, R@5 = 1/1, AP = (1/3)/1, MRR@5 = 1/3.
	m = mustQuery(t, ranked, judged, Options{Cutoffs: []int{5}, RelevanceThreshold: 2})
	check(t, "thr2 P@5", mustCut(t, m, 5).P, 0.2)
	check(t, "thr2 R@5", mustCut(t, m, 5).R, 1)
	check(t, "thr2 AP", m.AP, 0.333333333333)
	check(t, "thr2 MRR@5", mustCut(t, m, 5).MRR, 0.333333333333)
}

func TestAPTextbook(t *testing.T) {
	// Manning, Raghavan & Schütze style example: 10 results, relevant at ranks
	// 1, 3, 6, 9, 10, and R = 5 (all retrieved).
	// AP = (1/1 + 2/3 + 3/6 + 4/9 + 5/10)/5 = (1 + 0.666667 + 0.5 + 0.444444 + 0.5)/5
	//    = 3.111111/5 = 0.622222.
	ranked := nonrel(10)
	judged := map[string]int{}
	for _, r := range []int{1, 3, 6, 9, 10} {
		judged[ranked[r-1]] = 1
	}
	m := mustQuery(t, ranked, judged, Options{Cutoffs: []int{10}})
	check(t, "AP", m.AP, 0.622222222222)
	// Same with the relevant document at rank 10 replaced by an unretrieved one:
	// (1 + 2/3 + 3/6 + 4/9)/5 = 2.611111/5 = 0.522222.
	delete(judged, ranked[9])
	judged["missing"] = 1
	m = mustQuery(t, ranked, judged, Options{Cutoffs: []int{10}})
	check(t, "AP unretrieved", m.AP, 0.522222222222)
}

func TestNDCGBinary(t *testing.T) {
	// Ranked b a c; relevant a, c (R = 2).
	// DCG@3  = 0/log2(2) + 1/log2(3) + 1/log2(4) = 0.630930 + 0.5 = 1.130930
	// IDCG@3 = 1/log2(2) + 1/log2(3)             = 1 + 0.630930  = 1.630930
	// nDCG@3 = 1.130930/1.630930 = 0.693426.
	m := mustQuery(t, []string{"b", "a", "c"}, map[string]int{"a": 1, "c": 1, "b": 0}, Options{Cutoffs: []int{1, 3}})
	check(t, "nDCG@3", mustCut(t, m, 3).NDCGBinary, 0.693426403617)
	// nDCG@1 = 0/1 = 0.
	check(t, "nDCG@1", mustCut(t, m, 1).NDCGBinary, 0)
	// Binary judgments: exponential gain 2^1−1 = 1 and linear gain 1 equal binary.
	check(t, "exp = binary", mustCut(t, m, 3).NDCGExp, 0.693426403617)
	check(t, "graded = binary", mustCut(t, m, 3).NDCGGraded, 0.693426403617)
}

func TestNDCGIdealCountsUnretrieved(t *testing.T) {
	// Only a is retrieved, at rank 1; relevant a, x, y (R = 3).
	// DCG@10  = 1/log2(2) = 1
	// IDCG@10 = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930
	// nDCG@10 = 1/2.130930 = 0.469279 (it would be 1 if IDCG used retrieved documents only).
	m := mustQuery(t, []string{"a"}, map[string]int{"a": 1, "x": 1, "y": 1}, Options{Cutoffs: []int{1, 10}})
	check(t, "nDCG@10", mustCut(t, m, 10).NDCGBinary, 0.469278726023)
	// IDCG@1 = 1 as well: nDCG@1 = 1/1 = 1.
	check(t, "nDCG@1", mustCut(t, m, 1).NDCGBinary, 1)
}

func TestNDCGGradedCranfield(t *testing.T) {
	// Cranfield grades: a rel 1 (g = 5−1 = 4), b rel 3 (g = 2), c rel 4 (g = 1),
	// d rel -1 (not relevant). Ranked b a d c.
	judged := map[string]int{"a": 1, "b": 3, "c": 4, "d": -1}
	ranked := []string{"b", "a", "d", "c"}
	m := mustQuery(t, ranked, judged, Options{Cutoffs: []int{2, 4}, GradedGain: CranfieldGain})

	// Graded (linear gain g):
	// DCG@4  = 2/log2(2) + 4/log2(3) + 0 + 1/log2(5) = 2 + 2.523719 + 0.430677 = 4.954396
	// IDCG@4 = 4/log2(2) + 2/log2(3) + 1/log2(4)     = 4 + 1.261860 + 0.5      = 5.761860
	// nDCG@4 = 4.954396/5.761860 = 0.859861.
	check(t, "graded nDCG@4", mustCut(t, m, 4).NDCGGraded, 0.859860530479)
	// nDCG@2 = (2 + 2.523719)/(4 + 1.261860) = 4.523719/5.261860 = 0.859719.
	check(t, "graded nDCG@2", mustCut(t, m, 2).NDCGGraded, 0.859718699852)

	// Exponential gain 2^g − 1: a 15, b 3, c 1.
	// DCG@4  = 3 + 15/log2(3) + 1/log2(5) = 3 + 9.463946 + 0.430677 = 12.894623
	// IDCG@4 = 15 + 3/log2(3) + 1/log2(4) = 15 + 1.892789 + 0.5     = 17.392789
	// nDCG@4 = 12.894623/17.392789 = 0.741378.
	check(t, "exp nDCG@4", mustCut(t, m, 4).NDCGExp, 0.741377513886)
	// nDCG@2 = (3 + 9.463946)/(15 + 1.892789) = 12.463946/16.892789 = 0.737826.
	check(t, "exp nDCG@2", mustCut(t, m, 2).NDCGExp, 0.737826424708)

	// Binary: a, b, c gain 1, d 0.
	// DCG@4  = 1 + 1/log2(3) + 0 + 1/log2(5) = 1 + 0.630930 + 0.430677 = 2.061606
	// IDCG@4 = 1 + 1/log2(3) + 1/log2(4)     = 1 + 0.630930 + 0.5      = 2.130930
	// nDCG@4 = 2.061606/2.130930 = 0.967468; nDCG@2 = (1 + 0.630930)/(1 + 0.630930) = 1.
	check(t, "binary nDCG@4", mustCut(t, m, 4).NDCGBinary, 0.967467983489)
	check(t, "binary nDCG@2", mustCut(t, m, 2).NDCGBinary, 1)

	// The default linear gain (g = grade, trec_eval's) ranks by grade instead:
	// ranked c a: DCG@2 = 4 + 1/log2(3) = 4.630930; IDCG@2 = 4 + 3/log2(3) = 5.892789;
	// nDCG@2 = 4.630930/5.892789 = 0.785864.
	m = mustQuery(t, []string{"c", "a"}, judged, Options{Cutoffs: []int{2}})
	check(t, "linear nDCG@2", mustCut(t, m, 2).NDCGGraded, 0.785863798735)
}

// TestNDCGExpHugeGains: with grade 1023 each 2^g − 1 ≈ 9.0e307 is finite
// (so no ErrBadGain), but the sum of three of them overflows float64. All
// gains are equal, so every gain mode must agree with the binary nDCG:
// ranked a b c is ideal (1); ranked a x gives
// 1/(1 + 1/log2(3) + 1/log2(4)) = 1/2.130930 = 0.469279.
func TestNDCGExpHugeGains(t *testing.T) {
	judged := map[string]int{"a": 1023, "b": 1023, "c": 1023}
	opts := Options{Cutoffs: []int{3}}
	m := mustQuery(t, []string{"a", "b", "c"}, judged, opts)
	if v := mustCut(t, m, 3).NDCGExp; v != 1 { // check() would let NaN through
		t.Errorf("exp nDCG@3 ideal = %v, want 1", v)
	}
	check(t, "graded nDCG@3 ideal", mustCut(t, m, 3).NDCGGraded, 1)
	m = mustQuery(t, []string{"a", "x"}, judged, opts)
	check(t, "exp nDCG@3 one of three", mustCut(t, m, 3).NDCGExp, 0.469278726023)
	check(t, "binary nDCG@3 one of three", mustCut(t, m, 3).NDCGBinary, 0.469278726023)
}

func TestCranfieldGain(t *testing.T) {
	for rel, want := range map[int]float64{-1: 0, 0: 0, 1: 4, 2: 3, 3: 2, 4: 1, 5: 0} {
		if got := CranfieldGain(rel); got != want {
			t.Errorf("CranfieldGain(%d) = %v, want %v", rel, got, want)
		}
	}
}

func TestDuplicatesAndEmpty(t *testing.T) {
	judged := map[string]int{"a": 1, "b": 1}
	// a a a b: the copies of a at ranks 2, 3 score as non-relevant.
	// P@4 = 2/4, R@4 = 2/2, AP = (1/1 + 2/4)/2 = 0.75,
	// nDCG@4 = (1 + 1/log2(5))/(1 + 1/log2(3)) = 1.430677/1.630930 = 0.877215.
	m := mustQuery(t, []string{"a", "a", "a", "b"}, judged, Options{Cutoffs: []int{4}})
	a := mustCut(t, m, 4)
	check(t, "dup P@4", a.P, 0.5)
	check(t, "dup R@4", a.R, 1)
	check(t, "dup AP", m.AP, 0.75)
	check(t, "dup nDCG@4", a.NDCGBinary, 0.877215315338)
	if m.Duplicates != 2 {
		t.Errorf("Duplicates = %d, want 2", m.Duplicates)
	}

	// Empty ranking: everything 0.
	for _, ranked := range [][]string{nil, {}} {
		m = mustQuery(t, ranked, judged, Options{Cutoffs: []int{1, 10}})
		if m.AP != 0 || m.RR != 0 {
			t.Errorf("empty ranking: AP %v RR %v", m.AP, m.RR)
		}
		for _, a := range m.At {
			if a != (AtK{K: a.K}) {
				t.Errorf("empty ranking: %+v, want zeros", a)
			}
		}
	}

	// No relevant judgment: ErrNoRelevant.
	for _, j := range []map[string]int{nil, {}, {"a": 0, "b": -1}} {
		if _, err := EvaluateQuery([]string{"a"}, j, Options{}); !errors.Is(err, ErrNoRelevant) {
			t.Errorf("judged %v: err = %v, want ErrNoRelevant", j, err)
		}
	}
}

func TestEvaluateAveraging(t *testing.T) {
	qrels := map[int]map[string]int{
		1: {"a": 1, "b": 1},  // judged
		2: {"c": 1},          // judged, absent from the run: scores 0
		3: {"d": 0, "e": -1}, // no relevant document: not judged
	}
	run := map[int][]string{
		1: {"a", "x", "b"}, // AP = (1/1 + 2/3)/2 = 0.833333; P@1 = 1; nDCG@10 = (1 + 1/log2(4))/(1 + 1/log2(3)) = 1.5/1.630930 = 0.919721
		3: {"d"},           // ignored
		4: {"z"},           // not in qrels: ignored
	}
	s, err := Evaluate(run, qrels, Options{Cutoffs: []int{1, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Queries != 2 || s.Missing != 1 || s.Ignored != 2 {
		t.Errorf("Queries %d Missing %d Ignored %d, want 2 1 2", s.Queries, s.Missing, s.Ignored)
	}
	// MAP = (0.833333 + 0)/2 = 0.416667.
	check(t, "MAP", s.AP, 0.416666666667)
	// P@1 = (1 + 0)/2; MRR@10 = (1 + 0)/2; nDCG@10 = (0.919721 + 0)/2 = 0.459860.
	check(t, "P@1", mustCut(t, s.Metrics, 1).P, 0.5)
	check(t, "MRR@10", mustCut(t, s.Metrics, 10).MRR, 0.5)
	check(t, "nDCG@10", mustCut(t, s.Metrics, 10).NDCGBinary, 0.459860394574)
	// R@10 = (2/2 + 0)/2 = 0.5.
	check(t, "R@10", mustCut(t, s.Metrics, 10).R, 0.5)

	per, err := PerQuery(run, qrels, Options{Cutoffs: []int{1, 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 2 {
		t.Fatalf("PerQuery has %d queries, want 2 (1 and 2)", len(per))
	}
	check(t, "AP q1", per[1].AP, 0.833333333333)
	check(t, "AP q2", per[2].AP, 0)

	// No judged query at all.
	if _, err := Evaluate(run, map[int]map[string]int{3: {"d": 0}}, Options{}); !errors.Is(err, ErrNoJudgedQueries) {
		t.Errorf("err = %v, want ErrNoJudgedQueries", err)
	}
	if _, err := Evaluate[int, string](nil, nil, Options{}); !errors.Is(err, ErrNoJudgedQueries) {
		t.Errorf("empty: err = %v, want ErrNoJudgedQueries", err)
	}
}

func TestOptions(t *testing.T) {
	o := Options{}.EnsureDefaults()
	if o.RelevanceThreshold != 1 || !slices.Equal(o.Cutoffs, DefaultCutoffs) || o.GradedGain == nil {
		t.Errorf("defaults: %+v", o)
	}
	o.Cutoffs[0] = 99
	if DefaultCutoffs[0] == 99 {
		t.Fatal("EnsureDefaults aliases DefaultCutoffs")
	}
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	// Every problem is reported.
	err := Options{RelevanceThreshold: -1, Cutoffs: []int{0, 5, 5, -2}}.Validate()
	if !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("err = %v, want ErrInvalidInput", err)
	}
	var n int
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		n = len(u.Unwrap())
	}
	if n != 4 { // threshold, Cutoffs[0], duplicate Cutoffs[2], Cutoffs[3]
		t.Errorf("Validate reported %d problems, want 4: %v", n, err)
	}
	if _, err := EvaluateQuery([]string{"a"}, map[string]int{"a": 1}, Options{Cutoffs: []int{0}}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("EvaluateQuery bad options: %v", err)
	}
	if _, err := Evaluate(map[int][]string{}, map[int]map[string]int{1: {"a": 1}}, Options{Cutoffs: []int{-1}}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Evaluate bad options: %v", err)
	}
	// A bad gain is an error, not a silent NaN.
	for _, g := range []func(int) float64{
		func(int) float64 { return -1 },
		func(int) float64 { return math.NaN() },
		func(int) float64 { return math.Inf(1) },
		func(int) float64 { return 5000 }, // 2^5000 overflows
	} {
		_, err := EvaluateQuery([]string{"a"}, map[string]int{"a": 1}, Options{GradedGain: g})
		if !errors.Is(err, ErrBadGain) {
			t.Errorf("bad gain: err = %v, want ErrBadGain", err)
		}
		_, err = Evaluate(map[int][]string{1: {"a"}}, map[int]map[string]int{1: {"a": 1}}, Options{GradedGain: g})
		if !errors.Is(err, ErrBadGain) {
			t.Errorf("Evaluate bad gain: err = %v, want ErrBadGain", err)
		}
	}
	// All gains zero: IDCG = 0, graded nDCG reported as 0.
	m := mustQuery(t, []string{"a"}, map[string]int{"a": 7}, Options{Cutoffs: []int{1}, GradedGain: CranfieldGain})
	check(t, "zero-gain graded", m.At[0].NDCGGraded, 0)
	check(t, "zero-gain binary", m.At[0].NDCGBinary, 1)
}

// ref* are direct transcriptions of the formulas in doc.go, written
// without shared code: the oracle for the randomized test.

func refRel(ranked []string, judged map[string]int, thr int) []bool {
	rel := make([]bool, len(ranked))
	for i, d := range ranked {
		if slices.Contains(ranked[:i], d) {
			continue
		}
		if g, ok := judged[d]; ok && g >= thr {
			rel[i] = true
		}
	}
	return rel
}

func refDCG(gains []float64, k int) float64 {
	s := 0.0
	for i := 0; i < k && i < len(gains); i++ {
		s += gains[i] / math.Log2(float64(i+2))
	}
	return s
}

func TestRandomAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	iters := 2000
	if testing.Short() {
		iters = 200
	}
	cutoffs := []int{1, 2, 3, 5, 10, 20}
	for it := range iters {
		nDocs := 1 + rng.IntN(30)
		judged := map[string]int{}
		for d := range nDocs {
			if rng.IntN(2) == 0 {
				judged[fmt.Sprint(d)] = rng.IntN(6) - 1 // -1..4
			}
		}
		thr := 1 + rng.IntN(2)
		gain := LinearGain
		if rng.IntN(2) == 0 {
			gain = CranfieldGain
		}
		opts := Options{Cutoffs: cutoffs, RelevanceThreshold: thr, GradedGain: gain}
		var relDocs []string
		for d, g := range judged {
			if g >= thr {
				relDocs = append(relDocs, d)
			}
		}
		sort.Strings(relDocs)
		ranked := make([]string, rng.IntN(25))
		for i := range ranked {
			ranked[i] = fmt.Sprint(rng.IntN(nDocs + 3)) // some unjudged, some repeats
		}
		m, err := EvaluateQuery(ranked, judged, opts)
		if len(relDocs) == 0 {
			if !errors.Is(err, ErrNoRelevant) {
				t.Fatalf("iter %d: err = %v, want ErrNoRelevant", it, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("iter %d: %v", it, err)
		}
		R := float64(len(relDocs))
		rel := refRel(ranked, judged, thr)
		// Reference AP and RR.
		ap, hits, rr := 0.0, 0, 0.0
		for i, r := range rel {
			if r {
				hits++
				ap += float64(hits) / float64(i+1)
				if rr == 0 {
					rr = 1 / float64(i+1)
				}
			}
		}
		check(t, fmt.Sprintf("iter %d AP", it), m.AP, ap/R)
		check(t, fmt.Sprintf("iter %d RR", it), m.RR, rr)
		// Reference gains.
		bin, gr, ex := make([]float64, len(ranked)), make([]float64, len(ranked)), make([]float64, len(ranked))
		for i, r := range rel {
			if r {
				g := gain(judged[ranked[i]])
				bin[i], gr[i], ex[i] = 1, g, math.Pow(2, g)-1
			}
		}
		var iBin, iGr, iEx []float64
		for _, d := range relDocs {
			g := gain(judged[d])
			iBin, iGr, iEx = append(iBin, 1), append(iGr, g), append(iEx, math.Pow(2, g)-1)
		}
		for _, s := range [][]float64{iGr, iEx} {
			sort.Sort(sort.Reverse(sort.Float64Slice(s)))
		}
		for _, a := range m.At {
			k := a.K
			h := 0
			first := 0
			for i := 0; i < k && i < len(rel); i++ {
				if rel[i] {
					h++
					if first == 0 {
						first = i + 1
					}
				}
			}
			name := fmt.Sprintf("iter %d @%d", it, k)
			check(t, name+" P", a.P, float64(h)/float64(k))
			check(t, name+" R", a.R, float64(h)/R)
			succ, mrr := 0.0, 0.0
			if h > 0 {
				succ, mrr = 1, 1/float64(first)
			}
			check(t, name+" success", a.Success, succ)
			check(t, name+" MRR", a.MRR, mrr)
			nd := func(g, ig []float64) float64 {
				if i := refDCG(ig, k); i > 0 {
					return refDCG(g, k) / i
				}
				return 0
			}
			check(t, name+" nDCG binary", a.NDCGBinary, nd(bin, iBin))
			check(t, name+" nDCG graded", a.NDCGGraded, nd(gr, iGr))
			check(t, name+" nDCG exp", a.NDCGExp, nd(ex, iEx))
			for _, v := range []float64{a.P, a.R, a.Success, a.MRR, a.NDCGBinary, a.NDCGGraded, a.NDCGExp} {
				if v < 0 || v > 1 || math.IsNaN(v) {
					t.Fatalf("%s: value %v out of [0,1] in %+v", name, v, a)
				}
			}
		}
		if m.AP < 0 || m.AP > 1 || m.RR < 0 || m.RR > 1 {
			t.Fatalf("iter %d: AP %v RR %v out of [0,1]", it, m.AP, m.RR)
		}

		// The ideal ranking (relevant documents by graded gain, descending, then
		// the rest) has nDCG 1 in every mode at every cutoff, and AP = 1.
		idealRank := slices.Clone(relDocs)
		sort.SliceStable(idealRank, func(i, j int) bool { return gain(judged[idealRank[i]]) > gain(judged[idealRank[j]]) })
		idealRank = append(idealRank, "unjudged-1", "unjudged-2")
		mi, err := EvaluateQuery(idealRank, judged, opts)
		if err != nil {
			t.Fatal(err)
		}
		check(t, fmt.Sprintf("iter %d ideal AP", it), mi.AP, 1)
		for _, a := range mi.At {
			check(t, fmt.Sprintf("iter %d ideal nDCG@%d binary", it, a.K), a.NDCGBinary, 1)
			if iGr[0] > 0 {
				check(t, fmt.Sprintf("iter %d ideal nDCG@%d graded", it, a.K), a.NDCGGraded, 1)
				check(t, fmt.Sprintf("iter %d ideal nDCG@%d exp", it, a.K), a.NDCGExp, 1)
			}
			check(t, fmt.Sprintf("iter %d ideal R@%d", it, a.K), a.R, math.Min(1, float64(a.K)/R))
		}
	}
}

// TestEvaluateDeterministic checks that the means do not depend on map
// iteration order, bit for bit.
func TestEvaluateDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	qrels := map[int]map[int]int{}
	run := map[int][]int{}
	for q := range 200 {
		qrels[q] = map[int]int{}
		for d := range 50 {
			if rng.IntN(4) == 0 {
				qrels[q][d] = rng.IntN(3)
			}
		}
		for range 30 {
			run[q] = append(run[q], rng.IntN(50))
		}
	}
	first, err := Evaluate(run, qrels, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := Evaluate(run, qrels, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if again.AP != first.AP || !slices.Equal(again.At, first.At) || again.RR != first.RR {
			t.Fatalf("Evaluate not deterministic: %+v vs %+v", first, again)
		}
	}
}

// FuzzEvaluateQuery checks that arbitrary rankings and judgments never
// panic and give metrics in [0, 1].
func FuzzEvaluateQuery(f *testing.F) {
	f.Add([]byte{1, 2, 3, 1}, []byte{1, 5, 2, 0, 3, 4}, uint8(1))
	f.Add([]byte{}, []byte{7, 1}, uint8(2))
	f.Add([]byte{9, 9, 9}, []byte{9, 255}, uint8(0))
	f.Fuzz(func(t *testing.T, ranked []byte, judgments []byte, thr uint8) {
		judged := map[byte]int{}
		for i := 0; i+1 < len(judgments); i += 2 {
			judged[judgments[i]%32] = int(int8(judgments[i+1])) % 6
		}
		ids := make([]byte, len(ranked))
		for i, b := range ranked {
			ids[i] = b % 32
		}
		m, err := EvaluateQuery(ids, judged, Options{RelevanceThreshold: int(thr % 4), Cutoffs: []int{1, 3, 10}, GradedGain: CranfieldGain})
		if err != nil {
			if !errors.Is(err, ErrNoRelevant) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, a := range m.At {
			for _, v := range []float64{a.P, a.R, a.Success, a.MRR, a.NDCGBinary, a.NDCGGraded, a.NDCGExp} {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("value %v out of [0,1] in %+v", v, a)
				}
			}
		}
		if !(m.AP >= 0 && m.AP <= 1) {
			t.Fatalf("AP %v", m.AP)
		}
	})
}
