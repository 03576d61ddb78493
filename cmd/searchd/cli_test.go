package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
)

// capture runs f with os.Stdout redirected and returns what it printed.
func capture(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	ferr := f()
	w.Close()
	os.Stdout = old
	return <-done, ferr
}

// TestIndexLexicalFlushes: a lexical-only index run leaves every chunk in
// a warm segment (durable epoch = epoch), so a later open replays nothing.
func TestIndexLexicalFlushes(t *testing.T) {
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	for i := range 3 {
		src := fmt.Sprintf("package p\n\n// F%d turns widgets blue.\nfunc F%d() {}\n", i, i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.go", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := capture(t, func() error {
		return runIndex([]string{root, "--data", data, "--embedder", "none", "--no-progress", "--bridge=false"})
	}); err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(data, engine.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	col, err := db.Collection("code")
	if err != nil {
		t.Fatal(err)
	}
	st := col.Stats()
	if st.WarmSegments == 0 || st.DurableEpoch != st.Epoch || st.LiveDocs == 0 {
		t.Fatalf("after a lexical-only index: %d warm segments, durable epoch %d of %d, %d live docs; want every chunk flushed",
			st.WarmSegments, st.DurableEpoch, st.Epoch, st.LiveDocs)
	}
}

func TestCLIIndexSearch(t *testing.T) {
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	src := "package p\n\n// Frobnicate turns widgets blue.\nfunc Frobnicate() {}\n\nfunc other() { Frobnicate(); Frobnicate() }\n"
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := capture(t, func() error { return runIndex([]string{root, "--data", data}) })
	if err != nil {
		t.Fatal(err)
	}
	// The default: the built-in embedder writes a vector per chunk.
	for _, want := range []string{"built-in embedder (model glove6b-sif-100d-v1, 100-d", "1 indexed", "chunks:  2 written", "embed:   2 chunks"} {
		if !strings.Contains(out, want) {
			t.Errorf("index output lacks %q:\n%s", want, out)
		}
	}
	out, err = capture(t, func() error { return runSearch([]string{"Frobnicate", "--data", data, "--json", "--verify"}) })
	if err != nil {
		t.Fatal(err)
	}
	var res contract.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Hits) != 2 || !strings.HasSuffix(res.Hits[0].SourceURI, "p.go#L3-L4") || res.Hits[0].Trust != contract.Authoritative {
		t.Fatalf("want the definition first, got %+v", res.Hits)
	}
	out, err = capture(t, func() error { return runSearch([]string{"widgets", "--data", data}) })
	if err != nil || !strings.Contains(out, "p.go:3-4") || !strings.Contains(out, "Frobnicate (func)") {
		t.Fatalf("human output (%v):\n%s", err, out)
	}
	// Search is hybrid by default on a collection with vectors; dense
	// finds the chunk whose doc comment says "widgets" with no flag.
	out, err = capture(t, func() error { return runSearch([]string{"widgets", "--data", data}) })
	if err != nil || !strings.Contains(out, "mode hybrid") {
		t.Errorf("default mode (%v):\n%s", err, out)
	}
	out, err = capture(t, func() error { return runSearch([]string{"widgets", "--data", data, "--mode", "dense", "--json"}) })
	if err != nil {
		t.Fatal(err)
	}
	res = contract.Result{}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Hits) == 0 || !strings.HasSuffix(res.Hits[0].SourceURI, "p.go#L3-L4") || res.Hits[0].Explain.DenseRank != 1 {
		t.Errorf("dense search: %+v", res.Hits)
	}
	for _, f := range contract.FusionMethods {
		out, err = capture(t, func() error { return runSearch([]string{"widgets", "--data", data, "--fusion", f, "--json"}) })
		if err != nil || !strings.Contains(out, "p.go#L3-L4") {
			t.Errorf("--fusion %s (%v):\n%s", f, err, out)
		}
	}
	out, err = capture(t, func() error {
		return runSearch([]string{"widgets", "--data", data, "--fusion", "rerank-maxnorm", "--fusion-window", "5", "--fusion-weights", "lexical=1,dense=3", "--json"})
	})
	if err != nil || !strings.Contains(out, "p.go#L3-L4") {
		t.Errorf("--fusion-window/--fusion-weights (%v):\n%s", err, out)
	}
	if _, err := capture(t, func() error { return runSearch([]string{"widgets", "--data", data, "--fusion-weights", "bm25=1"}) }); err == nil {
		t.Error("--fusion-weights bm25=1 accepted")
	}
	// --embedder none: lexical-only, and dense search says why it cannot run.
	lex := filepath.Join(t.TempDir(), "lex")
	out, err = capture(t, func() error { return runIndex([]string{root, "--data", lex, "--embedder", "none"}) })
	if err != nil || !strings.Contains(out, "lexical-only") || strings.Contains(out, "embed:") {
		t.Fatalf("index --embedder none (%v):\n%s", err, out)
	}
	out, err = capture(t, func() error { return runSearch([]string{"widgets", "--data", lex}) })
	if err != nil || !strings.Contains(out, "mode lexical") {
		t.Errorf("lexical-only default mode (%v):\n%s", err, out)
	}
	if _, err := capture(t, func() error { return runSearch([]string{"widgets", "--data", lex, "--mode", "dense"}) }); err == nil ||
		!strings.Contains(err.Error(), "lexical-only") {
		t.Errorf("dense mode on a lexical-only store: %v, want a no-vectors error", err)
	}
	if _, err := capture(t, func() error { return runSearch([]string{"x", "--data", filepath.Join(data, "none")}) }); err == nil {
		t.Error("search of a missing store succeeded")
	}
	out, _ = capture(t, func() error { return runVersion(nil) })
	if !strings.HasPrefix(out, "searchd ") {
		t.Errorf("version: %q", out)
	}
}
