package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/tier"
)

// TestSearchDuringHeldFlush: while a tier flush is held after its freeze
// step (tier.Options.TestingFlushHook), the collection holds warm rows, a
// frozen MemTable and an active one. Upserts of documents in the frozen
// MemTable, deletes of some and new documents are acknowledged meanwhile,
// and lexical, dense and hybrid searches (with and without filters) give
// the same results (ids, scores within 1e-9) as a reference collection
// that made the same writes with an ordinary flush, before and after the
// held flush completes: the hot lexical path covers every MemTable of the
// snapshot, a frozen MemTable answers exactly as the segment it becomes,
// and no replaced or deleted version is returned.
func TestSearchDuringHeldFlush(t *testing.T) {
	n := 240
	if testing.Short() {
		n = 120
	}
	docs := tiersCorpus(n, 21)
	qs := tiersQueries(23)
	ctx := context.Background()
	opts := CollectionOptions{Dim: 8, Metric: "cosine", IndexedFields: map[string]FieldType{"lang": FieldKeyword, "lines": FieldNumber},
		MemTableSizeBytes: -1}

	// Writes during the flush: every 4th document of the part being
	// flushed rewritten, every 4th (offset 2) deleted.
	half, threeQ := n/2, 3*n/4
	var rewritten []contract.Document
	var deleted []string
	for i := half; i < threeQ; i++ {
		switch i % 4 {
		case 0:
			d := docs[i]
			d.Content = "rewritten during flush gamma " + d.Content
			rewritten = append(rewritten, d)
		case 2:
			deleted = append(deleted, docs[i].ID)
		}
	}
	// The reference: the same writes with a flush that is not held, so
	// the same physical layout (BM25 statistics count every row of every
	// view, dead ones too): docs[:half] and docs[half:threeQ] in warm
	// segments, the later writes in the MemTable.
	a := newColl(t, opts)
	mustUpsert(t, a, docs[:half]...)
	if err := a.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, a, docs[half:threeQ]...)
	if err := a.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, a, docs[threeQ:]...)
	for _, d := range rewritten {
		mustUpsert(t, a, d)
	}
	if _, err := a.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	ref := runAll(t, a, qs)
	for i, r := range ref {
		for _, h := range r {
			for _, id := range deleted {
				if h.DocID == id {
					t.Fatalf("reference query %d returned deleted %s", i, id)
				}
			}
		}
	}

	frozen := make(chan struct{})
	release := make(chan struct{})
	var hold bool
	var once sync.Once
	unhold := func() { once.Do(func() { close(release) }) }
	defer unhold()
	testTierOptions = func(o *tier.Options) {
		o.TestingFlushHook = func() {
			if hold {
				close(frozen)
				<-release
			}
		}
	}
	b := newColl(t, opts)
	testTierOptions = nil
	mustUpsert(t, b, docs[:half]...)
	if err := b.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mustUpsert(t, b, docs[half:threeQ]...)
	hold = true
	done := make(chan error, 1)
	go func() { done <- b.store.Flush(ctx) }()
	select {
	case <-frozen:
	case <-time.After(30 * time.Second):
		t.Fatal("flush never reached its build step")
	}
	// Writes while the flush is held (a blocked write trips the watchdog).
	wd := time.AfterFunc(time.Minute, unhold)
	mustUpsert(t, b, docs[threeQ:]...)
	for _, d := range rewritten {
		mustUpsert(t, b, d)
	}
	if _, err := b.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	if !wd.Stop() {
		t.Fatal("writes blocked while the flush was held")
	}
	sn := b.store.Snapshot()
	nHot := len(sn.HotLexical())
	sn.Close()
	if nHot != 2 {
		t.Fatalf("%d hot MemTables while the flush is held, want 2 (frozen + active)", nHot)
	}
	for i, r := range runAll(t, b, qs) {
		sameResults(t, "flush held", qs[i], ref[i], r)
	}
	select {
	case err := <-done:
		t.Fatalf("flush returned (%v) while held", err)
	default:
	}
	unhold()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := len(b.store.WarmSegments()); got != 2 {
		t.Fatalf("%d warm segments after the flush, want 2", got)
	}
	for i, r := range runAll(t, b, qs) {
		sameResults(t, "flush done", qs[i], ref[i], r)
	}
}
