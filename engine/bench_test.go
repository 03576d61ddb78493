package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
)

// BenchmarkSearch measures one Search over a hot tier of n synthetic
// documents (dim 64, cosine, 20-word contents), per mode.
func BenchmarkSearch(b *testing.B) {
	const n, dim = 5000, 64
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection("b", CollectionOptions{Dim: dim, Sync: "none", IndexedFields: map[string]FieldType{"lang": FieldKeyword}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	var docs []contract.Document
	for i := 0; i < n; i++ {
		content := ""
		for w := 0; w < 20; w++ {
			content += fmt.Sprintf("w%d ", rng.IntN(2000))
		}
		docs = append(docs, contract.Document{ID: fmt.Sprint(i), Content: content, Vector: vec(), Trust: contract.Authoritative,
			Metadata: map[string]contract.Value{"lang": contract.String([]string{"go", "rust", "c", "py"}[i%4])}})
	}
	if _, err := c.Upsert(context.Background(), docs); err != nil {
		b.Fatal(err)
	}
	qv := vec()
	f := contract.Eq("lang", contract.String("go"))
	for _, m := range []struct {
		name string
		q    contract.Query
	}{
		{"lexical", contract.Query{Text: "w1 w2 w3"}},
		{"dense", contract.Query{Vector: qv}},
		{"hybrid", contract.Query{Text: "w1 w2 w3", Vector: qv}}, // default rerank-maxnorm
		{"hybrid_rrf", contract.Query{Text: "w1 w2 w3", Vector: qv, Fusion: contract.FusionParams{Method: "rrf"}}},
		{"hybrid_filtered", contract.Query{Text: "w1 w2 w3", Vector: qv, Filter: &f}},
	} {
		b.Run(fmt.Sprintf("n=%d/dim=%d/mode=%s", n, dim, m.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Search(context.Background(), m.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFilteredDenseWarm measures one filtered dense Search (k = 10)
// over a flushed warm segment of n synthetic documents (dim 64, cosine)
// with an indexed keyword filter admitting 1%, 10% or 50% of them, and
// the unfiltered query for reference.
func BenchmarkFilteredDenseWarm(b *testing.B) {
	const n, dim = 20000, 64
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	c, err := db.CreateCollection("b", CollectionOptions{Dim: dim, Sync: "none", IndexedFields: map[string]FieldType{"tag": FieldKeyword}})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		return v
	}
	var docs []contract.Document
	for i := 0; i < n; i++ {
		docs = append(docs, contract.Document{ID: fmt.Sprint(i), Content: "doc", Vector: vec(), Trust: contract.Authoritative,
			Metadata: map[string]contract.Value{"tag": contract.String(fmt.Sprintf("t%d", i%100))}})
	}
	ctx := context.Background()
	if _, err := c.Upsert(ctx, docs); err != nil {
		b.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	qv := vec()
	tags := func(m int) *contract.Filter {
		var vs []contract.Value
		for i := range m {
			vs = append(vs, contract.String(fmt.Sprintf("t%d", i)))
		}
		f := contract.In("tag", vs...)
		return &f
	}
	for _, m := range []struct {
		name string
		f    *contract.Filter
	}{{"none", nil}, {"1pct", tags(1)}, {"10pct", tags(10)}, {"50pct", tags(50)}} {
		b.Run(fmt.Sprintf("n=%d/dim=%d/filter=%s", n, dim, m.name), func(b *testing.B) {
			b.ReportAllocs()
			q := contract.Query{Vector: qv, Mode: contract.Dense, TopK: 10, Filter: m.f}
			for b.Loop() {
				if _, err := c.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
