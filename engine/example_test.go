package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

func Example() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	col, err := db.CreateCollection("code", engine.CollectionOptions{Dim: 3, Metric: "cosine",
		IndexedFields: map[string]engine.FieldType{"lang": engine.FieldKeyword}})
	if err != nil {
		log.Fatal(err)
	}
	epoch, err := col.Upsert(ctx, []contract.Document{
		{ID: "open", Content: "func OpenFile(path string) (*File, error)", Vector: []float32{1, 0, 0},
			Trust: contract.Authoritative, Metadata: map[string]contract.Value{"lang": contract.String("go")}},
		{ID: "close", Content: "func (f *File) Close() error", Vector: []float32{0, 1, 0},
			Trust: contract.Authoritative, Metadata: map[string]contract.Value{"lang": contract.String("go")}},
		{ID: "readme", Content: "Open a file with open_file.", Vector: []float32{0.9, 0.1, 0},
			Trust: contract.Derived, Metadata: map[string]contract.Value{"lang": contract.String("md")}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written at epoch", epoch)

	// Hybrid: text and vector. By default (CollectionOptions.HybridDefault
	// "rerank-maxnorm") the BM25 top 20 are re-ranked by
	// 0.65·bm25/max bm25 + 0.35·cos/max cos; Fusion{Method: "rrf"} asks
	// for RRF (k = 60) over both full lists instead.
	res, err := col.Search(ctx, contract.Query{Text: "open file", Vector: []float32{1, 0, 0}, TopK: 2})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Printf("%s score=%.3f lexical_rank=%d dense_rank=%d\n", h.DocID, h.Score, h.Explain.LexicalRank, h.Explain.DenseRank)
	}

	// A metadata filter is applied while candidates are generated.
	f := contract.Eq("lang", contract.String("go"))
	res, _ = col.Search(ctx, contract.Query{Text: "file", Filter: &f})
	fmt.Println("go only:", len(res.Hits), "hits, epoch", res.Epoch)

	// Dense mode with text and no vector: no embedder is configured.
	_, err = col.Search(ctx, contract.Query{Text: "open file", Mode: contract.Dense})
	fmt.Println(errors.Is(err, engine.ErrNoEmbedder))

	db.Close()
	// Output:
	// written at epoch 1
	// readme score=0.998 lexical_rank=1 dense_rank=2
	// open score=0.831 lexical_rank=2 dense_rank=1
	// go only: 2 hits, epoch 1
	// true
}
