package main

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/engine/embed"
)

// fakeEmbedServer is an OpenAI-compatible /v1/embeddings server with a
// deterministic bag-of-words model of dimension dim; it counts texts.
func fakeEmbedServer(t *testing.T, model string, dim int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var texts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req embed.Request
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != model {
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		type entry struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data  []entry `json:"data"`
			Model string  `json:"model"`
		}
		resp.Model = model
		for i, s := range req.Input {
			v := make([]float32, dim)
			v[0] = 0.01
			for _, word := range strings.Fields(strings.ToLower(s)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(word, ".,()")))
				v[h.Sum32()%uint32(dim)] += 1
			}
			resp.Data = append(resp.Data, entry{i, v})
		}
		texts.Add(int64(len(req.Input)))
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &texts
}

func TestCLIEmbedder(t *testing.T) {
	srv, texts := fakeEmbedServer(t, "fake-bow", 64)
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	src := "package p\n\n// Frobnicate turns widgets blue.\nfunc Frobnicate() {}\n\n// Paint colours the fence green.\nfunc Paint() {}\n"
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	emb := []string{"--embedder", srv.URL, "--embedder-model", "fake-bow"}
	out, err := capture(t, func() error {
		return runIndex(append([]string{root, "--data", data, "--no-progress"}, emb...))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lexical (BM25) + dense", "model fake-bow, 64-d", "embed:   2 chunks"} {
		if !strings.Contains(out, want) {
			t.Errorf("index output lacks %q:\n%s", want, out)
		}
	}
	if texts.Load() != 1+2 { // the probe + 2 chunks
		t.Errorf("%d texts embedded, want 3", texts.Load())
	}
	// The collection records the model; dense and hybrid search embed the query.
	out, err = capture(t, func() error {
		return runSearch(append([]string{"fence", "--data", data, "--mode", "dense", "--json"}, emb...))
	})
	if err != nil {
		t.Fatal(err)
	}
	var res contract.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Content, "Paint") || res.Hits[0].Explain.DenseRank != 1 {
		t.Fatalf("dense search: %+v", res.Hits)
	}
	out, err = capture(t, func() error {
		return runSearch(append([]string{"widgets blue", "--data", data, "--mode", "hybrid", "--explain"}, emb...))
	})
	if err != nil || !strings.Contains(out, "explain ranks") || !strings.Contains(out, "1. lexical #1 (bm25") || !strings.Contains(out, ", dense #") || !strings.Contains(out, "fused ") {
		t.Fatalf("hybrid --explain (%v):\n%s", err, out)
	}
	// Without --embedder: the default mode is lexical (the collection's
	// model is not the built-in one), and hybrid names the fix.
	if out, err := capture(t, func() error { return runSearch([]string{"fence", "--data", data}) }); err != nil || !strings.Contains(out, "mode lexical") {
		t.Fatalf("lexical search (%v):\n%s", err, out)
	}
	_, err = capture(t, func() error { return runSearch([]string{"fence", "--data", data, "--mode", "hybrid"}) })
	if err == nil || !strings.Contains(err.Error(), "--embedder") || !strings.Contains(err.Error(), `"fake-bow"`) {
		t.Fatalf("hybrid without --embedder: %v", err)
	}
	// Re-indexing it with the default (built-in) embedder, with none, or
	// with another model, is refused.
	_, err = capture(t, func() error { return runIndex([]string{root, "--data", data, "--no-progress"}) })
	if err == nil || !strings.Contains(err.Error(), `"fake-bow", not "glove6b-sif-100d-v1"`) {
		t.Fatalf("re-index with the default embedder: %v", err)
	}
	_, err = capture(t, func() error { return runIndex([]string{root, "--data", data, "--no-progress", "--embedder", "none"}) })
	if err == nil || !strings.Contains(err.Error(), "pass the --embedder it was indexed with") {
		t.Fatalf("re-index with --embedder none: %v", err)
	}
	srv2, _ := fakeEmbedServer(t, "other", 64)
	_, err = capture(t, func() error {
		return runIndex([]string{root, "--data", data, "--no-progress", "--embedder", srv2.URL, "--embedder-model", "other"})
	})
	if err == nil || !strings.Contains(err.Error(), `"fake-bow", not "other"`) {
		t.Fatalf("re-index with another model: %v", err)
	}

	// A lexical-only store: an embedder cannot be added, dense search says why.
	lex := filepath.Join(t.TempDir(), "lex")
	if _, err := capture(t, func() error { return runIndex([]string{root, "--data", lex, "--no-progress", "--embedder", "none"}) }); err != nil {
		t.Fatal(err)
	}
	_, err = capture(t, func() error { return runIndex(append([]string{root, "--data", lex, "--no-progress"}, emb...)) })
	if err == nil || !strings.Contains(err.Error(), "lexical-only") {
		t.Fatalf("embedder on a lexical-only collection: %v", err)
	}
	// Without --embedder, re-indexing a lexical-only collection keeps it so.
	out, err = capture(t, func() error { return runIndex([]string{root, "--data", lex, "--no-progress"}) })
	if err != nil || !strings.Contains(out, "stays so") || strings.Contains(out, "embed:") {
		t.Fatalf("default re-index of a lexical-only collection (%v):\n%s", err, out)
	}
	_, err = capture(t, func() error { return runSearch([]string{"fence", "--data", lex, "--mode", "dense"}) })
	if err == nil || !strings.Contains(err.Error(), "indexed lexical-only") {
		t.Fatalf("dense on a lexical-only store: %v", err)
	}
	// An unreachable embedder fails before anything is written.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	fresh := filepath.Join(t.TempDir(), "fresh")
	_, err = capture(t, func() error {
		return runIndex([]string{root, "--data", fresh, "--no-progress", "--embedder", deadURL, "--embedder-timeout", "1s"})
	})
	if err == nil || !strings.Contains(err.Error(), "not answering") {
		t.Fatalf("dead embedder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "collections", "code")); err == nil {
		t.Fatal("a collection was created although the embedder is unreachable")
	}
}

// TestBuiltinIndexHybridOptions: a collection index creates with the
// built-in embedder records rerank-maxnorm with its code-search N and α;
// one created with an embedder URL keeps the engine's rerank parameters.
func TestBuiltinIndexHybridOptions(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte("package p\n\n// Paint colours the fence.\nfunc Paint() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, _ := fakeEmbedServer(t, "fake-bow", 16)
	for _, c := range []struct {
		args        []string
		strategy    engine.HybridStrategy
		window      int
		denseWeight float64
	}{
		{nil, builtinHybridDefault, builtinRerankWindow, builtinRerankDenseWeight},
		{[]string{"--embedder", srv.URL, "--embedder-model", "fake-bow"}, embedderHybridDefault, 0, 0},
	} {
		data := filepath.Join(t.TempDir(), "d")
		if _, err := capture(t, func() error {
			return runIndex(append([]string{root, "--data", data, "--no-progress"}, c.args...))
		}); err != nil {
			t.Fatal(err)
		}
		db, col, err := openCollection(data, "code", false)
		if err != nil {
			t.Fatal(err)
		}
		o := col.Options()
		db.Close()
		if o.HybridDefault != c.strategy || o.HybridRerankWindow != c.window || o.HybridRerankDenseWeight != c.denseWeight {
			t.Errorf("index %v: hybrid %q N %d α %v, want %q %d %v", c.args, o.HybridDefault, o.HybridRerankWindow, o.HybridRerankDenseWeight, c.strategy, c.window, c.denseWeight)
		}
	}
}
