package bm25

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/text"
)

// TestCountIn: CountIn equals a naive count over Postings for dense and
// sparse lists, small and large allow sets, with and without a limit, in
// both segment formats.
func TestCountIn(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 3000
	for _, pef := range []bool{false, true} {
		b := NewBuilder(Options{PartitionedEF: pef})
		for i := range n {
			toks := []text.Token{{Term: "all", Pos: 0}}
			if r.IntN(50) == 0 {
				toks = append(toks, text.Token{Term: "rare", Pos: 1})
			}
			if r.IntN(3) == 0 {
				toks = append(toks, text.Token{Term: "third", Pos: 2})
			}
			if _, err := b.Add(uint64(i), toks); err != nil {
				t.Fatal(err)
			}
		}
		s, err := b.Segment()
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 60 {
			allow := roaring.New()
			size := []int{0, 1, 5, 40, 300, 2999}[trial%6]
			for range size {
				allow.Add(uint32(r.IntN(n)))
			}
			for _, term := range []string{"all", "rare", "third", "absent"} {
				docs, _, _, err := s.Postings(term)
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				for _, d := range docs {
					if allow.Contains(d) {
						want++
					}
				}
				for _, limit := range []int{0, 1, 3} {
					got, err := s.CountIn(term, allow, limit)
					if err != nil {
						t.Fatal(err)
					}
					w := want
					if limit > 0 {
						w = min(want, limit)
					}
					if got != w {
						t.Fatalf("pef=%v term %q |allow|=%d limit %d: CountIn %d, want %d", pef, term, allow.GetCardinality(), limit, got, w)
					}
				}
			}
		}
	}
}
