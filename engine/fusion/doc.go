// Package fusion merges ranked lists from several retrievers (BM25, HNSW,
// IVF-PQ, ...) into one ranking.
//
// Methods:
//
//   - RRF, Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
//     score(d) = Σ_m w_m / (k + r_m(d)), with 1-based ranks r_m inside a rank
//     window and k = 60 by default. Plain RRF is the case w_m = 1. A document
//     absent from list m (or ranked beyond its window) gets nothing from m.
//     RRF only looks at ranks, so it is robust to score scales that differ
//     between retrievers and shift between queries; it is the default.
//
//   - Convex combination of normalised scores, score(d) = Σ_m w_m · norm_m(s_m(d)),
//     with min-max normalisation (s − min)/(max − min) or z-score normalisation
//     (s − μ)/σ over each list's window (Fox & Shaw 1994 "CombSUM"; Lee 1997
//     for normalisation). A document absent from list m gets list m's minimum
//     normalised value (0 under min-max). This depends on raw score
//     distributions: when a retriever's scores shift (a different query length,
//     a new embedding model, BM25 IDF drift as the corpus grows), the weights
//     silently change meaning. It is offered for experiments; prefer RRF.
//
//   - MaxNorm, the same convex combination with norm_m(s) = s / max|s| over
//     the list's window (normalisation by the maximum score, one of the
//     simple schemes of the kind Montague & Aslam, CIKM 2001, compare). Unlike min-max it keeps the
//     gap between the last hit and the absent documents (score 0), so a list
//     with flat scores (cosines of a weak embedding, all close together) gives all its
//     hits nearly the same contribution instead of stretching a tiny spread
//     to [0, 1]. On Cranfield and Vaswani with BM25 + USE-512, the best
//     held-out hybrid of bench/hybrid was MaxNorm used to re-rank the BM25
//     top N (weights 0.65 BM25, 0.35 dense, the dense list holding the exact
//     similarities of those N candidates; N = 20 or 100): +0.0096 and +0.0108
//     nDCG@10 over BM25 when tuned on the other collection, short of a
//     significant +0.01 on both, versus −0.07 to −0.09 for plain RRF
//     (bench/results/hybrid/report.md). Same fragility caveat as above.
//
// Every fused hit carries an explanation: its rank, raw score and contribution
// in every input list. Ties in the fused score are broken by the key, ascending,
// so the output is deterministic whatever the input order.
//
// Cost: O(Σ window_m) time and memory, plus O(u log u) to sort the u distinct
// keys.
package fusion
