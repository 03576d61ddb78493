package bm25

import (
	"math"
	"os"
	"sort"
	"testing"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/eval"
)

// Why Xapian's BM25 ranks Vaswani differently (issue 6, quality goal).
//
// Xapian 1.4's BM25Weight is not the textbook formula in two places
// (xapian-core weight/bm25weight.cc, and the BM25Weight constructor's
// documentation in <xapian/weight.h>):
//
//   - IDF: ln(r) with r = (N − n + 0.5)/(n + 0.5), replaced by
//     ln(r/2 + 1) when r < 2 (so it never goes negative), where Strata's
//     default (Lucene's) is ln(1 + r);
//   - min_normlen (default 0.5): a document's normalised length |D|/avgdl
//     is clamped from below at 0.5, "helping to prevent very short
//     documents getting large weights".
//
// Its k3 (query-term saturation) has no effect on these runs: QueryParser
// and OP_OR make every query word, repeated or not, its own leaf with
// within-query frequency 1, and the leaves' weights add — the same "a word
// repeated c times counts c times" as Strata and Lucene (checked with k3 =
// 0, 1 and 10: identical Xapian runs). Xapian's TermGenerator tokenises
// Vaswani exactly as [a-z0-9]+ does (raw text and pre-tokenised input give
// the same run); on Cranfield it costs Xapian 0.007 nDCG@10.
//
// TestXapianWeightingExplainsGap re-scores with a plain exhaustive scorer
// that has Xapian's two deviations switched on, over Strata's own
// analyzers, and reproduces Xapian's REFERENCE.md Vaswani figures to the
// fourth decimal: the whole gap is the weighting, not the index, the
// tokenizer or the query construction.
//
// Strata keeps textbook BM25 by default: the issue fixes the default IDF,
// its worked example (|D| = 80, avgdl = 400, i.e. normalised length 0.2)
// requires no length floor, and neither deviation helps consistently
// (the grid below: the floor gains 0.0075 nDCG@10 on Vaswani unstemmed
// and loses 0.0052 on Cranfield).
//
// STRATA_BM25_VARIANTS=1 go test -run TestBM25VariantGrid -v prints the
// whole grid (IDF form × length floor × repeated query words summed or
// counted once × analyzer) with nDCG@10, MAP and R@100 on both
// collections.

// weighting selects the deviations of plainBM25 from textbook BM25.
type weighting struct {
	xapianIDF  bool    // ln(r), r < 2 → ln(r/2 + 1); else ln(1 + r)
	minNormLen float64 // clamp |D|/avgdl from below (Xapian: 0.5)
	once       bool    // a repeated query word counts once
}

// plainIndex is a map-based inverted index for the reference scorer.
type plainIndex struct {
	post map[string]map[int]int
	dl   []float64
	avg  float64
}

func buildPlain(c *datasets.Collection, a *text.Analyzer) *plainIndex {
	ix := &plainIndex{post: map[string]map[int]int{}, dl: make([]float64, len(c.Docs))}
	sum := 0.0
	for i, d := range c.Docs {
		toks := a.Analyze(docText(d))
		n, last := 0, -1
		for _, tk := range toks {
			if tk.Pos != last { // |D| = distinct positions, as Builder.Add
				n++
				last = tk.Pos
			}
			m := ix.post[tk.Term]
			if m == nil {
				m = map[int]int{}
				ix.post[tk.Term] = m
			}
			m[i]++
		}
		ix.dl[i] = float64(n)
		sum += float64(n)
	}
	ix.avg = sum / float64(len(c.Docs))
	return ix
}

// plainBM25 ranks every query exhaustively (k1 1.2, b 0.75, top 1,000,
// ties to the lower ordinal) and evaluates the run.
func plainBM25(t testing.TB, c *datasets.Collection, a *text.Analyzer, ix *plainIndex, w weighting) eval.Summary {
	t.Helper()
	const k1, b = 1.2, 0.75
	N := float64(len(c.Docs))
	run := map[string][]string{}
	for _, q := range c.Queries {
		qtf := map[string]int{}
		var order []string
		for _, term := range a.Terms(q.Text) {
			if qtf[term] == 0 {
				order = append(order, term)
			}
			qtf[term]++
		}
		score := map[int]float64{}
		for _, term := range order {
			p := ix.post[term]
			if p == nil {
				continue
			}
			n := float64(len(p))
			r := (N - n + 0.5) / (n + 0.5)
			idf := math.Log(1 + r)
			if w.xapianIDF {
				if r < 2 {
					r = r*0.5 + 1
				}
				idf = math.Log(r)
			}
			qw := float64(qtf[term])
			if w.once {
				qw = 1
			}
			for d, tf := range p {
				nl := max(ix.dl[d]/ix.avg, w.minNormLen)
				score[d] += qw * idf * float64(tf) * (k1 + 1) / (float64(tf) + k1*(1-b+b*nl))
			}
		}
		docs := make([]int, 0, len(score))
		for d := range score {
			docs = append(docs, d)
		}
		sort.Slice(docs, func(i, j int) bool {
			if score[docs[i]] != score[docs[j]] {
				return score[docs[i]] > score[docs[j]]
			}
			return docs[i] < docs[j]
		})
		ids := make([]string, 0, 1000)
		for _, d := range docs[:min(1000, len(docs))] {
			ids = append(ids, c.Docs[d].ID)
		}
		run[q.ID] = ids
	}
	s, err := eval.Evaluate(run, c.Qrels.Judgments, eval.Options{Cutoffs: []int{10, 100}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestXapianWeightingExplainsGap: with Xapian's IDF and min_normlen 0.5,
// the plain scorer reproduces Xapian 1.4.22's Vaswani runs of
// REFERENCE.md / bench/results (no stemming: 0.3659 / 0.2161 / 0.4651;
// English stemming without stop-words: 0.4398 / 0.2855 / 0.6082), and
// without them it reproduces Strata's engine (so the scorer is the
// engine's formula).
func TestXapianWeightingExplainsGap(t *testing.T) {
	if testing.Short() {
		t.Skip("re-scores Vaswani four times")
	}
	c := loadCollection(t, "vaswani")
	xap := weighting{xapianIDF: true, minNormLen: 0.5}
	for _, tc := range []struct {
		name               string
		o                  text.Options
		ndcg, mapv, recall float64
	}{
		{"none", text.OracleOptions(), 0.3659, 0.2161, 0.4651},
		{"english", text.Options{Mode: text.ModeUnicode, Stemmer: "english", MaxTokenRunes: 64}, 0.4398, 0.2855, 0.6082},
	} {
		a := text.MustNew(tc.o)
		ix := buildPlain(c, a)
		got := plainBM25(t, c, a, ix, xap)
		t.Logf("vaswani %s, Xapian weighting: nDCG@10 %.4f MAP %.4f R@100 %.4f", tc.name, ndcg10(got), got.AP, r100(got))
		for _, m := range []struct {
			what      string
			got, want float64
		}{{"nDCG@10", ndcg10(got), tc.ndcg}, {"MAP", got.AP, tc.mapv}, {"R@100", r100(got), tc.recall}} {
			if math.Abs(m.got-m.want) > 0.00051 {
				t.Errorf("%s %s = %.4f, Xapian %.4f", tc.name, m.what, m.got, m.want)
			}
		}
		plain := plainBM25(t, c, a, ix, weighting{})
		engine := runCollection(t, c, a, 1, true)
		if ndcg10(plain) != ndcg10(engine) || math.Abs(plain.AP-engine.AP) > 1e-12 {
			t.Errorf("%s: plain scorer nDCG@10 %.6f MAP %.6f, engine %.6f %.6f", tc.name, ndcg10(plain), plain.AP, ndcg10(engine), engine.AP)
		}
	}
}

// TestBM25VariantGrid prints the variant grid (see the comment at the top
// of this file). It only runs with STRATA_BM25_VARIANTS=1.
func TestBM25VariantGrid(t *testing.T) {
	if os.Getenv("STRATA_BM25_VARIANTS") == "" {
		t.Skip("set STRATA_BM25_VARIANTS=1 to print the BM25 variant grid")
	}
	analyzers := []struct {
		name string
		o    text.Options
	}{
		{"oracle", text.OracleOptions()},
		{"unicode", text.Options{Mode: text.ModeUnicode, MaxTokenRunes: 64}},
		{"stem-only", text.Options{Mode: text.ModeUnicode, Stemmer: "english", MaxTokenRunes: 64}},
		{"prose", text.ProseOptions()},
	}
	t.Logf("| collection | analyzer | IDF | min normlen | repeated words | nDCG@10 | MAP | R@100 |")
	for _, name := range []string{"cranfield", "vaswani"} {
		c := loadCollection(t, name)
		for _, an := range analyzers {
			a := text.MustNew(an.o)
			ix := buildPlain(c, a)
			for _, xi := range []bool{false, true} {
				for _, mnl := range []float64{0, 0.5} {
					for _, once := range []bool{false, true} {
						s := plainBM25(t, c, a, ix, weighting{xapianIDF: xi, minNormLen: mnl, once: once})
						t.Logf("| %s | %s | %s | %g | %s | %.4f | %.4f | %.4f |", name, an.name,
							map[bool]string{false: "ln(1+r)", true: "xapian"}[xi], mnl,
							map[bool]string{false: "summed", true: "once"}[once], ndcg10(s), s.AP, r100(s))
					}
				}
			}
		}
	}
}
