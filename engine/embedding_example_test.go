package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
)

// letters is a toy embedder: a text's vector counts the letters a..d.
type letters struct{}

func (letters) Model() string { return "letters-4" }
func (letters) Dim() int      { return 4 }
func (letters) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 4)
		for _, r := range strings.ToLower(t) {
			if r >= 'a' && r <= 'd' {
				v[r-'a']++
			}
		}
		v[3] += 0.001 // never a zero vector
		out[i] = v
	}
	return out, nil
}

// A collection that records an embedding model embeds text-only documents
// and queries through the live embedder attached by model name.
func Example_embedding() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	db, err := engine.Open(dir, engine.Options{Embedders: map[string]embed.Embedder{"letters-4": letters{}}})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	col, err := db.CreateCollection("notes", engine.CollectionOptions{Dim: 4, Sync: "none",
		Embedding: &engine.EmbeddingConfig{Model: "letters-4"}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, err = col.Upsert(ctx, []contract.Document{ // no vectors: embedded on the way in
		{ID: "a", Content: "aaaa", Trust: contract.Authoritative},
		{ID: "b", Content: "bbbb", Trust: contract.Authoritative},
		{ID: "c", Content: "cccc", Trust: contract.Authoritative},
	})
	if err != nil {
		panic(err)
	}
	res, err := col.Search(ctx, contract.Query{Text: "abba bb", Mode: contract.Dense, TopK: 1})
	fmt.Println(res.Hits[0].DocID, err)

	// A lexical-only collection never turns a dense query lexical.
	lex, _ := db.CreateCollection("plain", engine.CollectionOptions{Dim: 4, Sync: "none"})
	_, err = lex.Search(ctx, contract.Query{Text: "abba", Mode: contract.Dense})
	fmt.Println(errors.Is(err, engine.ErrNoEmbedder))
	// Output:
	// b <nil>
	// true
}
