package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
)

// EmbeddingConfig is the embedding model a collection's vectors come
// from, recorded in its config file (CollectionOptions.Embedding): vectors
// of different models are not comparable, so a live embedder is attached
// only if its model name matches (and its dimension, once known, equals
// the collection's Dim).
type EmbeddingConfig struct {
	// Model is the embedder's model name (embed.Embedder.Model), e.g.
	// "use-lite-512". Required.
	Model string `json:"model"`
	// Dim is the model's vector dimension; it must equal the collection's
	// Dim. Default (0): the collection's Dim.
	Dim int `json:"dim"`
}

// ErrEmbedderMismatch: an embedder attached to a collection whose recorded
// embedding model differs from it, or that records none (a lexical-only
// collection), or an embedder whose output has another dimension.
var ErrEmbedderMismatch = errors.New("engine: embedder does not match the collection's embedding model")

// embedderBox holds a collection's live embedder (Collection.emb).
type embedderBox struct{ e embed.Embedder }

// collectionEmbedder is the live-embedder slot of a Collection.
type collectionEmbedder struct{ p atomic.Pointer[embedderBox] }

// validateEmbedding checks o.Embedding (called by CollectionOptions.Validate).
func (o *CollectionOptions) validateEmbedding() []error {
	e := o.Embedding
	if e == nil {
		return nil
	}
	var errs []error
	if strings.TrimSpace(e.Model) == "" {
		errs = append(errs, errors.New("engine: collection option Embedding.Model is empty"))
	}
	if e.Dim != o.Dim {
		errs = append(errs, fmt.Errorf("engine: collection option Embedding.Dim = %d, want the collection's Dim (%d)", e.Dim, o.Dim))
	}
	return errs
}

// validateEmbedders checks Options.Embedders (called by Options.Validate).
func (o *Options) validateEmbedders() []error {
	var errs []error
	for name, e := range o.Embedders {
		switch {
		case e == nil:
			errs = append(errs, fmt.Errorf("engine: option Embedders[%q] is nil", name))
		case e.Model() != name:
			errs = append(errs, fmt.Errorf("engine: option Embedders[%q] has model %q (the key must be the model name)", name, e.Model()))
		}
	}
	return errs
}

// attachConfiguredEmbedder attaches DB Options.Embedders[model] to a
// collection that records that embedding model (openCollection).
func (c *Collection) attachConfiguredEmbedder() error {
	if c.o.Embedding == nil {
		return nil
	}
	e, ok := c.db.o.Embedders[c.o.Embedding.Model]
	if !ok {
		return nil // attach later with SetEmbedder; until then ErrNoEmbedder
	}
	return c.SetEmbedder(e)
}

// SetEmbedder attaches e as the collection's live embedder (nil detaches
// it). The collection must record an embedding model
// (CollectionOptions.Embedding) equal to e.Model(), and e.Dim(), when
// known (non-zero), must equal the collection's Dim; otherwise the error
// wraps ErrEmbedderMismatch. Embedders can also be attached at open time
// by model name with Options.Embedders. Safe to call concurrently with
// searches and writes (each uses the embedder attached when it starts).
//
// With an embedder attached:
//   - a dense or hybrid Search whose query has Text and no Vector embeds
//     the text (one Embed call of one text) and searches with that vector;
//   - Upsert embeds, in one Embed call, the Content of every document that
//     has non-blank content and no vector, after redaction and before the
//     WAL append.
//
// Without one, such a query fails with ErrNoEmbedder, and in a collection
// that records an embedding model such an Upsert fails with ErrNoEmbedder
// too (storing the document without a vector would silently leave it out
// of dense search).
func (c *Collection) SetEmbedder(e embed.Embedder) error {
	if e == nil {
		c.emb.p.Store(nil)
		return nil
	}
	cfg := c.o.Embedding
	if cfg == nil {
		return fmt.Errorf("%w: collection %q records no embedding model (it was created lexical-only; create one with CollectionOptions.Embedding)", ErrEmbedderMismatch, c.name)
	}
	if e.Model() != cfg.Model {
		return fmt.Errorf("%w: collection %q was embedded with model %q, the embedder is %q", ErrEmbedderMismatch, c.name, cfg.Model, e.Model())
	}
	if d := e.Dim(); d != 0 && d != c.o.Dim {
		return fmt.Errorf("%w: embedder %q has dimension %d, collection %q has %d", ErrEmbedderMismatch, e.Model(), d, c.name, c.o.Dim)
	}
	c.emb.p.Store(&embedderBox{e})
	return nil
}

// Embedder returns the live embedder, or nil.
func (c *Collection) Embedder() embed.Embedder {
	if b := c.emb.p.Load(); b != nil {
		return b.e
	}
	return nil
}

// embedVectors embeds texts with e and checks the output: len(texts)
// vectors of the collection's Dim, finite, non-zero in a cosine
// collection.
func (c *Collection) embedVectors(ctx context.Context, e embed.Embedder, texts []string) ([][]float32, error) {
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if err := embed.CheckVectors(vecs, len(texts), c.o.Dim); err != nil {
		if errors.Is(err, embed.ErrDimMismatch) {
			return nil, fmt.Errorf("%w: %w", ErrEmbedderMismatch, err)
		}
		return nil, err
	}
	for i, v := range vecs {
		if _, bad := c.zeroCosine(v, nil); bad {
			return nil, fmt.Errorf("engine: embedder %q returned a zero vector for text %d (a cosine collection cannot hold it)", e.Model(), i)
		}
		var n2 float64
		for _, x := range v {
			n2 += float64(x) * float64(x)
		}
		if n2 > contract.MaxVectorNorm2 {
			return nil, fmt.Errorf("engine: embedder %q returned a vector whose squared norm %g exceeds %g for text %d", e.Model(), n2, float64(contract.MaxVectorNorm2), i)
		}
	}
	return vecs, nil
}

// noEmbedderError is ErrNoEmbedder with a validation error at loc.
func (c *Collection) noEmbedderError(loc []any, what string) error {
	why := "the collection records no embedding model (it is lexical-only)"
	if c.o.Embedding != nil {
		why = fmt.Sprintf("no embedder for model %q is attached (engine.Options.Embedders or Collection.SetEmbedder)", c.o.Embedding.Model)
	}
	ve := &contract.ValidationError{Errors: []contract.FieldError{{
		Loc: loc, InputValue: nil, ErrorType: contract.ErrTypeMissing,
		Message:        what + ": " + why,
		ExpectedDomain: fmt.Sprintf("float32[%d]", c.o.Dim),
	}}}
	return fmt.Errorf("%w: %w", ErrNoEmbedder, ve)
}

// embedQuery gives a dense or hybrid query with text and no vector its
// vector through the live embedder (Search step 1). Lexical queries and
// queries with a vector are left alone. Errors: ErrNoEmbedder (also a
// *contract.ValidationError), the embedder's error, ErrEmbedderMismatch.
// The embedding call runs under ctx, before q.Budget's deadline starts.
func (c *Collection) embedQuery(ctx context.Context, q *contract.Query) error {
	if len(q.Vector) > 0 || (q.Mode != contract.Dense && q.Mode != contract.Hybrid) {
		return nil
	}
	e := c.Embedder()
	if e == nil || strings.TrimSpace(q.Text) == "" {
		return c.noEmbedderError([]any{"query", "vector"}, fmt.Sprintf("%s mode needs a query vector", q.Mode))
	}
	vecs, err := c.embedVectors(ctx, e, []string{q.Text})
	if err != nil {
		return fmt.Errorf("engine: embed query text: %w", err)
	}
	q.Vector = vecs[0]
	return nil
}

// embedDocs returns docs with a vector for every document that has
// non-blank Content and no Vector, embedded in one Embed call (Upsert,
// after redaction). docs itself is not modified (a shallow copy is
// returned when anything is embedded). Without such documents it returns
// docs as they are; with some and no embedder, in a collection that records
// an embedding model, ErrNoEmbedder; in a lexical-only collection they are
// stored without vectors, as before.
func (c *Collection) embedDocs(ctx context.Context, docs []contract.Document) ([]contract.Document, error) {
	var idx []int
	for i := range docs {
		if len(docs[i].Vector) == 0 && strings.TrimSpace(docs[i].Content) != "" {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return docs, nil
	}
	e := c.Embedder()
	if e == nil {
		if c.o.Embedding == nil {
			return docs, nil
		}
		return nil, c.noEmbedderError([]any{"documents", idx[0], "vector"}, fmt.Sprintf("%d documents have content and no vector", len(idx)))
	}
	texts := make([]string, len(idx))
	for j, i := range idx {
		texts[j] = docs[i].Content
	}
	vecs, err := c.embedVectors(ctx, e, texts)
	if err != nil {
		return nil, fmt.Errorf("engine: embed %d documents: %w", len(idx), err)
	}
	out := append([]contract.Document(nil), docs...)
	for j, i := range idx {
		out[i].Vector = vecs[j]
	}
	return out, nil
}
