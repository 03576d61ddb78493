package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestFlushedVersionHashes: after a flush (a format version 5 segment,
// which stores a version hash only when it is not BLAKE3-256 of the
// content) and a reopen, every way a version hash leaves the engine gives
// the hash written: search envelopes, Get, Fetch, ListDocuments, IfMatch
// and hit verification.
func TestFlushedVersionHashes(t *testing.T) {
	db, dir := newDB(t)
	ctx := context.Background()
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 2, Sync: "none"})
	if err != nil {
		t.Fatal(err)
	}
	var docs []contract.Document
	want := map[string]string{}
	for i := range 40 {
		d := doc(fmt.Sprintf("d%02d", i), fmt.Sprintf("shared word%d text", i), []float32{1, float32(i)})
		if i%4 == 1 { // a caller-given hash (e.g. of the source bytes)
			d.VersionHash = VersionHash([]byte(fmt.Sprintf("source %d", i)))
		}
		docs = append(docs, d)
		want[d.ID] = d.VersionHash
		if d.VersionHash == "" {
			want[d.ID] = VersionHashString(d.Content)
		}
	}
	if _, err := c.Upsert(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c, err = db2.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.WarmSegments == 0 {
		t.Fatalf("no warm segment after flush: %+v", st)
	}
	check := func(what, id, got string) {
		t.Helper()
		if got != want[id] {
			t.Fatalf("%s %s: version hash %s, want %s", what, id, got, want[id])
		}
	}
	for _, mode := range []contract.Mode{contract.Lexical, contract.Dense, contract.Hybrid} {
		r := mustSearch(t, c, contract.Query{Text: "shared", Vector: []float32{1, 3}, Mode: mode, TopK: 40})
		if len(r.Hits) == 0 {
			t.Fatalf("%s: no hits", mode)
		}
		for _, h := range r.Hits {
			check(string(mode)+" hit", h.DocID, h.VersionHash)
		}
		kept, dropped, err := c.VerifyHits(ctx, contract.Query{Text: "shared"}, r.Hits)
		if err != nil || len(kept) != len(r.Hits) {
			t.Fatalf("%s: verify kept %d of %d hits: %v %+v", mode, len(kept), len(r.Hits), err, dropped)
		}
	}
	for id := range want {
		d, err := c.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		check("Get", id, d.VersionHash)
	}
	ids := []string{"d00", "d01", "d02"}
	f, err := c.Fetch(ctx, contract.Query{}, ids)
	if err != nil || len(f.Hits) != 3 {
		t.Fatalf("fetch: %v %d", err, len(f.Hits))
	}
	for _, h := range f.Hits {
		check("Fetch", h.DocID, h.VersionHash)
	}
	listed, err := c.ListDocuments(ctx, nil, "", 100)
	if err != nil || len(listed) != len(want) {
		t.Fatalf("list: %v %d", err, len(listed))
	}
	for _, l := range listed {
		check("ListDocuments", l.ID, l.VersionHash)
	}
	// IfMatch against the flushed versions: the right hash writes, a
	// wrong one (the content hash of a caller-hashed doc) conflicts.
	if _, err := c.Upsert(ctx, []contract.Document{doc("d00", "new", []float32{1, 0})}, IfMatch(map[string]string{"d00": want["d00"]})); err != nil {
		t.Fatalf("IfMatch derived hash: %v", err)
	}
	if _, err := c.Upsert(ctx, []contract.Document{doc("d01", "new", []float32{1, 0})}, IfMatch(map[string]string{"d01": want["d01"]})); err != nil {
		t.Fatalf("IfMatch stored hash: %v", err)
	}
	_, err = c.Upsert(ctx, []contract.Document{doc("d05", "new", []float32{1, 0})}, IfMatch(map[string]string{"d05": VersionHashString(docs[5].Content)}))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("IfMatch with the content hash of a caller-hashed doc: %v", err)
	}
}
