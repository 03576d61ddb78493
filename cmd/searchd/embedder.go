package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
	"github.com/stratasearch/strata/engine/embed/static"
	"github.com/stratasearch/strata/ingest"
)

// defaultEmbedderModel is the model of the bundled embed server
// (tools/embed-server): the Universal Sentence Encoder Lite, 512-d.
const defaultEmbedderModel = "use-lite-512"

// builtinHybridDefault, builtinRerankWindow and builtinRerankDenseWeight
// are the hybrid strategy of collections `index` creates with the
// built-in embedder: rerank-maxnorm over the BM25 top 100 with a dense
// weight of 0.35 (the engine's default re-ranks the top 20, a window
// chosen on prose collections). On GOROOT/src
// (bench/results/notes/embedder.md) rerank-maxnorm had the best intent
// success@5 of every fusion and was the only one not below lexical on the
// doc-sentence queries (RRF: −0.095 MRR@10, CI excluding 0). N = 100 was
// chosen on the even half of the Go intent and doc-sentence sets and the
// Python intent set (α = 0.5 measured better on the Go half but −0.050
// MRR@10 on Python, CI excluding 0, so α stays 0.35); on the odd Go half,
// held out, intent success@5 went 0.533 → 0.575 (ΔRR@10 +0.017 [+0.003,
// +0.036]), doc-sentence stayed 0.920, identifier queries unchanged.
const (
	builtinHybridDefault     = engine.HybridRerankMaxNorm
	builtinRerankWindow      = 100
	builtinRerankDenseWeight = 0.35
)

// embedderHybridDefault is the hybrid strategy of collections `index
// --embedder URL` creates: RRF (k = 60) over the full lexical and dense lists.
// Code search is asked paraphrases whose answer BM25 ranks low or not at
// all. The engine's default, rerank-maxnorm (tuned on prose collections),
// re-orders only the BM25 top 20 with a dense weight of 0.35: on the
// main-job subset (mainjob_test.go) it left the two paraphrases lexical
// misses at ranks 8 and 7, where RRF puts them at 2 and 3. The price: RRF
// moves some answers BM25 already ranks first down to rank 2-4.
const embedderHybridDefault = engine.HybridRRF

// embedderFlags are the --embedder flags of index, search and serve.
type embedderFlags struct {
	url, model, key *string
	batch           *int
	timeout         *time.Duration
	fl              *flag.FlagSet
}

// Values of --embedder besides a URL.
const (
	embedderBuiltin = "builtin"
	embedderNone    = "none"
)

func addEmbedderFlags(fl *flag.FlagSet) *embedderFlags {
	return &embedderFlags{
		url: fl.String("embedder", embedderBuiltin, "embedder: builtin (static GloVe 6B 100-d + SIF word vectors, in-process, model "+static.BuiltinModel+
			") | none (lexical-only: no vectors) | an OpenAI-compatible embeddings server base URL (POST {URL}/v1/embeddings), e.g. http://127.0.0.1:7701 (make embed-server)"),
		model:   fl.String("embedder-model", defaultEmbedderModel, "embedding model name sent to an --embedder URL server and recorded in the collection"),
		batch:   fl.Int("embedder-batch", embed.DefaultBatchSize, "texts per embeddings request"),
		key:     fl.String("embedder-key-env", "STRATA_EMBEDDER_KEY", "environment variable holding the embedder's API key (sent as a Bearer token when set)"),
		timeout: fl.Duration("embedder-timeout", embed.DefaultTimeout, "timeout of one embeddings request"),
		fl:      fl,
	}
}

// explicit reports whether --embedder was given on the command line.
func (f *embedderFlags) explicit() bool {
	set := false
	f.fl.Visit(func(fl *flag.Flag) { set = set || fl.Name == "embedder" })
	return set
}

// builtin reports whether the flags select the built-in embedder.
func (f *embedderFlags) builtin() bool { return *f.url == embedderBuiltin }

// embedder returns the selected embedder: static.Lazy for builtin, nil
// for none, or a client of the --embedder URL server after a probe
// request that checks the server and learns the dimension.
func (f *embedderFlags) embedder(ctx context.Context) (embed.Embedder, error) {
	switch *f.url {
	case "", embedderNone:
		return nil, nil
	case embedderBuiltin:
		return static.Lazy{}, nil
	}
	c, err := embed.NewClient(embed.Options{BaseURL: *f.url, Model: *f.model, BatchSize: *f.batch,
		APIKey: os.Getenv(*f.key), Timeout: *f.timeout})
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := c.Probe(pctx); err != nil {
		return nil, fmt.Errorf("embedder %s (model %s) is not answering: %w", *f.url, *f.model, err)
	}
	return c, nil
}

// errLexicalOnly: an embedder was asked for on a collection indexed
// lexical-only.
var errLexicalOnly = errors.New("collection was indexed lexical-only")

// openStore opens the embedded store at dir and collection name, creating
// it when create is set: with emb, a collection of emb's dimension that
// records its model (hybrid default builtinHybridDefault for the built-in
// embedder, embedderHybridDefault for a URL); without, a
// lexical-only one (Dim codeDim, no vectors written). An existing
// collection must agree: one indexed lexical-only cannot take an embedder
// (its chunks have no vectors), and one indexed with an embedder is only
// re-indexed (create) with the same model.
func openStore(dir, name string, create bool, sync string, emb embed.Embedder) (*engine.DB, *engine.Collection, error) {
	if !create {
		if _, err := os.Stat(filepath.Join(dir, "collections", name)); err != nil {
			return nil, nil, fmt.Errorf("no collection %q in %s (run 'searchd index PATH --data %s' first)", name, dir, dir)
		}
	}
	// The built-in embedder is always registered (it decodes its table
	// only when a text is embedded): a collection indexed with it answers
	// dense and hybrid queries with no flag.
	eo := engine.Options{Embedders: map[string]embed.Embedder{static.BuiltinModel: static.Lazy{}}}
	if emb != nil {
		eo.Embedders[emb.Model()] = emb
	}
	db, err := engine.Open(dir, eo)
	if err != nil {
		return nil, nil, err
	}
	col, err := db.Collection(name)
	if errors.Is(err, engine.ErrNotFound) && create {
		co := engine.CollectionOptions{
			Dim: codeDim, Metric: "cosine", Analyzer: engine.AnalyzerCode, Sync: engine.SyncPolicy(sync),
			IndexedFields: map[string]engine.FieldType{
				ingest.MetaLang: engine.FieldKeyword, ingest.MetaKind: engine.FieldKeyword,
				ingest.MetaSymbol: engine.FieldKeyword, ingest.MetaPath: engine.FieldKeyword,
				ingest.MetaNames: engine.FieldKeyword,
			},
		}
		if emb != nil {
			co.Dim = emb.Dim()
			co.Embedding = &engine.EmbeddingConfig{Model: emb.Model(), Dim: emb.Dim()}
			co.HybridDefault = embedderHybridDefault
			if emb.Model() == static.BuiltinModel {
				co.HybridDefault = builtinHybridDefault
				co.HybridRerankWindow, co.HybridRerankDenseWeight = builtinRerankWindow, builtinRerankDenseWeight
			}
		}
		col, err = db.CreateCollection(name, co)
	}
	if err == nil {
		err = checkEmbedding(col, dir, emb, create)
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, col, nil
}

func checkEmbedding(col *engine.Collection, dir string, emb embed.Embedder, create bool) error {
	rec := col.Options().Embedding
	switch {
	case emb != nil && rec == nil:
		return fmt.Errorf("collection %q in %s %w (--embedder none): its chunks have no vectors; index into a new --collection or --data directory to use an embedder", col.Name(), dir, errLexicalOnly)
	case emb != nil && rec.Model != emb.Model():
		return fmt.Errorf("collection %q in %s was indexed with embedding model %q, not %q (--embedder, --embedder-model)", col.Name(), dir, rec.Model, emb.Model())
	case emb != nil && rec.Dim != emb.Dim():
		return fmt.Errorf("collection %q in %s has dimension %d, the embedder returns %d", col.Name(), dir, rec.Dim, emb.Dim())
	case emb == nil && rec != nil && create:
		return fmt.Errorf("collection %q in %s was indexed with embedding model %q: pass the --embedder it was indexed with to keep its vectors complete", col.Name(), dir, rec.Model)
	}
	return nil
}

// noEmbedderHelp explains a dense or hybrid search that has no embedder.
func noEmbedderHelp(col *engine.Collection, mode string, err error) error {
	if rec := col.Options().Embedding; rec != nil {
		return fmt.Errorf("search: --mode %s embeds the query text: pass --embedder URL serving model %q (the model this collection was indexed with): %w", mode, rec.Model, err)
	}
	return fmt.Errorf("search: --mode %s needs vectors, and this collection was indexed lexical-only (--embedder none): re-index into a new --collection, or use --mode lexical: %w", mode, err)
}

// printExplain prints a hit's retriever ranks (Envelope.Explain).
func printExplain(w io.Writer, e contract.Explain, mode contract.Mode) {
	rank := func(r int) string {
		if r == 0 {
			return "—"
		}
		return fmt.Sprintf("#%d", r)
	}
	switch mode {
	case contract.Lexical:
		fmt.Fprintf(w, "lexical %s (bm25 %.3f)\n", rank(e.LexicalRank), e.LexicalScore)
	case contract.Dense:
		fmt.Fprintf(w, "dense %s (similarity %.4f)\n", rank(e.DenseRank), e.DenseScore)
	default:
		if e.FusedScore == 0 && e.DenseRank == 0 && e.LexicalRank > 0 {
			// ingest.Search's definitions-first lookup (lexical, by name).
			fmt.Fprintf(w, "declares a query name (definitions first): lexical #%d of that lookup (bm25 %.3f)\n", e.LexicalRank, e.LexicalScore)
			return
		}
		fmt.Fprintf(w, "lexical %s", rank(e.LexicalRank))
		if e.LexicalRank > 0 {
			fmt.Fprintf(w, " (bm25 %.3f)", e.LexicalScore)
		}
		fmt.Fprintf(w, ", dense %s", rank(e.DenseRank))
		if e.DenseRank > 0 {
			fmt.Fprintf(w, " (similarity %.4f)", e.DenseScore)
		}
		fmt.Fprintf(w, ", fused %.5f\n", e.FusedScore)
	}
}

// defaultSearchMode is search's mode without --mode: hybrid when the
// collection has vectors and their embedder is at hand (the built-in one,
// or emb with the recorded model), else lexical (also with --embedder
// none, lexicalOnly).
func defaultSearchMode(col *engine.Collection, emb embed.Embedder, lexicalOnly bool) contract.Mode {
	rec := col.Options().Embedding
	switch {
	case lexicalOnly || rec == nil:
		return contract.Lexical
	case rec.Model == static.BuiltinModel, emb != nil && emb.Model() == rec.Model:
		return contract.Hybrid
	}
	return contract.Lexical
}
