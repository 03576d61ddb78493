package codeq

import (
	"context"
	"fmt"
	"io"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest"
)

// Intent returns the hand-written intent queries with their answers'
// name lines resolved in the tree at root; an answer that the tree does
// not declare is an error.
func Intent(root string) ([]Query, error) {
	ds, err := decls(root)
	if err != nil {
		return nil, fmt.Errorf("codeq: %w", err)
	}
	at := map[string]int{}
	for _, d := range ds {
		at[d.file+"\x00"+d.symbol] = d.line
	}
	out := make([]Query, 0, len(intent))
	for _, q := range intent {
		line, ok := at[q.file+"\x00"+q.symbol]
		if !ok {
			return nil, fmt.Errorf("codeq: intent query %q: %s does not declare %s (documented and exported)", q.text, q.file, q.symbol)
		}
		out = append(out, Query{Text: q.text, File: q.file, Symbol: q.symbol, Line: line})
	}
	return out, nil
}

// Variant is one configuration of the search under test.
type Variant struct {
	Name string
	// Syntax is the query syntax (contract.Query.Syntax).
	Syntax contract.Syntax
	// Plain runs the engine's Collection.Search alone; else
	// ingest.SearchWith with Opts.
	Plain bool
	Opts  ingest.SearchOptions
	// DropGenerated removes generated chunks from the hits (what indexing
	// without them returned, up to their share of the statistics).
	DropGenerated bool
}

// Scores are the means over a query set.
type Scores struct {
	N                   int
	Success1, Success5  float64
	MRR10               float64
	GeneratedInTop10    int // hits from generated files in the top 10, summed
	NonPublicTop1Counts int // top-1 hits that are tests, testdata, .txt, cmd/ or internal/
}

// answers reports whether hit h answers q: the same file (metadata path)
// and a line span holding q.Line.
func answers(h contract.Envelope, q Query) bool {
	p, _ := h.Metadata[ingest.MetaPath].Str()
	if p != q.File {
		return false
	}
	_, from, to, err := engine.ParseFileURI(h.SourceURI)
	return err == nil && from <= q.Line && q.Line <= to
}

// Eval runs every query of qs under v against col (lexical, top 10).
func Eval(ctx context.Context, col *engine.Collection, qs []Query, v Variant) (Scores, error) {
	s, _, err := evalSet(ctx, col, qs, v)
	return s, err
}

// Ranks returns, per query of qs under v, the 1-based rank of its answer
// in the top 10 (0 = absent) and the top hit's path and symbol.
func Ranks(ctx context.Context, col *engine.Collection, qs []Query, v Variant) ([]Rank, error) {
	_, r, err := evalSet(ctx, col, qs, v)
	return r, err
}

// Rank is one query's outcome (Ranks).
type Rank struct {
	Rank           int
	TopPath, TopSy string
}

func evalSet(ctx context.Context, col *engine.Collection, qs []Query, v Variant) (Scores, []Rank, error) {
	s := Scores{N: len(qs)}
	ranks := make([]Rank, len(qs))
	for qi, q := range qs {
		cq := contract.Query{Text: q.Text, TopK: 10, Mode: contract.Lexical, Syntax: v.Syntax}
		if v.DropGenerated {
			cq.TopK = 60
		}
		var res contract.Result
		var err error
		if v.Plain {
			res, err = col.Search(ctx, cq)
		} else {
			res, err = ingest.SearchWith(ctx, col, cq, v.Opts)
		}
		if err != nil {
			return s, nil, fmt.Errorf("codeq: %s: %q: %w", v.Name, q.Text, err)
		}
		hits := res.Hits
		if v.DropGenerated {
			hits = hits[:0:0]
			for _, h := range res.Hits {
				if g, _ := h.Metadata[ingest.MetaGenerated].Boolean(); !g {
					hits = append(hits, h)
				}
			}
		}
		hits = hits[:min(10, len(hits))]
		for i, h := range hits {
			if g, _ := h.Metadata[ingest.MetaGenerated].Boolean(); g {
				s.GeneratedInTop10++
			}
			if i == 0 {
				p, _ := h.Metadata[ingest.MetaPath].Str()
				if ingest.Prior(p, false) < 1 {
					s.NonPublicTop1Counts++
				}
				ranks[qi].TopPath = p
				ranks[qi].TopSy, _ = h.Metadata[ingest.MetaSymbol].Str()
			}
			if answers(h, q) {
				if i == 0 {
					s.Success1++
				}
				if i < 5 {
					s.Success5++
				}
				s.MRR10 += 1 / float64(i+1)
				ranks[qi].Rank = i + 1
				break
			}
		}
	}
	if s.N > 0 {
		n := float64(s.N)
		s.Success1, s.Success5, s.MRR10 = s.Success1/n, s.Success5/n, s.MRR10/n
	}
	return s, ranks, nil
}

// Report runs every variant on every named set and writes a Markdown
// table to w.
func Report(ctx context.Context, w io.Writer, col *engine.Collection, sets []NamedSet, vs []Variant) error {
	for _, set := range sets {
		fmt.Fprintf(w, "\n%s (%d queries)\n\n", set.Name, len(set.Queries))
		fmt.Fprintf(w, "| variant | success@1 | success@5 | MRR@10 | generated hits in top 10 | top-1 non-public |\n|---|---|---|---|---|---|\n")
		for _, v := range vs {
			s, err := Eval(ctx, col, set.Queries, v)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %d | %d |\n", v.Name, s.Success1, s.Success5, s.MRR10, s.GeneratedInTop10, s.NonPublicTop1Counts)
		}
	}
	return nil
}

// NamedSet is a query set with its name.
type NamedSet struct {
	Name    string
	Queries []Query
}
