package eval_test

import (
	"fmt"

	"github.com/stratasearch/strata/eval"
)

// Recall@k with a distance tie at the k-th position: id 13 is as close as
// the 3rd true neighbour (id 12), so it counts as a hit.
func ExampleRecall() {
	gtIDs := []int32{10, 11, 12, 13}    // exact top 4, nearest first
	gtDists := []float32{1, 2, 3, 3}    // their L2 distances
	returned := []int64{11, 13, 10}     // what the index returned
	returnedDists := []float32{2, 3, 1} // their exact distances
	r, err := eval.Recall(returned, returnedDists, gtIDs, gtDists, 3, eval.SmallerIsBetter)
	fmt.Println(r, err)
	// Without distances only ids count.
	r, err = eval.Recall(returned, nil, gtIDs, nil, 3, eval.SmallerIsBetter)
	fmt.Printf("%.4f %v\n", r, err)
	// Output:
	// 1 <nil>
	// 0.6667 <nil>
}

// Evaluating a run against Cranfield-style qrels with graded gains.
func ExampleEvaluate() {
	qrels := map[int]map[int]int{
		1: {184: 2, 29: 2, 31: 2, 12: 3, 51: 3, 102: -1}, // cranqrel grades; -1 is not relevant
		2: {12: 1},                                       // query 2 is judged but absent from the run
	}
	run := map[int][]int{
		1: {51, 184, 7, 29, 102},
	}
	s, err := eval.Evaluate(run, qrels, eval.Options{Cutoffs: []int{5}, GradedGain: eval.CranfieldGain})
	if err != nil {
		fmt.Println(err)
		return
	}
	at5, _ := s.Cut(5)
	fmt.Printf("queries=%d missing=%d\n", s.Queries, s.Missing)
	fmt.Printf("P@5=%.3f R@5=%.3f MRR@5=%.3f MAP=%.4f\n", at5.P, at5.R, at5.MRR, s.AP)
	fmt.Printf("nDCG@5 binary=%.4f graded=%.4f exp=%.4f\n", at5.NDCGBinary, at5.NDCGGraded, at5.NDCGExp)
	// Query 1: relevant 51 (g 2), 184 (g 3), 29 (g 3) at ranks 1, 2, 4 of 5 relevant;
	// AP = (1/1 + 2/2 + 3/4)/5 = 0.55. Query 2 scores 0, so every mean is halved.

	// Output:
	// queries=2 missing=1
	// P@5=0.300 R@5=0.300 MRR@5=0.500 MAP=0.2750
	// nDCG@5 binary=0.3496 graded=0.3229 exp=0.3003
}
