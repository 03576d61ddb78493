package codeq

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/stratasearch/strata/datasets"
	"github.com/stratasearch/strata/engine/bm25"
	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/eval"
)

// ProseSyntax measures the query syntax on Cranfield and Vaswani (in dir):
// BM25 (text.ProseOptions, k1 1.2, b 0.75, top 1000) with the operator
// parser (bm25.ParseQuery) and the plain-text reader (bm25.ParseText),
// nDCG@10 (graded gain) and MAP, and how many queries the operator parser
// changes (a quote, +, - or * in the text). It writes a Markdown table.
func ProseSyntax(w io.Writer, dir string) error {
	fmt.Fprintf(w, "\n| collection | queries | with operator characters | nDCG@10 operators | nDCG@10 text | MAP operators | MAP text |\n|---|---|---|---|---|---|---|\n")
	for _, name := range []string{"cranfield", "vaswani"} {
		var c *datasets.Collection
		var err error
		if name == "cranfield" {
			c, err = datasets.LoadCranfield(filepath.Join(dir, name))
		} else {
			c, err = datasets.LoadVaswani(filepath.Join(dir, name))
		}
		if err != nil {
			return fmt.Errorf("codeq: %w", err)
		}
		an := text.MustNew(text.ProseOptions())
		b := bm25.NewBuilder(bm25.Options{})
		for i, d := range c.Docs {
			if _, err := b.Add(uint64(i), an.Analyze(d.Content())); err != nil {
				return fmt.Errorf("codeq: %w", err)
			}
		}
		seg, err := b.Segment()
		if err != nil {
			return fmt.Errorf("codeq: %w", err)
		}
		ops := 0
		runs := [2]map[string][]string{{}, {}}
		for _, q := range c.Queries {
			if strings.ContainsAny(q.Text, "\"+-*") {
				ops++
			}
			for k, op := range []bool{true, false} {
				pq := bm25.Parse(q.Text, an, false, op)
				p := bm25.DefaultSearchParams()
				p.K = 1000
				hits, err := bm25.Search([]bm25.View{{Seg: seg}}, pq, p, bm25.CollectStats([]*bm25.Segment{seg}, pq.Terms()))
				if err != nil {
					return fmt.Errorf("codeq: %s %s: %w", name, q.ID, err)
				}
				ids := make([]string, len(hits))
				for i, h := range hits {
					ids[i] = c.Docs[h.ExtID].ID
				}
				runs[k][q.ID] = ids
			}
		}
		var nd, mp [2]float64
		var nq int
		for k := range runs {
			s, err := eval.Evaluate(runs[k], c.Qrels.Judgments, eval.Options{Cutoffs: []int{10}})
			if err != nil {
				return fmt.Errorf("codeq: %w", err)
			}
			at, _ := s.Cut(10)
			nd[k], mp[k], nq = at.NDCGGraded, s.AP, s.Queries
		}
		fmt.Fprintf(w, "| %s | %d | %d | %.4f | %.4f | %.4f | %.4f |\n", name, nq, ops, nd[0], nd[1], mp[0], mp[1])
	}
	return nil
}
