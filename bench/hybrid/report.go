package hybrid

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteFiles writes results.json and report.md into dir (created if
// missing).
func WriteFiles(dir string, r Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("hybrid: %w", err)
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("hybrid: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("hybrid: %w", err)
	}
	var b strings.Builder
	WriteReport(&b, r)
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("hybrid: %w", err)
	}
	return nil
}

func ciStr(c *CI) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("%+.4f [%+.4f, %+.4f]", c.MeanDiff, c.Lo, c.Hi)
}

func table(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| collection | method | tuned | nDCG@10 | MAP | R@100 | ΔnDCG@10 vs lexical [95% CI] |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %.4f | %.4f | %.4f | %s |\n", r.Collection, r.Label, r.Tuned, r.NDCG10, r.MAP, r.R100, ciStr(r.VsLexical))
	}
	fmt.Fprintln(w)
}

// WriteReport renders r as Markdown.
func WriteReport(w io.Writer, r Result) {
	fmt.Fprintf(w, "# Hybrid fusion quality study\n\n")
	fmt.Fprintf(w, "Command: `%s`; %.1f s; judged queries %v; paired bootstrap: %d resamples, seed %d, 95%% percentile interval over queries; %d-fold CV.\n\n",
		r.Command, r.Seconds, r.Queries, r.Resamples, r.Seed, r.Folds)
	fmt.Fprintf(w, "Lexical: BM25 (k1 1.2, b 0.75) over `Document.Content()` with `text.ProseOptions()` (English stemming + stop-words), OR query, top %d. "+
		"Dense: exact inner product of the %s vectors (`asm.DotBatch` over every document), top %d. "+
		"Fused lists are cut at %d; MAP is over the returned list. nDCG@10 uses binary gain.\n\n", Depth, vectorsLabel(r.Vectors), Depth, Depth)

	fmt.Fprintf(w, "## Default recommendation\n\n")
	d := r.Default
	fmt.Fprintf(w, "**%s** — %s.\n\n", d.Spec, d.Rationale)
	if d.GoalMet {
		fmt.Fprintf(w, "Goal (≥ %+.2f nDCG@10 over lexical on both collections, held-out, CI excluding 0): **met**.\n\n", r.Goal)
	} else {
		fmt.Fprintf(w, "Goal (≥ %+.2f nDCG@10 over lexical on both collections, held-out, CI excluding 0): **NOT met** (see the held-out tables below for the gaps).\n\n", r.Goal)
	}
	table(w, d.Rows)

	fmt.Fprintf(w, "### What the engine default should become\n\n")
	fmt.Fprintf(w, "Plain RRF k=60 changes nDCG@10 by %s relative to BM25 alone, because the dense retriever is far weaker than BM25. ",
		rrfLoss(r))
	fmt.Fprintln(w, "The family that transfers best re-ranks the lexical candidates instead of fusing two full lists: take the BM25 top N, compute the exact dense similarity of those N documents, and fuse the two lists with `fusion.Options{Method: fusion.MaxNorm, Window: N}`, weights BM25 = 1 − α, dense = α (the rest of the BM25 list follows unchanged). "+
		"Every number in this report comes from `engine/fusion.Fuse`; the engine needs only the candidate-restricted dense scoring to wire it.")
	fmt.Fprintf(w, "\nRecommended by the rule: **%s**. Parameters chosen per direction:", d.Spec)
	for _, t := range r.Transfers {
		if t.Family == d.Spec.Family {
			fmt.Fprintf(w, " %s-tuned %s;", t.TrainOn, t.Chosen)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "### Process disclosure\n\n")
	fmt.Fprintln(w, "- Parameters are never tuned on the queries they are tested on in sections 2 and 3. The default's row on its tuning collection is in-sample and labelled so.")
	fmt.Fprintln(w, "- The families themselves were not all fixed in advance: `maxnorm` and `rerank-maxnorm` (and `fusion.MaxNorm`) were added after a first run of the other five families had been read, including their in-sample results on both collections. That family choice is therefore a mild form of adaptivity to the test queries, which the held-out parameter protocol does not remove.")
	fmt.Fprintln(w, "- The selection rule (largest worst-direction transfer gain; parameters from the collection with more judged queries) was written before the maxnorm families were added.")
	fmt.Fprintln(w, "- `rerank-prf-maxnorm` (vector pseudo-relevance feedback) was added in a later session, after an in-sample exploration of its grid on both collections had been read (gains of +0.009 to +0.014 nDCG@10 in-sample); the same adaptivity caveat applies, and its held-out rows below are the ones to trust.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "## 1. Reference settings (untuned)\n\n")
	table(w, r.Baselines)

	fmt.Fprintf(w, "## 2. Held-out: tune on one collection, test on the other\n\n")
	fmt.Fprintln(w, "Each family's grid point with the best mean nDCG@10 on the training collection, evaluated on the other collection.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| family | train → test | chosen | train nDCG@10 | test nDCG@10 | test MAP | test R@100 | Δ vs lexical on test [95% CI] | gap to goal |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---|---:|")
	for _, t := range r.Transfers {
		fmt.Fprintf(w, "| %s | %s → %s | %s | %.4f | %.4f | %.4f | %.4f | %s | %+.4f |\n", t.Family, t.TrainOn, t.TestOn, t.Chosen,
			t.TrainNDCG10, t.Test.NDCG10, t.Test.MAP, t.Test.R100, ciStr(t.Test.VsLexical), t.Test.VsLexical.MeanDiff-r.Goal)
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "## 3. Held-out: %d-fold cross-validation over queries within each collection\n\n", r.Folds)
	fmt.Fprintln(w, "Each fold is ranked with the grid point that is best on the other folds; the per-query results of the folds are pooled.")
	fmt.Fprintln(w)
	var cv []Row
	for _, c := range r.CV {
		row := c.Row
		var ch []string
		for _, s := range c.Chosen {
			ch = append(ch, s.String())
		}
		row.Tuned += ": " + strings.Join(uniq(ch), "; ")
		cv = append(cv, row)
	}
	table(w, cv)

	fmt.Fprintf(w, "## 4. In-sample best (tuned on the test queries — optimistic, NOT a valid estimate; shown as an upper bound)\n\n")
	table(w, r.InSample)

	fmt.Fprintf(w, "## Methods and sources\n\n")
	fmt.Fprintf(w, "Grid sizes: %v.\n\n", r.GridSize)
	fmt.Fprintln(w, "- **rrf** — (weighted) Reciprocal Rank Fusion, Cormack, Clarke & Büttcher, SIGIR 2009: Σ w_m/(k + rank). Lexical weight 1, dense weight w; grid k ∈ {10,30,60,100}, w ∈ {0.1…1}, window ∈ {100,1000}, dense_top ∈ {all,20,50} (fuse only the dense top-N).")
	fmt.Fprintln(w, "- **minmax / zscore** — convex combination (1−α)·norm(bm25) + α·norm(dense) (CombSUM, Fox & Shaw 1994; normalisation Lee, SIGIR 1997; Montague & Aslam 2001); absent documents get the list's minimum normalised value. α ∈ {0.05…0.6}, window ∈ {100,1000}. Fragile when score distributions shift.")
	fmt.Fprintln(w, "- **maxnorm** — the same convex combination with norm(s) = s / max|s| over the window (normalisation by the maximum score, a simple member of the family of schemes compared by Montague & Aslam, CIKM 2001; `fusion.MaxNorm`, added by this study); absent documents get 0. α ∈ {0.05…0.6}, window ∈ {100,1000}.")
	fmt.Fprintln(w, "- **rerank-minmax / rerank-zscore / rerank-maxnorm** — the dense score only re-ranks the lexical top N by the same interpolation, the rest of the lexical list follows unchanged (the interpolation re-ranking of e.g. Wang et al., \"BERT-based Dense Retrievers Require Interpolation with BM25\", ICTIR 2021). α ∈ {0.05…0.6}, N ∈ {20,50,100,1000}.")
	fmt.Fprintln(w, "- **rerank-prf-maxnorm** — as rerank-maxnorm, but the dense query is expanded by vector pseudo-relevance feedback (Rocchio in embedding space; Li et al., \"Pseudo Relevance Feedback with Deep Language Models and Dense Retrievers\", 2021): q' = (1−β)·q/‖q‖ + β·mean of the unit vectors of the lexical top `feedback` documents. α ∈ {0.05…0.6}, N ∈ {20,50,100}, feedback ∈ {3,5,10}, β ∈ {0.5,0.8,1}.")
	fmt.Fprintln(w, "- Paired bootstrap: resample queries with replacement, mean of per-query differences, percentile interval (Efron & Tibshirani 1993; Sakai, SIGIR 2006).")
	fmt.Fprintln(w, "- All methods are run through `engine/fusion.Fuse` (weights, Method, Window); re-ranking passes the dense scores of the lexical candidates as the second list.")
}

func uniq(xs []string) []string {
	var out []string
	seen := map[string]int{}
	for _, x := range xs {
		if seen[x] == 0 {
			out = append(out, x)
		}
		seen[x]++
	}
	for i, x := range out {
		if seen[x] > 1 {
			out[i] = fmt.Sprintf("%s (×%d)", x, seen[x])
		}
	}
	return out
}

// rrfLoss describes plain RRF's nDCG@10 change per collection.
func rrfLoss(r Result) string {
	var parts []string
	for _, b := range r.Baselines {
		if b.Spec.Family == FamRRF && b.Spec.DenseWeight == 1 && b.VsLexical != nil {
			parts = append(parts, fmt.Sprintf("%+.4f on %s", b.VsLexical.MeanDiff, b.Collection))
		}
	}
	return strings.Join(parts, " and ")
}

// vectorsLabel names Result.Vectors in the report.
func vectorsLabel(v string) string {
	if v == "" || v == "use512" {
		return "bundled USE-512"
	}
	return v
}
