// Package eval computes the evaluation metrics used by Strata's tests and
// bench harness: recall@k for approximate nearest-neighbour (ANN) search,
// and the standard ranked-retrieval (IR) metrics with trec_eval's
// definitions. It depends on nothing but the standard library, so index
// tests, the engine and the bench harness can all import it.
//
// # ANN recall@k
//
// For one query with exact ground truth t_1..t_k (best first) and k-th true
// score d_k, and the first k items r_1..r_k the index returned:
//
//	recall@k = |{ distinct r_i : r_i ∈ {t_1..t_k}  or  s(r_i) within the tie bound }| / k
//
// where s(r_i) is the TRUE score of r_i (recomputed exactly by the caller,
// not the index's approximate score). The tie bound is
//
//	SmallerIsBetter (distances, L2, 1−cos, −ip):  s <= d_k + 1e-6·|d_k|   (= d_k·(1+1e-6) for d_k >= 0)
//	LargerIsBetter  (similarities, ip, cos):      s >= d_k − 1e-6·|d_k|
//
// The |d_k| form keeps the slack on the loose side for negative scores;
// d_k·(1+1e-6) would tighten the bound when d_k < 0, as −ip distances
// often are. Inner product can be given either way: similarities with
// LargerIsBetter or −ip with SmallerIsBetter give the same hits. The tie
// rule credits returned items that are exactly as close as the k-th
// neighbour but were listed beyond k in the ground truth (ann-benchmarks'
// k-NN recall counts ties the same way, with an additive epsilon). An id is never counted twice, and
// negative ids (FAISS's −1 padding) never count, so recall@k ∈ [0, 1].
// Passing nil distances gives the plain id intersection. See Recall,
// MeanRecall, TieBound.
//
// # IR metrics
//
// Inputs: a run, query id → ranked document ids (best first, rank 1
// first), and qrels, query id → document id → integer grade. A document
// is relevant when its grade >= Options.RelevanceThreshold (default 1,
// trec_eval's -l 1); judged documents below it (grade 0, or Cranfield's
// −1) and unjudged documents are non-relevant. Let rel(i) ∈ {0,1} say
// whether the document at rank i is relevant, R the number of relevant
// judged documents of the query (retrieved or not) and n the list length.
// Sources are the current trec_eval measure files named in brackets
// (github.com/usnistgov/trec_eval).
//
//	P@k       = Σ_{i<=min(k,n)} rel(i) / k                              [m_P.c: short lists padded with non-relevant]
//	R@k       = Σ_{i<=min(k,n)} rel(i) / R                              [m_recall.c]
//	success@k = 1 if Σ_{i<=k} rel(i) > 0, else 0                        [m_success.c]
//	RR@k      = 1/i* if the first relevant rank i* <= k, else 0         [m_recip_rank.c, cut at k; mean = MRR@k]
//	RR        = 1/i* over the whole list, 0 if nothing relevant         [m_recip_rank.c]
//	AP        = Σ_{i<=n, rel(i)=1} (Σ_{j<=i} rel(j) / i) / R            [m_map.c: whole list; mean = MAP]
//	nDCG@k    = DCG@k / IDCG@k                                          [m_ndcg_cut.c; Järvelin & Kekäläinen 2002]
//	DCG@k     = Σ_{i<=min(k,n)} gain(i) / log2(i + 1)
//	IDCG@k    = Σ_{i<=min(k,R)} gain*(i) / log2(i + 1)
//
// gain*(1..R) are the gains of ALL R relevant judged documents of the
// query sorted descending: the ideal ranking includes relevant documents
// the run never retrieved, so a run that misses them cannot reach 1. The
// discount log2(rank+1) is that of current trec_eval ("i+2 since doc i
// has rank i+1"); older trec_eval releases and the original
// Järvelin–Kekäläinen formula with b = 2 used 1/log2(rank) from rank 2 on,
// which gives different numbers. If IDCG@k = 0 (every relevant gain is 0)
// nDCG@k is 0.
//
// nDCG is reported in three clearly labelled gain modes (see AtK):
//
//	NDCGBinary   gain = 1 for a relevant document, else 0.
//	NDCGGraded   gain = g = Options.GradedGain(grade) for a relevant document, else 0.
//	             Default LinearGain, g = grade (trec_eval's ndcg_cut). For Cranfield
//	             use CranfieldGain, g = 5 − rel for rel 1..4 (1 = complete answer …
//	             4 = minimum interest), so the ideal order is by gain, not by grade.
//	NDCGExp      gain = 2^g − 1 for a relevant document, else 0: the exponential
//	             gain of Burges et al., "Learning to Rank using Gradient Descent",
//	             ICML 2005. When every relevant g is 1 (binary grades with the
//	             default gain) all three modes agree.
//
// Only relevant documents (grade >= RelevanceThreshold) carry gain in any
// mode; trec_eval's ndcg_cut instead gives every positive grade its value
// as gain, which is the same whenever RelevanceThreshold = 1.
//
// # Averaging
//
// Evaluate averages over the judged queries: the queries of the qrels
// with at least one relevant document. A judged query that is absent
// from the run scores 0 on every metric, as trec_eval -c does; run
// queries without judgments are ignored (Summary counts both). trec_eval
// also averages over qrels topics that have judgments but no relevant
// document (they score 0); we leave those out, because R, AP and nDCG are
// undefined for them, as the Strata bench protocol specifies.
//
// # Departures from trec_eval
//
//   - Input ranks are taken as given; trec_eval re-sorts by score and
//     breaks ties by document id (descending). Callers that want its tie
//     order must sort their lists the same way.
//   - A repeated document id keeps its rank but scores as non-relevant and
//     is counted in Metrics.Duplicates; trec_eval refuses the run.
//   - There is no cap on list length (trec_eval's -M, default 1000); cut
//     the lists yourself.
//
// All metrics are in [0, 1]. Each query's cost is O(n + Σ_k min(k, R))
// time and O(n) memory (the set of ids seen, for duplicate detection), plus
// the sort of the R ideal gains.
package eval
