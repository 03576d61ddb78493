package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stratasearch/strata/engine/catalog"
	"github.com/stratasearch/strata/engine/contract"
)

// TestLexicalTiesByDocID: documents of equal BM25 score rank by the
// FNV-1a hash of their ids (catalog.ExtID) ascending, the same order in
// the MemTable, across warm segments (whose BM25 sections store no
// external ids: the catalog derives them from the rows' ids), after a
// compaction and after the database is reopened.
func TestLexicalTiesByDocID(t *testing.T) {
	ctx := context.Background()
	db, dir := newDB(t)
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 4, Metric: "cosine", Sync: "none", MemTableSizeBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	var docs []contract.Document
	var ids []string
	for i := range 60 {
		id := fmt.Sprintf("doc-%02d", i)
		ids = append(ids, id)
		docs = append(docs, contract.Document{ID: id, Content: "equal tie words", Trust: contract.Authoritative})
	}
	slices.SortFunc(ids, func(a, b string) int {
		x, y := catalog.ExtID(a), catalog.ExtID(b)
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
		return 0
	})
	want := ids[:25]
	check := func(label string, c *Collection) {
		t.Helper()
		r, err := c.Search(ctx, contract.Query{Text: "tie", Mode: contract.Lexical, TopK: 25})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range r.Hits {
			got = append(got, h.DocID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: hits %v\nwant %v", label, got, want)
		}
	}
	mustUpsert(t, c, docs...)
	check("memtable", c)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("one warm segment", c)

	// The same documents over three warm segments and the MemTable.
	c2, err := db.CreateCollection("c2", CollectionOptions{Dim: 4, Metric: "cosine", Sync: "none", MemTableSizeBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i += 20 {
		mustUpsert(t, c2, docs[i:i+15]...)
		if err := c2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		mustUpsert(t, c2, docs[i+15:i+20]...)
	}
	check("three warm segments + memtable", c2)
	if err := c2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c2.store.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("compacted", c2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for _, name := range []string{"c", "c2"} {
		rc, err := db2.Collection(name)
		if err != nil {
			t.Fatal(err)
		}
		check("reopened "+name, rc)
	}
}
