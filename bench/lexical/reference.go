package lexical

import (
	"fmt"
	"strings"
)

// speedReference is a peer figure ../shared/REFERENCE.md gives for the Go
// standard library corpus ("BM25 speed, single thread, top-10"), measured
// on another machine of this class with its own 1,000 seeded queries (its
// query file is not shared; it reports 8,963 OR hits).
type speedReference struct {
	Engine, Figure string
	Value          float64 // midpoint of the reference's range
	get            func(SpeedRow) float64
}

var speedReferences = []speedReference{
	{"xapian", "OR QPS (native C++)", 13500, func(s SpeedRow) float64 { return s.OR.QPSCPU }},
	{"xapian", "AND QPS (native C++)", 28500, func(s SpeedRow) float64 { return s.AND.QPSCPU }},
	{"xapian", "index MiB", 63.6, func(s SpeedRow) float64 { return float64(s.IndexBytes) / (1 << 20) }},
	{"fts5", "OR QPS", 620, func(s SpeedRow) float64 { return s.OR.QPSCPU }},
	{"fts5", "index MiB", 22.9, func(s SpeedRow) float64 { return float64(s.IndexBytes) / (1 << 20) }},
}

// referenceTolerance flags a peer figure more than this factor away from
// REFERENCE.md: beyond machine differences and noise, it points at the
// harness (corpus, tokenisation, queries, driver) before the engine.
const referenceTolerance = 2.0

// referenceMarkdown renders the peers' speed against REFERENCE.md, for a
// full (not quick, not subsampled) run over the whole corpus; "" otherwise.
func (r *Result) referenceMarkdown() string {
	if r.Quick || r.Corpus == nil || r.Corpus.Subset != "" {
		return ""
	}
	var b strings.Builder
	for _, ref := range speedReferences {
		for _, s := range r.Speed {
			if s.Engine != ref.Engine {
				continue
			}
			v := ref.get(s)
			if v <= 0 {
				continue
			}
			ratio := v / ref.Value
			flag := "ok"
			if ratio > referenceTolerance || ratio < 1/referenceTolerance {
				flag = "**check the harness**"
			}
			fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %.2f× | %s |\n", ref.Engine, ref.Figure, v, ref.Value, ratio, flag)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("\n## Harness sanity check: peers against ../shared/REFERENCE.md\n\n"+
		"Peer figures here against REFERENCE.md's for the same corpus (midpoints of its ranges; another machine of this class, and its own seeded queries: it reports 8,963 OR hits). "+
		"A ratio beyond %.1f× either way points at the harness before the engines.\n\n"+
		"| peer | figure | here | REFERENCE.md | here / reference | |\n|---|---|---:|---:|---:|---|\n%s", referenceTolerance, b.String())
}
