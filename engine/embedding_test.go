package engine

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
)

// bowEmbedder is a deterministic fake embedder: each lower-cased word of
// a text adds a fixed pseudo-random unit direction (FNV of the word), and
// the sum is normalised. Texts sharing words have a high cosine.
type bowEmbedder struct {
	model string
	dim   int
	// outDim, when non-zero, is the length of the vectors actually
	// returned (a misbehaving embedder); Dim() still reports dim.
	outDim int
	err    error

	mu    sync.Mutex
	calls [][]string
}

func (f *bowEmbedder) Model() string { return f.model }
func (f *bowEmbedder) Dim() int      { return f.dim }

func (f *bowEmbedder) vec(text string) []float32 {
	d := f.dim
	if f.outDim != 0 {
		d = f.outDim
	}
	v := make([]float64, d)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,;:()\"'")
		for i := range v {
			h := fnv.New64a()
			h.Write([]byte(w))
			h.Write([]byte{byte(i), byte(i >> 8)})
			v[i] += float64(int64(h.Sum64()%2001)-1000) / 1000
		}
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, d)
	for i := range v {
		if n > 0 {
			out[i] = float32(v[i] / math.Sqrt(n))
		}
	}
	return out
}

func (f *bowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, append([]string(nil), texts...))
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vec(t)
	}
	return out, nil
}

func (f *bowEmbedder) nCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

var _ embed.Embedder = (*bowEmbedder)(nil)

var embedCorpus = []contract.Document{
	doc("fold", "EqualFold compares two strings ignoring upper and lower case", nil),
	doc("parse", "ParseInt interprets a string as an integer in a given base", nil),
	doc("sort", "Sort orders the elements of a slice in increasing order", nil),
	doc("trim", "TrimSpace removes leading and trailing white space from a string", nil),
	doc("rune", "DecodeRune unpacks the first UTF-8 encoding in a byte slice", nil),
	doc("join", "Join concatenates the elements of a slice with a separator", nil),
}

func embedColl(t *testing.T, f *bowEmbedder) (*DB, *Collection, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(dir, Options{Embedders: map[string]embed.Embedder{f.model: f}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.CreateCollection("c", CollectionOptions{Dim: f.dim, Sync: "none", Embedding: &EmbeddingConfig{Model: f.model}})
	if err != nil {
		t.Fatal(err)
	}
	return db, c, dir
}

// cosRank is the reference: documents by decreasing cosine to q's
// embedding (exact, float64), ties by id.
func cosRank(f *bowEmbedder, q string, docs []contract.Document) []string {
	qv := f.vec(q)
	type s struct {
		id  string
		sim float64
	}
	var ss []s
	for _, d := range docs {
		dv := f.vec(d.Content)
		var dot float64
		for i := range qv {
			dot += float64(qv[i]) * float64(dv[i])
		}
		ss = append(ss, s{d.ID, dot})
	}
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].sim != ss[j].sim {
			return ss[i].sim > ss[j].sim
		}
		return ss[i].id < ss[j].id
	})
	out := make([]string, len(ss))
	for i := range ss {
		out[i] = ss[i].id
	}
	return out
}

func TestEmbeddingWriteAndQueryPaths(t *testing.T) {
	f := &bowEmbedder{model: "fake-bow", dim: 32}
	_, c, _ := embedColl(t, f)
	if c.Embedder() != f {
		t.Fatal("Options.Embedders did not attach the embedder at create")
	}
	docs := slices.Clone(embedCorpus)
	mustUpsert(t, c, docs...)
	// One Embed call for the whole batch, texts = contents in order.
	if f.nCalls() != 1 || len(f.calls[0]) != len(docs) || f.calls[0][0] != docs[0].Content {
		t.Fatalf("embed calls %v, want one call with the %d contents", f.calls, len(docs))
	}
	for _, d := range docs {
		if d.Vector != nil {
			t.Fatal("Upsert modified the caller's documents")
		}
		g, err := c.Get(context.Background(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.Vector, f.vec(d.Content)) {
			t.Fatalf("%s: stored vector is not the embedding of its content", d.ID)
		}
	}
	// A document with its own vector is not re-embedded; a blank one is
	// not embedded.
	own := f.vec("something else entirely")
	mustUpsert(t, c, doc("own", "text that would embed differently", own))
	if f.nCalls() != 1 {
		t.Fatalf("a document with a vector was embedded (%d calls)", f.nCalls())
	}
	if g, _ := c.Get(context.Background(), "own"); !reflect.DeepEqual(g.Vector, own) {
		t.Fatal("caller's vector replaced")
	}
	all := append(slices.Clone(docs), doc("own", "something else entirely", nil))

	// Dense query with text only: embedded, ranked like the reference.
	for _, q := range []string{"compare strings ignoring case", "integer from a string", "order a slice", "something else entirely"} {
		res := mustSearch(t, c, contract.Query{Text: q, Mode: contract.Dense, TopK: 3})
		want := cosRank(f, q, all)[:3]
		if got := ids(res.Hits); !reflect.DeepEqual(got, want) {
			t.Fatalf("dense %q: %v, want %v", q, got, want)
		}
		if res.Hits[0].Explain.DenseRank != 1 {
			t.Fatalf("dense %q: explain %+v", q, res.Hits[0].Explain)
		}
	}
	// Hybrid with text only: both retrievers ran (explain ranks set).
	res := mustSearch(t, c, contract.Query{Text: "EqualFold strings case", Mode: contract.Hybrid, TopK: 3, Fusion: contract.FusionParams{Method: "rrf"}})
	if len(res.Hits) == 0 || res.Hits[0].DocID != "fold" || res.Hits[0].Explain.LexicalRank != 1 || res.Hits[0].Explain.DenseRank == 0 {
		t.Fatalf("hybrid: %v %+v", ids(res.Hits), res.Hits)
	}
	// A lexical query is never embedded; a query with a vector neither.
	n := f.nCalls()
	mustSearch(t, c, contract.Query{Text: "sort", Mode: contract.Lexical})
	mustSearch(t, c, contract.Query{Text: "sort", Vector: f.vec("sort"), Mode: contract.Hybrid})
	if f.nCalls() != n {
		t.Fatalf("%d unexpected embed calls", f.nCalls()-n)
	}
}

func TestNoEmbedderNeverTurnsLexical(t *testing.T) {
	// A lexical-only collection (no embedding model recorded).
	c := newColl(t, CollectionOptions{Dim: 8})
	mustUpsert(t, c, slices.Clone(embedCorpus)...)
	for _, m := range []contract.Mode{contract.Dense, contract.Hybrid} {
		_, err := c.Search(context.Background(), contract.Query{Text: "sort a slice", Mode: m})
		if !errors.Is(err, ErrNoEmbedder) || !errors.Is(err, contract.ErrInvalid) || !strings.Contains(err.Error(), "lexical-only") {
			t.Fatalf("%s: err = %v, want ErrNoEmbedder (validation)", m, err)
		}
	}
	if res := mustSearch(t, c, contract.Query{Text: "sort a slice"}); len(res.Hits) == 0 {
		t.Fatal("lexical search failed")
	}
	// Attaching an embedder to it is refused.
	if err := c.SetEmbedder(&bowEmbedder{model: "fake-bow", dim: 8}); !errors.Is(err, ErrEmbedderMismatch) {
		t.Fatalf("SetEmbedder on a lexical-only collection: %v", err)
	}
}

func TestEmbeddingModelRecordedAndReattached(t *testing.T) {
	f := &bowEmbedder{model: "fake-bow", dim: 16}
	db, c, dir := embedColl(t, f)
	mustUpsert(t, c, slices.Clone(embedCorpus)...)
	if got := c.Options().Embedding; got == nil || *got != (EmbeddingConfig{Model: "fake-bow", Dim: 16}) {
		t.Fatalf("Embedding = %+v", got)
	}
	db.Close()

	// Reopened without embedders: the model is still recorded; text-only
	// queries and writes fail with ErrNoEmbedder, vectors still work.
	db2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	c2, err := db2.Collection("c")
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Options().Embedding; got == nil || got.Model != "fake-bow" || got.Dim != 16 {
		t.Fatalf("reopened Embedding = %+v", got)
	}
	if c2.Embedder() != nil {
		t.Fatal("an embedder is attached without being configured")
	}
	_, err = c2.Search(context.Background(), contract.Query{Text: "order a slice", Mode: contract.Dense})
	if !errors.Is(err, ErrNoEmbedder) || !strings.Contains(err.Error(), `"fake-bow"`) {
		t.Fatalf("search without embedder: %v", err)
	}
	e0 := c2.Epoch()
	if _, err := c2.Upsert(context.Background(), []contract.Document{doc("new", "brand new text", nil)}); !errors.Is(err, ErrNoEmbedder) {
		t.Fatalf("text-only upsert without embedder: %v", err)
	}
	if c2.Epoch() != e0 {
		t.Fatal("a failed upsert advanced the epoch")
	}
	mustUpsert(t, c2, doc("vec", "has a vector", f.vec("has a vector")))

	// Mismatched embedders are refused; the right one attaches.
	if err := c2.SetEmbedder(&bowEmbedder{model: "other", dim: 16}); !errors.Is(err, ErrEmbedderMismatch) {
		t.Fatalf("other model: %v", err)
	}
	if err := c2.SetEmbedder(&bowEmbedder{model: "fake-bow", dim: 24}); !errors.Is(err, ErrEmbedderMismatch) {
		t.Fatalf("other dim: %v", err)
	}
	if err := c2.SetEmbedder(f); err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, c2, contract.Query{Text: "order a slice", Mode: contract.Dense, TopK: 1})
	if len(res.Hits) != 1 || res.Hits[0].DocID != cosRank(f, "order a slice", append(slices.Clone(embedCorpus), doc("vec", "has a vector", nil)))[0] {
		t.Fatalf("after SetEmbedder: %v", ids(res.Hits))
	}
	if err := c2.SetEmbedder(nil); err != nil || c2.Embedder() != nil {
		t.Fatal("detach failed")
	}
}

func TestEmbedderFailuresWriteNothing(t *testing.T) {
	f := &bowEmbedder{model: "fake-bow", dim: 8}
	_, c, _ := embedColl(t, f)
	mustUpsert(t, c, doc("a", "first text", nil))
	e0 := c.Epoch()

	boom := errors.New("server down")
	f.err = boom
	if _, err := c.Upsert(context.Background(), []contract.Document{doc("b", "second text", nil)}); !errors.Is(err, boom) {
		t.Fatalf("upsert: %v, want the embedder's error", err)
	}
	if _, err := c.Search(context.Background(), contract.Query{Text: "first", Mode: contract.Hybrid}); !errors.Is(err, boom) {
		t.Fatalf("search: %v, want the embedder's error", err)
	}
	f.err = nil
	f.outDim = 5 // returns vectors of the wrong length
	if _, err := c.Upsert(context.Background(), []contract.Document{doc("b", "second text", nil)}); !errors.Is(err, ErrEmbedderMismatch) {
		t.Fatalf("wrong-length vectors: %v", err)
	}
	if _, err := c.Search(context.Background(), contract.Query{Text: "first", Mode: contract.Dense}); !errors.Is(err, ErrEmbedderMismatch) {
		t.Fatalf("wrong-length query vector: %v", err)
	}
	if c.Epoch() != e0 {
		t.Fatal("a failed embedding advanced the epoch")
	}
	if _, err := c.Get(context.Background(), "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("b stored despite the failure: %v", err)
	}
}

func TestEmbeddingSeesRedactedText(t *testing.T) {
	f := &bowEmbedder{model: "fake-bow", dim: 8}
	_, c, _ := embedColl(t, f)
	secret := "AKIA" + "Z7QRSTUVWX2345AB" // built at run time: no literal key in the repo
	d := contract.Document{ID: "s", Content: "deploy with key " + secret + " then restart", Trust: contract.ExternalUnverified}
	mustUpsert(t, c, d)
	g, err := c.Get(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	// Whatever redaction did, the embedder saw exactly the stored text,
	// never the original.
	if f.nCalls() != 1 || f.calls[0][0] != g.Content {
		t.Fatalf("embedder saw %q, stored content %q", f.calls, g.Content)
	}
	if strings.Contains(g.Content, secret) {
		t.Fatalf("the planted key survived redaction: %q", g.Content)
	}
}

func TestEmbeddingOptionsValidate(t *testing.T) {
	o := CollectionOptions{Dim: 8, Embedding: &EmbeddingConfig{Model: " ", Dim: 9}}
	o.EnsureDefaults()
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), "Embedding.Model") || !strings.Contains(err.Error(), "Embedding.Dim") {
		t.Fatalf("Validate = %v", err)
	}
	// Dim 0 defaults to the collection's Dim, without touching the caller's struct.
	ec := &EmbeddingConfig{Model: "m"}
	o = CollectionOptions{Dim: 8, Embedding: ec}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil || o.Embedding.Dim != 8 || ec.Dim != 0 {
		t.Fatalf("default Dim: %v %+v %+v", err, o.Embedding, ec)
	}
	dbo := Options{Embedders: map[string]embed.Embedder{"a": &bowEmbedder{model: "b", dim: 2}, "n": nil}}
	dbo.EnsureDefaults()
	err = dbo.Validate()
	if err == nil || !strings.Contains(err.Error(), `Embedders["a"]`) || !strings.Contains(err.Error(), `Embedders["n"]`) {
		t.Fatalf("Options.Validate = %v", err)
	}
	if _, err := Open(t.TempDir(), dbo); err == nil {
		t.Fatal("Open accepted bad Embedders")
	}
}
