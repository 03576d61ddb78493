package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// TestFilterOnlyLexicalViews: a lexical search whose only restriction is
// an indexed filter (its candidate rows come from walking the filter
// bitmap) returns exactly what the same search returns when a scope that
// admits every document also applies (its candidate rows come from
// testing each live row), over warm segments, the MemTable and deletes,
// for selective and broad filters, and each hit passes the filter.
func TestFilterOnlyLexicalViews(t *testing.T) {
	c := newColl(t, CollectionOptions{Dim: 2, IndexedFields: map[string]FieldType{"names": FieldKeyword, "lang": FieldKeyword}})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 9))
	words := []string{"open", "read", "close", "parse", "write", "lookup"}
	langs := []string{"go", "c", "py"}
	next := 0
	for round := range 4 {
		var batch []contract.Document
		for range 60 {
			id := fmt.Sprintf("d%03d", next)
			next++
			d := doc(id, words[rng.IntN(len(words))]+" "+words[rng.IntN(len(words))]+" file", []float32{rng.Float32(), rng.Float32()})
			d.SourceURI = "file:///r/" + id + ".go#L1-L2"
			d.Metadata = map[string]contract.Value{
				"names": contract.Strings(fmt.Sprintf("N%d", rng.IntN(40)), fmt.Sprintf("N%d", rng.IntN(40))),
				"lang":  contract.String(langs[rng.IntN(len(langs))]),
			}
			batch = append(batch, d)
		}
		mustUpsert(t, c, batch...)
		var del []string
		for range 10 {
			del = append(del, fmt.Sprintf("d%03d", rng.IntN(next)))
		}
		if _, err := c.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
		if round < 3 {
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	filters := []contract.Filter{
		contract.In("names", contract.String("N7")),
		contract.In("names", contract.String("N3"), contract.String("N30")),
		contract.Eq("lang", contract.String("go")),
		contract.Or(contract.Eq("lang", contract.String("c")), contract.In("names", contract.String("N1"))),
		contract.In("names", contract.String("absent")),
	}
	total := 0
	for fi, f := range filters {
		for _, text := range []string{"open file", "lookup", "parse write"} {
			q := contract.Query{Text: text, Mode: contract.Lexical, TopK: 1000, Filter: &f}
			fast, err := c.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Scope.URIPrefix = "file:///r/"
			slow, err := c.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(fast.Hits) != len(slow.Hits) {
				t.Fatalf("filter %d %q: %d hits from the filter bitmap, %d from per-row tests", fi, text, len(fast.Hits), len(slow.Hits))
			}
			total += len(fast.Hits)
			for i := range fast.Hits {
				a, b := fast.Hits[i], slow.Hits[i]
				if a.DocID != b.DocID || a.Score != b.Score {
					t.Fatalf("filter %d %q hit %d: %s %v vs %s %v", fi, text, i, a.DocID, a.Score, b.DocID, b.Score)
				}
				d, err := c.Get(ctx, a.DocID)
				if err != nil || !f.Match(d.Metadata) {
					t.Fatalf("filter %d: hit %s does not pass the filter (%v)", fi, a.DocID, err)
				}
			}
		}
	}
	if total < 50 {
		t.Fatalf("only %d hits in all: the comparison is too weak", total)
	}
}

// BenchmarkFilterOnlySearch: a selective indexed filter (about 0.1% of
// 40,000 rows) over warm segments; path=bitmap is the filter-only query,
// path=per-row the same query with an all-admitting scope (each live row
// tested), the baseline.
func BenchmarkFilterOnlySearch(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection("b", CollectionOptions{Dim: 2, Sync: "none", IndexedFields: map[string]FieldType{"names": FieldKeyword}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"open", "read", "close", "parse", "write", "lookup", "name", "file"}
	for chunk := range 4 {
		batch := make([]contract.Document, 0, 10000)
		for i := range 10000 {
			id := fmt.Sprintf("d%06d", chunk*10000+i)
			d := doc(id, words[rng.IntN(len(words))]+" "+words[rng.IntN(len(words))], []float32{1, 0})
			d.SourceURI = "file:///r/" + id
			d.Metadata = map[string]contract.Value{"names": contract.Strings(fmt.Sprintf("N%d", rng.IntN(1000)))}
			batch = append(batch, d)
		}
		if _, err := c.Upsert(ctx, batch); err != nil {
			b.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	f := contract.In("names", contract.String("N7"))
	for _, path := range []string{"bitmap", "per-row"} {
		q := contract.Query{Text: "lookup name", Mode: contract.Lexical, TopK: 5, Filter: &f}
		if path == "per-row" {
			q.Scope.URIPrefix = "file:///r/"
		}
		b.Run("path="+path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
