package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestPrewarm: after a reopen, Prewarm builds the warm segments' lexical
// catalog (a search then finds it built, with the same hits as without
// prewarming); a canceled context and a closed collection are errors.
func TestPrewarm(t *testing.T) {
	db, dir := newDB(t)
	ctx := context.Background()
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none", IndexedFields: map[string]FieldType{"kind": FieldKeyword}})
	if err != nil {
		t.Fatal(err)
	}
	for seg := range 2 {
		var docs []contract.Document
		for i := range 30 {
			d := doc(fmt.Sprintf("s%d-%02d", seg, i), fmt.Sprintf("alpha beta %d", i), []float32{1, float32(i)})
			d.Metadata = map[string]contract.Value{"kind": contract.String([]string{"func", "type"}[i%2])}
			docs = append(docs, d)
		}
		if _, err := c.Upsert(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f := contract.Eq("kind", contract.String("type"))
	q := contract.Query{Text: "alpha", Mode: contract.Lexical, TopK: 100, Filter: &f}
	want := mustSearch(t, c, q)
	db.Close()

	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c, _ = db2.Collection("c")
	has := func() bool {
		sn := c.store.Snapshot()
		defer sn.Close()
		return c.warm.Has(sn)
	}
	if has() {
		t.Fatal("catalog built before any search or prewarm")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := db2.Prewarm(cctx); !errors.Is(err, context.Canceled) || has() {
		t.Fatalf("canceled prewarm: %v, built %v", err, has())
	}
	if err := db2.Prewarm(ctx); err != nil || !has() {
		t.Fatalf("prewarm: %v, built %v", err, has())
	}
	got := mustSearch(t, c, q)
	if len(got.Hits) != 30 || len(got.Hits) != len(want.Hits) {
		t.Fatalf("%d hits after prewarm, %d before", len(got.Hits), len(want.Hits))
	}
	for i := range got.Hits {
		if got.Hits[i].DocID != want.Hits[i].DocID {
			t.Fatalf("hit %d: %s, before %s", i, got.Hits[i].DocID, want.Hits[i].DocID)
		}
	}
	db2.Close()
	if err := c.Prewarm(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("prewarm of a closed collection: %v", err)
	}
}
