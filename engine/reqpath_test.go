package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestSearchCachedPathsMatchReference: a collection that is searched
// after every write step (so its live-row bitmaps and key space are
// cached, then invalidated, at each epoch) answers lexical queries exactly
// as a reference collection that made the same writes and is searched
// only once at the end (cold caches): same ids, scores, explanations and
// envelope fields. The unrestricted path (shared live-row bitmaps) also
// equals the scoped path that builds its own (a namespace every document
// is in), every hit is the live version of its id, and the second page
// of a cursor taken before later writes (its retained, older epoch, after
// the caches moved on) holds as many hits as the reference's second page
// at that epoch, each the version live at it.
func TestSearchCachedPathsMatchReference(t *testing.T) {
	ctx := context.Background()
	opts := CollectionOptions{Dim: 8, Metric: "cosine", MemTableSizeBytes: -1}
	docs := tiersCorpus(160, 31)
	for i := range docs {
		docs[i].Namespace = "ns/p/"
	}
	rng := rand.New(rand.NewPCG(5, 6))
	words := []string{"alpha", "beta", "gamma", "delta", "read", "full", "buffer", "io", "reader", "error", "net", "http", "zeta"}
	var qs []contract.Query
	for i := 0; i < 24; i++ {
		var text string
		for j, n := 0, 1+rng.IntN(3); j < n; j++ {
			text += words[rng.IntN(len(words))] + " "
		}
		qs = append(qs, contract.Query{Text: text, Mode: contract.Lexical, TopK: 1 + rng.IntN(12)})
	}
	// steps are write batches; a flush follows steps 1 and 3.
	rewrite := func(lo, hi int, tag string) []contract.Document {
		var out []contract.Document
		for i := lo; i < hi; i += 3 {
			d := docs[i]
			d.Content = tag + " zeta " + d.Content
			out = append(out, d)
		}
		return out
	}
	type step struct {
		up    []contract.Document
		del   []string
		flush bool
	}
	steps := []step{
		{up: docs[:60]},
		{up: docs[60:100], flush: true},
		{up: rewrite(0, 60, "rewritten"), del: []string{docs[4].ID, docs[61].ID, docs[62].ID}},
		{up: docs[100:130], flush: true},
		{up: rewrite(30, 120, "again"), del: []string{docs[7].ID, docs[101].ID}},
	}
	// One document at a time: the MemTable's infos grow in place, so
	// the key space changes length without changing address.
	for i := 130; i < 140; i++ {
		steps = append(steps, step{up: docs[i : i+1]})
	}
	steps = append(steps, step{up: docs[140:]})
	apply := func(c *Collection, s step) {
		t.Helper()
		mustUpsert(t, c, s.up...)
		if len(s.del) > 0 {
			if _, err := c.Delete(ctx, s.del); err != nil {
				t.Fatal(err)
			}
		}
		if s.flush {
			if err := c.store.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// same compares two results' hits field by field (not Timestamp:
	// the two collections wrote at different times).
	same := func(name string, got, want contract.Result) {
		t.Helper()
		if len(got.Hits) != len(want.Hits) {
			t.Fatalf("%s: %d hits %v, want %d %v", name, len(got.Hits), ids(got.Hits), len(want.Hits), ids(want.Hits))
		}
		for i := range got.Hits {
			g, w := got.Hits[i], want.Hits[i]
			g.Timestamp = w.Timestamp
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("%s: hit %d\n got %+v\nwant %+v", name, i, g, w)
			}
		}
	}
	c, ref := newColl(t, opts), newColl(t, opts)
	for si, s := range steps {
		last := si == len(steps)-1
		var cursors []string             // c's page-one cursors before the last step
		var refPageTwo []contract.Result // the reference's second pages then
		if last {
			// ref lags one step: its state is c's before this step.
			for _, q := range qs {
				q.TopK = 3
				r1 := mustSearch(t, c, q)
				same("page one", r1, mustSearch(t, ref, q))
				rr := mustSearch(t, ref, q)
				if r1.NextCursor == "" || rr.NextCursor == "" {
					cursors, refPageTwo = append(cursors, ""), append(refPageTwo, contract.Result{})
					continue
				}
				q.Cursor = rr.NextCursor
				cursors, refPageTwo = append(cursors, r1.NextCursor), append(refPageTwo, mustSearch(t, ref, q))
			}
		}
		apply(c, s)
		for qi, q := range qs {
			r := mustSearch(t, c, q)
			sq := q
			sq.Scope.Namespace = "ns/"
			same(fmt.Sprintf("step %d query %d scoped", si, qi), mustSearch(t, c, sq), r)
			sn := c.store.Snapshot()
			for _, h := range r.Hits {
				d, _, ok := sn.Get(h.DocID)
				if !ok || storedHash(d) != h.VersionHash || d.Content != h.Content {
					sn.Close()
					t.Fatalf("step %d query %d: hit %s is not the live version", si, qi, h.DocID)
				}
			}
			sn.Close()
		}
		continued := 0
		for qi, cur := range cursors {
			if cur == "" {
				continue
			}
			q := qs[qi]
			q.TopK, q.Cursor = 3, cur
			// (Scores at a retained epoch may differ from the reference's:
			// the MemTable's BM25 statistics count versions written
			// after it. The versions must be those live at it.)
			r2 := mustSearch(t, c, q)
			if len(r2.Hits) != len(refPageTwo[qi].Hits) {
				t.Fatalf("query %d page two: %d hits, reference %d", qi, len(r2.Hits), len(refPageTwo[qi].Hits))
			}
			rsn := ref.store.Snapshot() // ref still holds the retained epoch's state
			for _, h := range r2.Hits {
				d, _, ok := rsn.Get(h.DocID)
				if !ok || storedHash(d) != h.VersionHash {
					rsn.Close()
					t.Fatalf("query %d page two: hit %s is not the version live at the cursor's epoch", qi, h.DocID)
				}
			}
			rsn.Close()
			continued++
		}
		if last && continued == 0 {
			t.Fatal("no query had a second page: the cursor check needs one")
		}
		apply(ref, s)
	}
	for qi, q := range qs {
		same(fmt.Sprintf("final query %d", qi), mustSearch(t, c, q), mustSearch(t, ref, q))
	}
}
