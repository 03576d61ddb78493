package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

func withCold(qs []contract.Query) []contract.Query {
	out := slices.Clone(qs)
	for i := range out {
		out[i].Tiers = []contract.Tier{contract.Hot, contract.Warm, contract.Cold}
	}
	return out
}

// TestColdRoundTripSearch: the same lexical, dense and hybrid queries
// (with and without filters) give the same hits — ids, contents and
// scores within 1e-9 — with every document in the MemTable, archived to
// the cold tier (queries asking for cold), and promoted back to warm; Get
// returns identical documents throughout. Without cold in Tiers the
// archived documents are not searched.
func TestColdRoundTripSearch(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 150
	}
	ctx := context.Background()
	docs := tiersCorpus(n, 3)
	qs := tiersQueries(5)
	c := newColl(t, CollectionOptions{Dim: 8, Metric: "cosine", IndexedFields: map[string]FieldType{"lang": FieldKeyword, "lines": FieldNumber},
		MemTableSizeBytes: -1})
	mustUpsert(t, c, docs...)
	ref := runAll(t, c, qs)
	gets := map[string]contract.Document{}
	for _, d := range docs {
		g, err := c.Get(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		gets[d.ID] = g
	}
	checkGets := func(label string) {
		t.Helper()
		for id, want := range gets {
			g, err := c.Get(ctx, id)
			if err != nil {
				t.Fatalf("%s: Get %s: %v", label, id, err)
			}
			if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", want) {
				t.Fatalf("%s: Get %s = %+v, want %+v", label, id, g, want)
			}
		}
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(c.WarmSegments()) != 0 || len(c.Archives()) != 1 {
		t.Fatalf("segments %v archives %v", c.WarmSegments(), c.Archives())
	}
	checkGets("archived")
	for i, q := range qs {
		if q.Mode == contract.Lexical || q.Filter != nil {
			continue
		}
		if r := mustSearch(t, c, q); len(r.Hits) != 0 && q.Mode == contract.Dense {
			t.Fatalf("default tiers found %d archived docs: %v", len(r.Hits), ids(r.Hits))
		}
		_ = i
	}
	cq := withCold(qs)
	for i, r := range runAll(t, c, cq) {
		sameResults(t, "cold", cq[i], ref[i], r)
	}
	var steps []int
	if _, err := c.Promote(ctx, c.Archives()[0].ID, func(d, n int) { steps = append(steps, d) }); err != nil {
		t.Fatal(err)
	}
	if len(c.Archives()) != 0 || len(c.WarmSegments()) != 1 || len(steps) != 4 {
		t.Fatalf("after promote: segments %v archives %v steps %v", c.WarmSegments(), c.Archives(), steps)
	}
	checkGets("promoted")
	for i, r := range runAll(t, c, qs) {
		sameResults(t, "promoted", qs[i], ref[i], r)
	}
	if _, err := c.Promote(ctx, 999, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("promote of a missing archive: %v", err)
	}
}

// TestColdDeletesHideEverywhere: after archiving, Delete, an upsert of a
// new version, DeleteByNamespace and DeleteBySource reach the cold rows:
// no lexical, dense, hybrid or filtered cold search and no Get returns
// the old versions, also after a flush (cold tombstones in the manifest)
// and a reopen.
func TestColdDeletesHideEverywhere(t *testing.T) {
	ctx := context.Background()
	db, dir := newDB(t)
	o := CollectionOptions{Dim: 4, Metric: "l2", IndexedFields: map[string]FieldType{"lang": FieldKeyword}, MemTableSizeBytes: -1}
	c, err := db.CreateCollection("cold", o)
	if err != nil {
		t.Fatal(err)
	}
	var docs []contract.Document
	for i := 0; i < 60; i++ {
		d := doc(fmt.Sprintf("d%02d", i), fmt.Sprintf("needle haystack number %d", i), []float32{float32(i), 1, 0, 0})
		d.Metadata = map[string]contract.Value{"lang": contract.String("go")}
		d.Namespace = fmt.Sprintf("ns%d/", i%3)
		d.SourceURI = fmt.Sprintf("file:///src/f%d.go#L1-L2", i%5)
		docs = append(docs, d)
	}
	mustUpsert(t, c, docs...)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(ctx, []string{"d00", "d07"}); err != nil {
		t.Fatal(err)
	}
	upd := docs[9]
	upd.Content = "replaced text"
	mustUpsert(t, c, upd)
	if _, n, err := c.DeleteByNamespace(ctx, "ns1/"); err != nil || n != 19 { // d07 is gone already
		t.Fatalf("DeleteByNamespace: %d, %v", n, err)
	}
	if _, n, err := c.DeleteBySource(ctx, "file:///src/f2.go"); err != nil || n == 0 {
		t.Fatalf("DeleteBySource: %d, %v", n, err)
	}
	gone := map[string]bool{"d00": true, "d07": true}
	for i := 0; i < 60; i++ {
		if i%3 == 1 || i%5 == 2 {
			gone[fmt.Sprintf("d%02d", i)] = true
		}
	}
	goFilter := contract.Eq("lang", contract.String("go"))
	check := func(label string) {
		t.Helper()
		for id := range gone {
			if _, err := c.Get(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%s) = %v, want not found", label, id, err)
			}
		}
		all := []contract.Tier{contract.Hot, contract.Warm, contract.Cold}
		for _, q := range []contract.Query{
			{Text: "needle haystack number", Mode: contract.Lexical, TopK: 100, Tiers: all},
			{Text: "needle haystack number", Mode: contract.Lexical, TopK: 100, Tiers: all, Filter: &goFilter},
			{Vector: []float32{0, 1, 0, 0}, Mode: contract.Dense, TopK: 100, Tiers: all},
			{Vector: []float32{0, 1, 0, 0}, Mode: contract.Dense, TopK: 100, Tiers: all, Filter: &goFilter},
			{Text: "needle", Vector: []float32{7, 1, 0, 0}, Mode: contract.Hybrid, TopK: 100, Tiers: all},
			{Text: "needle", Vector: []float32{7, 1, 0, 0}, Mode: contract.Hybrid, TopK: 100, Tiers: all, Fusion: contract.FusionParams{Method: "rrf"}},
		} {
			r := mustSearch(t, c, q)
			seen := map[string]bool{}
			for _, h := range r.Hits {
				if gone[h.DocID] {
					t.Fatalf("%s: %s query returned deleted %s", label, q.Mode, h.DocID)
				}
				if seen[h.DocID] {
					t.Fatalf("%s: %s query returned %s twice", label, q.Mode, h.DocID)
				}
				seen[h.DocID] = true
				if h.DocID == "d09" && h.Content != "replaced text" {
					t.Fatalf("%s: old version of d09 returned", label)
				}
			}
			wantN := 60 - len(gone)
			if q.Mode == contract.Lexical {
				wantN-- // d09's new text has no query term
			}
			if q.Mode != contract.Hybrid && len(r.Hits) != wantN {
				t.Fatalf("%s: %s query (filter %v): %d hits, want %d", label, q.Mode, q.Filter != nil, len(r.Hits), wantN)
			}
		}
	}
	check("after deletes")
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("after flush")
	db.Close()
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection("cold"); err != nil {
		t.Fatal(err)
	}
	check("after reopen")
}

// TestSnapshotPointInTime: a Snapshot keeps answering with the versions
// of its epoch while documents are updated, deleted, flushed, archived
// and promoted: dense results are identical (ids, scores); lexical and
// hybrid results hold exactly the same matching versions (ids and
// contents, TopK above the corpus size). Lexical scores may drift: BM25
// statistics are collected over whole segments, including the MemTable
// versions written after the snapshot (a known limitation).
func TestSnapshotPointInTime(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 8, Metric: "cosine", MemTableSizeBytes: -1})
	docs := tiersCorpus(120, 9)
	mustUpsert(t, c, docs...)
	qs := tiersQueries(4)[:24]
	for i := range qs {
		qs[i].Filter = nil
		if qs[i].Mode != contract.Dense {
			qs[i].TopK = 500
		}
	}
	versions := func(hs []contract.Envelope) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.DocID+"="+h.Content)
		}
		slices.Sort(out)
		return out
	}
	sn, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	before := make([][]contract.Envelope, len(qs))
	for i, q := range qs {
		r, err := sn.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		before[i] = r.Hits
	}
	// Change everything underneath.
	if _, err := c.Delete(ctx, []string{docs[0].ID, docs[1].ID, docs[2].ID}); err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 40; i++ {
		d := docs[i]
		d.Content = "rewritten"
		mustUpsert(t, c, d)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	aid, err := c.Archive(ctx, ArchiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range qs {
		r, err := sn.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if q.Mode == contract.Dense {
			sameResults(t, "snapshot after writes+archive", q, before[i], r.Hits)
		} else if a, b := versions(before[i]), versions(r.Hits); !slices.Equal(a, b) {
			t.Fatalf("%s query %q: snapshot versions changed:\n%v\n%v", q.Mode, q.Text, a, b)
		}
		if r.Epoch != sn.Epoch() {
			t.Fatalf("result epoch %d, snapshot %d", r.Epoch, sn.Epoch())
		}
	}
	if _, err := c.Promote(ctx, aid, nil); err != nil {
		t.Fatal(err)
	}
	g, err := sn.Get(ctx, docs[0].ID)
	if err != nil || g.Content != docs[0].Content {
		t.Fatalf("snapshot Get of a later-deleted doc: %v %q", err, g.Content)
	}
	if _, err := c.Get(ctx, docs[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("collection Get after delete: %v", err)
	}
	if _, err := sn.Search(ctx, contract.Query{Text: "x", Cursor: "abc"}); !errors.Is(err, contract.ErrInvalid) {
		t.Fatalf("cursor on a snapshot: %v", err)
	}
	sn.Close()
	if _, err := sn.Search(ctx, qs[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("search after Close: %v", err)
	}
}

// TestBackupRestoreUnderLoad: a writer upserts w00000, w00001, … (content
// "v<i>") and deletes every 7th earlier one while Collection.Backup runs
// over a collection with warm segments and a cold archive. engine.Open of
// the backup directory must hold every write acknowledged before Backup
// was called, and exactly the model state after some prefix of the
// writes (nothing half-applied, nothing lost or duplicated).
func TestBackupRestoreUnderLoad(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	c, err := db.CreateCollection("bk", CollectionOptions{Dim: 4, Metric: "l2", MemTableSizeBytes: -1, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	op := func(i int) (contract.Document, string) {
		if i%7 == 6 {
			return contract.Document{}, fmt.Sprintf("w%05d", i-3)
		}
		return doc(fmt.Sprintf("w%05d", i), fmt.Sprintf("v%d", i), []float32{float32(i), 1, 2, 3}), ""
	}
	apply := func(i int) error {
		d, del := op(i)
		if del != "" {
			_, err := c.Delete(ctx, []string{del})
			return err
		}
		_, err := c.Upsert(ctx, []contract.Document{d})
		return err
	}
	model := func(upTo int) map[string]string {
		m := map[string]string{}
		for i := 0; i <= upTo; i++ {
			d, del := op(i)
			if del != "" {
				delete(m, del)
			} else {
				m[d.ID] = d.Content
			}
		}
		return m
	}
	next := 0
	for ; next < 300; next++ {
		if err := apply(next); err != nil {
			t.Fatal(err)
		}
		if next%100 == 99 {
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.Archive(ctx, ArchiveOptions{}); err != nil {
		t.Fatal(err)
	}
	var acked atomic.Int64
	acked.Store(int64(next - 1))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := next; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := apply(i); err != nil {
				t.Error(err)
				return
			}
			acked.Store(int64(i))
		}
	}()
	for acked.Load() < int64(next+100) {
		runtime.Gosched()
	}
	before := int(acked.Load())
	bdir := filepath.Join(t.TempDir(), "backup")
	bs, err := c.Backup(ctx, bdir)
	if err != nil {
		t.Fatal(err)
	}
	after := acked.Load()
	for acked.Load() < after+100 {
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rdb, err := Open(bdir, Options{})
	if err != nil {
		t.Fatalf("open backup: %v", err)
	}
	defer rdb.Close()
	rc, err := rdb.Collection("bk")
	if err != nil {
		t.Fatal(err)
	}
	sn, err := rc.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	live := sn.IDs()
	got := map[string]string{}
	for _, id := range live {
		d, err := sn.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got[id] = d.Content
	}
	// The restored state is the model after exactly one prefix m ≥ before.
	m := -1
	cur := model(before - 1)
	for k := before; k <= int(acked.Load()); k++ {
		d, del := op(k)
		if del != "" {
			delete(cur, del)
		} else {
			cur[d.ID] = d.Content
		}
		if len(cur) == len(got) && maps.Equal(cur, got) {
			m = k
			break
		}
	}
	if m < 0 {
		t.Fatalf("restored state (%d docs) is no prefix of the writes at or after %d acknowledged before the backup", len(got), before)
	}
	if len(rc.Archives()) != 1 || len(rc.WarmSegments()) != 2 {
		t.Fatalf("restored archives %v segments %v", rc.Archives(), rc.WarmSegments())
	}
	all := []contract.Tier{contract.Hot, contract.Warm, contract.Cold}
	r, err := rc.Search(ctx, contract.Query{Vector: []float32{5, 1, 2, 3}, Mode: contract.Dense, TopK: 1, Tiers: all})
	if err != nil || len(r.Hits) != 1 || r.Hits[0].DocID != "w00005" {
		t.Fatalf("restored cold search: %v %v", err, ids(r.Hits))
	}
	t.Logf("acknowledged before backup: %d; restored prefix: %d writes (%d docs); %+v", before+1, m+1, len(got), bs)
	if _, err := os.Stat(filepath.Join(bdir, "collections", "bk", "collection.json")); err != nil {
		t.Fatal(err)
	}
}

// TestDBBackup: DB.Backup copies every collection; engine.Open of the
// directory restores them (documents and options), and a non-empty
// target is refused.
func TestDBBackup(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	for _, name := range []string{"a", "b"} {
		c, err := db.CreateCollection(name, CollectionOptions{Dim: 2, Metric: "l2", MemTableSizeBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		mustUpsert(t, c, doc(name+"1", "first "+name, []float32{1, 0}), doc(name+"2", "second "+name, []float32{0, 1}))
		if name == "b" {
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	bdir := filepath.Join(t.TempDir(), "bk")
	stats, err := db.Backup(ctx, bdir)
	if err != nil || len(stats) != 2 {
		t.Fatalf("backup: %v %v", stats, err)
	}
	if _, err := db.Backup(ctx, bdir); err == nil {
		t.Fatal("backup into a non-empty directory succeeded")
	}
	r, err := Open(bdir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Collections(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("restored collections %v", got)
	}
	for _, name := range []string{"a", "b"} {
		c, _ := r.Collection(name)
		d, err := c.Get(ctx, name+"2")
		if err != nil || d.Content != "second "+name || c.Options().Dim != 2 {
			t.Fatalf("restored %s: %+v %v", name, d, err)
		}
	}
}
