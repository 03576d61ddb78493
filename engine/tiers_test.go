package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// tiersCorpus returns n documents with varied contents, 8-dim vectors and
// metadata (an indexed keyword and number, an undeclared tag).
func tiersCorpus(n int, seed uint64) []contract.Document {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	words := []string{"alpha", "beta", "gamma", "delta", "read", "full", "buffer", "io", "reader", "error", "net", "http"}
	langs := []string{"go", "rust", "py"}
	var docs []contract.Document
	for i := 0; i < n; i++ {
		var sb strings.Builder
		for j, nw := 0, 2+rng.IntN(12); j < nw; j++ {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		vec := make([]float32, 8)
		for j := range vec {
			vec[j] = float32(rng.NormFloat64())
		}
		if i%17 == 5 {
			vec = nil // some rows without a vector
		}
		d := doc(fmt.Sprintf("d%04d", i), sb.String(), vec)
		d.Metadata = map[string]contract.Value{"lang": contract.String(langs[rng.IntN(3)]),
			"lines": contract.Number(float64(rng.IntN(100)))}
		if i%4 == 0 {
			d.Metadata["tag"] = contract.String("t" + fmt.Sprint(i%3))
		}
		docs = append(docs, d)
	}
	return docs
}

func tiersQueries(seed uint64) []contract.Query {
	rng := rand.New(rand.NewPCG(seed, 99))
	vec := func() []float32 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		return v
	}
	indexed := contract.Eq("lang", contract.String("go"))
	rangeF := contract.Range("lines", contract.F(10), nil, nil, contract.F(60))
	undeclared := contract.Eq("tag", contract.String("t1"))
	var qs []contract.Query
	for _, text := range []string{"read full", "buffer error", "gamma", "\"read full\"", "http net io"} {
		for _, f := range []*contract.Filter{nil, &indexed, &rangeF, &undeclared} {
			v := vec()
			qs = append(qs,
				contract.Query{Text: text, Mode: contract.Lexical, TopK: 15, Filter: f},
				contract.Query{Vector: v, Mode: contract.Dense, TopK: 15, Filter: f},
				contract.Query{Text: text, Vector: v, Mode: contract.Hybrid, TopK: 15, Filter: f},
				contract.Query{Text: text, Vector: v, Mode: contract.Hybrid, TopK: 15, Filter: f,
					Fusion: contract.FusionParams{Method: "rrf", K: 60}},
			)
		}
	}
	return qs
}

// sameResults compares two result lists: equal length, scores equal within
// 1e-9 position by position, and the same ids (ids of hits tied on score
// are compared as sets, since the order of exact ties depends on local
// doc ids).
func sameResults(t *testing.T, label string, q contract.Query, want, got []contract.Envelope) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: query %+v: %d hits, want %d\nwant %v\ngot  %v", label, q, len(got), len(want), ids(want), ids(got))
	}
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && math.Abs(want[j].Score-want[i].Score) <= 1e-9 {
			j++
		}
		for k := i; k < j; k++ {
			if d := math.Abs(got[k].Score - want[k].Score); d > 1e-9 {
				t.Fatalf("%s: query %+v: hit %d score %.12f, want %.12f (Δ %g)\nwant %v\ngot  %v", label, q, k, got[k].Score, want[k].Score, d, ids(want), ids(got))
			}
		}
		a, b := ids(want[i:j]), ids(got[i:j])
		sort.Strings(a)
		sort.Strings(b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("%s: query %+v: hits %d..%d ids %v, want %v", label, q, i, j, b, a)
		}
		i = j
	}
}

func runAll(t *testing.T, c *Collection, qs []contract.Query) [][]contract.Envelope {
	t.Helper()
	out := make([][]contract.Envelope, len(qs))
	for i, q := range qs {
		out[i] = mustSearch(t, c, q).Hits
	}
	return out
}

// TestSearchAcrossTiersSameResults: lexical, dense and hybrid results, with
// and without filters, are the same (ids, scores within 1e-9) whether the
// documents sit in the MemTable, in one warm segment, in nine warm
// segments plus the MemTable, or in the segment compaction merged them
// into: BM25 statistics are collected over every tier.
func TestSearchAcrossTiersSameResults(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 150
	}
	docs := tiersCorpus(n, 3)
	qs := tiersQueries(5)
	ctx := context.Background()
	opts := CollectionOptions{Dim: 8, Metric: "cosine", IndexedFields: map[string]FieldType{"lang": FieldKeyword, "lines": FieldNumber},
		MemTableSizeBytes: -1}

	// Reference: everything in the MemTable.
	a := newColl(t, opts)
	mustUpsert(t, a, docs...)
	ref := runAll(t, a, qs)
	nonEmpty := 0
	for _, r := range ref {
		if len(r) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < len(qs)*3/4 {
		t.Fatalf("only %d of %d reference queries have hits", nonEmpty, len(qs))
	}

	// Everything in one warm segment.
	if err := a.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(a.store.WarmSegments()) != 1 {
		t.Fatalf("%d segments after flush", len(a.store.WarmSegments()))
	}
	for i, r := range runAll(t, a, qs) {
		sameResults(t, "after flush", qs[i], ref[i], r)
	}

	// Nine warm segments plus the MemTable, then compacted into one.
	b := newColl(t, opts)
	per := (n + 9) / 10
	for i := 0; i < n; i += per {
		mustUpsert(t, b, docs[i:min(i+per, n)]...)
		if i+per < n {
			if err := b.store.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := len(b.store.WarmSegments()); got != 9 {
		t.Fatalf("%d segments, want 9", got)
	}
	for i, r := range runAll(t, b, qs) {
		sameResults(t, "9 segments + memtable", qs[i], ref[i], r)
	}
	if err := b.store.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	// Nine segments with CompactFanIn 8: two bounded merges.
	if got := len(b.store.WarmSegments()); got != 1 || b.store.Compactions() != 2 {
		t.Fatalf("%d segments, %d compactions after Compact", got, b.store.Compactions())
	}
	for i, r := range runAll(t, b, qs) {
		sameResults(t, "compacted + memtable", qs[i], ref[i], r)
	}
	if err := b.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range runAll(t, b, qs) {
		sameResults(t, "compacted + flushed", qs[i], ref[i], r)
	}
}

// TestTiersReadYourWritesAcrossFlush: updates and deletes of documents that
// live in warm segments are seen at once by lexical, dense and filtered
// search; the replaced version never comes back.
func TestTiersReadYourWritesAcrossFlush(t *testing.T) {
	ctx := context.Background()
	c := newColl(t, CollectionOptions{Dim: 2, Metric: "l2", IndexedFields: map[string]FieldType{"lang": FieldKeyword}, MemTableSizeBytes: -1})
	d := doc("n", "needle old", []float32{0, 0})
	d.Metadata = map[string]contract.Value{"lang": contract.String("go")}
	mustUpsert(t, c, d, doc("o", "other words", []float32{5, 5}))
	if err := c.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d.Content = "needle new"
	mustUpsert(t, c, d)
	goF := contract.Eq("lang", contract.String("go"))
	check := func(label, want string) {
		t.Helper()
		for _, q := range []contract.Query{{Text: "needle"}, {Vector: []float32{0, 0}, TopK: 1}, {Text: "needle", Filter: &goF},
			{Text: "needle", Vector: []float32{0, 0}, Mode: contract.Hybrid}} {
			r := mustSearch(t, c, q)
			var got []string
			for _, h := range r.Hits {
				if h.DocID == "n" {
					got = append(got, h.Content)
				}
			}
			if fmt.Sprint(got) != want {
				t.Fatalf("%s: query %+v: contents of n %v, want %s", label, q, got, want)
			}
		}
	}
	check("updated in memtable over warm", "[needle new]")
	if err := c.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("both flushed", "[needle new]")
	if _, err := c.Delete(ctx, []string{"n"}); err != nil {
		t.Fatal(err)
	}
	check("deleted", "[]")
	if err := c.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check("deleted, flushed", "[]")
	if err := c.store.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("deleted, compacted", "[]")
}

// TestReopenReplaysOnlyWALTail: after a flush, reopening replays only the
// batches written since (not the whole history), and searches give the
// same results as before the close.
func TestReopenReplaysOnlyWALTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.CreateCollection("c", CollectionOptions{Dim: 8, Sync: "none", MemTableSizeBytes: -1,
		IndexedFields: map[string]FieldType{"lang": FieldKeyword, "lines": FieldNumber}})
	if err != nil {
		t.Fatal(err)
	}
	docs := tiersCorpus(200, 11)
	for i := 0; i < 190; i += 10 {
		mustUpsert(t, c, docs[i:i+10]...)
	}
	if err := c.store.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 190; i < 200; i += 5 {
		mustUpsert(t, c, docs[i:i+5]...)
	}
	if _, err := c.Delete(ctx, []string{"d0003"}); err != nil {
		t.Fatal(err)
	}
	qs := tiersQueries(13)
	before := runAll(t, c, qs)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.store.ReplayedRecords(); got != 3 {
		t.Fatalf("reopen replayed %d WAL records, want 3 (the tail after the flush)", got)
	}
	for i, r := range runAll(t, c, qs) {
		sameResults(t, "reopened", qs[i], before[i], r)
	}
	if _, err := c.Get(ctx, "d0003"); err == nil {
		t.Fatal("deleted warm row visible after reopen")
	}
}
