package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratasearch/strata/ingest/codegraph"
)

// TestCLIIndexGraph: index --graph writes the code graph beside the
// manifest, its nodes name the chunks the run wrote, and loadGraph (what
// serve and mcp use) reads it back; without --graph there is none.
func TestCLIIndexGraph(t *testing.T) {
	root, data := t.TempDir(), filepath.Join(t.TempDir(), "d")
	src := "package p\n\n// Frobnicate turns widgets blue.\nfunc Frobnicate() {}\n\nfunc other() { Frobnicate(); Frobnicate() }\n"
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := loadGraph(data, "code"); err != nil || st != nil {
		t.Fatalf("before indexing: %v %v", st, err)
	}
	out, err := capture(t, func() error { return runIndex([]string{root, "--data", data, "--graph"}) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "graph:   1 Go files (syntax-level)") {
		t.Errorf("index output:\n%s", out)
	}
	st, err := loadGraph(data, "code")
	if err != nil || st == nil {
		t.Fatalf("loadGraph: %v", err)
	}
	cs := codegraph.Calls(st.View(), "Frobnicate", true, 10)
	if len(cs) != 1 || cs[0].Name != "other" || cs[0].Count != 2 || cs[0].DocID != filepath.Join(root, "p.go")+"#L6-L6" {
		t.Fatalf("callers of Frobnicate: %+v", cs)
	}
	os.WriteFile(graphPath(data, "code"), []byte("STRGRAF\x00garbage"), 0o644)
	if _, err := loadGraph(data, "code"); err == nil || !strings.Contains(err.Error(), "code.graph") {
		t.Fatalf("corrupt graph file: %v", err)
	}
}
