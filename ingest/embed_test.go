package ingest

import (
	"context"
	"errors"
	"hash/fnv"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
)

// hashEmbedder is a deterministic fake: component i of a text's vector is
// a hash of (i, text) in [-1, 1]; it records every call.
type hashEmbedder struct {
	dim  int
	fail error

	mu    sync.Mutex
	calls [][]string
}

func (h *hashEmbedder) Model() string { return "hash-test" }
func (h *hashEmbedder) Dim() int      { return h.dim }
func (h *hashEmbedder) vec(s string) []float32 {
	v := make([]float32, h.dim)
	for i := range v {
		f := fnv.New32a()
		f.Write([]byte{byte(i)})
		f.Write([]byte(s))
		v[i] = float32(f.Sum32()%2001)/1000 - 1
	}
	v[0] = 2 // never a zero vector
	return v
}
func (h *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.calls = append(h.calls, append([]string(nil), texts...))
	h.mu.Unlock()
	if h.fail != nil {
		return nil, h.fail
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vec(t)
	}
	return out, nil
}
func (h *hashEmbedder) nTexts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.calls {
		n += len(c)
	}
	return n
}

var _ embed.Embedder = (*hashEmbedder)(nil)

func embedCollection(t *testing.T, h *hashEmbedder) (*engine.DB, *engine.Collection) {
	t.Helper()
	db, err := engine.Open(t.TempDir(), engine.Options{Embedders: map[string]embed.Embedder{h.Model(): h}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	col, err := db.CreateCollection("code", engine.CollectionOptions{Dim: h.dim, Sync: "none",
		Embedding: &engine.EmbeddingConfig{Model: h.Model()}})
	if err != nil {
		t.Fatal(err)
	}
	return db, col
}

const embedSrc = `// Package demo is a test.
package demo

// EqualFold reports whether s and t are equal under
// simple Unicode case-folding.
func EqualFold(s, t string) bool {
	return s == t
}

// Builder builds strings.
type Builder struct{ buf []byte }

// WriteString appends s.
func (b *Builder) WriteString(s string) (int, error) { return 0, nil }
`

func TestIndexWithEmbedder(t *testing.T) {
	root := t.TempDir()
	write(t, root, "demo/demo.go", embedSrc)
	for i := 0; i < 9; i++ {
		write(t, root, "notes/n"+fmtInt(i)+".md", "# Note "+fmtInt(i)+"\n\nSome prose about topic "+fmtInt(i)+".\n")
	}
	h := &hashEmbedder{dim: 8}
	_, col := embedCollection(t, h)
	mp := filepath.Join(t.TempDir(), "m.json")
	var progChunks int
	var progBytes int64
	st, err := Index(context.Background(), col, mp, root, Options{Embedder: h, EmbedBatch: 3},
		Progress{Embedded: func(n int, b int64) { progChunks += n; progBytes += b }})
	if err != nil {
		t.Fatal(err)
	}
	if st.Chunks == 0 || st.Embedded != st.Chunks || progChunks != st.Chunks || progBytes != st.EmbedBytes || st.EmbedBytes == 0 {
		t.Fatalf("stats %+v, progress %d chunks %d bytes", st, progChunks, progBytes)
	}
	for _, c := range h.calls {
		if len(c) > 3 {
			t.Fatalf("an Embed call of %d texts, EmbedBatch is 3", len(c))
		}
	}
	// Every stored chunk carries the embedding of its EmbedText.
	abs := filepath.Join(root, "demo", "demo.go")
	data := []byte(embedSrc)
	lines := NewLines(data)
	n := 0
	for _, c := range ChunkFile(abs, data, Options{}.withDefaults()) {
		id := ChunkID(abs, "L"+fmtInt(c.StartLine)+"-L"+fmtInt(c.EndLine))
		d, err := col.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		want := h.vec(EmbedText("demo/demo.go", c, lines.Span(c.StartLine, c.EndLine), 256))
		if !reflect.DeepEqual(d.Vector, want) {
			t.Fatalf("%s: vector is not the embedding of its EmbedText", id)
		}
		n++
	}
	if n < 3 {
		t.Fatalf("only %d Go chunks", n)
	}
	// Dense search with text works through the collection's embedder:
	// the query text equal to a chunk's embed text finds that chunk first.
	c0 := ChunkFile(abs, data, Options{}.withDefaults())[1]
	q := EmbedText("demo/demo.go", c0, lines.Span(c0.StartLine, c0.EndLine), 256)
	res, err := col.Search(context.Background(), contract.Query{Text: q, Mode: contract.Dense, TopK: 1})
	if err != nil || len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Content, "EqualFold") {
		t.Fatalf("dense search: %v %+v", err, res.Hits)
	}

	// An unchanged re-run embeds nothing.
	before := h.nTexts()
	st2, err := Index(context.Background(), col, mp, root, Options{Embedder: h, EmbedBatch: 3}, Progress{})
	if err != nil || st2.Embedded != 0 || h.nTexts() != before {
		t.Fatalf("re-run: %v, %+v, %d new texts", err, st2, h.nTexts()-before)
	}
}

func TestIndexEmbedderFailureKeepsManifest(t *testing.T) {
	root := t.TempDir()
	write(t, root, "demo/demo.go", embedSrc)
	h := &hashEmbedder{dim: 8, fail: errors.New("embedder down")}
	_, col := embedCollection(t, h)
	mp := filepath.Join(t.TempDir(), "m.json")
	if _, err := Index(context.Background(), col, mp, root, Options{Embedder: h}, Progress{}); !errors.Is(err, h.fail) {
		t.Fatalf("err = %v, want the embedder's error", err)
	}
	// Nothing was recorded, so the next run (embedder back) indexes it all.
	h.fail = nil
	st, err := Index(context.Background(), col, mp, root, Options{Embedder: h}, Progress{})
	if err != nil || st.Indexed != 1 || st.Embedded != st.Chunks || st.Chunks == 0 {
		t.Fatalf("retry: %v %+v", err, st)
	}
}

func TestEmbedText(t *testing.T) {
	data := []byte(embedSrc)
	lines := NewLines(data)
	chunks := ChunkFile("/x/demo.go", data, Options{}.withDefaults())
	got := map[string]string{}
	for _, c := range chunks {
		got[c.Symbol] = EmbedText("demo/demo.go", c, lines.Span(c.StartLine, c.EndLine), 512)
	}
	want := map[string]string{
		"EqualFold":           "EqualFold (equal fold). EqualFold reports whether s and t are equal under simple Unicode case-folding. func EqualFold(s, t string) bool (in demo/demo.go)",
		"Builder":             "Builder. Builder builds strings. type Builder struct{ buf []byte } (in demo/demo.go)",
		"Builder.WriteString": "Builder.WriteString (builder write string). WriteString appends s. func (b *Builder) WriteString(s string) (int, error) { return 0, nil } (in demo/demo.go)",
	}
	for sym, w := range want {
		if got[sym] != w {
			t.Errorf("EmbedText(%s) =\n %q\nwant\n %q", sym, got[sym], w)
		}
	}
	// Text chunks: path then the span; the cap cuts on a rune boundary.
	s := EmbedText("a.md", Chunk{Kind: "text"}, []byte("wörld héllo"), 10)
	if s != "wörld hé" {
		t.Errorf("capped text = %q", s)
	}
	for id, w := range map[string]string{"EqualFold": "equal fold", "parseHTTPRequest": "parse http request",
		"read_full": "read full", "Builder.WriteString": "builder write string", "ParseInt64": "parse int64", "x": "x"} {
		if g := splitWords(id); g != w {
			t.Errorf("splitWords(%q) = %q, want %q", id, g, w)
		}
	}
}

func (o Options) withDefaults() Options {
	o.EnsureDefaults()
	return o
}

// TestEmbedderSeesRedactedText: with the collection's Redact policy
// covering ingested chunks ("always"), the embedder never receives a
// secret that Upsert redacts from the stored content (review finding M4).
func TestEmbedderSeesRedactedText(t *testing.T) {
	secret := "ghp_" + "R8x2mQ7vT4kP9wZ3nB6cY1dF5gH0jL2sA8eU"
	root := t.TempDir()
	write(t, root, "demo/demo.go", "package demo\n\n// Token is "+secret+" for the CI bot.\nfunc Token() string { return \"\" }\n")
	write(t, root, "notes.txt", "deploy key "+secret+"\n")
	h := &hashEmbedder{dim: 8}
	db, err := engine.Open(t.TempDir(), engine.Options{Embedders: map[string]embed.Embedder{h.Model(): h}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	col, err := db.CreateCollection("code", engine.CollectionOptions{Dim: h.dim, Sync: "none", Redact: engine.RedactAlways,
		Embedding: &engine.EmbeddingConfig{Model: h.Model()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Index(context.Background(), col, filepath.Join(t.TempDir(), "m.json"), root, Options{Embedder: h}, Progress{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range h.calls {
		for _, s := range c {
			n++
			if strings.Contains(s, secret) {
				t.Fatalf("the embedder received the secret: %q", s)
			}
		}
	}
	if n == 0 {
		t.Fatal("nothing was embedded")
	}
}
