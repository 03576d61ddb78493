package bm25

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/text"
)

// AppendTo appends exactly WriteTo's bytes after whatever dst holds: the
// padding and the CRC32C are relative to the segment's first byte.
func TestBuilderAppendToMatchesWriteTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for _, opts := range []Options{{}, {OmitPositions: true}, {PartitionedEF: true}} {
		b := NewBuilder(opts)
		for d := 0; d < 300; d++ {
			var toks []text.Token
			for p := 0; p < 1+rng.IntN(40); p++ {
				toks = append(toks, text.Token{Term: fmt.Sprintf("t%d", rng.IntN(60)), Pos: p})
			}
			if _, err := b.Add(uint64(d), toks); err != nil {
				t.Fatal(err)
			}
		}
		var want bytes.Buffer
		if _, err := b.WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"", "x", "abcdefghijk"} {
			got, err := b.AppendTo([]byte(prefix))
			if err != nil {
				t.Fatal(err)
			}
			if string(got[:len(prefix)]) != prefix || !bytes.Equal(got[len(prefix):], want.Bytes()) {
				t.Fatalf("%+v prefix %q: AppendTo differs from WriteTo (%d vs %d bytes)", opts, prefix, len(got)-len(prefix), want.Len())
			}
			if _, err := Open(got[len(prefix):], "appended"); err != nil {
				t.Fatal(err)
			}
		}
	}
}
