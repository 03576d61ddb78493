package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestCollectionIVFPQSegments: a collection created with SegmentIndex
// "ivfpq" flushes its vectors into IVF-PQ warm segments (StorageStats
// names the kind), dense search over them finds the exact neighbours
// (refined distances), and the choice survives closing and reopening the
// database with the options it recorded.
func TestCollectionIVFPQSegments(t *testing.T) {
	ctx := context.Background()
	db, dir := newDB(t)
	const d, n = 32, 3000
	o := CollectionOptions{Dim: d, Metric: "l2", Sync: "none", SegmentIndex: "ivfpq",
		IVFPQ: &IVFPQOptions{Nlist: 16, Nprobe: 16, MinRows: 512}}
	c, err := db.CreateCollection("ivf", o)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	vecs := make([][]float32, n)
	docs := make([]contract.Document, n)
	for i := range docs {
		v := make([]float32, d)
		ctr := float32(i%20) * 3
		for j := range v {
			v[j] = ctr + float32(r.NormFloat64())
		}
		vecs[i] = v
		docs[i] = contract.Document{ID: fmt.Sprintf("doc-%04d", i), Content: "row", Vector: v, Trust: contract.Authoritative}
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(c *Collection, what string) {
		t.Helper()
		var warm bool
		for _, ts := range c.StorageStats() {
			if ts.Tier == "warm" {
				warm = true
				if !strings.Contains(ts.VectorIndex, "ivfpq") {
					t.Errorf("%s: warm vector index %q, want ivfpq", what, ts.VectorIndex)
				}
			}
		}
		if !warm {
			t.Fatalf("%s: no warm tier stats", what)
		}
		// Exact nearest neighbour of each probe: a stored vector itself.
		for _, qi := range []int{0, 17, 999, 2500} {
			res, err := c.Search(ctx, contract.Query{Vector: vecs[qi], Mode: contract.Dense, TopK: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 5 || res.Hits[0].DocID != docs[qi].ID {
				t.Fatalf("%s: query %d: top hit %v, want %s first of 5", what, qi, res.Hits, docs[qi].ID)
			}
		}
	}
	check(c, "after flush")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c2, err := db2.Collection("ivf")
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Options().SegmentIndex; got != "ivfpq" {
		t.Errorf("reopened collection SegmentIndex %q, want ivfpq", got)
	}
	check(c2, "after reopen")

	if _, err := db2.CreateCollection("bad", CollectionOptions{Dim: d, SegmentIndex: "annoy"}); err == nil {
		t.Error("SegmentIndex annoy accepted")
	}
}
