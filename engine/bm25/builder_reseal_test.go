package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// TestBuilderResealMatchesFresh: a Builder sealed after every few
// documents (each seal sorting only the terms new since the last) writes,
// at every seal, exactly the bytes of a Builder given the same documents
// and sealed once, in both segment formats, over 400 documents (150
// under -short: each seal rebuilds the fresh Builder from every document
// so far, so the work grows with the square of the count).
func TestBuilderResealMatchesFresh(t *testing.T) {
	nDocs := 400
	if testing.Short() {
		nDocs = 150
	}
	for _, o := range []Options{{}, {PartitionedEF: true}, {OmitPositions: true}} {
		rng := rand.New(rand.NewPCG(7, 11))
		var docs [][]text.Token
		inc := NewBuilder(o)
		for d := 0; d < nDocs; d++ {
			var toks []text.Token
			n := 1 + rng.IntN(30)
			for i := 0; i < n; i++ {
				// A vocabulary that keeps growing: new terms arrive
				// between seals, on both sides of the old ones.
				toks = append(toks, text.Token{Term: fmt.Sprintf("t%d", rng.IntN(20+d*3)), Pos: i})
			}
			docs = append(docs, toks)
			if _, err := inc.Add(uint64(d), toks); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(5) != 0 && d != nDocs-1 {
				continue
			}
			if _, err := inc.Segment(); err != nil {
				t.Fatal(err)
			}
			fresh := NewBuilder(o)
			for i, ts := range docs {
				if _, err := fresh.Add(uint64(i), ts); err != nil {
					t.Fatal(err)
				}
			}
			var a, b bytes.Buffer
			if _, err := inc.WriteTo(&a); err != nil {
				t.Fatal(err)
			}
			if _, err := fresh.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("%+v: after %d docs the resealed segment differs (%d vs %d bytes)", o, d+1, a.Len(), b.Len())
			}
		}
	}
}
