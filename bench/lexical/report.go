package lexical

import (
	"fmt"
	"strings"
)

// Markdown renders r as a report: the ratio table first, then quality
// and speed tables with absolute (machine-specific) figures.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lexical benchmark: Strata vs Xapian vs SQLite FTS5 vs Bleve\n\n")
	if r.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`  \n", r.Command)
	}
	fmt.Fprintf(&b, "Run %s – %s, %s %s, quick=%v, %d round(s) × %d timed pass(es), single thread.  \n", r.Started, r.Finished, r.GoVersion, r.GOARCH, r.Quick, r.Rounds, r.Passes)
	fmt.Fprintf(&b, "Load average at start / end: %s / %s (shared machine).  \n", r.LoadAvg, r.LoadAvgE)
	for _, p := range r.Peers {
		fmt.Fprintf(&b, "Peer %s %s, built with `%s`.  \n", p.Engine, p.Version, p.Driver)
	}
	fmt.Fprintf(&b, "\n## Ratios (Strata / peer)\n\n| metric | peer | Strata | peer | ratio | goal | met |\n|---|---|---:|---:|---:|---|---|\n")
	for _, x := range r.Ratios {
		met := ""
		if x.Met != nil {
			met = map[bool]string{true: "yes", false: "**no**"}[*x.Met]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.3f | %s | %s |\n", x.Metric, x.Peer, num(x.Strata), num(x.PeerV), x.Value, x.Goal, met)
	}
	if len(r.Quality) > 0 {
		fmt.Fprintf(&b, "\n## Quality (OR, depth 1,000, BM25 k1 1.2 b 0.75)\n\n| collection | engine | config | nDCG@10 | MAP | R@100 | REFERENCE.md nDCG@10 |\n|---|---|---|---:|---:|---:|---:|\n")
		for _, q := range r.Quality {
			ref := ""
			if q.Reference > 0 {
				ref = fmt.Sprintf("%.4f (Δ %+.4f)", q.Reference, q.NDCG10-q.Reference)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.4f | %.4f | %.4f | %s |\n", q.Collection, q.Engine, q.Config, q.NDCG10, q.MAP, q.R100, ref)
		}
	}
	if c := r.Corpus; c != nil {
		fmt.Fprintf(&b, "\n## Speed (machine-specific)\n\nCorpus: %s, %d files, %.1f MiB, %d tokens, %d terms; %d queries (1–3 words, seed %d)", c.Root, c.Files, float64(c.Bytes)/(1<<20), c.Tokens, c.Terms, c.Queries, QuerySeed)
		if c.Subset != "" {
			fmt.Fprintf(&b, "; subset: %s", c.Subset)
		}
		fmt.Fprintf(&b, "; %d phrases (2–3 consecutive tokens, seed %d)", c.Phrases, PhraseSeed)
		fmt.Fprintf(&b, ".\n\n| engine | version | OR QPS wall | OR QPS cpu | AND QPS wall | AND QPS cpu | phrase QPS wall | phrase QPS cpu | OR hits | AND hits | phrase hits | index s wall / cpu | index MiB | OR top-10 overlap with Strata |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Speed {
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %d | %d | %d | %.2f / %.2f | %.1f | %.3f |\n", s.Engine, s.Version, s.OR.QPSWall, s.OR.QPSCPU, s.AND.QPSWall, s.AND.QPSCPU, s.Phrase.QPSWall, s.Phrase.QPSCPU, s.OR.Hits, s.AND.Hits, s.Phrase.Hits, s.IndexWallS, s.IndexCPUS, float64(s.IndexBytes)/(1<<20), s.OverlapWithStrata)
		}
		fmt.Fprintf(&b, "\nOR throughput by query length (one extra round, CPU-time QPS; wall in parentheses):\n\n| engine | 1 word | 2 words | 3 words |\n|---|---:|---:|---:|\n")
		for _, s := range r.Speed {
			if len(s.ORByWords) == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s |", s.Engine)
			for _, w := range s.ORByWords {
				fmt.Fprintf(&b, " %.0f (%.0f), %d queries |", w.QPSCPU, w.QPSWall, w.Queries)
			}
			fmt.Fprintf(&b, "\n")
		}
		fmt.Fprintf(&b, "\nConfigurations:\n\n")
		for _, s := range r.Speed {
			fmt.Fprintf(&b, "- %s: %s\n", s.Engine, s.Config)
		}
	}
	b.WriteString(r.referenceMarkdown())
	if len(r.Notes) > 0 {
		fmt.Fprintf(&b, "\nNotes:\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func num(x float64) string {
	switch {
	case x >= 1e5:
		return fmt.Sprintf("%.4g", x)
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.4f", x)
}
