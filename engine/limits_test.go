package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier/wal"
)

// walBytes is the total size of c's WAL files.
func walBytes(t *testing.T, c *Collection) int64 {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(c.dir, storeDir, "wal"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "wal-") {
			n += fi.Size()
		}
	}
	return n
}

// TestBatchBytesBound: on seeded random batches (strings with quotes,
// backslashes, control bytes, U+2028, HTML characters; numbers of every
// magnitude; lists; ACLs; vectors), the bound batchBytes computes before
// any work is at least the WAL record actually written, and within 2× of
// it plus the per-field slack.
func TestBatchBytesBound(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 8})
	r := rand.New(rand.NewPCG(5, 16))
	pieces := []string{"a", "\"", "\\", "\x01", "\u2028", "<", "&", ">", "é", "字", "\n", " "}
	str := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for round := range 20 {
		var docs []contract.Document
		for i := range 1 + r.IntN(30) {
			d := contract.Document{ID: fmt.Sprintf("r%d-%d", round, i), Content: str(r.IntN(200)), Trust: contract.Authoritative,
				Namespace: "ns/", Metadata: map[string]contract.Value{}}
			if r.IntN(2) == 0 {
				d.Vector = make([]float32, 8)
				for j := range d.Vector {
					d.Vector[j] = r.Float32() + 0.1
				}
			}
			if r.IntN(3) == 0 {
				d.ACL = []string{str(5), "bob"}
			}
			for k := range r.IntN(8) {
				key := fmt.Sprintf("k%d%s", k, str(2))
				switch r.IntN(3) {
				case 0:
					d.Metadata[key] = contract.Number(math.Pow(10, float64(r.IntN(600)-300)) * (r.Float64() - 0.5))
				case 1:
					d.Metadata[key] = contract.String(str(r.IntN(50)))
				default:
					d.Metadata[key] = contract.Strings(str(3), str(4))
				}
			}
			docs = append(docs, d)
		}
		bound := batchBytes(docs, 0)
		before := walBytes(t, c)
		mustUpsert(t, c, docs...)
		got := walBytes(t, c) - before - wal.HeaderSize
		if got <= 0 || got > bound {
			t.Fatalf("round %d: record of %d bytes, bound %d", round, got, bound)
		}
		if slack := int64(len(docs)) * 200; bound > 2*got+slack {
			t.Errorf("round %d: bound %d is loose for a %d-byte record", round, bound, got)
		}
	}
}

// TestMetadataNumbersStoredShort: 1e20 is stored as "1e20", not as the 21
// digits encoding/json writes, so a body of such numbers makes a record
// no larger than itself.
func TestMetadataNumbersStoredShort(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2})
	meta := map[string]contract.Value{}
	for i := range 1000 {
		meta[fmt.Sprintf("n%03d", i)] = contract.Number(1e20)
	}
	before := walBytes(t, c)
	mustUpsert(t, c, contract.Document{ID: "d", Content: "x", Trust: contract.Authoritative, Metadata: meta})
	// Per value: key (4) + its length (1) + "1e20" (4) + its length (1).
	if got := walBytes(t, c) - before; got > 1000*10+200 {
		t.Fatalf("record of %d bytes for 1,000 numbers 1e20", got)
	}
	d, err := c.Get(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Metadata["n123"].Num(); n != 1e20 {
		t.Fatalf("n123 = %v", n)
	}
}

// TestBatchTooLargeRefused: 257 vectors of 65,536 dimensions (67 MB as
// float32, over the 64 MiB record limit) are refused whole with
// ErrBatchTooLarge naming the limit, and nothing is written.
func TestBatchTooLargeRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 67 MB")
	}
	c := newColl(t, CollectionOptions{Dim: MaxDim, Metric: "l2"})
	vec := make([]float32, MaxDim) // shared: the engine copies
	for i := range vec {
		vec[i] = 1
	}
	docs := make([]contract.Document, 257)
	for i := range docs {
		docs[i] = contract.Document{ID: fmt.Sprint(i), Content: "v", Vector: vec, Trust: contract.Authoritative}
	}
	e0 := c.Epoch()
	_, err := c.Upsert(context.Background(), docs)
	if !errors.Is(err, ErrBatchTooLarge) || !strings.Contains(err.Error(), fmt.Sprint(MaxBatchBytes)) {
		t.Fatalf("want ErrBatchTooLarge naming %d, got %v", MaxBatchBytes, err)
	}
	if c.Epoch() != e0 {
		t.Fatal("a refused batch was written")
	}
	if _, err := c.Upsert(context.Background(), docs[:200]); err != nil {
		t.Fatalf("a batch under the limit: %v", err)
	}
}
