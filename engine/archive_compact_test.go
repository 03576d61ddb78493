package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestCollectionCompactArchives: Collection.Compact rewrites a cold
// archive whose deleted rows exceed θ_compact; the deleted documents stay
// gone, the live ones (Get and cold-tier search) are unchanged.
func TestCollectionCompactArchives(t *testing.T) {
	ctx := context.Background()
	docs := tiersCorpus(90, 4)
	qs := withCold(tiersQueries(4))
	c := newColl(t, CollectionOptions{Dim: 8, Metric: "cosine", MemTableSizeBytes: -1})
	mustUpsert(t, c, docs...)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	var del []string
	for i := 0; i < len(docs); i += 3 {
		del = append(del, docs[i].ID)
	}
	if _, err := c.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := runAll(t, c, qs)
	gets := map[string]string{}
	for _, d := range docs {
		g, err := c.Get(ctx, d.ID)
		gets[d.ID] = fmt.Sprintf("%+v %v", g, err != nil)
	}
	old := c.Archives()
	if err := c.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	arcs := c.Archives()
	if len(arcs) != 1 || arcs[0].ID == old[0].ID || arcs[0].Rows != uint64(len(docs)-len(del)) {
		t.Fatalf("archives %+v before, %+v after Compact", old, arcs)
	}
	dead := map[string]bool{}
	for _, id := range del {
		dead[id] = true
	}
	denseHits := 0
	for i, r := range runAll(t, c, qs) {
		if qs[i].Mode == contract.Dense {
			denseHits += len(r)
			// Same codes, codec and vectors: identical hits and scores.
			sameResults(t, "archive compacted", qs[i], before[i], r)
			continue
		}
		// BM25 collection statistics counted the dead rows before the
		// rewrite (as a warm segment's do until compaction), so lexical
		// scores shift slightly; the hit count stays and no dead row
		// appears.
		if len(r) != len(before[i]) {
			t.Fatalf("query %+v: %d hits after compaction, %d before", qs[i], len(r), len(before[i]))
		}
		for _, h := range r {
			if dead[h.DocID] {
				t.Fatalf("query %+v: deleted %s returned", qs[i], h.DocID)
			}
		}
	}
	if denseHits == 0 {
		t.Fatal("no dense cold hits compared")
	}
	for _, d := range docs {
		g, err := c.Get(ctx, d.ID)
		if got := fmt.Sprintf("%+v %v", g, err != nil); got != gets[d.ID] {
			t.Fatalf("Get %s = %s, want %s", d.ID, got, gets[d.ID])
		}
	}
}
