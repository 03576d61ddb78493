package bm25

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/stratasearch/strata/engine/text"
	"github.com/stratasearch/strata/internal/testenv"
)

// TestBuilderGrow: 20,000 documents of two terms, one of them new in
// each, added after Grow(20000), write the segment Add alone writes, byte
// for byte, and allocate at most 0.65× what Add alone allocates (the term
// table and the per-document lists made once, not grown step by step).
// Under -race only the segments are compared.
func TestBuilderGrow(t *testing.T) {
	const n = 20000
	docs := make([][]text.Token, n)
	for i := range docs {
		docs[i] = []text.Token{{Term: "doc", Pos: 0}, {Term: fmt.Sprint(i), Pos: 1}}
	}
	build := func(grow bool) ([]byte, uint64) {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		b := NewBuilder(Options{})
		if grow {
			b.Grow(n)
		}
		for i, toks := range docs {
			if _, err := b.Add(uint64(i), toks); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&ms1)
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes(), ms1.TotalAlloc - ms0.TotalAlloc
	}
	plain, aPlain := build(false)
	grown, aGrown := build(true)
	if !bytes.Equal(plain, grown) {
		t.Fatalf("segments differ: %d and %d bytes", len(plain), len(grown))
	}
	t.Logf("allocated %d bytes with Grow, %d without", aGrown, aPlain)
	if testenv.Race {
		return
	}
	if float64(aGrown) > 0.65*float64(aPlain) {
		t.Errorf("allocated %d bytes with Grow, %d without: want ≤ 0.65×", aGrown, aPlain)
	}
}
