package bm25

import (
	"runtime"
	"testing"

	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/internal/testenv"
)

// TestBuilderPostingGrowth: a long posting list (200 documents of 3,000
// positions of one term) is allocated at most 1.1× its final size (4
// bytes a position) while it grows (full pages are never copied), not
// the ~5× of append's 1.25× steps, and reads back exactly (every
// position of every document, in order).
// Under -race only the contents are checked.
func TestBuilderPostingGrowth(t *testing.T) {
	const docs, per = 200, 3000
	toks := make([]text.Token, per)
	for i := range toks {
		toks[i] = text.Token{Term: "w", Pos: i}
	}
	b := NewBuilder(Options{})
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for d := range docs {
		if _, err := b.Add(uint64(d), toks); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms1)
	p := b.terms["w"]
	pos := p.flatPos(nil)
	if len(p.docs) != docs || len(pos) != docs*per || p.positions() != docs*per {
		t.Fatalf("%d docs, %d positions", len(p.docs), len(pos))
	}
	for d := range docs {
		if p.docs[d] != uint32(d) || p.tfs[d] != per {
			t.Fatalf("doc %d: %d tf %d", d, p.docs[d], p.tfs[d])
		}
		for i := range per {
			if pos[d*per+i] != uint32(i) {
				t.Fatalf("doc %d position %d = %d", d, i, pos[d*per+i])
			}
		}
	}
	ratio := float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(4*docs*per)
	t.Logf("allocated %.2f× the final positions", ratio)
	if testenv.Race {
		return // the race detector changes allocations: logged only
	}
	if ratio > 1.1 {
		t.Fatalf("allocated %.2f× the final positions, want ≤ 1.1×", ratio)
	}
}
